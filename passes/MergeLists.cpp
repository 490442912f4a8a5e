//===- MergeLists.cpp - Node lists and locations of merged kernels --------===//
//
// See MergeLists.h. A list is a leaf attribute (a kernel's `nodes` array, or
// a location) or the join of two earlier lists; flattening a list visits its
// leaves depth first, first list first. A fused location is a FusedLoc of
// the leaves in that order: FusedLoc::get flattens nested fused locations,
// drops duplicates (keeping the first) and unknown locations, and returns a
// lone location itself, so building it once from every leaf gives what the
// nested merges gave.
//
//===----------------------------------------------------------------------===//
#include "passes/MergeLists.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace mtc::fusion {

/// Placeholder locations are OpaqueLocs of this type holding a list index.
static char placeholderTag;

static TypeID placeholderType() {
  return TypeID::getFromOpaquePointer(&placeholderTag);
}

static std::optional<unsigned> placeholderList(Location loc) {
  auto opaque = dyn_cast<OpaqueLoc>(loc);
  if (!opaque || opaque.getUnderlyingTypeID() != placeholderType())
    return std::nullopt;
  return unsigned(opaque.getUnderlyingLocation());
}

unsigned MergeLists::leaf(Attribute a) {
  lists.push_back({a, 0, 0});
  return lists.size() - 1;
}

unsigned MergeLists::join(unsigned first, unsigned second) {
  lists.push_back({Attribute(), first, second});
  return lists.size() - 1;
}

void MergeLists::flatten(unsigned id, SmallVectorImpl<Attribute> &out) const {
  SmallVector<unsigned> stack{id};
  while (!stack.empty()) {
    const List &l = lists[stack.pop_back_val()];
    if (l.leaf) {
      out.push_back(l.leaf);
      continue;
    }
    stack.push_back(l.second);
    stack.push_back(l.first);
  }
}

ArrayAttr MergeLists::pendingNodes(MLIRContext *ctx) const {
  return ArrayAttr::get(ctx, {});
}

void MergeLists::copied(Operation *copy, Operation *original) {
  nodeLists[copy] = nodeList(original);
}

unsigned MergeLists::nodeList(Operation *op) {
  auto [it, fresh] = nodeLists.try_emplace(op, 0);
  if (fresh)
    it->second = leaf(op->getAttrOfType<ArrayAttr>("nodes"));
  return it->second;
}

void MergeLists::mergeNodes(Operation *fused, Operation *first,
                            Operation *second) {
  unsigned a = nodeList(first), b = nodeList(second);
  nodeLists.erase(first);
  nodeLists.erase(second);
  nodeLists[fused] = join(a, b);
}

unsigned MergeLists::locList(Location loc) {
  if (std::optional<unsigned> id = placeholderList(loc))
    return *id;
  return leaf(loc);
}

Location MergeLists::fuseLocs(Operation *a, Operation *b) {
  unsigned id = join(locList(a->getLoc()), locList(b->getLoc()));
  MLIRContext *ctx = a->getContext();
  return OpaqueLoc::get(id, placeholderType(), UnknownLoc::get(ctx));
}

Location MergeLists::resolve(Location loc) {
  std::optional<unsigned> id = placeholderList(loc);
  if (!id)
    return loc;
  auto [it, fresh] = resolved.try_emplace(*id, loc);
  if (fresh) {
    SmallVector<Attribute> leaves;
    flatten(*id, leaves);
    SmallVector<Location> locs;
    for (Attribute a : leaves)
      locs.push_back(cast<LocationAttr>(a));
    it->second = FusedLoc::get(loc->getContext(), locs);
  }
  return it->second;
}

void MergeLists::finish(Operation *root) {
  SmallVector<Attribute> leaves, names;
  for (Block &block : root->getRegion(0))
    for (Operation &op : block) {
      auto it = nodeLists.find(&op);
      if (it == nodeLists.end())
        continue;
      leaves.clear();
      names.clear();
      flatten(it->second, leaves);
      // A node computed twice in one kernel (a prologue cloned for two
      // contractions that then joined as siblings) is listed once.
      llvm::SmallPtrSet<Attribute, 16> seen;
      for (Attribute a : leaves)
        for (Attribute name : cast<ArrayAttr>(a))
          if (seen.insert(name).second)
            names.push_back(name);
      op.setAttr("nodes", ArrayAttr::get(op.getContext(), names));
    }
  root->walk([&](Operation *op) {
    op->setLoc(resolve(op->getLoc()));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          arg.setLoc(resolve(arg.getLoc()));
  });
  lists.clear();
  nodeLists.clear();
  resolved.clear();
}

} // namespace mtc::fusion
