//===- InterpreterReductionTest.cpp - Row reductions and constants --------===//
//
// The fp64 reference of graph.sum, graph.mean, graph.rsqrt and
// graph.constant: a row's sum is exact (f64) and rounded once to the
// result's type; mean divides before that rounding; a constant is its value
// rounded to its type and broadcasts; and RMSNorm as the graph format's
// example writes it matches a direct computation. graph.rope, the other
// piece of a decoder block around its linears: pairs rotated, exactly.
//
//===----------------------------------------------------------------------===//
#include "InterpreterFixture.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mtc;
using namespace mtc::interpretertest;

namespace {

TEST_F(InterpreterTest, SumIsExactThenRounded) {
  // 1 + 2^-8 + 2^-8 in bf16: rounding each partial sum would keep 1 (2^-8
  // is half an ulp at 1 and ties to even); the exact sum 1 + 2^-7 is a bf16
  // value.
  auto out =
      run("graph.func @g(%a: tensor<2x3xbf16>) -> tensor<2x1xbf16> {\n"
          "  %s = graph.sum %a : tensor<2x3xbf16> -> tensor<2x1xbf16>\n"
          "  graph.return %s : tensor<2x1xbf16>\n}",
          {tensor(DType::BF16, {2, 3}, {1, 0x1p-8, 0x1p-8, 2, -3, 0.5})});
  ASSERT_EQ(out.size(), 1u);
  expectTensor(out[0], {2, 1}, {1 + 0x1p-7, -0.5});
}

TEST_F(InterpreterTest, MeanDividesBeforeRounding) {
  // (1 + 1 + 2^-7) / 3 in f16 and f32: rounded once from the exact quotient.
  for (auto [dtype, t] :
       {std::pair{DType::F16, "f16"}, std::pair{DType::F32, "f32"}}) {
    std::string ty = std::string("tensor<1x3x") + t + ">";
    std::string rt = std::string("tensor<1x1x") + t + ">"; // [1, 1]
    auto out = run("graph.func @g(%a: " + ty + ") -> " + rt +
                       " {\n  %m = graph.mean %a : " + ty + " -> " + rt +
                       "\n  graph.return %m : " + rt + "\n}",
                   {tensor(dtype, {1, 3}, {1, 1, 0x1p-7})});
    ASSERT_EQ(out.size(), 1u) << t;
    double exact = (2 + 0x1p-7) / 3;
    double rounded =
        dtype == DType::F32 ? double(float(exact)) : roundTo(DType::F16, exact);
    expectTensor(out[0], {1, 1}, {rounded});
  }
}

TEST_F(InterpreterTest, RsqrtRounds) {
  auto out = run("graph.func @g(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
                 "  %r = graph.rsqrt %a : tensor<3xf32> -> tensor<3xf32>\n"
                 "  graph.return %r : tensor<3xf32>\n}",
                 {tensor(DType::F32, {3}, {4, 2, 0.25})});
  ASSERT_EQ(out.size(), 1u);
  expectTensor(out[0], {3}, {0.5, double(float(1 / std::sqrt(2.0))), 2});
}

TEST_F(InterpreterTest, ConstantRoundsToItsTypeAndBroadcasts) {
  // 1e-5 is not a bf16 value: the constant is its nearest bf16.
  auto out =
      run("graph.func @g(%a: tensor<2x2xbf16>) -> tensor<2x2xbf16> {\n"
          "  %c = graph.constant 1.0e-05 : tensor<1xbf16>\n"
          "  %y = graph.mul %a, %c : tensor<2x2xbf16>, tensor<1xbf16> -> "
          "tensor<2x2xbf16>\n"
          "  graph.return %y : tensor<2x2xbf16>\n}",
          {tensor(DType::BF16, {2, 2}, {1, 2, 4, -1})});
  ASSERT_EQ(out.size(), 1u);
  double c = roundTo(DType::BF16, 1e-5);
  EXPECT_NE(c, 1e-5);
  expectTensor(out[0], {2, 2}, {c, 2 * c, 4 * c, -c});
}

TEST_F(InterpreterTest, RmsNorm) {
  // The graph format's example, in f32 so that a direct computation in
  // doubles, rounded the same way, gives every element.
  const char *src =
      "graph.func @g(%x: tensor<2x4xf32>, %w: tensor<4xf32>) -> "
      "tensor<2x4xf32> {\n"
      "  %sq = graph.mul %x, %x : tensor<2x4xf32>, tensor<2x4xf32> -> "
      "tensor<2x4xf32>\n"
      "  %ms = graph.mean %sq : tensor<2x4xf32> -> tensor<2x1xf32>\n"
      "  %eps = graph.constant 1.0e-05 : tensor<1xf32>\n"
      "  %e = graph.add %ms, %eps : tensor<2x1xf32>, tensor<1xf32> -> "
      "tensor<2x1xf32>\n"
      "  %r = graph.rsqrt %e : tensor<2x1xf32> -> tensor<2x1xf32>\n"
      "  %n = graph.mul %x, %r : tensor<2x4xf32>, tensor<2x1xf32> -> "
      "tensor<2x4xf32>\n"
      "  %y = graph.mul %n, %w : tensor<2x4xf32>, tensor<4xf32> -> "
      "tensor<2x4xf32>\n"
      "  graph.return %y : tensor<2x4xf32>\n}";
  std::vector<double> x = {1, -2, 3, 0.5, 0.25, 0.25, -0.75, 8};
  std::vector<double> w = {1, 0.5, 2, -1};
  auto out =
      run(src, {tensor(DType::F32, {2, 4}, x), tensor(DType::F32, {4}, w)});
  ASSERT_EQ(out.size(), 1u);
  auto f = [](double v) { return double(float(v)); };
  std::vector<double> expect;
  for (int m = 0; m < 2; ++m) {
    double ss = 0;
    for (int k = 0; k < 4; ++k)
      ss += f(x[m * 4 + k] * x[m * 4 + k]);
    double r = f(1 / std::sqrt(f(f(ss / 4) + f(1e-5))));
    for (int k = 0; k < 4; ++k)
      expect.push_back(f(f(x[m * 4 + k] * r) * w[k]));
  }
  expectTensor(out[0], {2, 4}, expect);
}

} // namespace

