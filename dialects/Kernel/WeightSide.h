//===- WeightSide.h - A contraction's weight side on pairs ------*- C++ -*-===//
//
// The weight's side of a kernel.contract body (its conversion chain, or the
// dequantization expression over %b and the b_inputs) as the tensor-core
// kinds compute it: on pairs of elements held in one 32-bit word of the
// activations' 16-bit type (bf16x2 / f16x2), each arithmetic step one
// fma.rn on the pair. That is exact to the graph's semantics when every
// value is exact in that type (integers of i4 and i8, the b_inputs when
// they have the type) and every addf, subf and mulf is rounded to it by a
// truncf (as each graph node rounds to its element type) before anything
// else reads it. walkWeightPairs checks that and, through its callbacks,
// builds the pair program; legality (Schedule.cpp) and the emitters share
// it.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_DIALECTS_KERNEL_WEIGHTSIDE_H
#define MTC_DIALECTS_KERNEL_WEIGHTSIDE_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/LogicalResult.h"

#include <functional>

namespace mtc::kernel {

/// What the walk asks its user to build, each returning the pair that
/// stands for a value (any non-null Value when only checking).
struct WeightPairBuilder {
  /// The pair of weight elements converted to `half` by `cvt` (an
  /// arith.sitofp of %b, exact).
  std::function<mlir::Value(mlir::Operation *cvt)> weight;
  /// b input `i`'s value (of type `half`) in both halves.
  std::function<mlir::Value(unsigned i)> input;
  /// addf / subf / mulf of two pairs, rounded once to `half`.
  std::function<mlir::Value(mlir::Operation *op, mlir::Value lhs,
                            mlir::Value rhs)>
      binary;
};

/// Conversion ops that may form the body's per-operand chains.
bool isConversion(mlir::Operation *op);

/// The ops `v` is computed from inside `block`, in block order, if they are
/// all weight-side ops (conversions, addf, subf, mulf) reading no argument
/// but #1 (the weight) and those from `firstInput` on (the b inputs);
/// failure otherwise.
llvm::FailureOr<llvm::SmallVector<mlir::Operation *>>
weightSideOps(mlir::Block &block, mlir::Value v, unsigned firstInput);

/// Walks the weight side of a kernel.contract body (an integer weight) on
/// pairs of `half` (bf16 or f16): the ops weightSideOps finds from the
/// right operand of the mulf that the body yields. Returns the pair of that
/// operand, or null if the side cannot be computed so exactly.
mlir::Value walkWeightPairs(mlir::Block &body, mlir::Type half,
                            const WeightPairBuilder &builder);

/// Whether walkWeightPairs succeeds for `body` and `half`.
bool hasWeightPairs(mlir::Block &body, mlir::Type half);

} // namespace mtc::kernel

#endif // MTC_DIALECTS_KERNEL_WEIGHTSIDE_H
