//===- InterpreterCompareTest.cpp - Tests of compare() --------------------===//
//
// compare(), which measures a device output against the interpreter's
// reference: error math, exact matches, non-finite values and shapes.
//
//===----------------------------------------------------------------------===//
#include "InterpreterFixture.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mtc;
using namespace mtc::interpretertest;

namespace {

//===----------------------------------------------------------------------===//
// compare()
//===----------------------------------------------------------------------===//

TEST(Compare, ErrorMath) {
  HostTensor out = tensor(DType::F32, {2, 2}, {1, 2.5, -3, 0});
  RefTensor ref{{2, 2}, {1, 2, -4, 0}};
  Comparison c = compare(out, ref);
  EXPECT_EQ(c.maxAbsErr, 1);
  EXPECT_EQ(c.maxAbsRef, 4);
  EXPECT_EQ(c.maxRelErr, 0.25);
  EXPECT_DOUBLE_EQ(c.l2RelErr, std::sqrt(1.25 / 21));
  EXPECT_EQ(c.nonFinite, 0);
  EXPECT_EQ(c.worstIndex, 2);
  // ulp(4) in f32 is 2^-21.
  EXPECT_EQ(c.maxUlps, 0x1p21);
  EXPECT_TRUE(c.passed(0x1p21));
  EXPECT_FALSE(c.passed(0x1p20));
}

TEST(Compare, ExactMatch) {
  HostTensor out = tensor(DType::BF16, {3}, {1, -2, 0.5});
  Comparison c = compare(out, RefTensor{{3}, {1, -2, 0.5}});
  EXPECT_EQ(c.maxAbsErr, 0);
  EXPECT_EQ(c.maxRelErr, 0);
  EXPECT_EQ(c.l2RelErr, 0);
  EXPECT_TRUE(c.passed(0));
  // An all-zero reference matched exactly.
  Comparison z = compare(HostTensor(DType::F32, {2}), RefTensor{{2}, {0, 0}});
  EXPECT_TRUE(z.passed(0));
  EXPECT_EQ(z.l2RelErr, 0);
}

TEST(Compare, PoisonIsNonFinite) {
  HostTensor out = tensor(DType::F32, {4}, {1, kNaN, 3, kInf});
  Comparison c = compare(out, RefTensor{{4}, {1, 2, 3, 4}});
  EXPECT_EQ(c.nonFinite, 2);
  EXPECT_EQ(c.worstIndex, 1);
  EXPECT_EQ(c.maxAbsErr, 0);
  EXPECT_FALSE(c.passed(1e9));
}

TEST(Compare, NonFiniteReference) {
  // Special values the output reproduces are fine; others are counted.
  HostTensor out = tensor(DType::F32, {4}, {kNaN, kInf, -kInf, 1});
  Comparison same = compare(out, RefTensor{{4}, {kNaN, kInf, -kInf, 1}});
  EXPECT_EQ(same.nonFinite, 0);
  EXPECT_TRUE(same.passed(0));
  Comparison diff = compare(out, RefTensor{{4}, {kNaN, -kInf, -kInf, kInf}});
  EXPECT_EQ(diff.nonFinite, 2);
  EXPECT_EQ(diff.worstIndex, 1);
  EXPECT_FALSE(diff.passed(1));
}

TEST(Compare, ShapeMismatchFails) {
  HostTensor out = tensor(DType::F32, {2}, {1, 2});
  Comparison c = compare(out, RefTensor{{1, 2}, {1, 2}});
  EXPECT_FALSE(c.passed(1e30));
  EXPECT_EQ(c.maxRelErr, kInf);
  EXPECT_EQ(c.maxUlps, kInf);
}

} // namespace