//===----------------------------------------------------------------------===//
// rope: pairs of columns rotated by a table's row
//===----------------------------------------------------------------------===//

TEST_F(InterpreterTest, RopeRotatesPairsOfTheFirstColumns) {
  // Two heads of 4 columns rotated, the last 2 columns passed on; one
  // table row, (c, s) = (0, 1) then (0.5, 0.25), for every row of x.
  auto out =
      run("graph.func @g(%x: tensor<2x10xf32>, %t: tensor<1x4xbf16>) -> "
          "tensor<2x10xf32> {\n"
          "  %r = graph.rope %x, %t {cols = 8 : i64} : tensor<2x10xf32>, "
          "tensor<1x4xbf16> -> tensor<2x10xf32>\n"
          "  graph.return %r : tensor<2x10xf32>\n}",
          {tensor(DType::F32, {2, 10}, {1,  2, 3, 4,  5, 6, 7, 8, 9, 10,
                                        -1, 1, 2, -2, 0, 3, 4, 0, 7, 7}),
           tensor(DType::BF16, {1, 4}, {0, 1, 0.5, 0.25})});
  ASSERT_EQ(out.size(), 1u);
  // Pair (a, b) by (c, s): (a c - b s, b c + a s).
  expectTensor(out[0], {2, 10},
               {-2,
                1,
                3 * 0.5 - 4 * 0.25,
                4 * 0.5 + 3 * 0.25,
                -6,
                5,
                7 * 0.5 - 8 * 0.25,
                8 * 0.5 + 7 * 0.25,
                9,
                10,
                -1,
                -1,
                2 * 0.5 + 2 * 0.25,
                -2 * 0.5 + 2 * 0.25,
                -3,
                0,
                2,
                1,
                7,
                7});
}

TEST_F(InterpreterTest, RopeTableRowPerRowRoundsOnce) {
  // Row m reads the table's row m; each result is the exact rotation
  // rounded once to f32.
  double a = 1 + 0x1p-23, b = 3, s = 0x1p-20 + 0x1p-40;
  auto out = run("graph.func @g(%x: tensor<2x2xf32>, %t: tensor<2x2xf32>) -> "
                 "tensor<2x2xf32> {\n"
                 "  %r = graph.rope %x, %t {cols = 2 : i64} : tensor<2x2xf32>, "
                 "tensor<2x2xf32> -> tensor<2x2xf32>\n"
                 "  graph.return %r : tensor<2x2xf32>\n}",
                 {tensor(DType::F32, {2, 2}, {1, 0, a, b}),
                  tensor(DType::F32, {2, 2}, {0, 1, 1, double(float(s))})});
  ASSERT_EQ(out.size(), 1u);
  double sf = double(float(s));
  expectTensor(out[0], {2, 2},
               {0, 1, double(float(a - b * sf)), double(float(b + a * sf))});
}
