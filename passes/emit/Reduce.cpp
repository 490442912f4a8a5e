//===- Reduce.cpp - Row reductions ----------------------------------------===//
//
// kernel.reduce: each warp sums `rows` rows of the iteration space, a row
// at a time: every lane takes `vec` consecutive k's per step (one vector
// load per input that runs along K; inputs constant along K are loaded once
// per row; `unroll` steps loaded before the first is summed), runs the body
// on each element and adds its f32 term; a
// butterfly gives every lane the row's sum, and lane 0 runs the epilogue
// and stores the row's result. The terms are added in a fixed order, so a
// kernel's results do not depend on timing.
//
//===----------------------------------------------------------------------===//
#include "passes/emit/Emitter.h"

#include "dialects/Kernel/KernelOps.h"
#include "dialects/Kernel/Schedule.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::emit;
using namespace mtc::kernel;
using llvm::SmallVector;
using Pred = arith::CmpIPredicate;

namespace {

class ReduceEmitter : public Emitter {
public:
  ReduceEmitter(OpBuilder &b, ReduceOp op, StringRef name,
                const EmitOptions &opts)
      : Emitter(b, op.getLoc(), name, opts), op(op),
        s(op.getSchedule()->getParams()) {}

  LogicalResult emit();

private:
  ReduceOp op;
  ScheduleParams s;
};

/// Whether `map`'s last result reads the iteration space's last dimension
/// (K) itself: consecutive k's are consecutive elements.
bool runsAlongK(AffineMap map) {
  if (map.getNumResults() == 0)
    return false;
  MapResult r = decodeMapResult(map.getResults().back());
  return r.dim == int(map.getNumDims()) - 1 && r.divisor == 1;
}

/// Whether `map` reads the same element for every k.
bool constantAlongK(AffineMap map) {
  int k = int(map.getNumDims()) - 1;
  return llvm::none_of(map.getResults(), [&](AffineExpr e) {
    return decodeMapResult(e).dim == k;
  });
}

} // namespace

