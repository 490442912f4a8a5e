//===- KernelBuilder.h - Building kernel ops for fusion ---------*- C++ -*-===//
//
// The construction half of the fusion pass (FuseKernels.cpp holds the
// decisions): scalar conversions with mtc's convert semantics, indexing maps,
// input lists, region plumbing, and step 1 of fusion, which turns one graph
// node into one kernel op.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_PASSES_KERNELBUILDER_H
#define MTC_PASSES_KERNELBUILDER_H

#include "dialects/Kernel/KernelOps.h"

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

#include <optional>

namespace mtc::fusion {

/// The element type of a ranked tensor value.
mlir::Type elementTypeOf(mlir::Value v);

/// If `region` computes its result by a chain of conversions of its single
/// argument, the types along the chain (empty for the identity).
std::optional<llvm::SmallVector<mlir::Type>>
conversionChainTypes(mlir::Region &region);

/// Converts `v` through `types` (the last is the result type) with mtc's
/// convert semantics, skipping intermediate types reached exactly.
mlir::Value convertThrough(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value v, llvm::ArrayRef<mlir::Type> types);

/// Types along a contraction body chain, ending in f32.
llvm::SmallVector<mlir::Type>
chainTypes(llvm::ArrayRef<mlir::Operation *> chain, mlir::Type f32);

/// Numpy broadcasting of a tensor of `in` shape into an iteration space of
/// `out` shape: the map by which a graph node reads its operand.
mlir::AffineMap broadcastMap(mlir::MLIRContext *ctx, llvm::ArrayRef<int64_t> in,
                             llvm::ArrayRef<int64_t> out);
/// True if `map` swaps the last two dims and keeps the others.
bool isTransposeMap(mlir::AffineMap map);

mlir::ArrayAttr mapsAttr(mlir::Builder &b,
                         llvm::ArrayRef<mlir::AffineMap> maps);
llvm::SmallVector<mlir::AffineMap> mapsOf(mlir::ArrayAttr attr);

/// Inputs of a kernel being built: (value, map) pairs, deduplicated.
struct InputList {
  llvm::SmallVector<mlir::Value> values;
  llvm::SmallVector<mlir::AffineMap> maps;
  /// The index of (v, map), added if it is new.
  unsigned add(mlir::Value v, mlir::AffineMap map);
  llvm::SmallVector<mlir::Type> elementTypes() const;
};

/// Clones the ops of `block` (except the terminator) at the builder's
/// insertion point with its arguments replaced by `args`; returns the value
/// the cloned block yields.
mlir::Value inlineBlock(mlir::OpBuilder &b, mlir::Block &block,
                        mlir::ValueRange args);

kernel::ElementwiseOp createElementwise(
    mlir::OpBuilder &b, mlir::Location loc, mlir::Type resultType,
    const InputList &inputs, mlir::ArrayAttr nodes,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::ValueRange)> body);

/// A contraction without regions; `bIn` are its b_inputs with their maps
/// from (n, k), `aIn` its a_inputs with theirs from (m, k), `siblings` the
/// weights it reads beside `bv` (horizontal fusion) and `siblingBInputs`
/// their b inputs, sibling by sibling, read through bIn's maps.
kernel::ContractOp createContract(mlir::OpBuilder &b, mlir::Location loc,
                                  mlir::Type resultType, mlir::Value a,
                                  mlir::Value bv, bool aT, bool bT,
                                  const InputList &bIn, const InputList &ep,
                                  mlir::ArrayAttr nodes,
                                  const InputList &aIn = InputList(),
                                  mlir::ValueRange siblings = {},
                                  mlir::ValueRange siblingBInputs = {});
/// A row reduction without regions over [..., extent]: `inputs` with their
/// maps from that space, `ep` from the statistic's ([..., 1]); with `apply`
/// inputs (maps from the iteration space) the result is the iteration space
/// and the caller fills the apply region too.
kernel::ReduceOp createReduce(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Type resultType, int64_t extent,
                              const InputList &inputs, const InputList &ep,
                              mlir::ArrayAttr nodes,
                              const InputList &apply = InputList());
