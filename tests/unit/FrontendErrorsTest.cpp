//===- FrontendErrorsTest.cpp - Errors of the graph-file front end --------===//
//
// What a user sees of an error (file:line:col, caret, notes), and every class
// of error at its exact line and column with its exact message, down to
// binary junk, truncated and mutated files.
//
//===----------------------------------------------------------------------===//
#include "FrontendFixture.h"

#include "llvm/ADT/StringExtras.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

using namespace mtc;
using namespace mtc::frontendtest;

namespace {

//===----------------------------------------------------------------------===//
// What a user sees
//===----------------------------------------------------------------------===//

TEST_F(FrontendTest, RendersFileLineColAndCaret) {
  std::string out = render("graph g(x: f32[4]) -> f32[4] {\n"
                           "  y = linear(x foo)\n"
                           "  return y\n"
                           "}\n");
  EXPECT_EQ(out, "t.graph:2:16: error: expected ')' after arguments, got "
                 "'foo'\n"
                 "  y = linear(x foo)\n"
                 "               ^\n");
}

TEST_F(FrontendTest, RendersEndOfFile) {
  std::string out = render("graph g(x: f32[4]) -> f32[4] {\n  y = relu(x");
  EXPECT_EQ(out, "t.graph:2:13: error: unexpected end of file, expected ')' "
                 "after arguments\n"
                 "  y = relu(x\n"
                 "            ^\n");
  out = render("graph g(x: f32[4]) -> f32[4] {\n");
  EXPECT_EQ(out.substr(0, out.find('\n')),
            "t.graph:2:1: error: unexpected end of file, expected a statement "
            "'name = op(args)' or 'return' in graph 'g'");
}

TEST_F(FrontendTest, RendersNotes) {
  std::string out = render("graph g(x: f32[4]) -> f32[4] {\n"
                           "  x = relu(x)\n"
                           "  return x\n"
                           "}\n");
  EXPECT_EQ(out, "t.graph:2:3: error: redefinition of 'x'\n"
                 "  x = relu(x)\n"
                 "  ^\n"
                 "t.graph:1:9: note: previous definition is here\n"
                 "graph g(x: f32[4]) -> f32[4] {\n"
                 "        ^\n");
}

//===----------------------------------------------------------------------===//
// Errors, one test per class
//===----------------------------------------------------------------------===//

TEST_F(FrontendTest, SyntaxErrors) {
  expectError("graph g(x: f32[4]) -> f32[4] {\n  y = linear(x foo)\n}", "2:16",
              "expected ')' after arguments, got 'foo'");
  expectError("graph g(x f32[4]) -> f32[4] { return x }", "1:11",
              "expected ':' and a type after parameter 'x', got 'f32'");
  expectError("graph g(x: f32[4]) f32[4] { return x }", "1:20",
              "expected '->' and the result types after the parameter list, "
              "got 'f32'");
  expectError("graph g(x: f32[4]) -> f32[4] return x }", "1:30",
              "expected '{' to start the body of graph 'g', got 'return'");
  expectError("graph g(x: f32[4]) -> f32[4] { y relu(x) return y }", "1:34",
              "expected '=' after 'y' (statements are 'name = op(args)'), got "
              "'relu'");
  expectError("graph g(x: f32[4]) -> f32[4] { y = (x) return y }", "1:36",
              "expected an op name after '=', got '('");
  expectError("graph g(x: f32[4]) -> f32[4] { y = relu x return y }", "1:41",
              "expected '(' after op name 'relu', got 'x'");
  expectError(
      "graph g(x: f32[4]) -> f32[4] { y = add(x, ) return y }", "1:43",
      "expected an argument (a value name, a dtype or a number), got ')'");
  expectError("graph g(x: f32[4]) -> f32[4] { y = relu(x) return y z }", "1:53",
              "expected '}' after the return statement, got 'z'; 'return' "
              "must be the last statement of graph 'g'");
  expectError("graph g(x: f32[4]) -> f32[4] { return x, }", "1:42",
              "expected a value name after 'return', got '}'");
  expectError("g(x: f32[4]) -> f32[4] { return x }", "1:1",
              "expected 'graph' at top level, got 'g'");
  expectError("graph (x: f32[4]) -> f32[4] { return x }", "1:7",
              "expected a graph name after 'graph', got '('");
  expectError("graph g(x: f32[4],) -> f32[4] { return x }", "1:19",
              "expected a parameter name, got ')'");
  expectError("graph g(x: f32[4] y: f32[4]) -> f32[4] { return x }", "1:19",
              "expected ',' or ')' after parameter, got 'y'");
  expectError("graph g(x: f32[4]) -> (f32[4] f32[4]) { return x }", "1:31",
              "expected ',' or ')' after result type, got 'f32'");
  expectError("graph g(x: f32[4 4]) -> f32[4] { return x }", "1:18",
              "expected ',' or ']' after dimension, got '4'");
  expectError("graph g(x: f32(4)) -> f32[4] { return x }", "1:15",
              "expected '[' and the dimensions after dtype 'f32', got '('");
  expectError("graph g(x: [4]) -> f32[4] { return x }", "1:12",
              "expected a tensor type such as 'bf16[1, 4096]', got '['");
  expectError("graph g(x: f32[]) -> f32[4] { return x }", "1:16",
              "expected a dimension, got ']'; tensors have rank >= 1 (write "
              "a scalar as 'f32[1]')");
  expectError("graph g(x: f32[4]) -> f32[4] { y = mul(relu(x), x) return y }",
              "1:44",
              "nested op calls are not supported; assign 'relu(...)' to a "
              "name first");
  expectError("graph g(x: f32[4]) -> f32[4] { y = relu(x); return y }", "1:43",
              "unexpected character ';'; statements need no terminator");
  expectError("graph g(x: f32[4]) -> f32[4] { y = relu(%x) return y }", "1:41",
              "unexpected character '%'; value names are written without "
              "'%'");
  expectError("graph g(x: f32[4]) -> f32[4] { return x } }", "1:43",
              "expected 'graph' at top level, got '}'");
}

TEST_F(FrontendTest, KeywordsAreReserved) {
  expectError("graph return(x: f32[4]) -> f32[4] { return x }", "1:7",
              "'return' is a keyword and cannot be used as a graph name");
  expectError("graph g(graph: f32[4]) -> f32[4] { return graph }", "1:9",
              "'graph' is a keyword and cannot be used as a parameter name");
  expectError("graph g(x: f32[4]) -> f32[4] { return = relu(x) return x }",
              "1:39", "expected a value name after 'return', got '='");
}

TEST_F(FrontendTest, UnknownOp) {
  expectError("graph g(x: f32[4]) -> f32[4] {\n  y = gelu(x)\n  return y\n}",
              "2:7",
              "unknown op 'gelu'; expected one of convert, linear, matmul, "
              "transpose, repeat, rope, add, sub, mul, relu, silu, rsqrt, sum, "
              "mean");
}

TEST_F(FrontendTest, UnknownDtype) {
  expectError("graph g(x: f64[4]) -> f32[4] { return x }", "1:12",
              "unknown dtype 'f64'; expected one of i4, i8, f16, bf16, f32");
  expectError("graph g(x: f32[4]) -> f32[4] {\n  y = convert(x, int8)\n"
              "  return y\n}",
              "2:18",
              "unknown dtype 'int8'; expected one of i4, i8, f16, bf16, "
              "f32");
}

TEST_F(FrontendTest, WrongArity) {
  expectError("graph g(x: f32[4]) -> f32[4] {\n  y = linear(x)\n  return y\n}",
              "2:7", "linear takes 2 arguments, linear(x, w), got 1");
  expectError("graph g(x: f32[4]) -> f32[4] { y = relu(x, x) return y }",
              "1:36", "relu takes 1 argument, relu(t), got 2");
  expectError("graph g(x: f32[4]) -> f32[4] { y = convert(x) return y }",
              "1:36", "convert takes 2 arguments, convert(t, dtype), got 1");
  expectError("graph g(x: f32[4]) -> f32[4] { y = silu() return y }", "1:36",
              "silu takes 1 argument, silu(t), got 0");
}

TEST_F(FrontendTest, UndefinedName) {
  expectError("graph g(x: f32[4]) -> f32[4] {\n  y = add(x, z)\n  return y\n}",
              "2:14", "undefined name 'z'");
  expectError("graph g(x: f32[4]) -> f32[4] {\n  y = relu(x)\n  return q\n}",
              "3:10", "undefined name 'q'");
  // Names are scoped to their graph.
  expectError("graph a(x: f32[4]) -> f32[4] { y = relu(x) return y }\n"
              "graph b(z: f32[4]) -> f32[4] { return y }",
              "2:39", "undefined name 'y'");
  // A name is defined only after its statement.
  expectError("graph g(x: f32[4]) -> f32[4] { y = relu(y) return y }", "1:41",
              "undefined name 'y'");
}

TEST_F(FrontendTest, RedefinedName) {
  Diag d = expectError("graph g(x: f32[4]) -> f32[4] {\n  y = relu(x)\n"
                       "  y = silu(y)\n  return y\n}",
                       "3:3", "redefinition of 'y'");
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_EQ(d.notes[0].first, "2:3");
  EXPECT_EQ(d.notes[0].second, "previous definition is here");

  d = expectError("graph g(x: f32[4], x: f32[4]) -> f32[4] { return x }",
                  "1:20", "redefinition of 'x'");
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_EQ(d.notes[0].first, "1:9");
}

TEST_F(FrontendTest, DuplicateGraphName) {
  Diag d = expectError("graph g(x: f32[4]) -> f32[4] { return x }\n"
                       "graph g(x: f32[4]) -> f32[4] { return x }",
                       "2:7", "duplicate graph name 'g'");
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_EQ(d.notes[0].first, "1:7");
  EXPECT_EQ(d.notes[0].second, "previous definition is here");
}

TEST_F(FrontendTest, ShapeMismatch) {
  expectError(
      R"(graph g(x: bf16[1, 4096], w: bf16[8192, 4095]) -> bf16[1, 8192] {
  y = linear(x, w)
  return y
})",
      "2:7",
      "linear: x [1, 4096] and w [8192, 4095] disagree on K (4096 vs "
      "4095)");
  expectError("graph g(a: f32[2, 3], b: f32[4, 5]) -> f32[2, 5] {\n"
              "  c = matmul(a, b)\n  return c\n}",
              "2:7", "matmul: a [2, 3] and b [4, 5] disagree on K (3 vs 4)");
  expectError("graph g(a: f32[3]) -> f32[3] {\n  t = transpose(a)\n"
              "  return t\n}",
              "2:7", "transpose: needs at least two dimensions, got [3]");
  expectError("graph g(y: f32[1, 8192], s: f32[4096]) -> f32[1, 8192] {\n"
              "  out = mul(y, s)\n  return out\n}",
              "2:9",
              "mul: shapes [1, 8192] and [4096] cannot be broadcast together "
              "(dim 1: 8192 vs 4096)");
}

