//===- FrontendTest.cpp - Tests of the graph-file front end ---------------===//
//
// Positive tests check the IR built from graph files; negative tests check
// every class of error at its exact line and column with its exact message.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend.h"

#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

using namespace mlir;
using namespace mtc;

namespace {

/// One reported diagnostic, flattened for comparison.
struct Diag {
  DiagnosticSeverity severity;
  std::string file;
  std::string pos; ///< "line:col"
  std::string message;
  std::vector<std::pair<std::string, std::string>> notes; ///< (pos, message)
};

std::string posOf(Location loc, std::string *file = nullptr) {
  if (auto flc = dyn_cast<FileLineColLoc>(loc)) {
    if (file)
      *file = flc.getFilename().str();
    return std::to_string(flc.getLine()) + ":" +
           std::to_string(flc.getColumn());
  }
  return "<not a file location>";
}

struct ParseResult {
  OwningOpRef<ModuleOp> module;
  std::vector<Diag> diags;
};

class FrontendTest : public ::testing::Test {
protected:
  /// Parses `src` as buffer `name`, capturing diagnostics.
  ParseResult parse(llvm::StringRef src, const FrontendOptions &options = {},
                    llvm::StringRef name = "test.graph") {
    llvm::SourceMgr sm;
    sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(src, name),
                          llvm::SMLoc());
    ParseResult result;
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
      Diag diag;
      diag.severity = d.getSeverity();
      diag.pos = posOf(d.getLocation(), &diag.file);
      diag.message = d.str();
      for (Diagnostic &note : d.getNotes())
        diag.notes.emplace_back(posOf(note.getLocation()), note.str());
      result.diags.push_back(std::move(diag));
      return success();
    });
    result.module = parseGraphSource(sm, &ctx, options);
    return result;
  }

  /// Parses `src` through a SourceMgrDiagnosticHandler and returns what it
  /// prints.
  std::string render(llvm::StringRef src, llvm::StringRef name = "t.graph") {
    llvm::SourceMgr sm;
    sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(src, name),
                          llvm::SMLoc());
    std::string out;
    llvm::raw_string_ostream os(out);
    SourceMgrDiagnosticHandler handler(sm, &ctx, os);
    OwningOpRef<ModuleOp> module = parseGraphSource(sm, &ctx);
    EXPECT_FALSE(module);
    return out;
  }

  /// Expects exactly one error, at `pos` ("line:col"), saying `message`;
  /// returns it for checking notes.
  Diag expectError(llvm::StringRef src, llvm::StringRef pos,
                   llvm::StringRef message,
                   const FrontendOptions &options = {}) {
    ParseResult r = parse(src, options);
    EXPECT_FALSE(r.module) << "expected an error for:\n" << src.str();
    EXPECT_EQ(r.diags.size(), 1u);
    if (r.diags.empty())
      return Diag{};
    const Diag &d = r.diags.front();
    EXPECT_EQ(d.severity, DiagnosticSeverity::Error);
    EXPECT_EQ(d.file, "test.graph");
    EXPECT_EQ(d.pos, pos.str()) << d.message;
    EXPECT_EQ(d.message, message.str());
    return d;
  }

  static std::string print(ModuleOp module, bool debugInfo = false) {
    std::string s;
    llvm::raw_string_ostream os(s);
    OpPrintingFlags flags;
    if (debugInfo)
      flags.enableDebugInfo();
    module.print(os, flags);
    return s;
  }

  static std::vector<std::string> dims(llvm::StringRef src) {
    llvm::SourceMgr sm;
    sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(src, "d.graph"),
                          llvm::SMLoc());
    return symbolicDims(sm);
  }

  MLIRContext ctx;
};

const char *const kWoq =
    R"(# weight-only int8 linear, batch 1 (gpt-fast WeightOnlyInt8Linear)
graph woq_linear(x: bf16[1, 4096], w: i8[8192, 4096], scales: bf16[8192]) -> bf16[1, 8192] {
  wf  = convert(w, bf16)
  y   = linear(x, wf)          # x @ wf^T, fp32 accumulation, like torch.nn.functional.linear
  out = mul(y, scales)         # numpy-style broadcasting
  return out
}
)";

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
  expectError("graph g(x: f32[2])\r\n -> f32[2] {\r\n\ty = foo(x)\r\n"
              "return y }",
              "3:6",
              "unknown op 'foo'; expected one of convert, linear, "
              "matmul, transpose, add, sub, mul, relu, silu");
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
  expectError("graph g(x: f32[4]) -> f32[4] { y = add(x, ) return y }", "1:43",
              "expected an argument (a value name), got ')'");
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
              "transpose, add, sub, mul, relu, silu");
}

TEST_F(FrontendTest, UnknownDtype) {
  expectError("graph g(x: f64[4]) -> f32[4] { return x }", "1:12",
              "unknown dtype 'f64'; expected one of i8, f16, bf16, f32");
  expectError("graph g(x: f32[4]) -> f32[4] {\n  y = convert(x, int8)\n"
              "  return y\n}",
              "2:18",
              "unknown dtype 'int8'; expected one of i8, f16, bf16, "
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

  auto start = std::chrono::steady_clock::now();
  ParseResult r = parse(src);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
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
  auto start = std::chrono::steady_clock::now();
  ParseResult r = parse(comment + "graph g(x: f32[1]) -> f32[1] { return x }");
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
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
