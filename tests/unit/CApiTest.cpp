//===- CApiTest.cpp - libmtc_runtime.so against the fake driver -----------===//
//
// Loads artifacts through the C ABI on FakeCuda: bucket choice, the tensors
// each bucket expects, the pointers each launch passes, launches captured
// into a graph and launches from a thread whose current context is another
// one. CApiErrorsTest.cpp has the error paths.
//
//===----------------------------------------------------------------------===//
#include "CApiFixture.h"

namespace mtc::capitest {
namespace {

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

TEST_F(CApi, TensorMapParametersThroughTheCApi) {
  // k0 takes x as a tensor map: the library encodes it at load and points
  // it at the caller's x at every launch, captured launches included.
  Manifest man = bucketManifest(4, "tma.ptx");
  man.bindings.clear();
  TensorMapInfo t;
  t.dims = {64, 4};
  t.strides = {64 * 4};
  t.box = {32, 4};
  t.swizzle = TensorMapInfo::Swizzle::B128;
  man.kernels[0].tensorMaps = {t};
  writeJSON("tma.json", man.toJSON());
  write("tma.ptx", R"(
.version 8.0
.target sm_90a
.address_size 64
.visible .entry k0_copy(.param .align 64 .b8 a[128], .param .u64 b, .param .u64 c) { ret; }
.visible .entry k1_copy(.param .u64 a, .param .u64 b) { ret; }
)");
  mtc_artifact *a = nullptr;
  ASSERT_EQ(mtc_artifact_load(path("tma.json").c_str(), &a), MTC_SUCCESS)
      << mtc_last_error();
  std::vector<float> host(4 * 64);
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = float(i) + 0.25f;
  CUdeviceptr x = alloc(4 * 64 * 4), w = alloc(32 * 64), y = alloc(4 * 64 * 4);
  fake<CUresult (*)(CUdeviceptr, const void *, size_t)>("cuMemcpyHtoD_v2")(
      x, host.data(), host.size() * 4);
  CUdeviceptr inputs[] = {x, w}, outputs[] = {y};
  ASSERT_EQ(mtc_artifact_launch(a, 0, nullptr, inputs, 2, outputs, 1),
            MTC_SUCCESS)
      << mtc_last_error();
  std::vector<float> out(4 * 64, -1.0f);
  fake<CUresult (*)(void *, CUdeviceptr, size_t)>("cuMemcpyDtoH_v2")(
      out.data(), y, out.size() * 4);
  EXPECT_EQ(out, host) << "x reached y through the tensor map";
  mtc_artifact_free(a);
  for (CUdeviceptr p : {x, w, y})
    release(p);

  // A map the driver refuses fails the load, naming it.
  man.kernels[0].tensorMaps[0].box = {32, 300};
  writeJSON("tma.json", man.toJSON());
  expectLoadError(path("tma.json"), MTC_ERROR_MALFORMED,
                  "kernel 'k0_copy': the tensor map of parameter 0 ('x', "
                  "f32) is invalid: box[1] = 300 is not in [1, 256]");
}

} // namespace
} // namespace mtc::capitest
