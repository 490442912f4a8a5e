//===- InterpreterElementwiseTest.cpp - Elementwise ops of the interpreter ===//
//
// The reference interpreter's broadcasting binary ops, relu and silu, its
// converts (only convert rounds, and it rounds, saturates or is exact as the
// target type says; i4 is read two elements a byte) and repeat.
//
//===----------------------------------------------------------------------===//
#include "InterpreterFixture.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>

using namespace mtc;
using namespace mtc::interpretertest;

namespace {

//===----------------------------------------------------------------------===//
// Elementwise ops and converts
//===----------------------------------------------------------------------===//

TEST_F(InterpreterTest, BroadcastingBinaryOps) {
  const char *ir = R"(
    graph.func @g(%v: tensor<3xf32>, %m: tensor<2x3xf32>, %c: tensor<2x1xf32>,
                  %r: tensor<1x3xf32>)
        -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
      %add = graph.add %v, %m : tensor<3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
      %sub = graph.sub %c, %r : tensor<2x1xf32>, tensor<1x3xf32> -> tensor<2x3xf32>
      %mul = graph.mul %m, %c : tensor<2x3xf32>, tensor<2x1xf32> -> tensor<2x3xf32>
      %same = graph.mul %m, %m : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
      graph.return %add, %sub, %mul, %same : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
    })";
  auto out = run(ir, {tensor(DType::F32, {3}, {10, 20, 30}),
                      tensor(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                      tensor(DType::F32, {2, 1}, {100, 200}),
                      tensor(DType::F32, {1, 3}, {1, 2, 3})});
  ASSERT_EQ(out.size(), 4u);
  expectTensor(out[0], {2, 3}, {11, 22, 33, 14, 25, 36});
  expectTensor(out[1], {2, 3}, {99, 98, 97, 199, 198, 197});
  expectTensor(out[2], {2, 3}, {100, 200, 300, 800, 1000, 1200});
  expectTensor(out[3], {2, 3}, {1, 4, 9, 16, 25, 36});
}

TEST_F(InterpreterTest, BroadcastingAcrossChunks) {
  // Large enough to be split into chunks that run on several threads and
  // start in the middle of rows.
  HostTensor m = randomTensor(DType::BF16, {37, 1001}, 5);
  HostTensor v = randomTensor(DType::BF16, {1001}, 6);
  const char *ir = R"(
    graph.func @g(%m: tensor<37x1001xbf16>, %v: tensor<1001xbf16>) -> tensor<37x1001xbf16> {
      %y = graph.sub %v, %m : tensor<1001xbf16>, tensor<37x1001xbf16> -> tensor<37x1001xbf16>
      graph.return %y : tensor<37x1001xbf16>
    })";
  auto out = run(ir, {m, v}, 3);
  ASSERT_EQ(out.size(), 1u);
  for (int64_t i = 0; i < 37; ++i)
    for (int64_t j = 0; j < 1001; ++j)
      ASSERT_EQ(out[0].data[size_t(i * 1001 + j)],
                roundTo(DType::BF16, v.get(j) - m.get(i * 1001 + j)));
}

TEST_F(InterpreterTest, LosslessConvertOfAComputedValueStillRounds) {
  // bf16 -> f32 is lossless for bf16 inputs, but the sum is a double that
  // convert must round to f32.
  const char *ir = R"(
    graph.func @g(%a: tensor<1xbf16>, %b: tensor<1xbf16>) -> tensor<1xf32> {
      %s = graph.add %a, %b : tensor<1xbf16>, tensor<1xbf16> -> tensor<1xbf16>
      %c = graph.convert %s : tensor<1xbf16> -> tensor<1xf32>
      graph.return %c : tensor<1xf32>
    })";
  auto out = run(
      ir, {tensor(DType::BF16, {1}, {1}), tensor(DType::BF16, {1}, {0x1p-30})});
  ASSERT_EQ(out.size(), 1u);
  expectTensor(out[0], {1}, {1});
}

