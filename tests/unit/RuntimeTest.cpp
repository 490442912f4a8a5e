//===- RuntimeTest.cpp - The CUDA driver layer and the executor -----------===//
//
// Runs the runtime against FakeCuda (tests/unit/FakeCuda.cpp), a stand-in for
// libcuda.so.1 loaded through MTC_CUDA_LIBRARY, so that every error path and
// the whole create/setInput/run/getOutput/time cycle run without a GPU.
// With the CUDA toolkit installed, mtc's driver declarations are also checked
// against cuda.h at compile time and ptxas must accept mtc's own PTX.
//
//===----------------------------------------------------------------------===//
#include "runtime/CudaDriver.h"
#include "runtime/Executor.h"
#include "runtime/ReadBandwidth.h"

#include "RuntimeFixture.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <tuple>
#include <type_traits>

// After every mtc header (cuda.h's #defines rename cuX to cuX_v2).
#ifdef MTC_CUDA_H
#include MTC_CUDA_H
#endif

using namespace mtc;
using namespace llvm;

#ifdef MTC_CUDA_H
//===----------------------------------------------------------------------===//
// mtc's declarations against cuda.h (compile time)
//===----------------------------------------------------------------------===//

namespace {
template <typename A, typename B> constexpr bool sameKind() {
  return sizeof(A) == sizeof(B) && std::is_pointer_v<A> == std::is_pointer_v<B>;
}
template <typename... A, typename... B, size_t... I>
constexpr bool sameParams(std::tuple<A...> *, std::tuple<B...> *,
                          std::index_sequence<I...>) {
  return (sameKind<std::tuple_element_t<I, std::tuple<A...>>,
                   std::tuple_element_t<I, std::tuple<B...>>>() &&
          ...);
}
/// Same return size and the same number, sizes and pointer-ness of
/// parameters (mtc's enums are distinct types from cuda.h's).
template <typename RA, typename... A, typename RB, typename... B>
constexpr bool sameSignature(RA (*)(A...), RB (*)(B...)) {
  if constexpr (sizeof...(A) != sizeof...(B))
    return false;
  else
    return sizeof(RA) == sizeof(RB) &&
           sameParams((std::tuple<A...> *)nullptr, (std::tuple<B...> *)nullptr,
                      std::index_sequence_for<A...>());
}
} // namespace

