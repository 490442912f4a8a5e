//===- InterpreterTest.cpp - Tests of the fp64 reference interpreter ------===//
//
// The matrix ops (linear, matmul, transpose, weight-only int8 and int4
// linear) against hand-worked values and a naive loop, several outputs,
// thread counts, and the interpreter's errors. InterpreterElementwiseTest.cpp
// has the elementwise ops, converts and repeat, InterpreterCompareTest.cpp
// compare().
//
//===----------------------------------------------------------------------===//
#include "InterpreterFixture.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

using namespace mtc;
using namespace mtc::interpretertest;

namespace {

/// out[r][n] = sum over k of x[r][k] * w[n][k], k increasing.
std::vector<double> naiveLinear(const HostTensor &x, const HostTensor &w) {
  int64_t K = w.shape[1], N = w.shape[0], R = x.numElements() / K;
  std::vector<double> out(size_t(R * N));
  for (int64_t r = 0; r < R; ++r)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += x.get(r * K + k) * w.get(n * K + k);
      out[size_t(r * N + n)] = acc;
    }
  return out;
}

/// `a`, the interpreter's result of type `t`, is `exact` rounded to `t`.
void expectRounded(const std::vector<double> &a,
                   const std::vector<double> &exact, DType t) {
  ASSERT_EQ(a.size(), exact.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(a[i], roundTo(t, exact[i])) << "element " << i;
}

//===----------------------------------------------------------------------===//
// Matrix ops, outputs and threads
//===----------------------------------------------------------------------===//

TEST_F(InterpreterTest, Linear) {
  const char *ir = R"(
    graph.func @g(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>) -> tensor<2x4xf32> {
      %y = graph.linear %x, %w : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<2x4xf32>
      graph.return %y : tensor<2x4xf32>
    })";
  auto out = run(ir, {tensor(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                      tensor(DType::F32, {4, 3},
                             {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, -1, 0.5})});
  ASSERT_EQ(out.size(), 1u);
  expectTensor(out[0], {2, 4}, {1, 2, 3, 0.5, 4, 5, 6, 2});
}

TEST_F(InterpreterTest, LinearOfOneDimensionalAndBatchedX) {
  const char *ir = R"(
    graph.func @g(%x: tensor<3xf32>, %xb: tensor<2x1x3xf32>,
                  %w: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2x1x2xf32>) {
      %y = graph.linear %x, %w : tensor<3xf32>, tensor<2x3xf32> -> tensor<2xf32>
      %yb = graph.linear %xb, %w : tensor<2x1x3xf32>, tensor<2x3xf32> -> tensor<2x1x2xf32>
      graph.return %y, %yb : tensor<2xf32>, tensor<2x1x2xf32>
    })";
  auto out = run(ir, {tensor(DType::F32, {3}, {1, 2, 3}),
                      tensor(DType::F32, {2, 1, 3}, {1, 1, 1, 0, 0, 2}),
                      tensor(DType::F32, {2, 3}, {1, 1, 1, 0, 1, 2})});
  ASSERT_EQ(out.size(), 2u);
  expectTensor(out[0], {2}, {6, 8});
  expectTensor(out[1], {2, 1, 2}, {3, 3, 2, 4});
}

TEST_F(InterpreterTest, MatmulWithBatchDims) {
  const char *ir = R"(
    graph.func @g(%a: tensor<2x2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x2x2xf32> {
      %c = graph.matmul %a, %b : tensor<2x2x3xf32>, tensor<3x2xf32> -> tensor<2x2x2xf32>
      graph.return %c : tensor<2x2x2xf32>
    })";
  auto out = run(
      ir, {tensor(DType::F32, {2, 2, 3}, {1, 2, 3, 4, 5, 6, -1, 0, 1, 2, 2, 2}),
           tensor(DType::F32, {3, 2}, {1, 2, 3, 4, 5, 6})});
  ASSERT_EQ(out.size(), 1u);
  // [1 2 3; 4 5 6] @ [1 2; 3 4; 5 6] = [22 28; 49 64]
  // [-1 0 1; 2 2 2] @ ...             = [4 4; 18 24]
  expectTensor(out[0], {2, 2, 2}, {22, 28, 49, 64, 4, 4, 18, 24});
}