TEST_F(InterpreterTest, ReluKeepsNaN) {
  const char *ir = R"(
    graph.func @g(%x: tensor<5xf32>) -> tensor<5xf32> {
      %y = graph.relu %x : tensor<5xf32> -> tensor<5xf32>
      graph.return %y : tensor<5xf32>
    })";
  auto out = run(ir, {tensor(DType::F32, {5}, {-1, 0, 2.5, kNaN, -kInf})});
  ASSERT_EQ(out.size(), 1u);
  expectTensor(out[0], {5}, {0, 0, 2.5, kNaN, 0});
}

TEST_F(InterpreterTest, Silu) {
  const char *ir = R"(
    graph.func @g(%x: tensor<4xf16>) -> tensor<4xf16> {
      %y = graph.silu %x : tensor<4xf16> -> tensor<4xf16>
      graph.return %y : tensor<4xf16>
    })";
  auto out = run(ir, {tensor(DType::F16, {4}, {0, 1, -2, 20})});
  ASSERT_EQ(out.size(), 1u);
  expectTensor(out[0], {4},
               {0, roundTo(DType::F16, 1 / (1 + std::exp(-1.0))),
                roundTo(DType::F16, -2 / (1 + std::exp(2.0))),
                roundTo(DType::F16, 20 / (1 + std::exp(-20.0)))});
  EXPECT_NEAR(out[0].data[1], 0.7310585786300049, 0x1p-11);
}

TEST_F(InterpreterTest, ConvertF32ToBF16Rounds) {
  const char *ir = R"(
    graph.func @g(%x: tensor<5xf32>) -> tensor<5xbf16> {
      %y = graph.convert %x : tensor<5xf32> -> tensor<5xbf16>
      graph.return %y : tensor<5xbf16>
    })";
  auto out = run(ir, {tensor(DType::F32, {5},
                             {1 + 0x1p-8, 1 + 3 * 0x1p-8, 1 + 0x1p-8 + 0x1p-16,
                              -(1 + 3 * 0x1p-8), kNaN})});
  ASSERT_EQ(out.size(), 1u);
  expectTensor(out[0], {5}, {1, 1 + 0x1p-6, 1 + 0x1p-7, -(1 + 0x1p-6), kNaN});
}

TEST_F(InterpreterTest, ConvertI8ToBF16IsExact) {
  const char *ir = R"(
    graph.func @g(%x: tensor<5xi8>) -> (tensor<5xbf16>, tensor<5xf32>) {
      %y = graph.convert %x : tensor<5xi8> -> tensor<5xbf16>
      %z = graph.convert %y : tensor<5xbf16> -> tensor<5xf32>
      graph.return %y, %z : tensor<5xbf16>, tensor<5xf32>
    })";
  auto out = run(ir, {tensor(DType::I8, {5}, {-128, -1, 0, 77, 127})});
  ASSERT_EQ(out.size(), 2u);
  expectTensor(out[0], {5}, {-128, -1, 0, 77, 127});
  expectTensor(out[1], {5}, {-128, -1, 0, 77, 127});
}

TEST_F(InterpreterTest, ConvertF32ToI8Saturates) {
  const char *ir = R"(
    graph.func @g(%x: tensor<8xf32>) -> tensor<8xi8> {
      %y = graph.convert %x : tensor<8xf32> -> tensor<8xi8>
      graph.return %y : tensor<8xi8>
    })";
  auto out =
      run(ir, {tensor(DType::F32, {8},
                      {3.7, -3.7, 200, -200, kNaN, 127.5, -128.5, kInf})});
  ASSERT_EQ(out.size(), 1u);
  expectTensor(out[0], {8}, {3, -3, 127, -128, 0, 127, -128, 127});
}