TEST_F(FrontendTest, DtypeMismatch) {
  expectError(R"(graph g(x: bf16[1, 4096], w: i8[8192, 4096]) -> bf16[1, 8192] {
  y = linear(x, w)
  return y
})",
              "2:7",
              "linear: element types differ (bf16 vs i8); insert a convert");
  expectError("graph g(a: f32[4], b: bf16[4]) -> f32[4] {\n"
              "  c = add(a, b)\n  return c\n}",
              "2:7",
              "add: element types differ (f32 vs bf16); insert a "
              "convert");
  expectError("graph g(a: i8[4]) -> i8[4] {\n  r = relu(a)\n  return r\n}",
              "2:7",
              "relu: operands must be floating point, got i8; insert a "
              "convert");
  expectError("graph g(a: i8[4], b: i8[4]) -> i8[4] {\n  r = sub(a, b)\n"
              "  return r\n}",
              "2:7",
              "sub: operands must be floating point, got i8; insert a "
              "convert");
}

TEST_F(FrontendTest, ReturnMismatch) {
  expectError("graph g(x: f32[4]) -> (f32[4], f32[4]) {\n  return x\n}", "2:3",
              "graph 'g' declares 2 results but returns 1 value");
  expectError("graph g(x: f32[4]) -> f32[4] {\n  return x, x\n}", "2:13",
              "graph 'g' declares 1 result but returns 2 values");
  Diag d = expectError(
      "graph g(x: f32[4]) -> (f32[4], bf16[4]) {\n  return x, x\n}", "2:13",
      "returned value 'x' has type f32[4] but result #1 of graph 'g' is "
      "declared as bf16[4]");
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_EQ(d.notes[0].first, "1:32");
  EXPECT_EQ(d.notes[0].second, "result #1 is declared here");
  expectError("graph g(x: f32[4, 2]) -> f32[2, 4] {\n  return x\n}", "2:10",
              "returned value 'x' has type f32[4, 2] but result #0 of graph "
              "'g' is declared as f32[2, 4]");
}