TEST_F(InterpreterTest, Transpose) {
  const char *ir = R"(
    graph.func @g(%a: tensor<2x3xf32>, %b: tensor<2x2x3xf32>)
        -> (tensor<3x2xf32>, tensor<2x3x2xf32>, tensor<2x3xf32>) {
      %t = graph.transpose %a : tensor<2x3xf32> -> tensor<3x2xf32>
      %tb = graph.transpose %b : tensor<2x2x3xf32> -> tensor<2x3x2xf32>
      %r = graph.relu %t : tensor<3x2xf32> -> tensor<3x2xf32>
      %tr = graph.transpose %r : tensor<3x2xf32> -> tensor<2x3xf32>
      graph.return %t, %tb, %tr : tensor<3x2xf32>, tensor<2x3x2xf32>, tensor<2x3xf32>
    })";
  auto out = run(ir, {tensor(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                      tensor(DType::F32, {2, 2, 3},
                             {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})});
  ASSERT_EQ(out.size(), 3u);
  expectTensor(out[0], {3, 2}, {1, 4, 2, 5, 3, 6});
  expectTensor(out[1], {2, 3, 2}, {1, 4, 2, 5, 3, 6, 7, 10, 8, 11, 9, 12});
  expectTensor(out[2], {2, 3}, {1, 2, 3, 4, 5, 6});
}

TEST_F(InterpreterTest, MatmulAndLinearOfTransposes) {
  // matmul(a, transpose(w)) == linear(a, w); linear(x, transpose(b)) ==
  // matmul(x, b); both read the transposed operand through strides.
  HostTensor a = randomTensor(DType::F32, {5, 70}, 1);
  HostTensor w = randomTensor(DType::F32, {11, 70}, 2);
  HostTensor b = randomTensor(DType::F32, {70, 11}, 3);
  const char *ir = R"(
    graph.func @g(%a: tensor<5x70xf32>, %w: tensor<11x70xf32>, %b: tensor<70x11xf32>)
        -> (tensor<5x11xf32>, tensor<5x11xf32>, tensor<5x11xf32>, tensor<5x11xf32>) {
      %wt = graph.transpose %w : tensor<11x70xf32> -> tensor<70x11xf32>
      %m = graph.matmul %a, %wt : tensor<5x70xf32>, tensor<70x11xf32> -> tensor<5x11xf32>
      %l = graph.linear %a, %w : tensor<5x70xf32>, tensor<11x70xf32> -> tensor<5x11xf32>
      %bt = graph.transpose %b : tensor<70x11xf32> -> tensor<11x70xf32>
      %l2 = graph.linear %a, %bt : tensor<5x70xf32>, tensor<11x70xf32> -> tensor<5x11xf32>
      %m2 = graph.matmul %a, %b : tensor<5x70xf32>, tensor<70x11xf32> -> tensor<5x11xf32>
      graph.return %m, %l, %l2, %m2 : tensor<5x11xf32>, tensor<5x11xf32>, tensor<5x11xf32>, tensor<5x11xf32>
    })";
  auto out = run(ir, {a, w, b});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].data, out[1].data);
  EXPECT_EQ(out[2].data, out[3].data);
  expectRounded(out[1].data, naiveLinear(a, w), DType::F32);
  // b^T as a [11, 70] tensor for the naive reference.
  HostTensor bt(DType::F32, {11, 70});
  for (int64_t n = 0; n < 11; ++n)
    for (int64_t k = 0; k < 70; ++k)
      bt.set(n * 70 + k, b.get(k * 11 + n));
  expectRounded(out[3].data, naiveLinear(a, bt), DType::F32);
}

TEST_F(InterpreterTest, WeightOnlyQuantizedLinear) {
  const char *ir = R"(
    graph.func @woq(%x: tensor<2x4xbf16>, %w: tensor<3x4xi8>, %scales: tensor<3xbf16>)
        -> tensor<2x3xbf16> {
      %wf = graph.convert %w : tensor<3x4xi8> -> tensor<3x4xbf16>
      %y = graph.linear %x, %wf : tensor<2x4xbf16>, tensor<3x4xbf16> -> tensor<2x3xbf16>
      %out = graph.mul %y, %scales : tensor<2x3xbf16>, tensor<3xbf16> -> tensor<2x3xbf16>
      graph.return %out : tensor<2x3xbf16>
    })";
  auto out = run(ir, {tensor(DType::BF16, {2, 4}, {1, 2, 3, 4, 0.5, -1, 0, 2}),
                      tensor(DType::I8, {3, 4},
                             {1, 0, 0, 0, -128, 127, 1, -1, 2, 2, 2, 2}),
                      tensor(DType::BF16, {3}, {0.5, 0.25, 0.125})});
  ASSERT_EQ(out.size(), 1u);
  // y = [[1, -128 + 254 + 3 - 4, 20], [0.5, -64 - 127 - 2, 3]]
  expectTensor(out[0], {2, 3},
               {0.5, 125 * 0.25, 20 * 0.125, 0.25, -193 * 0.25, 3 * 0.125});
}

