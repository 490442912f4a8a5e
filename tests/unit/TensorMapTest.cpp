//===- TensorMapTest.cpp - Kernel parameters that are tensor maps ---------===//
//
// TensorMapInfo against CUDA's rules, its manifest entry, and tensor-map
// parameters end to end on FakeCuda: encoded when the kernel loads, pointed
// at the buffer at every launch, passed by value (the fake's copy kernel
// reads through the map), and every failure named.
//
//===----------------------------------------------------------------------===//
#include "runtime/Executor.h"
#include "runtime/Program.h"

#include "RuntimeFixture.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

using namespace mtc;
using namespace mtc::test;
using namespace llvm;

namespace {

using Swizzle = TensorMapInfo::Swizzle;

TensorMapInfo map2d(int64_t cols, int64_t rows, int64_t rowBytes,
                    int64_t boxCols, int64_t boxRows,
                    Swizzle swizzle = Swizzle::None) {
  TensorMapInfo t;
  t.dims = {cols, rows};
  t.strides = {rowBytes};
  t.box = {boxCols, boxRows};
  t.swizzle = swizzle;
  return t;
}

//===----------------------------------------------------------------------===//
// CUDA's rules
//===----------------------------------------------------------------------===//

TEST(TensorMapInfo, ValidMaps) {
  // An int8 weight [4096, 8192] in 128-row, 64-byte boxes; bf16
  // activations [16, 4096] in 128-byte rows swizzled by 128 bytes.
  EXPECT_EQ(map2d(8192, 4096, 8192, 64, 128).invalidReason(1), "");
  EXPECT_EQ(map2d(4096, 16, 8192, 64, 16, Swizzle::B128).invalidReason(2), "");
  EXPECT_EQ(map2d(8192, 4096, 8192, 64, 128).extentBytes(1),
            int64_t(4096) * 8192);
  // A view of every other row ends one row early.
  EXPECT_EQ(map2d(64, 4, 256, 64, 4).extentBytes(2), 3 * 256 + 128);
}

TEST(TensorMapInfo, EachRuleHasItsMessage) {
  EXPECT_EQ(map2d(8192, 4096, 8192, 64, 512).invalidReason(1),
            "box[1] = 512 is not in [1, 256]");
  EXPECT_EQ(map2d(8192, 4096, 8200, 64, 128).invalidReason(1),
            "strides[0] = 8200 bytes is not a positive multiple of 16 below "
            "2^40");
  EXPECT_EQ(map2d(4096, 16, 8192, 12, 16).invalidReason(2),
            "the box's inner side is 24 bytes, not a multiple of 16");
  EXPECT_EQ(map2d(4096, 16, 8192, 64, 16, Swizzle::B64).invalidReason(2),
            "the box's inner side is 128 bytes, more than the 64B swizzle "
            "spans");
  EXPECT_EQ(map2d(0, 16, 8192, 64, 16).invalidReason(2),
            "dims[0] = 0 is not in [1, 2^32]");
  TensorMapInfo t = map2d(64, 16, 128, 64, 16);
  t.strides.clear();
  EXPECT_EQ(t.invalidReason(2),
            "0 strides for 2 dimensions (one per dimension after the first)");
  t.dims = {1, 1, 1, 1, 1, 1};
  EXPECT_EQ(t.invalidReason(2), "6 dimensions (1 to 5 allowed)");
}

TEST(TensorMapInfo, JsonRoundTrip) {
  TensorMapInfo t = map2d(4096, 16, 8192, 64, 16, Swizzle::B128);
  t.param = 3;
  t.l2Promotion = TensorMapInfo::L2Promotion::B256;
  Expected<TensorMapInfo> back = TensorMapInfo::fromJSON(t.toJSON());
  ASSERT_TRUE(bool(back)) << toString(back.takeError());
  EXPECT_EQ(back->param, 3u);
  EXPECT_EQ(back->dims, t.dims);
  EXPECT_EQ(back->strides, t.strides);
  EXPECT_EQ(back->box, t.box);
  EXPECT_EQ(back->swizzle, Swizzle::B128);
  EXPECT_EQ(back->l2Promotion, TensorMapInfo::L2Promotion::B256);
}

//===----------------------------------------------------------------------===//
// The manifest's "tensor_maps"
//===----------------------------------------------------------------------===//

/// x (bf16 [16, 64], one 128-byte row each) -> tma_copy -> y, with x
/// passed as a tensor map of the whole tensor in one box.
Manifest tmaManifest() {
  Manifest m;
  m.mtcVersion = "test";
  m.graph = "tma";
  m.arch = "sm_90";
  m.ptxFile = "tma.ptx";
  m.buffers = {buffer("x", BufferInfo::Role::Input, DType::BF16, {16, 64}),
               buffer("y", BufferInfo::Role::Output, DType::BF16, {16, 64})};
  m.outputs = {"y"};
  KernelInfo k = kernel("tma_copy", {"x", "y"}, 1, 128);
  k.tensorMaps = {map2d(64, 16, 128, 64, 16, Swizzle::B128)};
  m.kernels = {k};
  return m;
}

const char *kTmaPtx = R"(
.version 8.0
.target sm_90a
.address_size 64
.visible .entry tma_copy(.param .align 64 .b8 src[128], .param .u64 dst) { ret; }
.visible .entry ptr_copy(.param .u64 src, .param .u64 dst) { ret; }
)";

