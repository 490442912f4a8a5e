//===- FrontendOps.h - The ops a graph file may name ------------*- C++ -*-===//
//
// The table of graph-file ops (name, arity, how they are written) and the
// builder of each one's graph-dialect op, for Frontend.cpp, which checks a
// node against the op rules before it builds it.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_COMPILER_FRONTENDOPS_H
#define MTC_COMPILER_FRONTENDOPS_H

#include "compiler/GraphParser.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mtc::graphfile {

enum class OpKind {
  Convert,
  Linear,
  Matmul,
  Transpose,
  Repeat,
  Rope,
  Add,
  Sub,
  Mul,
  Relu,
  Silu,
  Rsqrt,
  Sum,
  Mean
};

struct OpInfo {
  llvm::StringLiteral name;
  OpKind kind;
  unsigned arity;
  /// How the arguments are written, for arity errors.
  llvm::StringLiteral signature;
  /// The values come first; then, for convert, a dtype and for repeat and
  /// rope an integer.
  unsigned numValues() const {
    if (kind == OpKind::Convert || kind == OpKind::Repeat)
      return 1;
    return kind == OpKind::Rope ? 2 : arity;
  }
};

/// Every op, in the order errors list them.
llvm::ArrayRef<OpInfo> graphOps();
/// The op called `name`, or null.
const OpInfo *lookupOp(llvm::StringRef name);
/// add, sub and mul: one of their operands may be a number.
bool isBinary(OpKind kind);
/// Builds `op` on checked `operands`; `expected` is the result type the
/// front end computed (convert and repeat take it), `node` the integer
/// arguments.
mlir::Value createGraphOp(mlir::OpBuilder &builder, mlir::Location loc,
                          const OpInfo &op,
                          llvm::ArrayRef<mlir::Value> operands,
                          mlir::RankedTensorType expected, const NodeAST &node);

} // namespace mtc::graphfile

#endif // MTC_COMPILER_FRONTENDOPS_H
