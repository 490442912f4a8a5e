//===- FrontendTest.cpp - Tests of the graph-file front end ---------------===//
//
// Graphs that parse: the IR built from graph files, with its names and
// locations, symbolic dimensions, the examples, and graphs of thousands of
// nodes and megabyte lines. FrontendErrorsTest.cpp has the errors.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"

#include "CpuTime.h"
#include "FrontendFixture.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

using namespace mlir;
using namespace mtc;
using namespace mtc::frontendtest;

namespace {

// mlir has a ParseResult too.
using mtc::frontendtest::ParseResult;

/// The source tree, for the examples.
std::string sourceRoot() {
  if (const char *env = std::getenv("MTC_TEST_SRC"))
    return env;
  llvm::StringRef file = __FILE__; // <root>/tests/unit/FrontendTest.cpp
  for (int i = 0; i < 3; ++i)
    file = file.rsplit('/').first;
  return file.str();
}

//===----------------------------------------------------------------------===//
// Graphs that parse
//===----------------------------------------------------------------------===//

TEST_F(FrontendTest, ExampleBuildsNamedIR) {
  ParseResult r = parse(kWoq);
  ASSERT_TRUE(r.module);
  EXPECT_TRUE(r.diags.empty());
  std::string ir = print(*r.module);
  EXPECT_NE(ir.find("graph.func @woq_linear(%x: tensor<1x4096xbf16>, "
                    "%w: tensor<8192x4096xi8>, %scales: tensor<8192xbf16>) "
                    "-> tensor<1x8192xbf16>"),
            std::string::npos)
      << ir;
  EXPECT_NE(ir.find("%wf = graph.convert %w : tensor<8192x4096xi8> -> "
                    "tensor<8192x4096xbf16>"),
            std::string::npos)
      << ir;
  EXPECT_NE(ir.find("%y = graph.linear %x, %wf"), std::string::npos) << ir;
  EXPECT_NE(ir.find("%out = graph.mul %y, %scales"), std::string::npos) << ir;
  EXPECT_NE(ir.find("graph.return %out : tensor<1x8192xbf16>"),
            std::string::npos)
      << ir;

  // Node locations: NameLoc(name, file:line:col of the op name).
  auto funcs = llvm::to_vector(r.module->getOps<graph::FuncOp>());
  ASSERT_EQ(funcs.size(), 1u);
  graph::FuncOp func = funcs[0];
  EXPECT_EQ(func.getInputName(0), "x");
  EXPECT_EQ(func.getInputName(2), "scales");
  auto argLoc = dyn_cast<NameLoc>(func.getBody().getArgument(1).getLoc());
  ASSERT_TRUE(argLoc);
  EXPECT_EQ(argLoc.getName().getValue(), "w");
  EXPECT_EQ(posOf(argLoc.getChildLoc()), "2:36");

  std::vector<std::string> seen;
  for (Operation &op : func.getBody().front()) {
    if (isa<graph::ReturnOp>(op)) {
      EXPECT_EQ(posOf(op.getLoc()), "6:3");
      continue;
    }
    auto loc = dyn_cast<NameLoc>(op.getLoc());
    ASSERT_TRUE(loc);
    std::string file;
    seen.push_back(loc.getName().str() + "@" + posOf(loc.getChildLoc(), &file));
    EXPECT_EQ(file, "test.graph");
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"wf@3:9", "y@4:9", "out@5:9"}));
  // With debug info the printer shows them (as aliases).
  std::string withLocs = print(*r.module, /*debugInfo=*/true);
  EXPECT_NE(withLocs.find(R"(= loc("wf"(#loc)"), std::string::npos) << withLocs;
  EXPECT_NE(withLocs.find(R"(= loc("test.graph":3:9))"), std::string::npos)
      << withLocs;
}