TEST_F(FrontendTest, MissingReturn) {
  expectError("graph g(x: f32[4]) -> f32[4] {\n  y = relu(x)\n}", "3:1",
              "graph 'g' has no 'return' statement; expected 'return' before "
              "'}'");
  expectError("graph g(x: f32[4]) -> f32[4] {\n  y = relu(x)\n"
              "graph h(x: f32[4]) -> f32[4] { return x }",
              "3:1",
              "expected 'return' and '}' to end graph 'g' before the next "
              "'graph'");
}

TEST_F(FrontendTest, NoGraph) {
  expectError("", "1:1", "no graph in file");
  expectError("# only a comment\n\n   # and another\n", "1:1",
              "no graph in file");
  expectError(" \n\t\r\n", "1:1", "no graph in file");
}

TEST_F(FrontendTest, BadDims) {
  expectError("graph g(x: f32[4, 0]) -> f32[4] { return x }", "1:19",
              "dimension must be a positive integer, got '0'");
  expectError("graph g(x: f32[-3]) -> f32[4] { return x }", "1:16",
              "dimension must be a positive integer, got '-3'");
  expectError("graph g(x: f32[- ]) -> f32[4] { return x }", "1:16",
              "unexpected '-'; a dimension is a positive integer or a "
              "symbolic name");
  expectError("graph g(x: f32[4.5]) -> f32[4] { return x }", "1:16",
              "dimension must be a positive integer, got '4.5'");
  expectError("graph g(x: f32[1e3]) -> f32[4] { return x }", "1:16",
              "dimension must be a positive integer, got '1e3'");
  expectError("graph g(x: f32[4096x]) -> f32[4] { return x }", "1:16",
              "dimension must be a positive integer, got '4096x'");
}

