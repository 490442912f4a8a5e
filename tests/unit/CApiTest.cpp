//===- CApiTest.cpp - libmtc_runtime.so against the fake driver -----------===//
//
// Loads artifacts written here (a dispatch manifest over two buckets, each a
// two-kernel program with an intermediate and a workspace) through the C
// ABI, on FakeCuda (tests/unit/FakeCuda.cpp): bucket choice, the tensors
// each bucket expects, the pointers each launch passes, launches captured
// into a graph and launches from a thread whose current context is another
// one, and every error path with its status and message.
//
//===----------------------------------------------------------------------===//
#include "runtime/mtc_runtime.h"

#include "runtime/Manifest.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

using namespace mtc;
using llvm::SmallString;
using llvm::StringRef;

namespace {

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

const char *kPtx = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry k0_copy(.param .u64 a, .param .u64 b, .param .u64 c) { ret; }
.visible .entry k1_copy(.param .u64 a, .param .u64 b) { ret; }
)";

BufferInfo buffer(StringRef name, BufferInfo::Role role, DType dt,
                  llvm::ArrayRef<int64_t> shape) {
  BufferInfo b;
  b.name = name.str();
  b.role = role;
  b.dtype = dt;
  b.shape.assign(shape.begin(), shape.end());
  return b;
}