/// The message of reading `m` back from its JSON after `edit`.
std::string readBack(const Manifest &m,
                     function_ref<void(json::Object &)> edit) {
  json::Value v = m.toJSON();
  json::Object &k =
      *v.getAsObject()->getArray("kernels")->front().getAsObject();
  edit(*k.getArray("tensor_maps")->front().getAsObject());
  Expected<Manifest> back = Manifest::fromJSON(v);
  return back ? "<no error>" : toString(back.takeError());
}

TEST(TensorMapManifest, RoundTripAndErrors) {
  Manifest m = tmaManifest();
  Expected<Manifest> back = Manifest::fromJSON(m.toJSON());
  ASSERT_TRUE(bool(back)) << toString(back.takeError());
  ASSERT_EQ(back->kernels[0].tensorMaps.size(), 1u);
  EXPECT_EQ(back->kernels[0].tensorMaps[0].box, (std::vector<int64_t>{64, 16}));

  EXPECT_EQ(readBack(m, [](json::Object &t) { t["param"] = 2; }),
            "malformed manifest: kernel 'tma_copy': the tensor map of "
            "parameter 2, which does not exist (the kernel takes 2)");
  EXPECT_EQ(
      readBack(m, [](json::Object &t) { t["box"] = json::Array{64, 512}; }),
      "malformed manifest: kernel 'tma_copy': the tensor map of "
      "parameter 0 ('x', bf16) is invalid: box[1] = 512 is not in "
      "[1, 256]");
  EXPECT_EQ(
      readBack(m, [](json::Object &t) { t["dims"] = json::Array{64, 17}; }),
      "malformed manifest: kernel 'tma_copy': the tensor map of "
      "parameter 0 ('x', bf16) spans 2176 bytes but the buffer has "
      "2048");
  EXPECT_EQ(readBack(m, [](json::Object &t) { t["swizzle"] = "96B"; }),
            "malformed manifest: kernel 'tma_copy': the tensor map of "
            "parameter 0 has no swizzle (none, 32B, 64B or 128B)");
  EXPECT_EQ(readBack(m, [](json::Object &t) { t["l2_promotion"] = 128; }),
            "malformed manifest: kernel 'tma_copy': the tensor map of "
            "parameter 0 has no l2_promotion (none, 64B, 128B or 256B)");
  EXPECT_EQ(readBack(m, [](json::Object &t) { t.erase("param"); }),
            "malformed manifest: kernel 'tma_copy': a tensor_maps entry has "
            "no parameter index");
  EXPECT_EQ(
      readBack(m, [](json::Object &t) { t["strides"] = json::Array{"8192"}; }),
      "malformed manifest: kernel 'tma_copy': the tensor map of "
      "parameter 0 has no integer list 'strides'");
  json::Value notObject = m.toJSON();
  notObject.getAsObject()
      ->getArray("kernels")
      ->front()
      .getAsObject()
      ->getArray("tensor_maps")
      ->front() = 3;
  Expected<Manifest> bad = Manifest::fromJSON(notObject);
  ASSERT_FALSE(bad);
  EXPECT_EQ(toString(bad.takeError()),
            "malformed manifest: kernel 'tma_copy': a tensor_maps entry is "
            "not an object");
  json::Value twice = m.toJSON();
  json::Array &maps = *twice.getAsObject()
                           ->getArray("kernels")
                           ->front()
                           .getAsObject()
                           ->getArray("tensor_maps");
  maps.push_back(json::Value(maps.front()));
  Expected<Manifest> dup = Manifest::fromJSON(twice);
  ASSERT_FALSE(dup);
  EXPECT_EQ(toString(dup.takeError()),
            "malformed manifest: kernel 'tma_copy': the tensor map of "
            "parameter 0 appears twice");
}