TEST_F(FrontendTest, HugeNumbers) {
  expectError("graph g(x: f32[99999999999999999999]) -> f32[4] { return x }",
              "1:16",
              "integer literal '99999999999999999999' does not fit in 64 "
              "bits");
  // INT64_MAX fits, but is beyond the element limit.
  expectError("graph g(x: f32[9223372036854775807]) -> f32[4] { return x }",
              "1:12",
              "tensor of shape [9223372036854775807] is too large (more than "
              "2^40 elements)");
  expectError("graph g(x: f32[9223372036854775808]) -> f32[4] { return x }",
              "1:16",
              "integer literal '9223372036854775808' does not fit in 64 "
              "bits");
  expectError("graph g(x: f32[1048576, 1048577]) -> f32[4] { return x }",
              "1:12",
              "tensor of shape [1048576, 1048577] is too large (more than "
              "2^40 elements)");
  // The result of an op can be too large even if its operands are not.
  expectError("graph g(a: f32[1048576, 1], b: f32[1, 2097152]) -> f32[1] {\n"
              "  c = add(a, b)\n  return c\n}",
              "2:7",
              "add: result tensor of shape [1048576, 2097152] is too large "
              "(more than 2^40 elements)");
  // A long literal is cut short in the message.
  std::string digits(5000, '9');
  ParseResult r = parse("graph g(x: f32[" + digits + "]) -> f32[4] {}");
  ASSERT_EQ(r.diags.size(), 1u);
  EXPECT_EQ(r.diags[0].message, "integer literal '" + std::string(40, '9') +
                                    "...' does not fit in 64 bits");
}

