//===- CApiErrorsTest.cpp - libmtc_runtime.so's errors --------------------===//
//
// Every error of loading and querying an artifact through the C ABI, on
// FakeCuda, with its status and message (launch errors are in CApiTest.cpp,
// next to the launches).
//
//===----------------------------------------------------------------------===//
#include "CApiFixture.h"

namespace mtc::capitest {
namespace {

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
} // namespace mtc::capitest