//===----------------------------------------------------------------------===//
// Loading and launching on the fake driver
//===----------------------------------------------------------------------===//

TEST_F(Runtime, TensorMapParameterCarriesTheBuffer) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  Expected<std::unique_ptr<Executor>> ex =
      Executor::create(*d, tmaManifest(), kTmaPtx);
  ASSERT_TRUE(bool(ex)) << toString(ex.takeError());
  HostTensor x(DType::BF16, {16, 64});
  fillRandom(x, 3, "x");
  ASSERT_FALSE(bool((*ex)->setInput("x", x)));
  ASSERT_FALSE(bool((*ex)->poison()));
  // The fake's copy kernel copies from its first argument, which for a
  // tensor map is the address the launch pointed it at.
  Error e = (*ex)->run();
  ASSERT_FALSE(bool(e)) << toString(std::move(e));
  Expected<HostTensor> y = (*ex)->getOutput("y");
  ASSERT_TRUE(bool(y)) << toString(y.takeError());
  EXPECT_EQ(y->data, x.data);
}

TEST_F(Runtime, TensorMapParameterSizesAreChecked) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  // A map for a parameter the PTX declares as a pointer.
  Manifest m = tmaManifest();
  m.kernels[0].name = "ptr_copy";
  Expected<std::unique_ptr<Executor>> ex = Executor::create(*d, m, kTmaPtx);
  EXPECT_EQ(runtimeMessage(ex),
            "parameter 0 of kernel 'ptr_copy' is 8 bytes in the PTX; mtc "
            "passes a 128-byte tensor map");
  // A pointer for a parameter the PTX declares as a tensor map.
  m = tmaManifest();
  m.kernels[0].tensorMaps.clear();
  ex = Executor::create(*d, m, kTmaPtx);
  EXPECT_EQ(runtimeMessage(ex),
            "parameter 0 of kernel 'tma_copy' is 128 bytes in the PTX; mtc "
            "passes an 8-byte pointer");
}

TEST_F(Runtime, InvalidTensorMapFailsAtLoad) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  // Built in memory, so only the driver checks it.
  Manifest m = tmaManifest();
  m.kernels[0].tensorMaps[0].box = {64, 512};
  Expected<std::unique_ptr<Executor>> ex = Executor::create(*d, m, kTmaPtx);
  EXPECT_EQ(runtimeMessage(ex),
            "kernel 'tma_copy': the tensor map of parameter 0 ('x', bf16: "
            "dims [64, 16], box [64, 512], swizzle 128B): "
            "cuTensorMapEncodeTiled failed: CUDA_ERROR_INVALID_VALUE "
            "(invalid argument)");
  // A shape whose lists disagree never reaches the driver.
  m.kernels[0].tensorMaps[0].box = {64, 16};
  m.kernels[0].tensorMaps[0].strides.clear();
  ex = Executor::create(*d, m, kTmaPtx);
  EXPECT_EQ(runtimeMessage(ex),
            "kernel 'tma_copy': the tensor map of parameter 0 ('x', bf16: "
            "dims [64, 16], box [64, 16], swizzle 128B): "
            "cuTensorMapEncodeTiled: malformed tensor map shape");
  ex->reset();
  d.reset();
  EXPECT_EQ(liveObjects(), 0);
}

TEST_F(Runtime, MisalignedTensorMapAddressFailsAtLaunch) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  Manifest m = tmaManifest();
  Expected<std::unique_ptr<Program>> p = Program::load(*d, m, kTmaPtx);
  ASSERT_TRUE(bool(p)) << toString(p.takeError());
  Expected<DeviceBuffer> x = DeviceBuffer::allocate(*d, 4096, "x");
  Expected<DeviceBuffer> y = DeviceBuffer::allocate(*d, 4096, "y");
  ASSERT_TRUE(x && y);
  cu::CUdeviceptr bad = x->ptr() + 8;
  std::string msg =
      runtimeMessage((*p)->launch(0, {bad, y->ptr()}, d->stream()));
  EXPECT_EQ(msg, fmt::format("kernel 'tma_copy': cannot point the tensor map "
                             "of parameter 0 ('x') at {:#x}: "
                             "cuTensorMapReplaceAddress failed: "
                             "CUDA_ERROR_INVALID_VALUE (invalid argument)",
                             bad));
  EXPECT_FALSE(bool((*p)->launch(0, {x->ptr(), y->ptr()}, d->stream())));
}

} // namespace
