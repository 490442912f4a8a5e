//===- InterpreterRoundingTest.cpp - Every node rounds to its type --------===//
//
// The graph dialect rounds every node's result to its element type, and so
// does the fp64 reference: each op here gets inputs whose exact result is
// not a value of the type, in bf16, f16 and f32, and must return it rounded
// to nearest even (ops that only move values, or cannot leave the type, are
// exact). Then the comparison's ulps (Comparison.cpp).
//
//===----------------------------------------------------------------------===//
#include "InterpreterFixture.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

using namespace mtc;
using namespace mtc::interpretertest;

namespace {

struct TypeCase {
  DType dtype;
  const char *name;
  /// Half an ulp at 1 (the rounding step just above 1): 1 + tiny rounds
  /// back to 1, 1 + 3 tiny up to 1 + 4 tiny (to even).
  double tiny;
};

const TypeCase kTypes[] = {{DType::BF16, "bf16", 0x1p-8},
                           {DType::F16, "f16", 0x1p-11},
                           {DType::F32, "f32", 0x1p-24}};

std::string binaryGraph(const char *op, const char *t) {
  std::string ty = std::string("tensor<2x") + t + ">";
  return "graph.func @g(%a: " + ty + ", %b: " + ty + ") -> " + ty +
         " {\n  %y = graph." + op + " %a, %b : " + ty + ", " + ty + " -> " +
         ty + "\n  graph.return %y : " + ty + "\n}";
}

std::string unaryGraph(const char *op, const char *t) {
  std::string ty = std::string("tensor<3x") + t + ">";
  return "graph.func @g(%a: " + ty + ") -> " + ty + " {\n  %y = graph." + op +
         " %a : " + ty + " -> " + ty + "\n  graph.return %y : " + ty + "\n}";
}

TEST_F(InterpreterTest, AddRounds) {
  for (const TypeCase &t : kTypes) {
    // 1 + 1/2 ulp ties to 1 (even); 1 + 3/2 ulp ties to 1 + 2 ulps.
    auto out = run(binaryGraph("add", t.name),
                   {tensor(t.dtype, {2}, {1, 1}),
                    tensor(t.dtype, {2}, {t.tiny, 3 * t.tiny})});
    ASSERT_EQ(out.size(), 1u) << t.name;
    expectTensor(out[0], {2}, {1, 1 + 4 * t.tiny});
  }
}

TEST_F(InterpreterTest, SubRounds) {
  for (const TypeCase &t : kTypes) {
    // Below 1 the ulp halves: 1 - tiny / 2 ties to 1; 2 - 3 tiny (ulp at 1
    // is 2 tiny) ties to 2 - 4 tiny.
    auto out = run(binaryGraph("sub", t.name),
                   {tensor(t.dtype, {2}, {1, 2}),
                    tensor(t.dtype, {2}, {t.tiny / 2, 3 * t.tiny})});
    ASSERT_EQ(out.size(), 1u) << t.name;
    expectTensor(out[0], {2}, {1, 2 - 4 * t.tiny});
  }
}

TEST_F(InterpreterTest, MulRounds) {
  for (const TypeCase &t : kTypes) {
    // (1 + 2 tiny)^2 = 1 + 4 tiny + 4 tiny^2: the last term goes.
    double u = 1 + 2 * t.tiny;
    auto out = run(binaryGraph("mul", t.name), {tensor(t.dtype, {2}, {u, 3}),
                                                tensor(t.dtype, {2}, {u, u})});
    ASSERT_EQ(out.size(), 1u) << t.name;
    // 3 (1 + 2 tiny) = 3 + 6 tiny: in [2, 4) the ulp is 4 tiny, so 6 tiny
    // (1.5 ulps) ties to 8 tiny (even).
    expectTensor(out[0], {2}, {1 + 4 * t.tiny, 3 + 8 * t.tiny});
  }
}

TEST_F(InterpreterTest, SiluRounds) {
  for (const TypeCase &t : kTypes) {
    auto out =
        run(unaryGraph("silu", t.name), {tensor(t.dtype, {3}, {1, -2, 0})});
    ASSERT_EQ(out.size(), 1u) << t.name;
    expectTensor(out[0], {3},
                 {roundTo(t.dtype, 1 / (1 + std::exp(-1.0))),
                  roundTo(t.dtype, -2 / (1 + std::exp(2.0))), 0});
    EXPECT_NE(out[0].data[0], 1 / (1 + std::exp(-1.0))) << t.name;
  }
}

TEST_F(InterpreterTest, ReluIsExact) {
  for (const TypeCase &t : kTypes) {
    auto out = run(unaryGraph("relu", t.name),
                   {tensor(t.dtype, {3}, {1 + 2 * t.tiny, -1, 0})});
    ASSERT_EQ(out.size(), 1u) << t.name;
    expectTensor(out[0], {3}, {1 + 2 * t.tiny, 0, 0});
  }
}

TEST_F(InterpreterTest, LinearAndMatmulRoundTheirSums) {
  for (const TypeCase &t : kTypes) {
    // Sums 1 + tiny (ties to 1) and 1 + 3 tiny (to 1 + 4 tiny); the
    // products are exact.
    std::string x = std::string("tensor<1x2x") + t.name + ">";
    std::string w = std::string("tensor<2x2x") + t.name + ">";
    std::string y = std::string("tensor<1x2x") + t.name + ">";
    std::string ir = "graph.func @g(%x: " + x + ", %w: " + w + ") -> (" + y +
                     ", " + y + ") {\n  %l = graph.linear %x, %w : " + x +
                     ", " + w + " -> " + y +
                     "\n  %m = graph.matmul %x, %w : " + x + ", " + w + " -> " +
                     y + "\n  graph.return %l, %m : " + y + ", " + y + "\n}";
    auto out = run(ir, {tensor(t.dtype, {1, 2}, {1, t.tiny}),
                        tensor(t.dtype, {2, 2}, {1, 1, 1, 3})});
    ASSERT_EQ(out.size(), 2u) << t.name;
    // linear: w's rows; matmul: w's columns (here the same rows, since w
    // is read [K, N] = [[1, 1], [1, 3]]).
    expectTensor(out[0], {1, 2}, {1, 1 + 4 * t.tiny});
    expectTensor(out[1], {1, 2}, {1, 1 + 4 * t.tiny});
  }
}

TEST_F(InterpreterTest, EveryNodeOfAChainRounds) {
  // (1 + tiny) + tiny: rounding each node gives 1 + 0 + 0 = 1; rounding
  // only the output would give 1 + 2 tiny, a value of the type.
  const char *ir = R"(
    graph.func @g(%a: tensor<1xbf16>, %b: tensor<1xbf16>) -> tensor<1xbf16> {
      %s = graph.add %a, %b : tensor<1xbf16>, tensor<1xbf16> -> tensor<1xbf16>
      %t = graph.add %s, %b : tensor<1xbf16>, tensor<1xbf16> -> tensor<1xbf16>
      graph.return %t : tensor<1xbf16>
    })";
  auto out = run(
      ir, {tensor(DType::BF16, {1}, {1}), tensor(DType::BF16, {1}, {0x1p-8})});
  ASSERT_EQ(out.size(), 1u);
  expectTensor(out[0], {1}, {1});
}

