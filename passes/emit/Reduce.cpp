//===- Reduce.cpp - Row reductions ----------------------------------------===//
//
// kernel.reduce: each warp sums `rows` rows of the iteration space, a row
// at a time: every lane takes `vec` consecutive k's per step (one vector
// load per input that runs along K; inputs constant along K are loaded once
// per row; `unroll` steps loaded before the first is summed), runs the body
// on each element and adds its f32 term; a butterfly gives every lane the
// row's sum, and lane 0 runs the epilogue and stores the row's statistic.
// With `apply`, every lane runs the epilogue and walks its steps of the row
// again, storing apply's element for each k: the statistic is never
// written. The terms are added in a fixed order, so a kernel's results do
// not depend on timing.
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

class ReduceEmitter : public Emitter {
public:
  ReduceEmitter(OpBuilder &b, ReduceOp op, StringRef name,
                const EmitOptions &opts)
      : Emitter(b, op.getLoc(), name, opts), op(op),
        s(op.getSchedule()->getParams()) {}

  LogicalResult emit();

private:
  /// The tensors one region reads over the iteration space (the body's
  /// inputs, or apply's), from kernel parameter `first` on.
  struct Operands {
    unsigned first = 0;
    SmallVector<AffineMap> maps;
    SmallVector<Type> elem;
    SmallVector<ArrayRef<int64_t>> shape;
    /// Per row: the element of each input constant along K (else null).
    SmallVector<Value> fixed;
    /// One step's vector loads (null where an input is read by element).
    struct Step {
      SmallVector<Raw> raw;
      SmallVector<Value> base;
    };
  };

  Operands operandsOf(unsigned first, ValueRange values, ArrayAttr maps);
  /// Loads, once per row (`dims` its index, the last 0), the inputs that
  /// are constant along K.
  void loadFixed(Operands &o, ArrayRef<Value> dims);
  /// Issues the vector loads of step k.
  Operands::Step loadStep(const Operands &o, ArrayRef<Value> dims, Value k);
  /// The region arguments of element k + e of a step.
  SmallVector<Value> elementArgs(const Operands &o, const Operands::Step &l,
                                 ArrayRef<Value> dims, Value k, int64_t e);
  bool vectorized(const Operands &o, unsigned j) const {
    return vec > 1 && runsAlongK(o.maps[j]) && !o.elem[j].isInteger(4);
  }
  /// Runs `fn(k, step)` over a lane's steps of the row, `unroll` steps
  /// loaded before the first is used; returns the iteration values.
  SmallVector<Value>
  overRow(const Operands &o, ArrayRef<Value> dims, ValueRange init,
          llvm::function_ref<SmallVector<Value>(Value, const Operands::Step &,
                                                ValueRange)>
              fn);
  /// The row's statistic: the epilogue of `sum`.
  Value statistic(Value sum, ArrayRef<Value> dims);

  ReduceOp op;
  ScheduleParams s;
  int64_t K = 0, vec = 1;
  /// k's between a lane's steps: the lanes of the warps sharing a row.
  int64_t stride = 0;
  Value laneK, steps;
};

} // namespace

ReduceEmitter::Operands
ReduceEmitter::operandsOf(unsigned first, ValueRange values, ArrayAttr maps) {
  Operands o;
  o.first = first;
  if (maps)
    for (Attribute a : maps)
      o.maps.push_back(cast<AffineMapAttr>(a).getValue());
  for (Value v : values) {
    o.elem.push_back(elementTypeOf(v));
    o.shape.push_back(cast<RankedTensorType>(v.getType()).getShape());
  }
  o.fixed.resize(values.size());
  return o;
}

void ReduceEmitter::loadFixed(Operands &o, ArrayRef<Value> dims) {
  for (unsigned j = 0; j < o.maps.size(); ++j)
    o.fixed[j] = constantAlongK(o.maps[j])
                     ? loadElement(param(o.first + j), o.elem[j],
                                   mapOffset(o.maps[j], o.shape[j], dims))
                     : Value();
}

ReduceEmitter::Operands::Step
ReduceEmitter::loadStep(const Operands &o, ArrayRef<Value> dims, Value k) {
  SmallVector<Value> d(dims);
  d.back() = k;
  unsigned n = o.maps.size();
  Operands::Step l{SmallVector<Raw>(n), SmallVector<Value>(n)};
  for (unsigned j = 0; j < n; ++j) {
    if (o.fixed[j])
      continue;
    l.base[j] = mapOffset(o.maps[j], o.shape[j], d);
    if (vectorized(o, j))
      l.raw[j] = loadRaw(g.gep(param(o.first + j),
                               g.mul(l.base[j], g.c64(bytesOf(o.elem[j])))),
                         unsigned(vec * bytesOf(o.elem[j])), true);
  }
  return l;
}

