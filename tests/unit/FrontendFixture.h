//===- FrontendFixture.h - Graph-file front end tests' set-up ---*- C++ -*-===//
//
// What FrontendTest.cpp, FrontendErrorsTest.cpp and FrontendInt4ErrorsTest.cpp
// share: the fixture that parses graph source and captures its diagnostics,
// and the weight-only int8 linear example.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_TESTS_UNIT_FRONTENDFIXTURE_H
#define MTC_TESTS_UNIT_FRONTENDFIXTURE_H

#include "compiler/Frontend.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace mtc::frontendtest {

/// One reported diagnostic, flattened for comparison.
struct Diag {
  mlir::DiagnosticSeverity severity;
  std::string file;
  std::string pos; ///< "line:col"
  std::string message;
  std::vector<std::pair<std::string, std::string>> notes; ///< (pos, message)
};

inline std::string posOf(mlir::Location loc, std::string *file = nullptr) {
  // A node's location is NameLoc(name, file:line:col).
  if (auto named = mlir::dyn_cast<mlir::NameLoc>(loc))
    loc = named.getChildLoc();
  if (auto flc = mlir::dyn_cast<mlir::FileLineColLoc>(loc)) {
    if (file)
      *file = flc.getFilename().str();
    return std::to_string(flc.getLine()) + ":" +
           std::to_string(flc.getColumn());
  }
  return "<not a file location>";
}

struct ParseResult {
  mlir::OwningOpRef<mlir::ModuleOp> module;
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
    mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
      Diag diag;
      diag.severity = d.getSeverity();
      diag.pos = posOf(d.getLocation(), &diag.file);
      diag.message = d.str();
      for (mlir::Diagnostic &note : d.getNotes())
        diag.notes.emplace_back(posOf(note.getLocation()), note.str());
      result.diags.push_back(std::move(diag));
      return mlir::success();
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
    mlir::SourceMgrDiagnosticHandler handler(sm, &ctx, os);
    mlir::OwningOpRef<mlir::ModuleOp> module = parseGraphSource(sm, &ctx);
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
    EXPECT_EQ(d.severity, mlir::DiagnosticSeverity::Error);
    EXPECT_EQ(d.file, "test.graph");
    EXPECT_EQ(d.pos, pos.str()) << d.message;
    EXPECT_EQ(d.message, message.str());
    return d;
  }

  static std::string print(mlir::ModuleOp module, bool debugInfo = false) {
    std::string s;
    llvm::raw_string_ostream os(s);
    mlir::OpPrintingFlags flags;
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

  mlir::MLIRContext ctx;
};

inline const char *const kWoq =
    R"(# weight-only int8 linear, batch 1 (gpt-fast WeightOnlyInt8Linear)
graph woq_linear(x: bf16[1, 4096], w: i8[8192, 4096], scales: bf16[8192]) -> bf16[1, 8192] {
  wf  = convert(w, bf16)
  y   = linear(x, wf)          # x @ wf^T, fp32 accumulation, like torch.nn.functional.linear
  out = mul(y, scales)         # numpy-style broadcasting
  return out
}
)";

} // namespace mtc::frontendtest

#endif // MTC_TESTS_UNIT_FRONTENDFIXTURE_H
