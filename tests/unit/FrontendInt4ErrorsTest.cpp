//===- FrontendInt4ErrorsTest.cpp - Errors of int4 graphs -----------------===//
//
// The front end's errors for what int4 weights brought to graph files:
// integer arguments (repeat's group), the i4 storage type, and the notes
// that explain a repeat behind a broadcast error; each at its exact line and
// column with its exact message, as tests/lit/CLI/errors-int4.test shows
// them rendered.
//
//===----------------------------------------------------------------------===//
#include "FrontendFixture.h"

#include <gtest/gtest.h>

using namespace mtc;
using namespace mtc::frontendtest;

namespace {

TEST_F(FrontendTest, NumberArguments) {
  const char *head = "graph g(x: f32[8, 64], s: i8[8, 64]) -> f32[8, 64] {\n";
  auto graphWith = [&](const char *stmt) {
    return std::string(head) + stmt + "\n  return y\n}";
  };
  expectError(graphWith("  y = add(x, 1e)"), "2:14",
              "bad number '1e'; a number is an integer (128) or a float "
              "(1.5, 1e-05)");
  expectError(graphWith("  y = add(x, - 2)"), "2:14",
              "unexpected '-'; an argument is a value name, a dtype or a "
              "number (a '-' right before it)");
  expectError(graphWith("  y = silu(0.5)"), "2:12",
              "silu: expected a value name, got the number '0.5' (silu(t))");
  expectError(graphWith("  y = sum(-3)"), "2:11",
              "sum: expected a value name, got the integer '-3' (sum(t))");
  // The number takes the other operand's type, which must be a float.
  expectError(graphWith("  y = mul(s, 2.5)"), "2:14",
              "mul: operands must be floating point, got i8; insert a "
              "convert; a number takes the type of the other operand");
  expectError(graphWith("  y = mean(x, x)"), "2:7",
              "mean takes 1 argument, mean(t), got 2");
}

TEST_F(FrontendTest, IntegerArguments) {
  // repeat's group is an integer literal, and only there.
  expectError("graph g(s: bf16[8, 2], n: bf16[1]) -> bf16[8, 128] {\n"
              "  r = repeat(s, n)\n  return r\n}",
              "2:17",
              "repeat: the group size must be an integer literal, got 'n' "
              "(repeat(t, group))");
  expectError("graph g(x: bf16[8, 64]) -> bf16[8, 64] {\n"
              "  y = relu(2)\n  return y\n}",
              "2:12",
              "relu: expected a value name, got the integer '2' (relu(t))");
  expectError("graph g(x: bf16[8, 64]) -> bf16[8, 64] {\n"
              "  y = add(2, 3)\n  return y\n}",
              "2:14",
              "add: at most one argument may be a number; the other must be a "
              "value name");
  expectError("graph g(s: bf16[8, 2]) -> bf16[8, 128] {\n"
              "  r = repeat(4, s)\n  return r\n}",
              "2:14",
              "repeat: expected a value name, got the integer '4' "
              "(repeat(t, group))");
  expectError("graph g(s: bf16[8, 2]) -> bf16[8, 2] {\n"
              "  r = repeat(s, 0)\n  return r\n}",
              "2:17", "repeat: the group size must be positive, got 0");
  expectError("graph g(s: bf16[8, 2]) -> bf16[8, 128] {\n"
              "  r = repeat(s, 4.5)\n  return r\n}",
              "2:17",
              "repeat: the group size must be an integer literal, got '4.5' "
              "(repeat(t, group))");
  expectError("graph g(s: bf16[8, 2]) -> bf16[8, 128] {\n"
              "  r = repeat(s, -2)\n  return r\n}",
              "2:17", "repeat: the group size must be positive, got -2");
  expectError("graph g(s: bf16[8, 2]) -> bf16[8, 128] {\n"
              "  r = repeat(s, 99999999999999999999)\n  return r\n}",
              "2:17",
              "integer literal '99999999999999999999' does not fit in 64 "
              "bits");
  expectError("graph g(s: bf16[8, 2]) -> bf16[8, 128] {\n"
              "  r = repeat(s)\n  return r\n}",
              "2:7", "repeat takes 2 arguments, repeat(t, group), got 1");
  // Too large: at the group where the repeated dimension alone is, else at
  // the op like any node's result.
  expectError("graph g(s: bf16[1, 2048]) -> bf16[1, 2048] {\n"
              "  r = repeat(s, 1099511627776)\n  return s\n}",
              "2:17",
              "repeat: result tensor of [1, 2048] repeated in groups of "
              "1099511627776 is too large (more than 2^40 elements)");
  expectError("graph g(s: bf16[2, 1048576]) -> bf16[2, 1048576] {\n"
              "  r = repeat(s, 1048576)\n  return s\n}",
              "2:7",
              "repeat: result tensor of shape [2, 1099511627776] is too large "
              "(more than 2^40 elements)");
}

TEST_F(FrontendTest, I4IsAStorageType) {
  expectError("graph g(x: bf16[8, 64]) -> bf16[8, 64] {\n"
              "  q = convert(x, i4)\n  return x\n}",
              "2:18",
              "convert: cannot produce i4; i4 is a storage type for weights "
              "(graph inputs, converted before use)");
  expectError("graph g(w: i4[8, 64]) -> bf16[64, 8] {\n"
              "  t = transpose(w)\n  f = convert(t, bf16)\n  return f\n}",
              "2:7",
              "transpose: i4 operands must be converted first (i4 is a "
              "storage type); insert a convert");
  expectError("graph g(w: i4[8, 64]) -> i8[8, 64] {\n"
              "  r = repeat(w, 2)\n  return w\n}",
              "2:7",
              "repeat: i4 operands must be converted first (i4 is a storage "
              "type); insert a convert");
  expectError("graph g(w: i4[8, 64]) -> i4[8, 64] {\n  return w\n}", "1:26",
              "graph results cannot be i4; i4 is a storage type for weights "
              "(graph inputs, converted before use)");
  expectError("graph g(x: bf16[1, 4095], w: i4[8192, 4095]) -> bf16[1, 8192] "
              "{\n  wf = convert(w, bf16)\n  y = linear(x, wf)\n  return y\n}",
              "1:30",
              "i4 tensors pack two elements a byte along the last dimension, "
              "which must be even; got [8192, 4095]");
  // A symbolic last dimension is checked once bound.
  FrontendOptions options;
  options.bindings["K"] = 63;
  expectError("graph g(w: i4[8, K]) -> bf16[8, K] {\n"
              "  f = convert(w, bf16)\n  return f\n}",
              "1:12",
              "i4 tensors pack two elements a byte along the last dimension, "
              "which must be even; got [8, 63]",
              options);
  // Where another rule applies first, its message stands.
  expectError("graph g(x: bf16[1, 64], w: i4[8, 64]) -> bf16[1, 8] {\n"
              "  y = linear(x, w)\n  return y\n}",
              "2:7",
              "linear: element types differ (bf16 vs i4); insert a convert");
  expectError("graph g(w: i4[8, 64]) -> bf16[8, 64] {\n"
              "  y = relu(w)\n  return y\n}",
              "2:7",
              "relu: operands must be floating point, got i4; insert a "
              "convert");
}

TEST_F(FrontendTest, RepeatNotes) {
  // A broadcast error after a repeat explains the repeat's groups in a note
  // at the repeat: a group size that does not divide the other operand's
  // columns, or the wrong number of groups.
  Diag d = expectError(
      "graph g(w: i4[64, 4096], scales: bf16[64, 41]) -> bf16[64, 4096] {\n"
      "  wf = convert(w, bf16)\n  s  = repeat(scales, 100)\n"
      "  ws = mul(wf, s)\n  return ws\n}",
      "4:8",
      "mul: shapes [64, 4096] and [64, 4100] cannot be broadcast together "
      "(dim 1: 4096 vs 4100)");
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_EQ(d.notes[0].first, "3:8");
  EXPECT_EQ(d.notes[0].second,
            "'s' repeats bf16[64, 41] in groups of 100: 4100 columns; the "
            "group size 100 does not divide 4096");
  d = expectError(
      "graph g(w: i4[64, 4096], scales: bf16[64, 32]) -> bf16[64, 4096] {\n"
      "  wf = convert(w, bf16)\n  s  = repeat(scales, 64)\n"
      "  ws = mul(s, wf)\n  return ws\n}",
      "4:8",
      "mul: shapes [64, 2048] and [64, 4096] cannot be broadcast together "
      "(dim 1: 2048 vs 4096)");
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_EQ(d.notes[0].first, "3:8");
  EXPECT_EQ(d.notes[0].second,
            "'s' repeats bf16[64, 32] in groups of 64: 2048 columns; 4096 "
            "columns take 64 groups of 64, not 32");
  // No note where the repeat is not what disagrees.
  d = expectError("graph g(a: bf16[3, 8], s: bf16[2, 4]) -> bf16[3, 8] {\n"
                  "  r = repeat(s, 2)\n  y = add(a, r)\n  return y\n}",
                  "3:7",
                  "add: shapes [3, 8] and [2, 8] cannot be broadcast together "
                  "(dim 0: 3 vs 2)");
  EXPECT_TRUE(d.notes.empty());
}

} // namespace