TEST_F(FrontendTest, EveryOp) {
  ParseResult r = parse(R"(
graph all(a: f32[2, 3], b: f32[3, 4], w: f32[5, 3], q: i8[4]) -> f32[2, 5] {
  t  = transpose(a)        # [3, 2]
  tt = transpose(t)        # [2, 3]
  m  = matmul(tt, b)       # [2, 4]
  qf = convert(q, f32)     # [4]
  s  = add(m, qf)
  d  = sub(s, m)
  p  = mul(d, s)
  r  = relu(p)
  g  = silu(r)
  l  = linear(a, w)        # [2, 5]
  return l
}
)");
  ASSERT_TRUE(r.module);
  std::string ir = print(*r.module);
  for (const char *op : {"transpose", "matmul", "convert", "add", "sub", "mul",
                         "relu", "silu", "linear"})
    EXPECT_NE(ir.find(std::string("graph.") + op), std::string::npos) << op;
  EXPECT_NE(ir.find("%m = graph.matmul %tt, %b : tensor<2x3xf32>, "
                    "tensor<3x4xf32> -> tensor<2x4xf32>"),
            std::string::npos)
      << ir;
}

TEST_F(FrontendTest, ReductionsAndNumbers) {
  // RMSNorm as docs/graph-format.md writes it: a number operand becomes a
  // graph.constant of the other operand's dtype, named after its node and
  // position; -1.5 and 2e3 are numbers too.
  ParseResult r = parse(R"(
graph norm(x: bf16[3, 64], g: bf16[64]) -> (bf16[3, 64], f32[3, 1]) {
  xf = convert(x, f32)
  sq = mul(xf, xf)
  ms = mean(sq)
  e  = add(ms, 1e-05)
  rs = rsqrt(e)
  n  = mul(xf, rs)
  nb = convert(n, bf16)
  y  = mul(nb, g)
  s  = sum(sq)
  t  = mul(-1.5, s)
  u  = sub(t, 2e3)
  return y, u
}
)");
  ASSERT_TRUE(r.module);
  std::string ir = print(*r.module);
  for (const char *line :
       {"%ms = graph.mean %sq : tensor<3x64xf32> -> tensor<3x1xf32>",
        "%e_1 = graph.constant 1.000000e-05 : tensor<1xf32>",
        "%e = graph.add %ms, %e_1 : tensor<3x1xf32>, tensor<1xf32> -> "
        "tensor<3x1xf32>",
        "%rs = graph.rsqrt %e : tensor<3x1xf32> -> tensor<3x1xf32>",
        "%t_0 = graph.constant -1.500000e+00 : tensor<1xf32>",
        "%t = graph.mul %t_0, %s : tensor<1xf32>, tensor<3x1xf32> -> "
        "tensor<3x1xf32>",
        "%u_1 = graph.constant 2.000000e+03 : tensor<1xf32>"})
    EXPECT_NE(ir.find(line), std::string::npos) << line << "\n" << ir;
}

TEST_F(FrontendTest, Int4WeightAndRepeat) {
  // An i4 input, repeat's integer argument (which becomes the group
  // attribute), and symbolic dimensions around them.
  FrontendOptions options;
  options.bindings["M"] = 4;
  options.bindings["G"] = 2;
  ParseResult r = parse(R"(
graph woq4(x: bf16[M, 256], w: i4[64, 256], scales: bf16[64, G], zeros: bf16[64, G]) -> bf16[M, 64] {
  wf = convert(w, bf16)
  s  = repeat(scales, 128)
  z  = repeat(zeros,128)
  ws = mul(wf, s)
  wd = add(ws, z)
  y  = linear(x, wd)
  return y
}
)",
                        options);
  ASSERT_TRUE(r.module);
  EXPECT_TRUE(r.diags.empty());
  std::string ir = print(*r.module);
  for (const char *line :
       {"%wf = graph.convert %w : tensor<64x256xi4> -> tensor<64x256xbf16>",
        "%s = graph.repeat %scales {group = 128 : i64} : tensor<64x2xbf16> -> "
        "tensor<64x256xbf16>",
        "%z = graph.repeat %zeros {group = 128 : i64} : tensor<64x2xbf16> -> "
        "tensor<64x256xbf16>",
        "%y = graph.linear %x, %wd : tensor<4x256xbf16>, tensor<64x256xbf16> "
        "-> tensor<4x64xbf16>"})
    EXPECT_NE(ir.find(line), std::string::npos) << line << "\n" << ir;
  EXPECT_EQ(dims("graph g(s: bf16[N, G]) -> bf16[N, K] {\n"
                 "  r = repeat(s, 128)\n  return r\n}"),
            (std::vector<std::string>{"N", "G", "K"}));
}