SmallVector<Value> ReduceEmitter::elementArgs(const Operands &o,
                                              const Operands::Step &l,
                                              ArrayRef<Value> dims, Value k,
                                              int64_t e) {
  SmallVector<Value> args;
  for (unsigned j = 0; j < o.maps.size(); ++j) {
    if (o.fixed[j]) {
      args.push_back(o.fixed[j]);
    } else if (vectorized(o, j)) {
      args.push_back(asElement(
          rawElement(l.raw[j], unsigned(e), bytesOf(o.elem[j])), o.elem[j]));
    } else {
      SmallVector<Value> de(dims);
      de.back() = g.add(k, g.c64(e));
      args.push_back(loadElement(param(o.first + j), o.elem[j],
                                 runsAlongK(o.maps[j])
                                     ? g.add(l.base[j], g.c64(e))
                                     : mapOffset(o.maps[j], o.shape[j], de)));
    }
  }
  return args;
}

SmallVector<Value> ReduceEmitter::overRow(
    const Operands &o, ArrayRef<Value> dims, ValueRange init,
    llvm::function_ref<SmallVector<Value>(Value, const Operands::Step &,
                                          ValueRange)>
        fn) {
  return unrolledLoop(
      g.c64(0), steps, s.unroll, init,
      [&](Value first, int64_t n, ValueRange iters) -> SmallVector<Value> {
        SmallVector<Value> ks;
        SmallVector<Operands::Step> loaded;
        for (int64_t u = 0; u < n; ++u) {
          ks.push_back(
              g.add(laneK, g.mul(g.add(first, g.c64(u)), g.c64(stride))));
          loaded.push_back(loadStep(o, dims, ks.back()));
        }
        SmallVector<Value> it(iters);
        for (int64_t u = 0; u < n; ++u)
          it = fn(ks[u], loaded[u], it);
        return it;
      });
}

Value ReduceEmitter::statistic(Value sum, ArrayRef<Value> dims) {
  unsigned numIn = op.getInputs().size();
  SmallVector<Value> args{sum};
  for (auto [j, v] : llvm::enumerate(op.getEpilogueInputs())) {
    AffineMap map = cast<AffineMapAttr>(op.getEpilogueMaps()[j]).getValue();
    args.push_back(loadElement(
        param(numIn + unsigned(j)), elementTypeOf(v),
        mapOffset(map, cast<RankedTensorType>(v.getType()).getShape(), dims)));
  }
  return emitBlock(op.getEpilogue().front(), args);
}

