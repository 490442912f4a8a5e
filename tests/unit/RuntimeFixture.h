//===- RuntimeFixture.h - The runtime on the fake driver --------*- C++ -*-===//
//
// What the tests of the runtime on FakeCuda share (RuntimeTest.cpp,
// RuntimeLaunchTest.cpp, RuntimeExecutorTest.cpp, TensorMapTest.cpp): the
// fixture that points MTC_CUDA_LIBRARY at the fake, the fake's inspection
// functions, a graph of two copy kernels, and (ManifestParts.h) manifest
// pieces.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_TESTS_UNIT_RUNTIMEFIXTURE_H
#define MTC_TESTS_UNIT_RUNTIMEFIXTURE_H

#include "runtime/Device.h"
#include "runtime/HostTensor.h"
#include "runtime/Manifest.h"

#include "ManifestParts.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace mtc::test {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// The message of `err`, which must be a RuntimeError (exit code 2).
inline std::string runtimeMessage(llvm::Error err) {
  EXPECT_TRUE(bool(err)) << "expected an error";
  std::string msg;
  bool isRuntime = err.isA<RuntimeError>();
  llvm::handleAllErrors(
      std::move(err), [&](const llvm::ErrorInfoBase &e) { msg = e.message(); });
  EXPECT_TRUE(isRuntime) << "not a RuntimeError: " << msg;
  return msg;
}

template <typename T> std::string runtimeMessage(llvm::Expected<T> &v) {
  if (v)
    return "<no error>";
  return runtimeMessage(v.takeError());
}

/// A fakeCuda* inspection function.
template <typename Fn> Fn fakeFn(const char *name) {
  void *lib = ::dlopen(MTC_FAKE_CUDA, RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(lib, nullptr) << "FakeCuda is not loaded";
  void *sym = lib ? ::dlsym(lib, name) : nullptr;
  EXPECT_NE(sym, nullptr) << name;
  return reinterpret_cast<Fn>(sym);
}

inline long liveObjects() {
  return fakeFn<long (*)()>("fakeCudaLiveObjects")();
}
inline long executedKernels() {
  return fakeFn<long (*)()>("fakeCudaExecutedKernels")();
}
inline long distinctFirstArgs() {
  return fakeFn<long (*)()>("fakeCudaDistinctFirstArgs")();
}
inline long copyMismatches() {
  return fakeFn<long (*)()>("fakeCudaCopyMismatches")();
}
inline void resetStats() { fakeFn<void (*)()>("fakeCudaResetStats")(); }

class Runtime : public ::testing::Test {
protected:
  void SetUp() override {
    ::setenv("MTC_CUDA_LIBRARY", MTC_FAKE_CUDA, 1);
    setMode("ok");
    ::unsetenv("FAKE_CUDA_FAULT_KERNEL");
  }
  void TearDown() override {
    setMode("ok");
    ::unsetenv("FAKE_CUDA_FAULT_KERNEL");
  }
  static void setMode(const char *mode) { ::setenv("FAKE_CUDA_MODE", mode, 1); }
  std::unique_ptr<Device> openDevice() {
    llvm::Expected<std::unique_ptr<Device>> d = Device::open();
    if (!d) {
      ADD_FAILURE() << llvm::toString(d.takeError());
      return nullptr;
    }
    return std::move(*d);
  }
};

//===----------------------------------------------------------------------===//
// The copy graph
//===----------------------------------------------------------------------===//

/// Two copy kernels and fat_k, to which FakeCuda gives 128 registers (at
/// most 256 threads per block).
inline const char *const kCopyPtx = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry k0_copy(.param .u64 a, .param .u64 b) { ret; }
.visible .entry k1_copy(.param .u64 a, .param .u64 b) { ret; }
.visible .entry fat_k(.param .u64 a, .param .u64 b) { ret; }
)";

/// x -> k0_copy -> t -> k1_copy -> y, with 1024 f32 elements (4 KiB) each.
inline Manifest copyManifest() {
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

/// A seeded value of copyManifest()'s input x.
inline HostTensor randomInput() {
  HostTensor x(DType::F32, {4, 256});
  fillRandom(x, 7, "x");
  return x;
}

} // namespace mtc::test

#endif // MTC_TESTS_UNIT_RUNTIMEFIXTURE_H
