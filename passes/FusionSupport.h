//===- FusionSupport.h - Merging kernel regions -----------------*- C++ -*-===//
//
// What the fusion patterns (FuseKernels.cpp, FuseReductions.cpp) share to
// merge a producer into its consumer: the merged input list and the merged
// region, built in time linear in the producer (FuseKernels.cpp's header
// says why that matters).
//
//===----------------------------------------------------------------------===//
#ifndef MTC_PASSES_FUSIONSUPPORT_H
#define MTC_PASSES_FUSIONSUPPORT_H

#include "passes/KernelBuilder.h"

#include "dialects/Graph/GraphOps.h"

namespace mtc::fusion {

/// The consumer's inputs with `v` replaced by the producer's inputs (maps
/// composed): the index of each consumer input in the new list (-1 for `v`)
/// and of each producer input. The consumer's inputs come first, in their
/// order.
struct Inlined {
  InputList inputs;
  llvm::SmallVector<int> consumerArg;
  llvm::SmallVector<unsigned> producerArg;
};

/// How `prod` (producing `v`) inlines into a consumer with these inputs and
/// maps; none if the consumer reads `v` at two different indexings. A
/// producer that reads its elements' positions (kernel.partner,
/// kernel.column) inlines only where `positions` says the consumer computes
/// per output element (an elementwise body, a contraction's epilogue) and
/// reads `v` at its own element (an identity map): there the positions are
/// the same.
std::optional<Inlined>
inlineProducer(mlir::ValueRange consumerInputs,
               llvm::ArrayRef<mlir::AffineMap> consumerMaps, mlir::Value v,
               kernel::ElementwiseOp prod, bool positions = false);

/// Fills the empty `region` with the merged body. The consumer's block (it
/// may be a long fused chain) is moved in whole and its arguments renumbered
/// in place: the consumer's inputs keep their order at the front of
/// `m.inputs`, so an argument is only dropped (`v`, or a duplicate input) or
/// appended (a new input of the producer), and the block's ops are never
/// visited. The producer's body (a node or two) is cloned at its start, its
/// value replacing the `v` argument. `leading` arguments (an epilogue's sum)
/// come before the inputs. Every argument gets the location `loc`.
void mergeBodies(mlir::PatternRewriter &rw, mlir::Location loc,
                 mlir::Region &region, mlir::Region &consumer, unsigned leading,
                 const Inlined &m, mlir::Block &producer);

/// How the elementwise `consumer` of `v` joins an epilogue whose inputs are
/// `ep` (a contraction's or a reduction's): its other inputs are appended to
/// `ep`; returns each consumer input's index in `ep` (-1 for `v`). None, and
/// `ep` unchanged, if the consumer reads `v` at other than the identity.
std::optional<llvm::SmallVector<int>>
appendConsumerInputs(InputList &ep, kernel::ElementwiseOp consumer,
                     mlir::Value v);

/// Moves the epilogue region `from` (its arguments: a leading value, then
/// the first `numOld` inputs of `ep`) into the empty `to`, adds arguments
/// for the rest of `ep`, and clones `consumer`'s body after it: the
/// consumer's `v` is the old yielded value, its other inputs the arguments
/// `consumerArg` names. Every argument gets the location `loc`.
void extendEpilogue(mlir::PatternRewriter &rw, mlir::Location loc,
                    mlir::Region &to, mlir::Region &from, const InputList &ep,
                    unsigned numOld, llvm::ArrayRef<int> consumerArg,
                    kernel::ElementwiseOp consumer);

/// Whether inlining `prod` into `consumer` would run a math op (rsqrt,
/// exp) once per element of a larger space than `prod`'s: a norm's
/// rsqrt of a row statistic stays per row (and joins the reduction's
/// epilogue) instead of running for every element it scales.
bool recomputesMath(kernel::ElementwiseOp prod, kernel::ElementwiseOp consumer);

/// Why no prologue joins `op` on the kind it starts on (empty: one may;
/// FusePrologue.cpp).
std::string prologueKindBlocker(kernel::ContractOp op);

/// Why `op`'s activations cannot take `prod` as a prologue (empty: they
/// can), and which of `prod`'s inputs becomes A (FusePrologue.cpp).
std::string prologueBlocker(kernel::ContractOp op, kernel::ElementwiseOp prod,
                            unsigned &source);

/// Why `op` cannot derive the row statistic `red` computes (a norm's
/// rsqrt, read by its prologue as a_input #`input`) itself, so that the
/// reduction is not a kernel of its own (empty: it can; FusePrologue.cpp).
std::string statisticBlocker(kernel::ContractOp op, kernel::ReduceOp red,
                             unsigned input);

/// Why the elementwise `op`, which reads the row statistic `red` computes,
/// cannot take the reduction in as its `apply` (one kernel that sums each
/// row and then scales it; empty: it can; FuseReductions.cpp).
std::string applyBlocker(kernel::ElementwiseOp op, kernel::ReduceOp red);

/// Why `first`, whose result `second` reads in its epilogue, cannot join
/// `second` as its sibling (one contraction over both weights; empty: it
/// can; FuseSiblings.cpp).
std::string siblingBlocker(kernel::ContractOp first, kernel::ContractOp second);

/// mtc-fuse's explanation (`explain=true`, `mtc compile --explain-fusion`;
/// ExplainFusion.cpp): after fusion, a remark for every kernel of `func`
/// (the graph nodes it computes, and how) and for every value one kernel
/// writes and another reads back (the rule that kept them apart).
void explainFusion(graph::FuncOp func);

/// Where a kernel's remarks point: the node that computes its result (the
/// last location of a fused one).
mlir::Location remarkAnchor(mlir::Operation *op);

} // namespace mtc::fusion

#endif // MTC_PASSES_FUSIONSUPPORT_H