TEST_F(InterpreterTest, WeightOnlyQuantizedLinearMatchesNaive) {
  // Shapes that leave partial tiles, panels and K slices everywhere.
  HostTensor x = randomTensor(DType::BF16, {67, 300}, 11);
  HostTensor w = randomTensor(DType::I8, {131, 300}, 12);
  const char *ir = R"(
    graph.func @woq(%x: tensor<67x300xbf16>, %w: tensor<131x300xi8>) -> tensor<67x131xbf16> {
      %wf = graph.convert %w : tensor<131x300xi8> -> tensor<131x300xbf16>
      %y = graph.linear %x, %wf : tensor<67x300xbf16>, tensor<131x300xbf16> -> tensor<67x131xbf16>
      graph.return %y : tensor<67x131xbf16>
    })";
  auto out = run(ir, {x, w});
  ASSERT_EQ(out.size(), 1u);
  expectRounded(out[0].data, naiveLinear(x, w), DType::BF16);
}

TEST_F(InterpreterTest, WeightOnlyInt4Linear) {
  // gpt-fast's form: W = convert(w) * repeat(scales) + repeat(zeros), groups
  // of 2 along K. Every value below is exact in bf16.
  const char *ir = R"(
    graph.func @woq4(%x: tensor<2x4xbf16>, %w: tensor<2x4xi4>, %scales: tensor<2x2xbf16>,
                     %zeros: tensor<2x2xbf16>) -> tensor<2x2xbf16> {
      %wf = graph.convert %w : tensor<2x4xi4> -> tensor<2x4xbf16>
      %s = graph.repeat %scales {group = 2 : i64} : tensor<2x2xbf16> -> tensor<2x4xbf16>
      %z = graph.repeat %zeros {group = 2 : i64} : tensor<2x2xbf16> -> tensor<2x4xbf16>
      %ws = graph.mul %wf, %s : tensor<2x4xbf16>, tensor<2x4xbf16> -> tensor<2x4xbf16>
      %wd = graph.add %ws, %z : tensor<2x4xbf16>, tensor<2x4xbf16> -> tensor<2x4xbf16>
      %y = graph.linear %x, %wd : tensor<2x4xbf16>, tensor<2x4xbf16> -> tensor<2x2xbf16>
      graph.return %y : tensor<2x2xbf16>
    })";
  auto out = run(ir, {tensor(DType::BF16, {2, 4}, {1, 2, 3, 4, 0.5, -1, 0, 2}),
                      tensor(DType::I4, {2, 4}, {1, -8, 7, 0, -1, 2, -3, 4}),
                      tensor(DType::BF16, {2, 2}, {0.5, 0.25, 2, 1}),
                      tensor(DType::BF16, {2, 2}, {1, -1, 0, 0.5})});
  ASSERT_EQ(out.size(), 1u);
  // W = [[1.5, -3, 0.75, -1], [-2, 4, -2.5, 4.5]]
  // y = [[1.5 - 6 + 2.25 - 4, -2 + 8 - 7.5 + 18],
  //      [0.75 + 3 + 0 - 2, -1 - 4 + 0 + 9]]
  expectTensor(out[0], {2, 2}, {-6.25, 16.5, 1.75, 4});
}