// `&::name` expands cuda.h's version macros, so cuEventElapsedTime is checked
// against cuEventElapsedTime_v2 (the same signature).
#define MTC_CHECK_SIGNATURE(name, ...)                                         \
  static_assert(sameSignature(CudaDriver::name##_fn(), &::name),               \
                #name " differs from cuda.h");
MTC_CUDA_REQUIRED_FUNCTIONS(MTC_CHECK_SIGNATURE)
MTC_CUDA_OPTIONAL_FUNCTIONS(MTC_CHECK_SIGNATURE)
#undef MTC_CHECK_SIGNATURE

static_assert(std::is_same_v<cu::CUcontext, ::CUcontext>);
static_assert(std::is_same_v<cu::CUmodule, ::CUmodule>);
static_assert(std::is_same_v<cu::CUfunction, ::CUfunction>);
static_assert(std::is_same_v<cu::CUstream, ::CUstream>);
static_assert(std::is_same_v<cu::CUevent, ::CUevent>);
static_assert(std::is_same_v<cu::CUgraph, ::CUgraph>);
static_assert(std::is_same_v<cu::CUgraphExec, ::CUgraphExec>);
static_assert(std::is_same_v<cu::CUdeviceptr, ::CUdeviceptr>);
static_assert(std::is_same_v<cu::CUdevice, ::CUdevice>);
static_assert(sizeof(cu::CUresult) == sizeof(::CUresult));
static_assert(sizeof(cu::CUjit_option) == sizeof(::CUjit_option));
static_assert(sizeof(cu::CUdevice_attribute) == sizeof(::CUdevice_attribute));
static_assert(sizeof(cu::CUfunction_attribute) ==
              sizeof(::CUfunction_attribute));
static_assert(sizeof(cu::CUstreamCaptureMode) == sizeof(::CUstreamCaptureMode));

#define MTC_CHECK_VALUE(name)                                                  \
  static_assert(int(cu::name) == int(::name), #name " differs from cuda.h");
MTC_CHECK_VALUE(CUDA_SUCCESS)
MTC_CHECK_VALUE(CUDA_ERROR_INVALID_VALUE)
MTC_CHECK_VALUE(CUDA_ERROR_OUT_OF_MEMORY)
MTC_CHECK_VALUE(CUDA_ERROR_NOT_INITIALIZED)
MTC_CHECK_VALUE(CUDA_ERROR_NO_DEVICE)
MTC_CHECK_VALUE(CUDA_ERROR_INVALID_DEVICE)
MTC_CHECK_VALUE(CUDA_ERROR_INVALID_CONTEXT)
MTC_CHECK_VALUE(CUDA_ERROR_INVALID_PTX)
MTC_CHECK_VALUE(CUDA_ERROR_INVALID_HANDLE)
MTC_CHECK_VALUE(CUDA_ERROR_NOT_FOUND)
MTC_CHECK_VALUE(CUDA_ERROR_ILLEGAL_ADDRESS)
MTC_CHECK_VALUE(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
MTC_CHECK_VALUE(CUDA_ERROR_LAUNCH_FAILED)
MTC_CHECK_VALUE(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
MTC_CHECK_VALUE(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT)
MTC_CHECK_VALUE(CU_JIT_MAX_REGISTERS)
MTC_CHECK_VALUE(CU_JIT_THREADS_PER_BLOCK)
MTC_CHECK_VALUE(CU_JIT_WALL_TIME)
MTC_CHECK_VALUE(CU_JIT_INFO_LOG_BUFFER)
MTC_CHECK_VALUE(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES)
MTC_CHECK_VALUE(CU_JIT_ERROR_LOG_BUFFER)
MTC_CHECK_VALUE(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
MTC_CHECK_VALUE(CU_JIT_OPTIMIZATION_LEVEL)
MTC_CHECK_VALUE(CU_JIT_LOG_VERBOSE)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
MTC_CHECK_VALUE(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
MTC_CHECK_VALUE(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
MTC_CHECK_VALUE(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES)
MTC_CHECK_VALUE(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)
MTC_CHECK_VALUE(CU_FUNC_ATTRIBUTE_NUM_REGS)
MTC_CHECK_VALUE(CU_FUNC_ATTRIBUTE_PTX_VERSION)
MTC_CHECK_VALUE(CU_FUNC_ATTRIBUTE_BINARY_VERSION)
MTC_CHECK_VALUE(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
MTC_CHECK_VALUE(CU_STREAM_CAPTURE_MODE_GLOBAL)
MTC_CHECK_VALUE(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
MTC_CHECK_VALUE(CU_STREAM_CAPTURE_MODE_RELAXED)
MTC_CHECK_VALUE(CU_STREAM_DEFAULT)
MTC_CHECK_VALUE(CU_STREAM_NON_BLOCKING)
MTC_CHECK_VALUE(CU_EVENT_DEFAULT)
MTC_CHECK_VALUE(CU_TENSOR_MAP_DATA_TYPE_UINT8)
MTC_CHECK_VALUE(CU_TENSOR_MAP_DATA_TYPE_FLOAT16)
MTC_CHECK_VALUE(CU_TENSOR_MAP_DATA_TYPE_FLOAT32)
MTC_CHECK_VALUE(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16)
MTC_CHECK_VALUE(CU_TENSOR_MAP_INTERLEAVE_NONE)
MTC_CHECK_VALUE(CU_TENSOR_MAP_SWIZZLE_NONE)
MTC_CHECK_VALUE(CU_TENSOR_MAP_SWIZZLE_128B)
MTC_CHECK_VALUE(CU_TENSOR_MAP_L2_PROMOTION_NONE)
MTC_CHECK_VALUE(CU_TENSOR_MAP_L2_PROMOTION_L2_256B)
MTC_CHECK_VALUE(CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
#undef MTC_CHECK_VALUE
static_assert(sizeof(cu::CUtensorMap) == sizeof(::CUtensorMap) &&
              alignof(cu::CUtensorMap) == alignof(::CUtensorMap));
static_assert(sizeof(cu::CUtensorMapDataType) == sizeof(::CUtensorMapDataType));
static_assert(sizeof(cu::CUtensorMapSwizzle) == sizeof(::CUtensorMapSwizzle));

TEST(CudaHeader, DeclarationsMatch) {
  SUCCEED() << "checked at compile time against " << MTC_CUDA_H;
}
#endif // MTC_CUDA_H

using namespace mtc::test;

namespace {

const char *kCopyPtx = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry k0_copy(.param .u64 a, .param .u64 b) { ret; }
.visible .entry k1_copy(.param .u64 a, .param .u64 b) { ret; }
.visible .entry fat_k(.param .u64 a, .param .u64 b) { ret; }
)";

/// x -> k0_copy -> t -> k1_copy -> y, with 1024 f32 elements (4 KiB) each.
Manifest copyManifest() {
  Manifest m;
  m.mtcVersion = "test";
  m.graph = "copies";
  m.arch = "sm_90";
  m.ptxFile = "copies.ptx";
  m.buffers = {
      buffer("x", BufferInfo::Role::Input, DType::F32, {4, 256}),
      buffer("t", BufferInfo::Role::Intermediate, DType::F32, {4, 256}),
      buffer("y", BufferInfo::Role::Output, DType::F32, {4, 256}),
      buffer("ws", BufferInfo::Role::Workspace, DType::I8, {512})};
  m.outputs = {"y"};
  m.kernels = {kernel("k0_copy", {"x", "t"}),
               kernel("k1_copy", {"t", "y"}, 8, 256)};
  return m;
}

HostTensor randomInput() {
  HostTensor x(DType::F32, {4, 256});
  fillRandom(x, 7, "x");
  return x;
}

//===----------------------------------------------------------------------===//
// Loading the driver and opening the device
//===----------------------------------------------------------------------===//

TEST_F(Runtime, MissingLibrary) {
  ::setenv("MTC_CUDA_LIBRARY", "/nonexistent/dir/libcuda.so.1", 1);
  Expected<std::unique_ptr<Device>> d = Device::open();
  ASSERT_FALSE(d);
  std::string msg = runtimeMessage(d);
  EXPECT_NE(msg.find("cannot load the CUDA driver "
                     "(/nonexistent/dir/libcuda.so.1): "),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("/nonexistent/dir/libcuda.so.1: cannot open shared "
                     "object file"),
            std::string::npos)
      << "dlerror() text expected: " << msg;
  EXPECT_NE(msg.find("; mtc run/tune/bench need an NVIDIA GPU and driver "
                     "(mtc compile does not)"),
            std::string::npos)
      << msg;
}

TEST_F(Runtime, DefaultLibraryName) {
  ::unsetenv("MTC_CUDA_LIBRARY");
  Expected<std::unique_ptr<Device>> d = Device::open();
  if (d)
    GTEST_SKIP() << "this machine has a CUDA driver and a device";
  std::string msg = runtimeMessage(d);
  if (msg.find("cannot load the CUDA driver") == std::string::npos)
    GTEST_SKIP() << "this machine has a CUDA driver: " << msg;
  EXPECT_NE(msg.find("cannot load the CUDA driver (libcuda.so.1): "),
            std::string::npos)
      << msg;
}

TEST_F(Runtime, LibraryThatIsNotADriver) {
  ::setenv("MTC_CUDA_LIBRARY", "libm.so.6", 1);
  Expected<std::unique_ptr<Device>> d = Device::open();
  ASSERT_FALSE(d);
  std::string msg = runtimeMessage(d);
  EXPECT_NE(msg.find("cannot use the CUDA driver (libm.so.6): it lacks "
                     "cuGetErrorName, cuGetErrorString, cuInit, "
                     "cuDriverGetVersion, cuDeviceGetCount, cuDeviceGet and "
                     "39 more; mtc needs a driver for CUDA 12.0 or newer"),
            std::string::npos)
      << msg;
}

TEST_F(Runtime, NoDevice) {
  setMode("no_device");
  Expected<std::unique_ptr<Device>> d = Device::open();
  ASSERT_FALSE(d);
  EXPECT_EQ(runtimeMessage(d),
            "no CUDA device found: cuInit failed: CUDA_ERROR_NO_DEVICE (no "
            "CUDA-capable device is detected)");
}

TEST_F(Runtime, ZeroDevices) {
  setMode("zero_devices");
  Expected<std::unique_ptr<Device>> d = Device::open();
  ASSERT_FALSE(d);
  EXPECT_EQ(runtimeMessage(d), "no CUDA device found");
  Expected<std::unique_ptr<Device>> d1 = Device::open(1);
  ASSERT_FALSE(d1);
  EXPECT_EQ(runtimeMessage(d1), "no CUDA device found");
}

TEST_F(Runtime, DeviceOrdinalOutOfRange) {
  Expected<std::unique_ptr<Device>> d = Device::open(3);
  ASSERT_FALSE(d);
  EXPECT_EQ(runtimeMessage(d), "there is no CUDA device 3 (1 found)");
}

TEST_F(Runtime, DeviceProperties) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  EXPECT_EQ(d->name(), "Fake NVIDIA H200");
  EXPECT_EQ(d->computeMajor(), 9);
  EXPECT_EQ(d->computeMinor(), 0);
  EXPECT_EQ(d->arch(), "sm_90");
  EXPECT_EQ(d->driverVersion(), 13000);
  EXPECT_EQ(d->driverVersionString(), "13.0");
  EXPECT_EQ(d->smCount(), 132);
  EXPECT_EQ(d->l2Bytes(), 50 << 20);
  EXPECT_EQ(d->totalMemory(), int64_t(140) << 30);
  Expected<int64_t> freeMem = d->freeMemory();
  ASSERT_TRUE(bool(freeMem));
  EXPECT_EQ(*freeMem, int64_t(140) << 30);
  EXPECT_EQ(d->maxThreadsPerBlock(), 1024);
  EXPECT_EQ(d->maxSharedPerBlock(), 48 * 1024);
  EXPECT_EQ(d->maxSharedPerBlockOptin(), 227 * 1024);
  EXPECT_EQ(d->maxGridDim(0), 2147483647);
  EXPECT_NE(d->stream(), nullptr);
  d.reset();
  EXPECT_EQ(liveObjects(), 0) << "stream or context not released";
}

TEST(RuntimeErrors, FormatBytes) {
  EXPECT_EQ(formatBytes(100), "100 B");
  EXPECT_EQ(formatBytes(12 * 1024), "12.0 KiB");
  EXPECT_EQ(formatBytes(int64_t(512) << 20), "512.0 MiB");
  EXPECT_EQ(formatBytes(int64_t(2) << 30), "2.0 GiB");
  EXPECT_EQ(formatBytes(int64_t(1.2 * double(int64_t(1) << 30))), "1.2 GiB");
}

TEST(RuntimeErrors, ContextKeepsTheKind) {
  Error e = withContext(runtimeError("inner", 719), "outer");
  ASSERT_TRUE(e.isA<RuntimeError>());
  handleAllErrors(std::move(e), [](const RuntimeError &r) {
    EXPECT_EQ(r.getMessage(), "outer: inner");
    EXPECT_EQ(r.getResult(), 719);
  });
  Error plain = withContext(
      createStringError(inconvertibleErrorCode(), "plain"), "outer");
  EXPECT_TRUE(plain.isA<RuntimeError>());
  EXPECT_EQ(toString(std::move(plain)), "outer: plain");
  EXPECT_FALSE(bool(withContext(Error::success(), "outer")));
}

//===----------------------------------------------------------------------===//
// Modules, memory and launches
//===----------------------------------------------------------------------===//

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

//===----------------------------------------------------------------------===//
// The executor
//===----------------------------------------------------------------------===//

TEST_F(Runtime, FullCycle) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  {
    Expected<std::unique_ptr<Executor>> exOr =
        Executor::create(*d, copyManifest(), kCopyPtx);
    ASSERT_TRUE(bool(exOr)) << toString(exOr.takeError());
    Executor &ex = **exOr;
    EXPECT_NE(ex.jitInfoLog().find("k1_copy"), StringRef::npos);
    EXPECT_EQ(ex.kernelAttributes(0).registers, 32);

    // Everything starts zeroed.
    Expected<HostTensor> y0 = ex.getOutput("y");
    ASSERT_TRUE(bool(y0)) << toString(y0.takeError());
    EXPECT_EQ(y0->data, std::vector<uint8_t>(4096, 0));
    Expected<HostTensor> ws = ex.getOutput("ws");
    ASSERT_TRUE(bool(ws));
    EXPECT_EQ(ws->data, std::vector<uint8_t>(512, 0));

    HostTensor x = randomInput();
    ASSERT_FALSE(bool(ex.setInput("x", x)));
    ASSERT_FALSE(bool(ex.poison()));
    Expected<HostTensor> poisoned = ex.getOutput("y");
    ASSERT_TRUE(bool(poisoned));
    EXPECT_EQ(poisoned->data, std::vector<uint8_t>(4096, 0xFF));
    EXPECT_TRUE(std::isnan(poisoned->get(0)));
    Expected<HostTensor> t = ex.getOutput("t");
    ASSERT_TRUE(bool(t));
    EXPECT_EQ(t->data, std::vector<uint8_t>(4096, 0xFF));
    // Poison leaves inputs and workspaces alone.
    Expected<HostTensor> xBack = ex.getOutput("x");
    ASSERT_TRUE(bool(xBack));
    EXPECT_EQ(xBack->data, x.data);
    ws = ex.getOutput("ws");
    ASSERT_TRUE(bool(ws));
    EXPECT_EQ(ws->data, std::vector<uint8_t>(512, 0));

    resetStats();
    ASSERT_FALSE(bool(ex.run()));
    EXPECT_EQ(executedKernels(), 2);
    unsigned grid[3], block[3], shared;
    fakeFn<void (*)(unsigned *, unsigned *, unsigned *)>("fakeCudaLastLaunch")(
        grid, block, &shared);
    EXPECT_EQ(grid[0], 8u);
    EXPECT_EQ(grid[1], 1u);
    EXPECT_EQ(block[0], 256u);
    EXPECT_EQ(shared, 0u);

    Expected<HostTensor> y = ex.getOutput("y");
    ASSERT_TRUE(bool(y)) << toString(y.takeError());
    EXPECT_EQ(y->dtype, DType::F32);
    EXPECT_EQ(ArrayRef<int64_t>(y->shape), ArrayRef<int64_t>({4, 256}));
    EXPECT_EQ(y->data, x.data);

    Expected<HostTensor> nope = ex.getOutput("nope");
    ASSERT_FALSE(nope);
    EXPECT_EQ(runtimeMessage(nope),
              "graph 'copies' has no buffer 'nope' (outputs: y)");
  }
  d.reset();
  EXPECT_EQ(liveObjects(), 0) << "device objects leaked";
}

TEST_F(Runtime, SetInputChecks) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  Expected<std::unique_ptr<Executor>> exOr =
      Executor::create(*d, copyManifest(), kCopyPtx);
  ASSERT_TRUE(bool(exOr)) << toString(exOr.takeError());
  Executor &ex = **exOr;
  EXPECT_EQ(runtimeMessage(ex.setInput("x", HostTensor(DType::F32, {256, 4}))),
            "input 'x' has shape [4, 256] but the tensor has shape [256, 4]");
  EXPECT_EQ(runtimeMessage(ex.setInput("x", HostTensor(DType::BF16, {4, 256}))),
            "input 'x' is f32 but the tensor is bf16");
  HostTensor truncated(DType::F32, {4, 256});
  truncated.data.resize(100);
  EXPECT_EQ(runtimeMessage(ex.setInput("x", truncated)),
            "input 'x' needs 4096 bytes but the tensor holds 100");
  EXPECT_EQ(runtimeMessage(ex.setInput("y", randomInput())),
            "'y' is not an input of graph 'copies' (inputs: x)");
  EXPECT_EQ(runtimeMessage(ex.setInput("zz", randomInput())),
            "'zz' is not an input of graph 'copies' (inputs: x)");
}

TEST_F(Runtime, RunRefusesUnsetInputs) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  Expected<std::unique_ptr<Executor>> ex =
      Executor::create(*d, copyManifest(), kCopyPtx);
  ASSERT_TRUE(bool(ex)) << toString(ex.takeError());
  EXPECT_EQ(runtimeMessage((*ex)->run()),
            "input 'x' has not been set; running the graph would compute on "
            "zeros");
}

TEST_F(Runtime, TimingRefusesUnsetInputs) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  Expected<std::unique_ptr<Executor>> ex =
      Executor::create(*d, copyManifest(), kCopyPtx);
  ASSERT_TRUE(bool(ex)) << toString(ex.takeError());
  resetStats();
  Expected<Timing> t = (*ex)->time();
  ASSERT_FALSE(t);
  EXPECT_EQ(runtimeMessage(t),
            "input 'x' has not been set; timing would compute on zeros");
  EXPECT_EQ(executedKernels(), 0);
}

TEST_F(Runtime, TimingWholeProgramRotatesInputs) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  {
    Expected<std::unique_ptr<Executor>> exOr =
        Executor::create(*d, copyManifest(), kCopyPtx);
    ASSERT_TRUE(bool(exOr)) << toString(exOr.takeError());
    Executor &ex = **exOr;
    ASSERT_FALSE(bool(ex.setInput("x", randomInput())));

    // Default footprint: 4 x 50 MiB of L2 over 4 KiB of input wants 51200
    // copies; capped at 16384, rounded up to whole graphs of 40 calls.
    resetStats();
    Expected<Timing> t = ex.time();
    ASSERT_TRUE(bool(t)) << toString(t.takeError());
    EXPECT_EQ(t->rotatedBytes, 4096);
    EXPECT_EQ(t->copies, 16400);
    EXPECT_EQ(t->footprintBytes, 16400 * 4096);
    EXPECT_EQ(t->graphs, 410u);
    EXPECT_EQ(t->callsPerGraph, 40u);
    ASSERT_EQ(t->samplesMicros.size(), 15u);
    // Two kernels of one simulated microsecond each per call.
    EXPECT_NEAR(t->medianMicros, 2.0, 1e-4);
    EXPECT_NEAR(t->minMicros, 2.0, 1e-4);
    EXPECT_NEAR(t->maxMicros, 2.0, 1e-4);
    // One plain run, 410 warm-up replays (every graph once), 15 timed ones.
    EXPECT_EQ(executedKernels(), 2 + (410 + 15) * 40 * 2);
    // k0 read every copy of x, k1 always the one t.
    EXPECT_EQ(distinctFirstArgs(), 16400 + 1);
    // Every copy of x held x.
    EXPECT_EQ(copyMismatches(), 0);
    Expected<HostTensor> y = ex.getOutput("y");
    ASSERT_TRUE(bool(y));
    EXPECT_EQ(y->data, randomInput().data);

    // A small footprint: 3 copies, 42 calls in one graph.
    TimingOptions o;
    o.minFootprintBytes = 3 * 4096;
    o.replays = 5;
    o.warmup = 1;
    resetStats();
    t = ex.time(o);
    ASSERT_TRUE(bool(t)) << toString(t.takeError());
    EXPECT_EQ(t->copies, 3);
    EXPECT_EQ(t->graphs, 1u);
    EXPECT_EQ(t->callsPerGraph, 42u);
    EXPECT_EQ(t->samplesMicros.size(), 5u);
    EXPECT_NEAR(t->medianMicros, 2.0, 1e-4);
    EXPECT_EQ(distinctFirstArgs(), 3 + 1);
    EXPECT_EQ(copyMismatches(), 0);
  }
  d.reset();
  EXPECT_EQ(liveObjects(), 0) << "timing leaked graphs, events or copies";
}

TEST_F(Runtime, TimingOneKernelRotatesWhatItReads) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  Expected<std::unique_ptr<Executor>> exOr =
      Executor::create(*d, copyManifest(), kCopyPtx);
  ASSERT_TRUE(bool(exOr)) << toString(exOr.takeError());
  Executor &ex = **exOr;
  ASSERT_FALSE(bool(ex.setInput("x", randomInput())));
  TimingOptions o;
  o.kernel = 1;
  o.minFootprintBytes = 4 * 4096;
  resetStats();
  Expected<Timing> t = ex.time(o);
  ASSERT_TRUE(bool(t)) << toString(t.takeError());
  // k1 reads t, which k0 produced.
  EXPECT_EQ(t->rotatedBytes, 4096);
  EXPECT_EQ(t->copies, 4);
  EXPECT_EQ(t->callsPerGraph, 40u);
  EXPECT_NEAR(t->medianMicros, 1.0, 1e-4);
  // Every copy of t (and x, in the plain run first) held k0's result.
  EXPECT_EQ(distinctFirstArgs(), 4 + 1);
  EXPECT_EQ(copyMismatches(), 0);
  Expected<HostTensor> y = ex.getOutput("y");
  ASSERT_TRUE(bool(y));
  EXPECT_EQ(y->data, randomInput().data);

  o.kernel = 2;
  t = ex.time(o);
  ASSERT_FALSE(t);
  EXPECT_EQ(runtimeMessage(t), "there is no kernel 2 (2 kernels)");
}

TEST_F(Runtime, TimingFaultIsReported) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  Expected<std::unique_ptr<Executor>> exOr =
      Executor::create(*d, copyManifest(), kCopyPtx);
  ASSERT_TRUE(bool(exOr)) << toString(exOr.takeError());
  ASSERT_FALSE(bool((*exOr)->setInput("x", randomInput())));
  setMode("launch_fail");
  Expected<Timing> t = (*exOr)->time();
  ASSERT_FALSE(t);
  EXPECT_EQ(runtimeMessage(t),
            "kernel 'k0_copy' failed: cuLaunchKernel failed: "
            "CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)");
}

//===----------------------------------------------------------------------===//
// The streaming-read ceiling
//===----------------------------------------------------------------------===//

TEST(ReadBandwidth, PtxAssembles) {
#ifndef MTC_PTXAS
  GTEST_SKIP() << "ptxas was not found at configure time";
#else
  if (!sys::fs::can_execute(MTC_PTXAS))
    GTEST_SKIP() << MTC_PTXAS << " is not executable";
  SmallString<128> path;
  ASSERT_FALSE(sys::fs::createTemporaryFile("mtc-read-bw", "ptx", path));
  {
    std::error_code ec;
    raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << readBandwidthPTX();
  }
  for (const char *arch : {"-arch=sm_90", "-arch=sm_80"}) {
    std::string errMsg;
    StringRef args[] = {MTC_PTXAS, arch, path, "-o", "/dev/null"};
    int rc =
        sys::ExecuteAndWait(MTC_PTXAS, args, std::nullopt, {}, 60, 0, &errMsg);
    EXPECT_EQ(rc, 0) << "ptxas " << arch << " rejected the read kernel "
                     << errMsg;
  }
  sys::fs::remove(path);
#endif
}

TEST_F(Runtime, ReadBandwidthWithTheFake) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  resetStats();
  int64_t bytes = int64_t(64) << 20;
  Expected<double> bw = measureReadBandwidth(*d, bytes);
  ASSERT_TRUE(bool(bw)) << toString(bw.takeError());
  // One simulated microsecond per call.
  EXPECT_NEAR(*bw, double(bytes) * 1e6, double(bytes) * 1e6 * 1e-4);
  unsigned grid[3], block[3], shared;
  fakeFn<void (*)(unsigned *, unsigned *, unsigned *)>("fakeCudaLastLaunch")(
      grid, block, &shared);
  EXPECT_EQ(grid[0], 132u * 8); // 8 blocks of 256 threads per SM
  EXPECT_EQ(block[0], 256u);
  d.reset();
  EXPECT_EQ(liveObjects(), 0);
}

} // namespace
