//===- RuntimeLaunchTest.cpp - Modules, memory and launches ---------------===//
//
// The runtime on FakeCuda loading PTX, allocating buffers and launching
// kernels: out of memory, JIT logs, kernel attributes, launch geometry and
// shared memory checks, parameter and arch mismatches, and launch failures
// and faults named by kernel.
//
//===----------------------------------------------------------------------===//
#include "runtime/Executor.h"

#include "RuntimeFixture.h"

#include <gtest/gtest.h>

#include <string>

using namespace mtc;
using namespace mtc::test;
using namespace llvm;

namespace {

TEST_F(Runtime, OutOfMemoryNamesBufferAndSizes) {
  setMode("oom");
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  Manifest m = copyManifest();
  m.buffers.push_back(
      buffer("w", BufferInfo::Role::Input, DType::BF16, {1024, 1024, 1024}));
  Expected<std::unique_ptr<Executor>> ex = Executor::create(*d, m, kCopyPtx);
  ASSERT_FALSE(ex);
  std::string msg = runtimeMessage(ex);
  EXPECT_EQ(msg.find("out of device memory: needed 2.0 GiB for buffer 'w', "
                     "1.2 GiB free"),
            0u)
      << msg;
  EXPECT_NE(msg.find("CUDA_ERROR_OUT_OF_MEMORY (out of memory)"),
            std::string::npos)
      << msg;
  d.reset();
  EXPECT_EQ(liveObjects(), 0) << "buffers allocated before the failure leak";
}

TEST_F(Runtime, BadPtxCarriesTheJitLog) {
  setMode("bad_ptx");
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  Expected<std::unique_ptr<Executor>> ex =
      Executor::create(*d, copyManifest(), kCopyPtx);
  ASSERT_FALSE(ex);
  std::string msg = runtimeMessage(ex);
  EXPECT_NE(msg.find("cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (a "
                     "PTX JIT compilation failed)"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("ptxas application ptx input, line 7; error   : Unknown "
                     "symbol '%frob'\nptxas fatal   : Ptx assembly aborted "
                     "due to errors"),
            std::string::npos)
      << msg;
}

TEST_F(Runtime, ModuleInfoLogAndAttributes) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  Expected<std::unique_ptr<Module>> mod = Module::load(*d, kCopyPtx);
  ASSERT_TRUE(bool(mod)) << toString(mod.takeError());
  EXPECT_NE((*mod)->infoLog().find("Used 32 registers"), StringRef::npos);
  Expected<Function> f = (*mod)->getFunction("fat_k");
  ASSERT_TRUE(bool(f)) << toString(f.takeError());
  EXPECT_EQ(f->attributes.registers, 128);
  EXPECT_EQ(f->attributes.maxThreadsPerBlock, 256);
  EXPECT_EQ(f->attributes.localBytes, 0);
  EXPECT_EQ(f->attributes.staticSharedBytes, 0);
  Expected<Function> missing = (*mod)->getFunction("nope");
  ASSERT_FALSE(missing);
  EXPECT_EQ(runtimeMessage(missing), "kernel 'nope' is not in the PTX");
}

TEST_F(Runtime, MissingKernel) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  Manifest m = copyManifest();
  m.kernels[1].name = "k9";
  Expected<std::unique_ptr<Executor>> ex = Executor::create(*d, m, kCopyPtx);
  ASSERT_FALSE(ex);
  EXPECT_EQ(runtimeMessage(ex), "kernel 'k9' is not in the PTX");
}

TEST_F(Runtime, BlockTooLargeForTheKernel) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  Manifest m = copyManifest();
  m.kernels.push_back(kernel("fat_k", {"x", "y"}, 4, 512));
  Expected<std::unique_ptr<Executor>> ex = Executor::create(*d, m, kCopyPtx);
  ASSERT_FALSE(ex);
  EXPECT_EQ(runtimeMessage(ex),
            "kernel 'fat_k' launches 512 threads per block but can run at "
            "most 256 (it uses 128 registers per thread)");
}

TEST_F(Runtime, LaunchGeometryChecks) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  Manifest m = copyManifest();
  m.kernels[0].block = {32, 1, 128};
  Expected<std::unique_ptr<Executor>> ex = Executor::create(*d, m, kCopyPtx);
  ASSERT_FALSE(ex);
  EXPECT_EQ(runtimeMessage(ex), "kernel 'k0_copy': block [32, 1, 128] z "
                                "exceeds the device's limit 64 in z");
  m = copyManifest();
  m.kernels[0].grid = {1, 70000, 1};
  ex = Executor::create(*d, m, kCopyPtx);
  ASSERT_FALSE(ex);
  EXPECT_EQ(runtimeMessage(ex), "kernel 'k0_copy': grid [1, 70000, 1] "
                                "exceeds the device's limit 65535 in y");
  m = copyManifest();
  m.kernels[0].grid = {0, 1, 1};
  ex = Executor::create(*d, m, kCopyPtx);
  ASSERT_FALSE(ex);
  EXPECT_NE(runtimeMessage(ex).find("has an empty launch"), std::string::npos);
}