TEST_F(InterpreterTest, Int4DequantizationRoundsEachNode) {
  // gpt-fast's w * s + z and the AWQ form (w - z) * s, each node rounded to
  // bf16 as the graph defines it (and the kernels compute it): 7 * (1 +
  // 2^-7) = 7.0546875 rounds to 7.0625, so w * s + z is 0.0625, not the
  // 0.0546875 of exact arithmetic.
  const char *ir = R"(
    graph.func @g(%x: tensor<1x2xbf16>, %w: tensor<1x2xi4>, %s: tensor<1x1xbf16>,
                  %z: tensor<1x1xbf16>, %s2: tensor<1x1xbf16>, %z2: tensor<1x1xbf16>)
        -> (tensor<1x1xbf16>, tensor<1x1xbf16>) {
      %wf = graph.convert %w : tensor<1x2xi4> -> tensor<1x2xbf16>
      %sr = graph.repeat %s {group = 2 : i64} : tensor<1x1xbf16> -> tensor<1x2xbf16>
      %zr = graph.repeat %z {group = 2 : i64} : tensor<1x1xbf16> -> tensor<1x2xbf16>
      %ws = graph.mul %wf, %sr : tensor<1x2xbf16>, tensor<1x2xbf16> -> tensor<1x2xbf16>
      %wd = graph.add %ws, %zr : tensor<1x2xbf16>, tensor<1x2xbf16> -> tensor<1x2xbf16>
      %y = graph.linear %x, %wd : tensor<1x2xbf16>, tensor<1x2xbf16> -> tensor<1x1xbf16>
      %s2r = graph.repeat %s2 {group = 2 : i64} : tensor<1x1xbf16> -> tensor<1x2xbf16>
      %z2r = graph.repeat %z2 {group = 2 : i64} : tensor<1x1xbf16> -> tensor<1x2xbf16>
      %d = graph.sub %wf, %z2r : tensor<1x2xbf16>, tensor<1x2xbf16> -> tensor<1x2xbf16>
      %wd2 = graph.mul %d, %s2r : tensor<1x2xbf16>, tensor<1x2xbf16> -> tensor<1x2xbf16>
      %y2 = graph.linear %x, %wd2 : tensor<1x2xbf16>, tensor<1x2xbf16> -> tensor<1x1xbf16>
      graph.return %y, %y2 : tensor<1x1xbf16>, tensor<1x1xbf16>
    })";
  auto out = run(ir, {tensor(DType::BF16, {1, 2}, {1, 0.5}),
                      tensor(DType::I4, {1, 2}, {7, 0}),
                      tensor(DType::BF16, {1, 1}, {1 + 0x1p-7}),
                      tensor(DType::BF16, {1, 1}, {-7}),
                      tensor(DType::BF16, {1, 1}, {3}),
                      tensor(DType::BF16, {1, 1}, {6.5})});
  ASSERT_EQ(out.size(), 2u);
  // y = 1 * (7.0625 - 7) + 0.5 * (0 * s - 7);
  // y2 = 1 * (7 - 6.5) * 3 + 0.5 * (0 - 6.5) * 3.
  expectTensor(out[0], {1, 1}, {0.0625 - 3.5});
  expectTensor(out[1], {1, 1}, {1.5 - 9.75});
}

TEST_F(InterpreterTest, WeightOnlyInt4LinearMatchesNaive) {
  // The AWQ form with groups of 16 over K = 64, against the same sums in
  // double.
  HostTensor x = randomTensor(DType::BF16, {5, 64}, 31);
  HostTensor w = randomTensor(DType::I4, {7, 64}, 32);
  HostTensor scales(DType::BF16, {7, 4}), zeros(DType::BF16, {7, 4});
  fillRandom(scales, 33, "scales");
  fillRandom(zeros, 34, "zeros");
  const char *ir = R"(
    graph.func @awq(%x: tensor<5x64xbf16>, %w: tensor<7x64xi4>, %scales: tensor<7x4xbf16>,
                    %zeros: tensor<7x4xbf16>) -> tensor<5x7xbf16> {
      %wf = graph.convert %w : tensor<7x64xi4> -> tensor<7x64xbf16>
      %s = graph.repeat %scales {group = 16 : i64} : tensor<7x4xbf16> -> tensor<7x64xbf16>
      %z = graph.repeat %zeros {group = 16 : i64} : tensor<7x4xbf16> -> tensor<7x64xbf16>
      %d = graph.sub %wf, %z : tensor<7x64xbf16>, tensor<7x64xbf16> -> tensor<7x64xbf16>
      %wd = graph.mul %d, %s : tensor<7x64xbf16>, tensor<7x64xbf16> -> tensor<7x64xbf16>
      %y = graph.linear %x, %wd : tensor<5x64xbf16>, tensor<7x64xbf16> -> tensor<5x7xbf16>
      graph.return %y : tensor<5x7xbf16>
    })";
  auto out = run(ir, {x, w, scales, zeros});
  ASSERT_EQ(out.size(), 1u);
  std::vector<double> ref(5 * 7);
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t n = 0; n < 7; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < 64; ++k) {
        int64_t g = n * 4 + k / 16;
        // Each node rounds to bf16: the difference, then the product.
        double d = roundTo(DType::BF16, w.get(n * 64 + k) - zeros.get(g));
        acc += x.get(r * 64 + k) * roundTo(DType::BF16, d * scales.get(g));
      }
      ref[size_t(r * 7 + n)] = acc;
    }
  expectRounded(out[0].data, ref, DType::BF16);
}

