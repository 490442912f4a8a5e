//===- GraphOps.h - mtc graph dialect ops -----------------------*- C++ -*-===//
#ifndef MTC_DIALECTS_GRAPH_GRAPHOPS_H
#define MTC_DIALECTS_GRAPH_GRAPHOPS_H

#include "dialects/Graph/GraphDialect.h"
#include "dialects/Graph/ShapeRules.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mtc {
/// The name a NameLoc (possibly nested in a FusedLoc) gives, or "".
llvm::StringRef nameFromLoc(mlir::Location loc);
} // namespace mtc

namespace mtc::graph {
/// Shared custom assembly of graph nodes:
///   %name = graph.op %a, %b : type(a), type(b) -> type(result)
/// The parser turns the SSA result name into a NameLoc so that node names
/// survive a round trip through text.
mlir::ParseResult parseNode(mlir::OpAsmParser &parser,
                            mlir::OperationState &result,
                            llvm::StringRef opName);
void printNode(mlir::OpAsmPrinter &p, mlir::Operation *op);
void setNodeResultName(mlir::Operation *op, mlir::OpAsmSetValueNameFn fn);
/// Checks shared by every node: the result obeys checkShape (positive dims,
/// at most 2^40 elements); a convert keeps the shape.
llvm::LogicalResult verifyNode(mlir::Operation *op);
} // namespace mtc::graph

#define GET_OP_CLASSES
#include "dialects/Graph/GraphOps.h.inc"

#endif // MTC_DIALECTS_GRAPH_GRAPHOPS_H
