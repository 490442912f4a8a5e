//===- ShapeRules.h - Shape and dtype rules of graph ops --------*- C++ -*-===//
//
// The single source of truth for what a graph op accepts: the graph-file front
// end uses these functions to point at the offending token, and the op
// verifiers use them so that IR read from .mlir files obeys the same rules.
// Nothing here depends on MLIR types.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_DIALECTS_GRAPH_SHAPERULES_H
#define MTC_DIALECTS_GRAPH_SHAPERULES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mtc {

/// Element types mtc understands. `i4` is a storage type for weights: a
/// signed 4-bit integer in [-8, 7], two to a byte along the last dimension
/// (element 2 j in the low nibble of byte j, 2 j + 1 in the high one), so
/// the last dimension of an i4 tensor is even. It appears only as a graph
/// input that is converted (checkI4Use).
enum class DType { I4, I8, F16, BF16, F32 };

std::optional<DType> parseDType(llvm::StringRef name);
llvm::StringRef dtypeName(DType t);
/// "i4, i8, f16, bf16, f32": the dtype names, for messages.
llvm::StringRef dtypeNames();
/// Bits of one element.
unsigned dtypeBits(DType t);
/// Bytes of one element of a byte-sized type (not i4: see tensorBytes).
unsigned dtypeBytes(DType t);
/// Bytes of `elements` elements of `t` stored densely (i4: two per byte,
/// rounded up).
int64_t tensorBytes(DType t, int64_t elements);
inline bool isFloat(DType t) { return t != DType::I8 && t != DType::I4; }
inline bool isInteger(DType t) { return !isFloat(t); }

using Shape = llvm::SmallVector<int64_t, 4>;

/// The largest tensor mtc accepts: 2^40 elements (a terabyte of int8). Shapes
/// beyond it are user errors, and the limit keeps every byte count in int64.
constexpr int64_t kMaxElements = int64_t(1) << 40;

/// The largest M (the rows of a linear's x or a matmul's a: all their
/// dimensions but the last, together) and N of a contraction. mtc's
/// contraction kernels index output rows and columns with 32-bit integers.
constexpr int64_t kMaxContractDim = (int64_t(1) << 31) - 1;

/// Number of elements, or std::nullopt if the product exceeds kMaxElements
/// (this also catches products that would overflow 64 bits).
std::optional<int64_t> numElements(llvm::ArrayRef<int64_t> shape);

/// "[1, 4096]"
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// Checks that every dim is positive and the element count is in range.
bool checkShape(llvm::ArrayRef<int64_t> shape, std::string &err);
/// checkShape, and for i4 that the last dimension is even (two elements a
/// byte, each row starting on a byte).
bool checkTensorType(DType t, llvm::ArrayRef<int64_t> shape, std::string &err);

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