LogicalResult ReduceEmitter::emit() {
  unsigned numIn = op.getInputs().size(), numEp = op.getEpilogueInputs().size(),
           numAp = op.getApplyInputs().size();
  unsigned numRead = numIn + numEp + numAp;
  int64_t threads = s.warps * 32;
  beginKernel(numRead + 1, numRead, threads, s.regs);
  SmallVector<int64_t> statShape = op.getStatisticShape();
  K = int64_t(op.getExtent());
  int64_t rows = op.getNumRows();
  Type outElem = op.getType().getElementType();
  Value out = param(numRead);
  Operands in = operandsOf(0, op.getInputs(), op.getIndexingMaps());
  Operands ap = operandsOf(numIn + numEp, op.getApplyInputs(),
                           op.getApplyMaps().value_or(ArrayAttr()));
  // Vector loads need every vector inside a row and aligned: K a multiple
  // of vec; i4 inputs are read an element at a time.
  vec = K % s.vec == 0 ? s.vec : 1;

  // `kwarps` warps share a row: a block takes warps / kwarps rows at a
  // time, each warp every kwarps-th step of its row.
  int64_t kw = s.kwarps, groups = s.warps / kw;
  Value tid = g.tidX();
  Value lane = g.band(tid, g.c32(31)), warp = g.lshr(tid, g.c32(5));
  Value part = kw > 1 ? g.urem(warp, g.c32(kw)) : g.c32(0);
  Value group = kw > 1 ? g.udiv(warp, g.c32(kw)) : warp;
  Value firstRow =
      g.mul(g.add(g.mul(g.ctaidX(), g.c32(groups)), group), g.c32(s.rows));
  // The thread's place among its row's (0: the one that stores a
  // statistic); its steps: k = laneK + j * stride, for j < steps.
  Value inRow = g.add(g.mul(part, g.c32(32)), lane);
  laneK = g.mul(g.zext64(inRow), g.c64(vec));
  stride = kw * 32 * vec;
  steps = g.select(
      g.cmp(Pred::ult, laneK, g.c64(K)),
      g.udiv(g.add(g.sub(g.c64(K), laneK), g.c64(stride - 1)), g.c64(stride)),
      g.c64(0));
  // Each warp's share of each of its rows' sums, where warps share rows.
  Value partials =
      kw > 1 ? sharedArray("partial", g.f32, s.warps * s.rows) : Value();

  // One row: `valid` null where the caller skips rows past the last
  // (one warp a row: no barrier to reach), else whether `row` is one (rows
  // past the last are summed as the last, so that every warp reaches the
  // barrier, and store nothing).
  auto doRow = [&](int64_t i, Value row, Value valid) {
    // The row's index in the statistic's space (its last dimension is 1).
    SmallVector<Value> dims = unflatten(row, statShape);
    dims.back() = g.c64(0);
    loadFixed(in, dims);
    // `unroll` steps loaded before the first is used: one row's loads in
    // flight at once instead of one at a time (a single row of 4096 took
    // 3.7 us).
    SmallVector<Value> sum =
        overRow(in, dims, ValueRange{g.cf32(0)},
                [&](Value k, const Operands::Step &l, ValueRange acc) {
                  Value a = acc[0];
                  for (int64_t e = 0; e < vec; ++e)
                    a = g.fadd(a, emitBlock(op.getBody().front(),
                                            elementArgs(in, l, dims, k, e)));
                  return SmallVector<Value>{a};
                });
    Value total = warpSum(sum[0]);
    if (kw > 1) {
      // The row's warps meet in shared memory, and every thread adds their
      // shares in the same fixed order.
      g.ifThen(g.cmp(Pred::eq, lane, g.c32(0)), [&] {
        g.store(
            total,
            sharedElem(partials, g.add(g.c32(int32_t(i * s.warps)), warp), 4),
            4);
      });
      g.barrier();
      Value first = g.add(g.c32(int32_t(i * s.warps)), g.mul(group, g.c32(kw)));
      total = g.cf32(0);
      for (int64_t w = 0; w < kw; ++w)
        total = g.fadd(
            total,
            g.load(g.f32, sharedElem(partials, g.add(first, g.c32(w)), 4), 4));
    }
    if (!op.hasApply()) {
      Value storer = g.cmp(Pred::eq, inRow, g.c32(0));
      g.ifThen(valid ? g.andi(valid, storer) : storer, [&] {
        g.store(statistic(total, dims),
                g.gep(out, g.mul(row, g.c64(bytesOf(outElem)))),
                bytesOf(outElem));
      });
      return;
    }
    // Every lane has the sum: each derives the statistic and scales its own
    // steps of the row, which it has just read (from L1 now).
    Value stat = statistic(total, dims);
    auto scale = [&] {
      loadFixed(ap, dims);
      Value rowBase = g.mul(row, g.c64(K));
      overRow(ap, dims, ValueRange{},
              [&](Value k, const Operands::Step &l, ValueRange) {
                // The step's `vec` elements in one vector store.
                Type vt =
                    vec > 1 ? Type(VectorType::get({vec}, outElem)) : outElem;
                Value v =
                    vec > 1 ? LLVM::PoisonOp::create(g.b, g.loc, vt).getResult()
                            : Value();
                for (int64_t e = 0; e < vec; ++e) {
                  SmallVector<Value> args = elementArgs(ap, l, dims, k, e);
                  args.push_back(stat);
                  Value r = emitBlock(op.getApply().front(), args);
                  v = vec > 1 ? LLVM::InsertElementOp::create(g.b, g.loc, v, r,
                                                              g.c32(int32_t(e)))
                                    .getResult()
                              : r;
                }
                int64_t bytes = vec * bytesOf(outElem);
                g.store(v,
                        g.gep(out, g.mul(g.add(rowBase, k),
                                         g.c64(bytesOf(outElem)))),
                        unsigned(std::min<int64_t>(bytes, 16)));
                return SmallVector<Value>{};
              });
    };
    if (valid)
      g.ifThen(valid, scale);
    else
      scale();
  };

  for (int64_t i = 0; i < s.rows; ++i) {
    Value row = g.zext64(g.add(firstRow, g.c32(int32_t(i))));
    Value valid = g.cmp(Pred::ult, row, g.c64(rows));
    if (kw == 1)
      g.ifThen(valid, [&] { doRow(i, row, Value()); });
    else
      doRow(i, g.select(valid, row, g.c64(rows - 1)), valid);
  }
  endKernel();
  return success();
}

LogicalResult emit::emitReduce(OpBuilder &b, ReduceOp op, StringRef name,
                               const EmitOptions &opts) {
  return ReduceEmitter(b, op, name, opts).emit();
}