TEST_F(InterpreterTest, TransposeAndRepeatAreExact) {
  const char *ir = R"(
    graph.func @g(%a: tensor<1x2xbf16>) -> (tensor<2x1xbf16>, tensor<1x4xbf16>) {
      %t = graph.transpose %a : tensor<1x2xbf16> -> tensor<2x1xbf16>
      %r = graph.repeat %a {group = 2 : i64} : tensor<1x2xbf16> -> tensor<1x4xbf16>
      graph.return %t, %r : tensor<2x1xbf16>, tensor<1x4xbf16>
    })";
  auto out = run(ir, {tensor(DType::BF16, {1, 2}, {1 + 0x1p-7, -3})});
  ASSERT_EQ(out.size(), 2u);
  expectTensor(out[0], {2, 1}, {1 + 0x1p-7, -3});
  expectTensor(out[1], {1, 4}, {1 + 0x1p-7, 1 + 0x1p-7, -3, -3});
}

//===----------------------------------------------------------------------===//
// Ulps
//===----------------------------------------------------------------------===//

TEST(Ulps, OfEachType) {
  EXPECT_EQ(ulpOf(DType::BF16, 1), 0x1p-7);
  EXPECT_EQ(ulpOf(DType::BF16, 1.99), 0x1p-7);
  EXPECT_EQ(ulpOf(DType::BF16, 2), 0x1p-6);
  EXPECT_EQ(ulpOf(DType::BF16, 0), 0x1p-133); // subnormals
  EXPECT_EQ(ulpOf(DType::F16, 1), 0x1p-10);
  EXPECT_EQ(ulpOf(DType::F16, 1e-6), 0x1p-24); // subnormals
  EXPECT_EQ(ulpOf(DType::F16, 40000), 32);
  EXPECT_EQ(ulpOf(DType::F32, 1), 0x1p-23);
  EXPECT_EQ(ulpOf(DType::F32, 0.75), 0x1p-24);
  EXPECT_EQ(ulpOf(DType::I8, 100), 1);
  EXPECT_EQ(ulpFloor(DType::BF16), 0x1p-16);
  EXPECT_EQ(ulpFloor(DType::F16), 0x1p-13);
  EXPECT_EQ(ulpFloor(DType::F32), 1);
}

