//===- DType.h - Element types and tensor limits ----------------*- C++ -*-===//
//
// The facts about element types and tensor shapes that both dialects, the
// front end and the runtime share: what the dtypes are, their sizes, the
// largest tensor and contraction mtc accepts, and the bridges to MLIR's
// types. The pure part (DType.cpp, library MTCDType) needs no MLIR, so the
// runtime's C library links it alone; the bridges (DTypeIR.cpp, MTCDTypeIR)
// need MLIR's IR library.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_DIALECTS_COMMON_DTYPE_H
#define MTC_DIALECTS_COMMON_DTYPE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/LogicalResult.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir {
class MLIRContext;
class Operation;
class Type;
} // namespace mlir

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

//===----------------------------------------------------------------------===//
// MLIR's types (DTypeIR.cpp)
//===----------------------------------------------------------------------===//

/// The DType of an MLIR element type, if mtc supports it.
std::optional<DType> dtypeOf(mlir::Type t);
/// The MLIR element type of a DType.
mlir::Type toMlirType(mlir::MLIRContext *ctx, DType t);
/// checkTensorType (checkShape for element types mtc does not know) on a
/// statically shaped tensor type, reported on `op` as "`what`: ..."; other
/// types pass (their op's type constraints report them).
llvm::LogicalResult verifyTensorLimits(mlir::Operation *op,
                                       llvm::StringRef what, mlir::Type type);

} // namespace mtc

#endif // MTC_DIALECTS_COMMON_DTYPE_H