TEST_F(FrontendTest, SeveralGraphs) {
  ParseResult r = parse(R"(graph a(x: f32[4]) -> f32[4] { y = relu(x) return y }
graph b(x: f16[2, 8]) -> f16[8, 2] {
  y = transpose(x)
  return y
}
# a comment between graphs
graph c(x: bf16[1]) -> bf16[1] { return x })");
  ASSERT_TRUE(r.module);
  std::vector<std::string> names;
  for (graph::FuncOp f : r.module->getOps<graph::FuncOp>())
    names.push_back(f.getName().str());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c"}));
}

TEST_F(FrontendTest, SymbolicDims) {
  const char *src = R"(graph g(x: bf16[M, K], w: bf16[N, K]) -> bf16[M, N] {
  y = linear(x, w)
  return y
}
graph h(x: f32[B, M]) -> f32[B, M] { return x }
)";
  EXPECT_EQ(dims(src), (std::vector<std::string>{"M", "K", "N", "B"}));
  EXPECT_TRUE(dims(kWoq).empty());
  EXPECT_TRUE(dims("graph g(x: f32[M]) -> f32[M] {").empty());

  FrontendOptions options;
  options.bindings["M"] = 16;
  options.bindings["K"] = 4096;
  options.bindings["N"] = 8192;
  options.bindings["B"] = 2;
  options.bindings["Unused"] = 7;
  ParseResult r = parse(src, options);
  ASSERT_TRUE(r.module);
  EXPECT_NE(print(*r.module).find("%y = graph.linear %x, %w : "
                                  "tensor<16x4096xbf16>, "
                                  "tensor<8192x4096xbf16> -> "
                                  "tensor<16x8192xbf16>"),
            std::string::npos);
}

TEST_F(FrontendTest, SeveralResults) {
  ParseResult r = parse(R"(graph two(x: f32[2, 3]) -> (f32[2, 3], f32[3, 2]) {
  r = relu(x)
  t = transpose(x)
  return r, t
})");
  ASSERT_TRUE(r.module);
  EXPECT_NE(print(*r.module).find("-> (tensor<2x3xf32>, tensor<3x2xf32>)"),
            std::string::npos);
  EXPECT_NE(print(*r.module).find("graph.return %r, %t : tensor<2x3xf32>, "
                                  "tensor<3x2xf32>"),
            std::string::npos);
}

TEST_F(FrontendTest, ReturnInputAndSameValueTwice) {
  ParseResult r = parse(R"(graph id(x: i8[3]) -> i8[3] { return x }
graph dup(x: f32[3]) -> (f32[3], f32[3], f32[3]) {
  y = relu(x)
  return y, y, x
})");
  ASSERT_TRUE(r.module) << (r.diags.empty() ? "" : r.diags[0].message);
  std::string ir = print(*r.module);
  EXPECT_NE(ir.find("graph.return %x : tensor<3xi8>"), std::string::npos);
  EXPECT_NE(ir.find("graph.return %y, %y, %x :"), std::string::npos);
}

TEST_F(FrontendTest, LayoutIsFree) {
  // Whitespace and newlines are not significant; CRLF and tabs are fine.
  ParseResult r = parse("graph\tg(\r\nx:f32[2,2])->f32[2,2]{y=relu(x)"
                        "z=silu(y)return z}\r\n");
  ASSERT_TRUE(r.module);
  // Columns are bytes; CR does not start a line.
  expectError(
      "graph g(x: f32[2])\r\n -> f32[2] {\r\n\ty = foo(x)\r\n"
      "return y }",
      "3:6",
      "unknown op 'foo'; expected one of convert, linear, "
      "matmul, transpose, repeat, rope, add, sub, mul, relu, silu, rsqrt, "
      "sum, mean");
}

