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
#include <optional>

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

/// An integer weight's side in the form whose sums factor per group:
/// w = q * s + z, q * s, q + z or q, computed in f32 and never rounded to a
/// 16-bit type, q the weight's integer (arith.sitofp of %b to f32) and s, z
/// b inputs (f32, or 16-bit extended to f32). Then over any K range inside
/// one group, sum(x * w) = s * sum(x * q) + z * sum(x): the mma kind sums
/// x * q on tensor cores (q and x * q are exact) and applies s and z once a
/// step (Mma.cpp), where the pair form (walkWeightPairs) rounds each
/// element to the 16-bit type as the graph says.
struct FactoredWeight {
  /// The b inputs (indices among them) of s and z; -1 where there is none.
  int scale = -1, zero = -1;
};

/// The factored form of the weight side of a kernel.contract body: the
/// right operand of the mulf that the body yields. None if it has another
/// form.
std::optional<FactoredWeight> matchFactoredWeight(mlir::Block &body);

} // namespace mtc::kernel

#endif // MTC_DIALECTS_KERNEL_WEIGHTSIDE_H
