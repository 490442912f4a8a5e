//===- CApiFixture.h - libmtc_runtime.so tests' set-up ----------*- C++ -*-===//
//
// What CApiTest.cpp and CApiErrorsTest.cpp share: artifacts written to a
// temporary folder (a dispatch manifest over two buckets, each a two-kernel
// program with an intermediate and a workspace), the fake driver
// (tests/unit/FakeCuda.cpp) with its device's context current, and its
// entry points for allocating and inspecting.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_TESTS_UNIT_CAPIFIXTURE_H
#define MTC_TESTS_UNIT_CAPIFIXTURE_H

#include "runtime/mtc_runtime.h"

#include "runtime/Manifest.h"

#include "ManifestParts.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace mtc::capitest {

using llvm::SmallString;
using llvm::StringRef;

using CUresult = int;
using CUdeviceptr = unsigned long long;
struct CUgraph_st;
struct CUctx_st;

/// An entry point of the fake driver (loaded by the library on first use).
template <typename Fn> Fn fake(const char *name) {
  void *lib = ::dlopen(MTC_FAKE_CUDA, RTLD_NOW);
  EXPECT_NE(lib, nullptr) << ::dlerror();
  void *sym = lib ? ::dlsym(lib, name) : nullptr;
  EXPECT_NE(sym, nullptr) << name;
  return reinterpret_cast<Fn>(sym);
}

inline constexpr const char *kPtx = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry k0_copy(.param .u64 a, .param .u64 b, .param .u64 c) { ret; }
.visible .entry k1_copy(.param .u64 a, .param .u64 b) { ret; }
)";

using test::buffer;

/// x [m, 64] f32 -> k0_copy (with a workspace) -> t -> k1_copy -> y; w is a
/// second, static input.
inline Manifest bucketManifest(int64_t m, StringRef ptxFile) {
  Manifest man;
  man.mtcVersion = "test";
  man.graph = "copies";
  man.arch = "sm_90";
  man.ptxFile = ptxFile.str();
  man.bindings = {{"M", m}};
  man.buffers = {
      buffer("x", BufferInfo::Role::Input, DType::F32, {m, 64}),
      buffer("w", BufferInfo::Role::Input, DType::I8, {32, 64}),
      buffer("t", BufferInfo::Role::Intermediate, DType::F32, {m, 64}),
      buffer("y", BufferInfo::Role::Output, DType::F32, {m, 64}),
      buffer("ws", BufferInfo::Role::Workspace, DType::I8, {512})};
  man.outputs = {"y"};
  KernelInfo k0;
  k0.name = "k0_copy";
  k0.kind = "elementwise";
  k0.params = {"x", "t", "ws"};
  k0.grid = {m, 1, 1};
  k0.block = {64, 1, 1};
  k0.sharedBytes = k0.dynamicSharedBytes = 64 * 1024;
  KernelInfo k1 = k0;
  k1.name = "k1_copy";
  k1.params = {"t", "y"};
  k1.sharedBytes = k1.dynamicSharedBytes = 0;
  man.kernels = {k0, k1};
  return man;
}

class CApi : public ::testing::Test {
protected:
  void SetUp() override {
    ::setenv("MTC_CUDA_LIBRARY", MTC_FAKE_CUDA, 1);
    ::setenv("FAKE_CUDA_MODE", "ok", 1);
    SmallString<128> d;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("mtc-capi", d));
    dir = std::string(d);
    // The framework (PyTorch) has made the device's context current.
    fake<void (*)(int)>("fakeCudaSetCurrentContext")(1);
    fake<void (*)()>("fakeCudaResetStats")();
  }
  void TearDown() override {
    ::setenv("FAKE_CUDA_MODE", "ok", 1);
    fake<void (*)(int)>("fakeCudaSetCurrentContext")(0);
    llvm::sys::fs::remove_directories(dir);
  }

  std::string path(StringRef name) const {
    SmallString<256> p(dir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  void write(StringRef name, StringRef text) const {
    std::error_code ec;
    llvm::raw_fd_ostream os(path(name), ec);
    ASSERT_FALSE(ec) << ec.message();
    os << text;
  }
  void writeJSON(StringRef name, llvm::json::Value v) const {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << v;
    write(name, s);
  }
  /// copies.json dispatching M = 2 and 4 to copies.M2.json and
  /// copies.M4.json; returns its path.
  std::string writeArtifact() const {
    DispatchManifest d;
    d.mtcVersion = "test";
    d.graph = "copies";
    d.symbol = "M";
    for (int64_t m : {2, 4}) {
      std::string stem = "copies.M" + std::to_string(m);
      writeJSON(stem + ".json", bucketManifest(m, stem + ".ptx").toJSON());
      write(stem + ".ptx", kPtx);
      d.buckets.push_back({m, stem + ".json"});
    }
    writeJSON("copies.json", d.toJSON());
    return path("copies.json");
  }

  static CUdeviceptr alloc(size_t bytes) {
    CUdeviceptr p = 0;
    EXPECT_EQ(
        fake<CUresult (*)(CUdeviceptr *, size_t)>("cuMemAlloc_v2")(&p, bytes),
        0);
    return p;
  }
  static void release(CUdeviceptr p) {
    fake<CUresult (*)(CUdeviceptr)>("cuMemFree_v2")(p);
  }
  static long liveObjects() {
    return fake<long (*)()>("fakeCudaLiveObjects")();
  }
  static long executed() {
    return fake<long (*)()>("fakeCudaExecutedKernels")();
  }

  /// Loads `p`, expecting `status` and a message containing `text`.
  static void expectLoadError(const std::string &p, mtc_status status,
                              StringRef text) {
    mtc_artifact *a = reinterpret_cast<mtc_artifact *>(1);
    EXPECT_EQ(mtc_artifact_load(p.c_str(), &a), status) << mtc_last_error();
    EXPECT_EQ(a, nullptr);
    EXPECT_NE(StringRef(mtc_last_error()).find(text), StringRef::npos)
        << "expected '" << text.str() << "' in: " << mtc_last_error();
  }

  std::string dir;
};

} // namespace mtc::capitest

#endif // MTC_TESTS_UNIT_CAPIFIXTURE_H
