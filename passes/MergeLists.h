//===- MergeLists.h - Node lists and locations of merges --------*- C++ -*-===//
//
// Fusion merges kernels a pair at a time. A merged kernel lists the nodes of
// both (its `nodes` array), and a merged contraction has the fused location
// of both. Building these attributes at every merge costs the length of both
// lists (attributes are uniqued), which made merging a chain of n nodes into
// one kernel quadratic. MergeLists joins them in constant time instead and
// builds each attribute once, when fusion ends: the same attributes that
// merging them pair by pair gives.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_PASSES_MERGELISTS_H
#define MTC_PASSES_MERGELISTS_H

#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"

#include <vector>

namespace mtc::fusion {

class MergeLists {
public:
  /// The `nodes` attribute of a kernel created by a merge, until finish().
  mlir::ArrayAttr pendingNodes(mlir::MLIRContext *ctx) const;

  /// Records that the new kernel `fused` lists the nodes of `first`, then
  /// those of `second`. Must be called for every kernel created by a merge,
  /// before `first` and `second` are erased.
  void mergeNodes(mlir::Operation *fused, mlir::Operation *first,
                  mlir::Operation *second);

  /// Records that kernel `copy` is a clone of `original` (a kernel
  /// recomputed for one of its users): it lists the same nodes.
  void copied(mlir::Operation *copy, mlir::Operation *original);

  /// The location of the merge of `a` and `b`: a placeholder until finish()
  /// replaces it by FusedLoc::get({a, b}) (nested fused locations
  /// flattened).
  mlir::Location fuseLocs(mlir::Operation *a, mlir::Operation *b);

  /// Writes the `nodes` attribute of every merged kernel in `root` and
  /// replaces every placeholder location (of ops and of block arguments).
  void finish(mlir::Operation *root);

private:
  /// Lists of attributes, each a leaf or two earlier lists.
  struct List {
    mlir::Attribute leaf;
    unsigned first, second;
  };
  unsigned leaf(mlir::Attribute a);
  unsigned join(unsigned first, unsigned second);
  /// The leaves of list `id`, first to last (without recursion).
  void flatten(unsigned id, llvm::SmallVectorImpl<mlir::Attribute> &out) const;
  /// The list of a location: its own if it is a placeholder.
  unsigned locList(mlir::Location loc);
  /// The list of the node names of kernel `op`.
  unsigned nodeList(mlir::Operation *op);
  /// The final location for `loc` (itself unless it is a placeholder).
  mlir::Location resolve(mlir::Location loc);

  std::vector<List> lists;
  /// The node list of each live kernel that has one: merged kernels, and
  /// kernels of step 1 once they take part in a merge.
  llvm::DenseMap<mlir::Operation *, unsigned> nodeLists;
  /// Placeholders resolved so far.
  llvm::DenseMap<unsigned, mlir::Location> resolved;
};

} // namespace mtc::fusion

#endif // MTC_PASSES_MERGELISTS_H