TEST_F(InterpreterTest, MultipleOutputsAndReturningAnInput) {
  const char *ir = R"(
    graph.func @g(%x: tensor<3xf16>) -> (tensor<3xf16>, tensor<3xf16>, tensor<3xf16>) {
      %y = graph.relu %x : tensor<3xf16> -> tensor<3xf16>
      graph.return %y, %x, %y : tensor<3xf16>, tensor<3xf16>, tensor<3xf16>
    })";
  auto out = run(ir, {tensor(DType::F16, {3}, {-1, 0.5, 2})});
  ASSERT_EQ(out.size(), 3u);
  expectTensor(out[0], {3}, {0, 0.5, 2});
  expectTensor(out[1], {3}, {-1, 0.5, 2});
  expectTensor(out[2], {3}, {0, 0.5, 2});
}

TEST_F(InterpreterTest, ThreadCountDoesNotChangeResults) {
  HostTensor x = randomTensor(DType::F32, {150, 600}, 21);
  HostTensor w = randomTensor(DType::F32, {200, 600}, 22);
  HostTensor b = randomTensor(DType::F32, {600, 70}, 23);
  const char *text = R"(
    graph.func @g(%x: tensor<150x600xf32>, %w: tensor<200x600xf32>, %b: tensor<600x70xf32>)
        -> (tensor<150x200xf32>, tensor<150x70xf32>) {
      %y = graph.linear %x, %w : tensor<150x600xf32>, tensor<200x600xf32> -> tensor<150x200xf32>
      %s = graph.silu %y : tensor<150x200xf32> -> tensor<150x200xf32>
      %m = graph.matmul %x, %b : tensor<150x600xf32>, tensor<600x70xf32> -> tensor<150x70xf32>
      graph.return %s, %m : tensor<150x200xf32>, tensor<150x70xf32>
    })";
  auto one = run(text, {x, w, b}, 1);
  auto seven = run(text, {x, w, b}, 7);
  ASSERT_EQ(one.size(), 2u);
  ASSERT_EQ(seven.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(one[i].data.size(), seven[i].data.size());
    EXPECT_EQ(std::memcmp(one[i].data.data(), seven[i].data.data(),
                          one[i].data.size() * sizeof(double)),
              0);
  }
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

const char *kRelu = R"(
  graph.func @g(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %y = graph.relu %x : tensor<2x3xf32> -> tensor<2x3xf32>
    graph.return %y : tensor<2x3xf32>
  })";

TEST_F(InterpreterTest, WrongInputShapeIsAnError) {
  std::string err = runError(kRelu, {HostTensor(DType::F32, {3, 2})});
  EXPECT_NE(err.find("reference interpreter"), std::string::npos) << err;
  EXPECT_NE(err.find("input #0 ('x')"), std::string::npos) << err;
  EXPECT_NE(err.find("[3, 2]"), std::string::npos) << err;
}

TEST_F(InterpreterTest, WrongInputTypeOrCountIsAnError) {
  std::string err = runError(kRelu, {HostTensor(DType::BF16, {2, 3})});
  EXPECT_NE(err.find("bf16"), std::string::npos) << err;
  err = runError(kRelu, {});
  EXPECT_NE(err.find("takes 1 inputs, got 0"), std::string::npos) << err;
  HostTensor truncated(DType::F32, {2, 3});
  truncated.data.resize(4);
  err = runError(kRelu, {truncated});
  EXPECT_NE(err.find("bytes"), std::string::npos) << err;
}

TEST_F(InterpreterTest, I4InputsAreCheckedInBytes) {
  // An i4 [2, 4] input is 4 bytes, two elements each.
  const char *ir = R"(
    graph.func @g(%w: tensor<2x4xi4>) -> tensor<2x4xf32> {
      %f = graph.convert %w : tensor<2x4xi4> -> tensor<2x4xf32>
      graph.return %f : tensor<2x4xf32>
    })";
  HostTensor w(DType::I4, {2, 4});
  w.data.resize(3);
  std::string err = runError(ir, {w});
  EXPECT_NE(err.find("holds 3 bytes, not 4"), std::string::npos) << err;
  err = runError(ir, {HostTensor(DType::I8, {2, 4})});
  EXPECT_NE(err.find("is i8[2, 4] but graph '@g' expects i4[2, 4]"),
            std::string::npos)
      << err;
}

TEST_F(InterpreterTest, UnsupportedOpIsAnError) {
  const char *ir = R"(
    graph.func @g(%x: tensor<2xf32>) -> tensor<2xf32> {
      %y = "kernel.mystery"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      graph.return %y : tensor<2xf32>
    })";
  std::string err = runError(ir, {HostTensor(DType::F32, {2})});
  EXPECT_EQ(err, "reference interpreter: unsupported op 'kernel.mystery'");
}

} // namespace
