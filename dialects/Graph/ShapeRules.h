//===- ShapeRules.h - Shape and dtype rules of graph ops --------*- C++ -*-===//
//
// The single source of truth for what a graph op accepts: the graph-file front
// end uses these functions to point at the offending token, and the op
// verifiers use them so that IR read from .mlir files obeys the same rules.
// Nothing here depends on MLIR types. Element types and the limits of any
// tensor are both dialects' (dialects/Common/DType.h).
//
//===----------------------------------------------------------------------===//
#ifndef MTC_DIALECTS_GRAPH_SHAPERULES_H
#define MTC_DIALECTS_GRAPH_SHAPERULES_H

#include "dialects/Common/DType.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mtc {

/// Numpy-style broadcasting of two shapes (trailing dims aligned; a dim of 1
/// stretches).
bool broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b,
                     Shape &out, std::string &err);

/// linear(x, w): x [..., K], w [N, K] -> [..., N]; M and N at most
/// kMaxContractDim.
bool linearShape(llvm::ArrayRef<int64_t> x, llvm::ArrayRef<int64_t> w,
                 Shape &out, std::string &err);

/// matmul(a, b): a [..., M, K], b [K, N] -> [..., M, N]; M (all of a's
/// dimensions but the last) and N at most kMaxContractDim.
bool matmulShape(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b,
                 Shape &out, std::string &err);

/// transpose(t): swaps the last two dims.
bool transposeShape(llvm::ArrayRef<int64_t> t, Shape &out, std::string &err);

/// repeat(t, group): every element of the last dimension repeated `group`
/// times in a row (torch.repeat_interleave(t, group, dim=-1)): group-wise
/// quantization scales [N, K / G] become [N, K].
bool repeatShape(llvm::ArrayRef<int64_t> t, int64_t group, Shape &out,
                 std::string &err);

/// rope(x, table, cols): x f32 [M, N], table [R, D] of a float type with
/// R = 1 or M and D even, cols a positive multiple of D at most N -> f32
/// [M, N] (pairs of columns rotated by the table's row; GraphOps.td).
bool ropeShape(llvm::ArrayRef<int64_t> x, DType xType,
               llvm::ArrayRef<int64_t> table, DType tableType, int64_t cols,
               Shape &out, std::string &err);

/// sum(t), mean(t): t [..., K] -> [..., 1] (the last dimension reduced and
/// kept, so that the result broadcasts against t).
bool rowReductionShape(llvm::ArrayRef<int64_t> t, Shape &out, std::string &err);

/// i4 is a storage type: an i4 value may only be converted, to i8 or a
/// float, and no op produces one. `op` uses an operand of type `operand`
/// (converting it to `to`, for convert).
bool checkI4Use(llvm::StringRef op, DType operand, std::optional<DType> to,
                std::string &err);

/// Binary elementwise ops and matmul/linear need equal element types; all but
/// convert need floating-point ones.
bool checkSameFloatTypes(llvm::StringRef op, DType a, DType b,
                         std::string &err);
bool checkFloatType(llvm::StringRef op, DType a, std::string &err);

/// True if every value of `from` is exactly representable in `to`, so that a
/// conversion through `to` loses nothing (i4 -> i8 or any float, i8 -> any
/// float, f16/bf16 -> f32).
bool isExactConversion(DType from, DType to);

} // namespace mtc

#endif // MTC_DIALECTS_GRAPH_SHAPERULES_H