TEST_F(InterpreterTest, ConvertI4IsExact) {
  // Every i4 value, packed two a byte (element 2 j in the low nibble of byte
  // j), to each float type and to i8.
  const char *ir = R"(
    graph.func @g(%w: tensor<2x8xi4>)
        -> (tensor<2x8xbf16>, tensor<2x8xf16>, tensor<2x8xf32>, tensor<2x8xi8>) {
      %b = graph.convert %w : tensor<2x8xi4> -> tensor<2x8xbf16>
      %h = graph.convert %w : tensor<2x8xi4> -> tensor<2x8xf16>
      %f = graph.convert %w : tensor<2x8xi4> -> tensor<2x8xf32>
      %q = graph.convert %w : tensor<2x8xi4> -> tensor<2x8xi8>
      graph.return %b, %h, %f, %q : tensor<2x8xbf16>, tensor<2x8xf16>, tensor<2x8xf32>, tensor<2x8xi8>
    })";
  HostTensor w(DType::I4, {2, 8});
  const uint8_t bytes[] = {0x98, 0xBA, 0xDC, 0xFE, 0x10, 0x32, 0x54, 0x76};
  std::copy(std::begin(bytes), std::end(bytes), w.data.begin());
  auto out = run(ir, {w});
  ASSERT_EQ(out.size(), 4u);
  for (const RefTensor &t : out)
    expectTensor(t, {2, 8},
                 {-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7});
}

TEST_F(InterpreterTest, Repeat) {
  // repeat_interleave along the last dimension, at every rank; a group of 1
  // is the identity.
  const char *ir = R"(
    graph.func @g(%v: tensor<3xf32>, %m: tensor<2x2xbf16>, %t: tensor<2x1x2xf16>)
        -> (tensor<6xf32>, tensor<2x6xbf16>, tensor<2x1x4xf16>, tensor<2x2xbf16>) {
      %rv = graph.repeat %v {group = 2 : i64} : tensor<3xf32> -> tensor<6xf32>
      %rm = graph.repeat %m {group = 3 : i64} : tensor<2x2xbf16> -> tensor<2x6xbf16>
      %rt = graph.repeat %t {group = 2 : i64} : tensor<2x1x2xf16> -> tensor<2x1x4xf16>
      %r1 = graph.repeat %m {group = 1 : i64} : tensor<2x2xbf16> -> tensor<2x2xbf16>
      graph.return %rv, %rm, %rt, %r1 : tensor<6xf32>, tensor<2x6xbf16>, tensor<2x1x4xf16>, tensor<2x2xbf16>
    })";
  auto out = run(ir, {tensor(DType::F32, {3}, {1, 2, 3}),
                      tensor(DType::BF16, {2, 2}, {0.5, -1, 4, 8}),
                      tensor(DType::F16, {2, 1, 2}, {1, 2, 3, 4})});
  ASSERT_EQ(out.size(), 4u);
  expectTensor(out[0], {6}, {1, 1, 2, 2, 3, 3});
  expectTensor(out[1], {2, 6}, {0.5, 0.5, 0.5, -1, -1, -1, 4, 4, 4, 8, 8, 8});
  expectTensor(out[2], {2, 1, 4}, {1, 1, 2, 2, 3, 3, 4, 4});
  expectTensor(out[3], {2, 2}, {0.5, -1, 4, 8});
}

TEST_F(InterpreterTest, RepeatOfAComputedValueAcrossChunks) {
  // Large enough to be split into chunks on several threads; repeat reads
  // a computed value (the sum, rounded to f32) and does not round again.
  HostTensor a = randomTensor(DType::F32, {300, 40}, 8);
  HostTensor b = randomTensor(DType::F32, {300, 40}, 9);
  const char *ir = R"(
    graph.func @g(%a: tensor<300x40xf32>, %b: tensor<300x40xf32>) -> tensor<300x1280xf32> {
      %s = graph.add %a, %b : tensor<300x40xf32>, tensor<300x40xf32> -> tensor<300x40xf32>
      %r = graph.repeat %s {group = 32 : i64} : tensor<300x40xf32> -> tensor<300x1280xf32>
      graph.return %r : tensor<300x1280xf32>
    })";
  auto out = run(ir, {a, b}, 3);
  ASSERT_EQ(out.size(), 1u);
  for (int64_t i = 0; i < 300; ++i)
    for (int64_t j = 0; j < 1280; ++j)
      ASSERT_EQ(
          out[0].data[size_t(i * 1280 + j)],
          roundTo(DType::F32, a.get(i * 40 + j / 32) + b.get(i * 40 + j / 32)))
          << i << ", " << j;
}

} // namespace