TEST(Compare, UlpsOfTheScale) {
  // One element an ulp off at its own magnitude (1): a quarter ulp of the
  // scale (4).
  HostTensor out = tensor(DType::BF16, {3}, {4, 1 + 0x1p-7, -2});
  Comparison c = compare(out, RefTensor{{3}, {4, 1, -2}});
  EXPECT_EQ(c.maxAbsRef, 4);
  EXPECT_EQ(c.maxAbsErr, 0x1p-7);
  EXPECT_EQ(c.maxUlps, 0.25);
  EXPECT_EQ(c.worstIndex, 1);
  EXPECT_EQ(c.ulpHistogram, (std::array<int64_t, 6>{2, 1, 0, 0, 0, 0}));
  EXPECT_TRUE(c.passed(0.25));
  EXPECT_FALSE(c.passed(0.2));
}

TEST(Compare, HistogramCountsOwnUlpsAboveAFloor) {
  // Elements 2 and 3 ulps off at their own magnitude; a wrong value of
  // 2^-10 where the reference is 0 counts at 2^-16 of the scale (256):
  // ulp(2^-8) = 2^-15, so 32 ulps.
  HostTensor out =
      tensor(DType::BF16, {4}, {256, 1 + 2 * 0x1p-7, 1 + 3 * 0x1p-7, 0x1p-10});
  Comparison c = compare(out, RefTensor{{4}, {256, 1, 1, 0}});
  EXPECT_EQ(c.ulpHistogram, (std::array<int64_t, 6>{1, 0, 1, 1, 0, 1}));
  EXPECT_EQ(c.maxUlps, 3 * 0x1p-7 / 2); // ulp(256) = 2
}

TEST(Compare, F32CountsF32Ulps) {
  HostTensor out = tensor(DType::F32, {2}, {1 + 0x1p-23, 2});
  Comparison c = compare(out, RefTensor{{2}, {1, 2}});
  EXPECT_EQ(c.maxUlps, 0.5); // ulp(2) = 2^-22
  EXPECT_EQ(c.ulpHistogram, (std::array<int64_t, 6>{1, 1, 0, 0, 0, 0}));
}

} // namespace
