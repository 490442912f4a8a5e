//===- Elementwise.cpp - Elementwise kernels ------------------------------===//
//
// Each thread computes `vec` elements of the result, a block-stride apart:
// it loads the inputs' elements at the result index (through each input's
// indexing map), runs the body and stores the result.
//
//===----------------------------------------------------------------------===//
#include "passes/emit/Emitter.h"

#include "dialects/Kernel/KernelOps.h"
#include "dialects/Kernel/Schedule.h"

#include "mlir/IR/AffineExpr.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::emit;
using namespace mtc::kernel;
using llvm::SmallVector;
using Pred = arith::CmpIPredicate;

namespace {

class ElementwiseEmitter : public Emitter {
public:
  ElementwiseEmitter(OpBuilder &b, ElementwiseOp op, StringRef name,
                     const EmitOptions &opts)
      : Emitter(b, op.getLoc(), name, opts), op(op),
        s(op.getSchedule()->getParams()) {}

  LogicalResult emit();

private:
  ElementwiseOp op;
  ScheduleParams s;

  Value inputOffset(unsigned j, Value flat, ArrayRef<Value> dims);
};

} // namespace

LogicalResult ElementwiseEmitter::emit() {
  unsigned numIn = op.getInputs().size();
  int64_t threads = s.warps * 32;
  beginKernel(numIn + 1, numIn, threads, s.regs);
  ArrayRef<int64_t> R = op.getType().getShape();
  int64_t total = numElementsOf(op.getType());
  Type outElem = elementTypeOf(op.getResult());
  Value out = param(numIn);
  Value tid = g.zext64(g.tidX());
  Value bid = g.zext64(g.ctaidX());
  for (int64_t v = 0; v < s.vec; ++v) {
    Value idx = g.add(
        g.mul(g.add(g.mul(bid, g.c64(s.vec)), g.c64(v)), g.c64(threads)), tid);
    g.ifThen(g.cmp(Pred::ult, idx, g.c64(total)), [&] {
      SmallVector<Value> dims = unflatten(idx, R);
      auto argsAt = [&](Value flat, ArrayRef<Value> at) {
        SmallVector<Value> args;
        for (auto [j, in] : llvm::enumerate(op.getInputs()))
          args.push_back(loadElement(param(j), elementTypeOf(in),
                                     inputOffset(j, flat, at)));
        return args;
      };
      SmallVector<Value> args = argsAt(idx, dims);
      // The partner element (last index xor 1; the last dimension is
      // even, so the flat index's low bit is the last index's), loaded
      // where the body reads a kernel.partner.
      SmallVector<Value> partnerArgs;
      auto partnerArg = [&](unsigned j) {
        if (partnerArgs.empty()) {
          SmallVector<Value> at(dims);
          at.back() = g.bxor(at.back(), g.c64(1));
          partnerArgs = argsAt(g.bxor(idx, g.c64(1)), at);
        }
        return partnerArgs[j];
      };
      Position position{g.trunc(g.i32, dims.back()), partnerArg};
      Value r = emitBlock(op.getBody().front(), args, &position);
      g.store(r, g.gep(out, g.mul(idx, g.c64(bytesOf(outElem)))),
              bytesOf(outElem));
    });
  }
  endKernel();
  return success();
}

Value ElementwiseEmitter::inputOffset(unsigned j, Value flat,
                                      ArrayRef<Value> dims) {
  AffineMap map = cast<AffineMapAttr>(op.getIndexingMaps()[j]).getValue();
  auto type = cast<RankedTensorType>(op.getInputs()[j].getType());
  if (map.isIdentity())
    return flat; // same shape as the result
  return mapOffset(map, type.getShape(), dims);
}

LogicalResult emit::emitElementwise(OpBuilder &b, ElementwiseOp op,
                                    StringRef name, const EmitOptions &opts) {
  return ElementwiseEmitter(b, op, name, opts).emit();
}