LogicalResult ReduceEmitter::emit() {
  unsigned numIn = op.getInputs().size(), numEp = op.getEpilogueInputs().size();
  int64_t threads = s.warps * 32;
  beginKernel(numIn + numEp + 1, numIn + numEp, threads, s.regs);
  SmallVector<int64_t> iter = op.getIterationShape();
  ArrayRef<int64_t> res = op.getType().getShape();
  int64_t K = iter.back(), rows = numElementsOf(op.getType());
  Type outElem = op.getType().getElementType();
  SmallVector<AffineMap> maps, epMaps;
  for (Attribute a : op.getIndexingMaps())
    maps.push_back(cast<AffineMapAttr>(a).getValue());
  for (Attribute a : op.getEpilogueMaps())
    epMaps.push_back(cast<AffineMapAttr>(a).getValue());
  SmallVector<Type> inElem;
  SmallVector<ArrayRef<int64_t>> inShape;
  for (Value v : op.getInputs()) {
    inElem.push_back(elementTypeOf(v));
    inShape.push_back(cast<RankedTensorType>(v.getType()).getShape());
  }
  // Vector loads need every vector inside a row and aligned: K a multiple
  // of vec; i4 inputs are read an element at a time.
  int64_t vec = K % s.vec == 0 ? s.vec : 1;
  auto vectorized = [&](unsigned j) {
    return vec > 1 && runsAlongK(maps[j]) && !inElem[j].isInteger(4);
  };

  Value tid = g.tidX();
  Value lane = g.band(tid, g.c32(31)), warp = g.lshr(tid, g.c32(5));
  Value firstRow =
      g.mul(g.add(g.mul(g.ctaidX(), g.c32(s.warps)), warp), g.c32(s.rows));
  for (int64_t i = 0; i < s.rows; ++i) {
    Value row = g.zext64(g.add(firstRow, g.c32(i)));
    g.ifThen(g.cmp(Pred::ult, row, g.c64(rows)), [&] {
      // The row's index in the result (its last dimension is 1).
      SmallVector<Value> dims = unflatten(row, res);
      // Inputs constant along K: once per row.
      SmallVector<Value> fixed(numIn);
      dims.back() = g.c64(0);
      for (unsigned j = 0; j < numIn; ++j)
        if (constantAlongK(maps[j]))
          fixed[j] = loadElement(param(j), inElem[j],
                                 mapOffset(maps[j], inShape[j], dims));
      Value laneK = g.mul(g.zext64(lane), g.c64(vec));
      // The lane's steps (k = laneK + j * 32 * vec), `unroll` of them
      // loaded before the first is used: one row's loads in flight at once
      // instead of one at a time (a single row of 4096 took 3.7 us).
      int64_t stride = 32 * vec;
      Value steps =
          g.select(g.cmp(Pred::ult, laneK, g.c64(K)),
                   g.udiv(g.add(g.sub(g.c64(K), laneK), g.c64(stride - 1)),
                          g.c64(stride)),
                   g.c64(0));
      struct Loaded {
        SmallVector<Raw> raw;
        SmallVector<Value> base;
      };
      auto load = [&](Value k) {
        SmallVector<Value> d(dims);
        d.back() = k;
        Loaded l{SmallVector<Raw>(numIn), SmallVector<Value>(numIn)};
        for (unsigned j = 0; j < numIn; ++j) {
          if (fixed[j])
            continue;
          l.base[j] = mapOffset(maps[j], inShape[j], d);
          if (vectorized(j))
            l.raw[j] = loadRaw(
                g.gep(param(j), g.mul(l.base[j], g.c64(bytesOf(inElem[j])))),
                unsigned(vec * bytesOf(inElem[j])), true);
        }
        return l;
      };
      auto accumulate = [&](Value k, const Loaded &l, Value acc) {
        for (int64_t e = 0; e < vec; ++e) {
          SmallVector<Value> args;
          for (unsigned j = 0; j < numIn; ++j) {
            if (fixed[j]) {
              args.push_back(fixed[j]);
            } else if (vectorized(j)) {
              args.push_back(asElement(
                  rawElement(l.raw[j], unsigned(e), bytesOf(inElem[j])),
                  inElem[j]));
            } else {
              SmallVector<Value> de(dims);
              de.back() = g.add(k, g.c64(e));
              args.push_back(loadElement(
                  param(j), inElem[j],
                  runsAlongK(maps[j]) ? g.add(l.base[j], g.c64(e))
                                      : mapOffset(maps[j], inShape[j], de)));
            }
          }
          acc = g.fadd(acc, emitBlock(op.getBody().front(), args));
        }
        return acc;
      };
      SmallVector<Value> sum = unrolledLoop(
          g.c64(0), steps, s.unroll, ValueRange{g.cf32(0)},
          [&](Value first, int64_t n, ValueRange iters) -> SmallVector<Value> {
            SmallVector<Value> ks;
            SmallVector<Loaded> loaded;
            for (int64_t u = 0; u < n; ++u) {
              ks.push_back(
                  g.add(laneK, g.mul(g.add(first, g.c64(u)), g.c64(stride))));
              loaded.push_back(load(ks.back()));
            }
            Value acc = iters[0];
            for (int64_t u = 0; u < n; ++u)
              acc = accumulate(ks[u], loaded[u], acc);
            return {acc};
          });
      Value total = warpSum(sum[0]);
      g.ifThen(g.cmp(Pred::eq, lane, g.c32(0)), [&] {
        SmallVector<Value> args{total};
        for (unsigned j = 0; j < numEp; ++j) {
          Type t = elementTypeOf(op.getEpilogueInputs()[j]);
          args.push_back(
              loadElement(param(numIn + j), t,
                          mapOffset(epMaps[j],
                                    cast<RankedTensorType>(
                                        op.getEpilogueInputs()[j].getType())
                                        .getShape(),
                                    dims)));
        }
        Value r = emitBlock(op.getEpilogue().front(), args);
        g.store(
            r, g.gep(param(numIn + numEp), g.mul(row, g.c64(bytesOf(outElem)))),
            bytesOf(outElem));
      });
    });
  }
  endKernel();
  return success();
}

LogicalResult emit::emitReduce(OpBuilder &b, ReduceOp op, StringRef name,
                               const EmitOptions &opts) {
  return ReduceEmitter(b, op, name, opts).emit();
}