/// `values` with their `maps` (an array of AffineMapAttr).
InputList inputsOf(mlir::ValueRange values, mlir::ArrayAttr maps);
/// `op`'s a_inputs and their maps.
InputList aInputsOf(kernel::ContractOp op);
/// `op`'s b_inputs and their maps.
InputList bInputsOf(kernel::ContractOp op);

/// Fills the body of `op`: both elements converted to f32 through the given
/// types, multiplied.
void fillContractBody(mlir::OpBuilder &b, mlir::Location loc,
                      kernel::ContractOp op, llvm::ArrayRef<mlir::Type> aTypes,
                      llvm::ArrayRef<mlir::Type> bTypes);
/// Fills the body of `op` (whose b_inputs are set): A converted to f32
/// through `aTypes`; the weight's side computed by `weight` from the block
/// arguments (b, then the b_inputs); their product.
void fillContractBody(
    mlir::OpBuilder &b, mlir::Location loc, kernel::ContractOp op,
    llvm::ArrayRef<mlir::Type> aTypes,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::ValueRange)>
        weight);

/// True if every use of `v` is an operand of `user`.
bool onlyUsedBy(mlir::Value v, mlir::Operation *user);

/// The weight's side of `op`'s body cloned at the builder's insertion
/// point, its block arguments (b, then the b_inputs) replaced by `args`;
/// returns the f32 value the body multiplies.
mlir::Value cloneWeightSide(mlir::OpBuilder &b, kernel::ContractOp op,
                            mlir::ValueRange args);

class MergeLists;

/// Adds FoldWeightDequant (FoldWeightDequant.cpp), the pattern that moves a
/// weight's dequantization into the contraction that reads it, counting
/// its folds in `stat`.
void addFoldWeightDequant(mlir::RewritePatternSet &patterns,
                          mlir::Pass::Statistic &stat, MergeLists &lists);

/// Adds the patterns of FuseReductions.cpp (row reductions, their
/// producers and consumers, recomputed conversions), counting their fusions
/// in `stat`.
void addReductionFusion(mlir::RewritePatternSet &patterns,
                        mlir::Pass::Statistic &stat, MergeLists &lists);

/// Adds FoldActivationPrologue (FusePrologue.cpp), which moves the kernel
/// computing a contraction's activations into its body as a prologue
/// (mtc-fuse's second phase), counting its folds in `stat`.
void addPrologueFusion(mlir::RewritePatternSet &patterns,
                       mlir::Pass::Statistic &stat, MergeLists &lists);

/// Adds FuseSiblingContractions (FuseSiblings.cpp), which joins two
/// contractions of the same activations, one read by the other's epilogue,
/// into one over both weights (mtc-fuse's third phase), counting its merges
/// in `stat`.
void addSiblingFusion(mlir::RewritePatternSet &patterns,
                      mlir::Pass::Statistic &stat, MergeLists &lists);

/// Adds FoldRowStatistic (FusePrologue.cpp), which moves the row reduction
/// a contraction's prologue reads (a norm's statistic) into the contraction
/// (mtc-fuse's last phase), counting its folds in `stat`.
void addStatisticFusion(mlir::RewritePatternSet &patterns,
                        mlir::Pass::Statistic &stat, MergeLists &lists);

/// Adds ApplyRowStatistic (FuseReductions.cpp), which moves a row
/// reduction into the one elementwise kernel that applies its statistic to
/// the rows (a norm's scaling; mtc-fuse's last phase), counting its folds
/// in `stat`.
void addApplyFusion(mlir::RewritePatternSet &patterns,
                    mlir::Pass::Statistic &stat, MergeLists &lists);

/// Step 1 of fusion: replaces the graph node `op` (the `index`th of its
/// function) by a kernel op with a single-node region.
mlir::LogicalResult convertNode(mlir::OpBuilder &b, mlir::Operation *op,
                                unsigned index);

} // namespace mtc::fusion

#endif // MTC_PASSES_KERNELBUILDER_H