/// x [m, 64] f32 -> k0_copy (with a workspace) -> t -> k1_copy -> y; w is a
/// second, static input.
Manifest bucketManifest(int64_t m, StringRef ptxFile) {
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

TEST_F(CApi, VersionAndStatusNames) {
  EXPECT_EQ(mtc_runtime_abi_version(), MTC_RUNTIME_ABI_VERSION);
  EXPECT_STREQ(mtc_status_name(MTC_SUCCESS), "MTC_SUCCESS");
  EXPECT_STREQ(mtc_status_name(MTC_ERROR_OUT_OF_RANGE),
               "MTC_ERROR_OUT_OF_RANGE");
  EXPECT_STREQ(mtc_status_name(mtc_status(42)), "MTC_ERROR_UNKNOWN");
}

TEST_F(CApi, LoadDescribesBucketsAndTensors) {
  long before = liveObjects();
  mtc_artifact *a = nullptr;
  ASSERT_EQ(mtc_artifact_load(writeArtifact().c_str(), &a), MTC_SUCCESS)
      << mtc_last_error();
  EXPECT_STREQ(mtc_artifact_graph(a), "copies");
  EXPECT_STREQ(mtc_artifact_symbol(a), "M");
  ASSERT_EQ(mtc_artifact_num_buckets(a), 2u);
  EXPECT_EQ(mtc_artifact_bucket_value(a, 0), 2);
  EXPECT_EQ(mtc_artifact_bucket_value(a, 1), 4);
  EXPECT_EQ(mtc_artifact_bucket_value(a, 2), -1);
  EXPECT_EQ(mtc_artifact_num_inputs(a), 2u);
  EXPECT_EQ(mtc_artifact_num_outputs(a), 1u);

  size_t b = 9;
  for (auto [value, bucket] :
       {std::pair<int64_t, size_t>{1, 0}, {2, 0}, {3, 1}, {4, 1}}) {
    ASSERT_EQ(mtc_artifact_select(a, value, &b), MTC_SUCCESS);
    EXPECT_EQ(b, bucket) << "M = " << value;
  }
  EXPECT_EQ(mtc_artifact_select(a, 5, &b), MTC_ERROR_OUT_OF_RANGE);
  EXPECT_STREQ(mtc_last_error(),
               "M = 5 exceeds the largest bucket of graph 'copies' (4)");
  EXPECT_EQ(mtc_artifact_select(a, 0, &b), MTC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(mtc_last_error(), "M = 0: the value must be at least 1");

  mtc_tensor_info t;
  ASSERT_EQ(mtc_artifact_tensor(a, 1, MTC_INPUT, 0, &t), MTC_SUCCESS);
  EXPECT_STREQ(t.name, "x");
  EXPECT_STREQ(t.dtype, "f32");
  ASSERT_EQ(t.rank, 2);
  EXPECT_EQ(t.shape[0], 4);
  EXPECT_EQ(t.shape[1], 64);
  EXPECT_EQ(t.bytes, 4 * 64 * 4);
  EXPECT_EQ(t.symbolic_dim, 0);
  ASSERT_EQ(mtc_artifact_tensor(a, 0, MTC_INPUT, 1, &t), MTC_SUCCESS);
  EXPECT_STREQ(t.name, "w");
  EXPECT_EQ(t.symbolic_dim, -1);
  ASSERT_EQ(mtc_artifact_tensor(a, 0, MTC_OUTPUT, 0, &t), MTC_SUCCESS);
  EXPECT_STREQ(t.name, "y");
  EXPECT_EQ(t.shape[0], 2);
  EXPECT_EQ(t.symbolic_dim, 0);

  EXPECT_EQ(mtc_artifact_tensor(a, 2, MTC_INPUT, 0, &t),
            MTC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(mtc_last_error(), "bucket 2 does not exist (2 buckets)");
  EXPECT_EQ(mtc_artifact_tensor(a, 0, MTC_OUTPUT, 1, &t),
            MTC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(mtc_last_error(), "graph 'copies' has no output 1 (1 in all)");
  EXPECT_EQ(mtc_artifact_tensor(a, 0, mtc_tensor_kind(7), 0, &t),
            MTC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(mtc_artifact_tensor(a, 0, MTC_INPUT, 0, nullptr),
            MTC_ERROR_INVALID_ARGUMENT);

  // Each bucket owns its intermediate and its workspace.
  EXPECT_EQ(liveObjects(), before + 2 /*modules*/ + 4 /*buffers*/);
  mtc_artifact_free(a);
  EXPECT_EQ(liveObjects(), before);
  mtc_artifact_free(nullptr);
}

TEST_F(CApi, LaunchPassesTheCallersPointers) {
  mtc_artifact *a = nullptr;
  ASSERT_EQ(mtc_artifact_load(writeArtifact().c_str(), &a), MTC_SUCCESS)
      << mtc_last_error();
  // M = 3 runs bucket 4: buffers of 4 rows.
  std::vector<float> host(4 * 64);
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = float(i) * 0.5f;
  CUdeviceptr x = alloc(4 * 64 * 4), w = alloc(32 * 64), y = alloc(4 * 64 * 4);
  fake<CUresult (*)(CUdeviceptr, const void *, size_t)>("cuMemcpyHtoD_v2")(
      x, host.data(), host.size() * 4);
  CUdeviceptr inputs[] = {x, w}, outputs[] = {y};
  long before = executed();
  ASSERT_EQ(mtc_artifact_launch(a, 3, nullptr, inputs, 2, outputs, 1),
            MTC_SUCCESS)
      << mtc_last_error();
  EXPECT_EQ(executed(), before + 2);
  // The fake's *copy kernels copy parameter 0 into parameter 1: x reached y
  // through the artifact's own intermediate.
  std::vector<float> out(4 * 64, -1.0f);
  fake<CUresult (*)(void *, CUdeviceptr, size_t)>("cuMemcpyDtoH_v2")(
      out.data(), y, out.size() * 4);
  EXPECT_EQ(out, host);
  unsigned grid[3], block[3], shared;
  fake<void (*)(unsigned *, unsigned *, unsigned *)>("fakeCudaLastLaunch")(
      grid, block, &shared);
  EXPECT_EQ(grid[0], 4u) << "bucket 4's geometry";
  EXPECT_EQ(block[0], 64u);
  EXPECT_EQ(shared, 0u);

  // Wrong counts and null pointers are refused before anything launches.
  before = executed();
  EXPECT_EQ(mtc_artifact_launch(a, 3, nullptr, inputs, 1, outputs, 1),
            MTC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(mtc_last_error(), "graph 'copies' takes 2 inputs and 1 "
                                 "outputs; the launch passes 1 and 1");
  CUdeviceptr nullInput[] = {x, 0};
  EXPECT_EQ(mtc_artifact_launch(a, 3, nullptr, nullInput, 2, outputs, 1),
            MTC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(mtc_last_error(), "input 1 ('w') is a null pointer");
  CUdeviceptr nullOutput[] = {0};
  EXPECT_EQ(mtc_artifact_launch(a, 3, nullptr, inputs, 2, nullOutput, 1),
            MTC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(mtc_last_error(), "output 0 ('y') is a null pointer");
  CUdeviceptr misaligned[] = {x + 4, w};
  EXPECT_EQ(mtc_artifact_launch(a, 3, nullptr, misaligned, 2, outputs, 1),
            MTC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(mtc_last_error(), "input 0 ('x') is not 16-byte aligned");
  EXPECT_EQ(mtc_artifact_launch(a, 3, nullptr, nullptr, 2, outputs, 1),
            MTC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(mtc_artifact_launch(a, 9, nullptr, inputs, 2, outputs, 1),
            MTC_ERROR_OUT_OF_RANGE);
  EXPECT_EQ(mtc_artifact_launch(nullptr, 3, nullptr, inputs, 2, outputs, 1),
            MTC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(executed(), before);

  // A failing launch is a CUDA error naming the kernel.
  ::setenv("FAKE_CUDA_MODE", "launch_fail", 1);
  EXPECT_EQ(mtc_artifact_launch(a, 3, nullptr, inputs, 2, outputs, 1),
            MTC_ERROR_CUDA);
  EXPECT_NE(StringRef(mtc_last_error()).find("kernel 'k0_copy' failed"),
            StringRef::npos)
      << mtc_last_error();
  EXPECT_NE(StringRef(mtc_last_error()).find("CUDA_ERROR_LAUNCH_FAILED"),
            StringRef::npos)
      << mtc_last_error();
  ::setenv("FAKE_CUDA_MODE", "ok", 1);

  mtc_artifact_free(a);
  for (CUdeviceptr p : {x, w, y})
    release(p);
}

TEST_F(CApi, LaunchesAreCapturedIntoGraphs) {
  mtc_artifact *a = nullptr;
  ASSERT_EQ(mtc_artifact_load(writeArtifact().c_str(), &a), MTC_SUCCESS)
      << mtc_last_error();
  CUdeviceptr x = alloc(2 * 64 * 4), w = alloc(32 * 64), y = alloc(2 * 64 * 4);
  CUdeviceptr inputs[] = {x, w}, outputs[] = {y};
  struct CUstream_st *s = nullptr;
  ASSERT_EQ(
      fake<CUresult (*)(CUstream_st **, unsigned)>("cuStreamCreate")(&s, 1), 0);
  ASSERT_EQ(
      fake<CUresult (*)(CUstream_st *, int)>("cuStreamBeginCapture_v2")(s, 0),
      0);
  long before = executed();
  // Anything that allocated, copied or synchronised would invalidate the
  // capture (the fake checks, as the driver does).
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(mtc_artifact_launch(a, 2, s, inputs, 2, outputs, 1), MTC_SUCCESS)
        << mtc_last_error();
  CUgraph_st *g = nullptr;
  ASSERT_EQ(fake<CUresult (*)(CUstream_st *, CUgraph_st **)>(
                "cuStreamEndCapture")(s, &g),
            0)
      << "the capture was invalidated";
  EXPECT_EQ(executed(), before) << "captured launches must not run";
  fake<CUresult (*)(CUgraph_st *)>("cuGraphDestroy")(g);
  fake<CUresult (*)(CUstream_st *)>("cuStreamDestroy_v2")(s);
  mtc_artifact_free(a);
  for (CUdeviceptr p : {x, w, y})
    release(p);
}

TEST_F(CApi, LaunchFromAnotherCurrentContext) {
  mtc_artifact *a = nullptr;
  ASSERT_EQ(mtc_artifact_load(writeArtifact().c_str(), &a), MTC_SUCCESS)
      << mtc_last_error();
  CUdeviceptr x = alloc(2 * 64 * 4), w = alloc(32 * 64), y = alloc(2 * 64 * 4);
  CUdeviceptr inputs[] = {x, w}, outputs[] = {y};
  // The fake runs kernels only in their module's context: the launch must
  // push it, and pop it again.
  fake<void (*)(int)>("fakeCudaSetCurrentContext")(2);
  EXPECT_EQ(mtc_artifact_launch(a, 1, nullptr, inputs, 2, outputs, 1),
            MTC_SUCCESS)
      << mtc_last_error();
  EXPECT_EQ(fake<long (*)()>("fakeCudaPushedContexts")(), 0);
  // Freeing it from there leaves that context current.
  mtc_artifact_free(a);
  CUctx_st *current = nullptr;
  fake<CUresult (*)(CUctx_st **)>("cuCtxGetCurrent")(&current);
  EXPECT_NE(current, nullptr);
  fake<void (*)(int)>("fakeCudaSetCurrentContext")(1);
  CUctx_st *primary = nullptr;
  fake<CUresult (*)(CUctx_st **)>("cuCtxGetCurrent")(&primary);
  EXPECT_NE(current, primary) << "mtc_artifact_free switched contexts";
  for (CUdeviceptr p : {x, w, y})
    release(p);
}

TEST_F(CApi, UnboundGraph) {
  writeJSON("single.json", bucketManifest(3, "single.ptx").toJSON());
  write("single.ptx", kPtx);
  mtc_artifact *a = nullptr;
  ASSERT_EQ(mtc_artifact_load(path("single.json").c_str(), &a), MTC_SUCCESS)
      << mtc_last_error();
  EXPECT_STREQ(mtc_artifact_symbol(a), "");
  ASSERT_EQ(mtc_artifact_num_buckets(a), 1u);
  EXPECT_EQ(mtc_artifact_bucket_value(a, 0), 0);
  size_t b = 9;
  EXPECT_EQ(mtc_artifact_select(a, 0, &b), MTC_SUCCESS);
  EXPECT_EQ(b, 0u);
  EXPECT_EQ(mtc_artifact_select(a, 3, &b), MTC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(mtc_last_error(),
               "graph 'copies' has no symbolic dimension; pass 0, not 3");
  mtc_tensor_info t;
  ASSERT_EQ(mtc_artifact_tensor(a, 0, MTC_INPUT, 0, &t), MTC_SUCCESS);
  EXPECT_EQ(t.symbolic_dim, -1);
  mtc_artifact_free(a);
}

//===----------------------------------------------------------------------===//
// Errors while loading
//===----------------------------------------------------------------------===//

TEST_F(CApi, ArgumentErrors) {
  mtc_artifact *a = nullptr;
  EXPECT_EQ(mtc_artifact_load(nullptr, &a), MTC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(mtc_last_error(), "mtc_artifact_load: path is null or empty");
  EXPECT_EQ(mtc_artifact_load("x.json", nullptr), MTC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(mtc_last_error(), "mtc_artifact_load: out is null");
  EXPECT_EQ(mtc_artifact_select(nullptr, 1, nullptr),
            MTC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(mtc_artifact_graph(nullptr), "");
  EXPECT_EQ(mtc_artifact_num_buckets(nullptr), 0u);
}

TEST_F(CApi, FileErrors) {
  expectLoadError(path("missing.json"), MTC_ERROR_IO,
                  "cannot read '" + path("missing.json") + "': ");
  write("junk.json", "{ not json");
  expectLoadError(path("junk.json"), MTC_ERROR_MALFORMED,
                  "'" + path("junk.json") + "' is not JSON: ");
  write("list.json", "[1, 2]");
  expectLoadError(path("list.json"), MTC_ERROR_MALFORMED,
                  "is not an mtc manifest");

  // A bucket's PTX is missing.
  std::string p = writeArtifact();
  llvm::sys::fs::remove(path("copies.M4.ptx"));
  expectLoadError(p, MTC_ERROR_IO, "cannot read '" + path("copies.M4.ptx"));
}

TEST_F(CApi, MalformedManifests) {
  // Written by an older mtc: no dynamic shared memory.
  llvm::json::Value v = bucketManifest(2, "old.ptx").toJSON();
  (*v.getAsObject()->getArray("kernels"))[0].getAsObject()->erase(
      "dynamic_shared_bytes");
  writeJSON("old.json", v);
  write("old.ptx", kPtx);
  expectLoadError(path("old.json"), MTC_ERROR_MALFORMED,
                  "kernel 'k0_copy' has no dynamic_shared_bytes (written by "
                  "an older mtc: compile the graph again)");

  // A workspace that claims to need no zeroing.
  v = bucketManifest(2, "old.ptx").toJSON();
  (*(*v.getAsObject()->getArray("buffers"))[4].getAsObject())["init"] = "none";
  writeJSON("ws.json", v);
  expectLoadError(path("ws.json"), MTC_ERROR_MALFORMED,
                  "buffer 'ws' (workspace) has init 'none', expected "
                  "'zero_once'");

  // Buckets that are not the same graph.
  std::string p = writeArtifact();
  Manifest other = bucketManifest(4, "copies.M4.ptx");
  other.buffers[1].shape = {16, 64};
  writeJSON("copies.M4.json", other.toJSON());
  expectLoadError(p, MTC_ERROR_MALFORMED,
                  "dimension 0 of tensor 'w' differs between buckets but is "
                  "not 'M'");
  other = bucketManifest(4, "copies.M4.ptx");
  other.buffers[0].dtype = DType::BF16;
  writeJSON("copies.M4.json", other.toJSON());
  expectLoadError(p, MTC_ERROR_MALFORMED,
                  "the buckets of 'copies' disagree on tensor 'x'");

  // A buffer twice in one manifest.
  Manifest twice = bucketManifest(2, "old.ptx");
  twice.buffers.push_back(twice.buffers[2]);
  writeJSON("twice.json", twice.toJSON());
  expectLoadError(path("twice.json"), MTC_ERROR_MALFORMED,
                  "malformed manifest: buffer 't' appears twice");

  // A dispatch manifest with one bucket (mtc never writes one).
  DispatchManifest d;
  d.graph = "copies";
  d.symbol = "M";
  d.buckets = {{2, "copies.M2.json"}};
  writeJSON("one.json", d.toJSON());
  expectLoadError(path("one.json"), MTC_ERROR_MALFORMED,
                  "has fewer than two buckets");
}

TEST_F(CApi, DriverErrors) {
  std::string p = writeArtifact();
  long before = liveObjects();

  fake<void (*)(int)>("fakeCudaSetCurrentContext")(0);
  expectLoadError(p, MTC_ERROR_CUDA,
                  "no CUDA context is current on this thread: initialise "
                  "CUDA first");
  fake<void (*)(int)>("fakeCudaSetCurrentContext")(1);

  ::setenv("FAKE_CUDA_MODE", "bad_ptx", 1);
  expectLoadError(p, MTC_ERROR_CUDA, "JIT error log:\nptxas application ptx");
  EXPECT_NE(StringRef(mtc_last_error()).find(path("copies.M2.json")),
            StringRef::npos)
      << "the failing bucket is named: " << mtc_last_error();

  ::setenv("FAKE_CUDA_MODE", "no_device", 1);
  expectLoadError(p, MTC_ERROR_CUDA, "no CUDA device found");

  ::setenv("MTC_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  ::setenv("FAKE_CUDA_MODE", "ok", 1);
  expectLoadError(p, MTC_ERROR_CUDA,
                  "cannot load the CUDA driver (/nonexistent/libcuda.so.1)");
  ::setenv("MTC_CUDA_LIBRARY", MTC_FAKE_CUDA, 1);

  // Out of memory while allocating the second bucket's workspace: what the
  // first bucket made is freed again.
  Manifest big = bucketManifest(4, "copies.M4.ptx");
  big.buffers[4].shape = {int64_t(2) << 30};
  writeJSON("copies.M4.json", big.toJSON());
  ::setenv("FAKE_CUDA_MODE", "oom", 1);
  expectLoadError(p, MTC_ERROR_CUDA,
                  "out of device memory: needed 2.0 GiB for buffer 'ws'");
  EXPECT_EQ(liveObjects(), before);
}

} // namespace