TEST_F(FrontendTest, UnboundSymbolicDim) {
  expectError("graph g(x: bf16[M, 4096]) -> bf16[M, 4096] { return x }", "1:17",
              "symbolic dimension 'M' has no value; pass --bind M=<n>");
  FrontendOptions options;
  options.bindings["M"] = 0;
  expectError("graph g(x: bf16[M, 4096]) -> bf16[M, 4096] { return x }", "1:17",
              "symbolic dimension 'M' is bound to 0; dimensions must be "
              "positive",
              options);
  options.bindings["M"] = int64_t(1) << 40;
  expectError("graph g(x: bf16[M, 4096]) -> bf16[M, 4096] { return x }", "1:12",
              "tensor of shape [1099511627776, 4096] is too large (more than "
              "2^40 elements)",
              options);
}

TEST_F(FrontendTest, BinaryJunk) {
  expectError(llvm::StringRef("graph g(x: f32[4])\0 -> f32[4]", 29), "1:19",
              "unexpected NUL byte '\\x00'; graph files are text");
  expectError("graph g(x: f32[4]) ->\x07 f32[4]", "1:22",
              "unexpected control character '\\x07'; graph files are text");
  expectError("# comment with a bell \x07\ngraph", "1:23",
              "unexpected control character '\\x07' in comment; graph files "
              "are text");
  expectError("graph g\xc3\xa9(x: f32[4])", "1:8",
              "unexpected non-ASCII byte '\\xc3'; only comments may hold "
              "non-ASCII text");
  expectError("\x7f"
              "ELF\x02\x01\x01",
              "1:1",
              "unexpected control character '\\x7f'; graph files are text");
  expectError("graph g(x: f32[4]) -> f32[4] { y = @relu(x) }", "1:36",
              "unexpected character '@'");

  // Random binary: exactly one error, and no raw non-printable byte in it.
  std::mt19937 rng(42);
  for (int round = 0; round < 200; ++round) {
    std::string junk(64 + round, '\0');
    for (char &c : junk)
      c = static_cast<char>(rng());
    ParseResult r = parse(junk);
    EXPECT_FALSE(r.module);
    ASSERT_EQ(r.diags.size(), 1u);
    for (char c : r.diags[0].message)
      EXPECT_TRUE(llvm::isPrint(c)) << r.diags[0].message;
  }
}

TEST_F(FrontendTest, UnexpectedEndOfFile) {
  expectError("graph", "1:6",
              "unexpected end of file, expected a graph name after 'graph'");
  expectError("graph g(x: f32[4]) -> f32[4] {\n  y = relu(x", "2:13",
              "unexpected end of file, expected ')' after arguments");
  expectError("graph g(x: f32[4]) -> f32[4] {\n  y = relu(x)\n", "3:1",
              "unexpected end of file, expected a statement 'name = op(args)' "
              "or 'return' in graph 'g'");
  expectError("graph g(x: f32[4]) -> f32[4] {\n  return x\n# the end", "3:10",
              "unexpected end of file, expected '}' to close graph 'g'");
  expectError("graph g(x: f32[4, ", "1:19",
              "unexpected end of file, expected a dimension (a positive "
              "integer or a symbolic name)");
  expectError("graph g(x: f32[4]) -> (f32[4]", "1:30",
              "unexpected end of file, expected ',' or ')' after result type");
}

TEST_F(FrontendTest, EveryPrefixFailsCleanly) {
  // Cutting the example anywhere gives exactly one error, never a crash.
  llvm::StringRef full(kWoq);
  size_t end = full.rfind('}');
  for (size_t n = 0; n <= end; ++n) {
    ParseResult r = parse(full.take_front(n));
    EXPECT_FALSE(r.module) << n;
    EXPECT_EQ(r.diags.size(), 1u) << n;
  }
  // Mutating single bytes gives at most one error.
  std::mt19937 rng(7);
  const char alphabet[] = "(),:=[]{}-># \nabxyw0123456789";
  for (int round = 0; round < 500; ++round) {
    std::string s = full.str();
    s[rng() % s.size()] = alphabet[rng() % (sizeof(alphabet) - 1)];
    ParseResult r = parse(s);
    EXPECT_LE(r.diags.size(), 1u) << s;
    EXPECT_EQ(bool(r.module), r.diags.empty()) << s;
  }
}

} // namespace