TEST_F(Runtime, SharedMemory) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  Manifest m = copyManifest();
  m.kernels[0].sharedBytes = m.kernels[0].dynamicSharedBytes = 300 * 1024;
  Expected<std::unique_ptr<Executor>> ex = Executor::create(*d, m, kCopyPtx);
  ASSERT_FALSE(ex);
  EXPECT_EQ(runtimeMessage(ex),
            "kernel 'k0_copy' needs 307200 bytes of shared memory per block "
            "but Fake NVIDIA H200 allows at most 232448");

  // Kernels are launched with the manifest's dynamic shared memory; beyond
  // 48 KiB that needs opting in (the fake refuses the launch otherwise).
  m.kernels[0].sharedBytes = m.kernels[0].dynamicSharedBytes = 64 * 1024;
  m.kernels[1].sharedBytes = m.kernels[1].dynamicSharedBytes = 1024;
  ex = Executor::create(*d, m, kCopyPtx);
  ASSERT_TRUE(bool(ex)) << toString(ex.takeError());
  ASSERT_FALSE(bool((*ex)->setInput("x", randomInput())));
  ASSERT_FALSE(bool((*ex)->run()));
  unsigned grid[3], block[3], shared;
  fakeFn<void (*)(unsigned *, unsigned *, unsigned *)>("fakeCudaLastLaunch")(
      grid, block, &shared);
  EXPECT_EQ(shared, 1024u);
  EXPECT_EQ(grid[0], 8u);
  EXPECT_EQ(block[0], 256u);
}

// Manifests that say grid_dependency are launched with programmatic stream
// serialization (cuLaunchKernelEx) when MTC_GRID_DEPENDENCY=1; otherwise,
// and all others, with cuLaunchKernel.
TEST_F(Runtime, GridDependencyLaunches) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  auto programmatic = fakeFn<long (*)()>("fakeCudaProgrammaticLaunches");
  auto reset = fakeFn<void (*)()>("fakeCudaResetStats");
  for (const char *env : {"", "1", "0"}) {
    for (bool flag : {false, true}) {
      if (*env)
        ::setenv("MTC_GRID_DEPENDENCY", env, 1);
      else
        ::unsetenv("MTC_GRID_DEPENDENCY");
      Manifest m = copyManifest();
      m.gridDependency = flag;
      Expected<std::unique_ptr<Executor>> ex =
          Executor::create(*d, m, kCopyPtx);
      ASSERT_TRUE(bool(ex)) << toString(ex.takeError());
      ASSERT_FALSE(bool((*ex)->setInput("x", randomInput())));
      reset();
      ASSERT_FALSE(bool((*ex)->run()));
      long expected = flag && std::string(env) == "1" ? 2 : 0;
      EXPECT_EQ(programmatic(), expected) << "env '" << env << "' " << flag;
    }
  }
  ::unsetenv("MTC_GRID_DEPENDENCY");
}

TEST_F(Runtime, ParameterCountMismatch) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  Manifest m = copyManifest();
  m.kernels[1].params = {"t", "y", "x"};
  Expected<std::unique_ptr<Executor>> ex = Executor::create(*d, m, kCopyPtx);
  ASSERT_FALSE(ex);
  EXPECT_EQ(runtimeMessage(ex), "kernel 'k1_copy' takes 2 parameters in the "
                                "PTX but the manifest passes 3");
  m.kernels[1].params = {"t"};
  ex = Executor::create(*d, m, kCopyPtx);
  ASSERT_FALSE(ex);
  EXPECT_EQ(runtimeMessage(ex), "kernel 'k1_copy' takes 2 parameters in the "
                                "PTX but the manifest passes 1");
}

TEST_F(Runtime, ArchMismatch) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  Manifest m = copyManifest();
  m.arch = "sm_100";
  Expected<std::unique_ptr<Executor>> ex = Executor::create(*d, m, kCopyPtx);
  ASSERT_FALSE(ex);
  EXPECT_EQ(runtimeMessage(ex), "the PTX targets sm_100 but Fake NVIDIA H200 "
                                "is sm_90 (compute capability 9.0)");
  m.arch = "sm_80";
  ex = Executor::create(*d, m, kCopyPtx);
  EXPECT_TRUE(bool(ex)) << toString(ex.takeError());
}

TEST_F(Runtime, LaunchFailureNamesTheKernel) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  Expected<std::unique_ptr<Executor>> ex =
      Executor::create(*d, copyManifest(), kCopyPtx);
  ASSERT_TRUE(bool(ex)) << toString(ex.takeError());
  ASSERT_FALSE(bool((*ex)->setInput("x", randomInput())));
  setMode("launch_fail");
  EXPECT_EQ(runtimeMessage((*ex)->run()),
            "kernel 'k0_copy' failed: cuLaunchKernel failed: "
            "CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)");
}

TEST_F(Runtime, FaultAtSyncNamesTheKernel) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  Expected<std::unique_ptr<Executor>> ex =
      Executor::create(*d, copyManifest(), kCopyPtx);
  ASSERT_TRUE(bool(ex)) << toString(ex.takeError());
  ASSERT_FALSE(bool((*ex)->setInput("x", randomInput())));
  setMode("fault");
  ::setenv("FAKE_CUDA_FAULT_KERNEL", "k1_copy", 1);
  EXPECT_EQ(runtimeMessage((*ex)->run()),
            "kernel 'k1_copy' failed: cuStreamSynchronize failed: "
            "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was "
            "encountered)");
}

} // namespace
