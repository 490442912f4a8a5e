//===- GraphParser.h - Syntax trees of graph files --------------*- C++ -*-===//
//
// The syntactic half of the graph-file front end: turns a buffer into a small
// syntax tree whose leaves are tokens pointing into the buffer. Names, dtypes
// and dimension literals are checked here; what needs context (which names
// are defined, shapes, bindings of symbolic dimensions) is checked while the
// IR is built (Frontend.cpp). The parser is iterative and stops at the first
// error, which it returns instead of reporting, so that symbolicDims() can
// run it without a diagnostic engine.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_COMPILER_GRAPHPARSER_H
#define MTC_COMPILER_GRAPHPARSER_H

#include "compiler/GraphLexer.h"
#include "dialects/Graph/ShapeRules.h"

#include "llvm/ADT/SmallVector.h"

#include <string>
#include <vector>

namespace mtc::graphfile {

/// A dimension: an integer literal (`value`) or a symbolic name (`tok` is an
/// identifier).
struct DimAST {
  Token tok;
  int64_t value = 0;
  bool isSymbolic() const { return tok.is(TokKind::Identifier); }
};

/// `bf16[M, 4096]`; `start` is the dtype token.
struct TypeAST {
  Token start;
  DType dtype = DType::F32;
  llvm::SmallVector<DimAST, 4> dims;
};

/// `x: bf16[1, 4096]`
struct ParamAST {
  Token name;
  TypeAST type;
};

/// `y = linear(x, wf)`, `s = repeat(scales, 128)`, `e = add(m, 1e-05)`:
/// each argument is an identifier (a value or a dtype) or a number literal
/// (an integer or a float, with an optional '-' just before it). A literal's
/// token spans its sign too; its value is in `numbers` at the same index, and
/// an integer's exact value in `ints` (0 for anything else).
struct NodeAST {
  Token name;
  Token op;
  llvm::SmallVector<Token, 2> args;
  llvm::SmallVector<double, 2> numbers;
  llvm::SmallVector<int64_t, 2> ints;
};

struct GraphAST {
  Token name;
  std::vector<ParamAST> params;
  llvm::SmallVector<TypeAST, 1> results;
  std::vector<NodeAST> nodes;
  /// The `return` keyword and the names it returns.
  Token returnTok;
  llvm::SmallVector<Token, 1> returned;
};

struct FileAST {
  std::vector<GraphAST> graphs;
};

/// The first error found in a file.
struct ParseError {
  SrcLoc loc;
  std::string message;
};

/// Parses a whole graph file. On failure returns false and sets `error`.
bool parseGraphFile(llvm::StringRef buffer, FileAST &file, ParseError &error);

} // namespace mtc::graphfile

#endif // MTC_COMPILER_GRAPHPARSER_H