TEST_F(FrontendTest, CommentsMayHoldUtf8) {
  ParseResult r = parse("# x \xc2\xb7 w\xe1\xb5\x80 \xe2\x80\x94 fine\n"
                        "graph g(x: f32[1]) -> f32[1] { return x } # \xff\n");
  EXPECT_TRUE(r.module);
}

TEST_F(FrontendTest, Examples) {
  for (const char *name : {"woq_int8_linear", "mlp_silu", "woq_batch16"}) {
    std::string path = sourceRoot() + "/examples/" + name + ".graph";
    auto buffer = llvm::MemoryBuffer::getFile(path);
    ASSERT_TRUE(bool(buffer)) << path;
    ParseResult r = parse((*buffer)->getBuffer());
    EXPECT_TRUE(r.module) << path << ": "
                          << (r.diags.empty() ? "" : r.diags[0].message);
    EXPECT_TRUE(dims((*buffer)->getBuffer()).empty()) << path;
  }
  auto woq = llvm::MemoryBuffer::getFile(sourceRoot() +
                                         "/examples/woq_int8_linear.graph");
  ASSERT_TRUE(bool(woq));
  EXPECT_EQ((*woq)->getBuffer(), kWoq);
}

//===----------------------------------------------------------------------===//
// Scale
//===----------------------------------------------------------------------===//

TEST_F(FrontendTest, ThousandsOfNodesParseFast) {
  const int n = 5000;
  std::string src = "graph chain(v0: f32[8, 8], w: f32[8, 8]) -> f32[8, 8] {\n";
  for (int i = 1; i <= n; ++i) {
    std::string prev = "v" + std::to_string(i - 1);
    std::string op = i % 3 == 0   ? "linear(" + prev + ", w)"
                     : i % 3 == 1 ? "silu(" + prev + ")"
                                  : "add(" + prev + ", w)";
    src += "  v" + std::to_string(i) + " = " + op + "\n";
  }
  src += "  return v" + std::to_string(n) + "\n}\n";

  ParseResult r;
  double seconds = test::cpuTime([&] { r = parse(src); });
  ASSERT_TRUE(r.module);
  auto func = *r.module->getOps<graph::FuncOp>().begin();
  EXPECT_EQ(func.getBody().front().getOperations().size(), size_t(n + 1));
  EXPECT_LT(seconds, 2.0);

  // The same graph on one line, with an error at its very end.
  std::string oneLine = src;
  std::replace(oneLine.begin(), oneLine.end(), '\n', ' ');
  oneLine.insert(oneLine.rfind('}'), "oops ");
  std::string col = std::to_string(oneLine.rfind("oops") + 1);
  expectError(oneLine, "1:" + col,
              "expected '}' after the return statement, got 'oops'; "
              "'return' must be the last statement of graph 'chain'");
}

TEST_F(FrontendTest, HugeLines) {
  std::string comment = "# " + std::string(4 << 20, 'x') + "\n";
  ParseResult r;
  double seconds = test::cpuTime([&] {
    r = parse(comment + "graph g(x: f32[1]) -> f32[1] { return x }");
  });
  EXPECT_TRUE(r.module);
  EXPECT_LT(seconds, 2.0);

  // A 4 MB name: found fast, and quoted short.
  std::string name(4 << 20, 'n');
  r = parse("graph g(x: f32[1]) -> f32[1] { return " + name + " }");
  ASSERT_EQ(r.diags.size(), 1u);
  EXPECT_EQ(r.diags[0].pos, "1:39");
  EXPECT_EQ(r.diags[0].message,
            "undefined name '" + std::string(40, 'n') + "...'");

  // An error far along a 4 MB line has the right column.
  std::string spaces(4 << 20, ' ');
  expectError("graph g(x: f32[1]) ->" + spaces + "f32[1] { return x ]",
              "1:" + std::to_string(21 + spaces.size() + 19),
              "expected ',' or '}' after returned value, got ']'");
}

} // namespace
