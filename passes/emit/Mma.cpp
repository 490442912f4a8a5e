//===- Mma.cpp - The mma contraction kind ---------------------------------===//
//
// Tensor cores fed from registers: each warp owns `rows` 16-row tiles of the
// weight and the block's mtile rows of activations as 8-row tiles, loads its
// operands straight from global memory (each lane 16 contiguous k of its
// rows per k-step, `unroll` 64-wide K chunks ahead) and runs mma.sync on
// them. With two `stages` the next chunks' weights (and their scales and
// zeros) are loaded before the current ones are summed, so a warp keeps
// loads in flight while it converts and multiplies. Contract.h describes the
// fragment layout. An integer weight whose f32 dequantization factors
// (WeightSide.h, matchFactoredWeight) is converted but not dequantized: each
// step sums x * q from zero, and x on a tile of ones where there is a zero,
// then adds s * sum(x * q) + z * sum(x) of the step's group and row to the
// accumulators. With siblings a warp owns `rows` tiles of each weight, and its
// accumulators hold each weight's in turn.
//
//===----------------------------------------------------------------------===//
#include "passes/emit/Contract.h"

#include <map>

using namespace mlir;
using namespace mtc;
using namespace mtc::emit;
using namespace mtc::kernel;
using llvm::SmallVector;

namespace {

class MmaEmitter : public TensorCoreEmitter {
public:
  using TensorCoreEmitter::TensorCoreEmitter;

private:
  void emitBody() override;
};

} // namespace

std::unique_ptr<ContractEmitter>
emit::createMmaEmitter(OpBuilder &b, ContractOp op, StringRef name,
                       const EmitOptions &opts) {
  return std::make_unique<MmaEmitter>(b, op, name, opts);
}

void MmaEmitter::emitBody() {
  // Weight tiles per warp: `rows` of each weight, weight by weight.
  int64_t R = s.rows * c.weights, mt = s.mtile / kMmaColsPerTile;
  int64_t span = s.vec; // K elements per lane and step
  int64_t chunk = geo.chunk, chunks = K() / chunk;
  bool f16 = aElem.isF16();
  Value gi = g.lshr(lane, g.c32(2)), ti = g.band(lane, g.c32(3));
  Value n0 = g.add(g.mul(bx, g.c32(geo.colsPerBlock)),
                   g.mul(wn, g.c32(kMmaRowsPerTile * s.rows)));
  // Weight rows g and g + 8 of each tile, activation row g of each tile.
  SmallVector<Value> wRow, wN; // [r * 2 + half]
  for (int64_t r = 0; r < R; ++r)
    for (int64_t h = 0; h < 2; ++h) {
      Value n = g.add(n0, g.add(gi, g.c32(16 * (r % s.rows) + 8 * h)));
      Value nr = g.umin(n, g.c32(N() - 1));
      wN.push_back(nr);
      wRow.push_back(g.gep(weights[r / s.rows],
                           g.mul(g.zext64(nr), g.c64(c.weightBytes(K())))));
    }
  int64_t piece = bInputPiece(span);
  SmallVector<Value> xRow, xRowIdx, xValid;
  for (int64_t i = 0; i < mt; ++i) {
    Value m = g.add(m0, g.add(gi, g.c32(8 * i)));
    xRowIdx.push_back(g.umin(m, g.c32(M() - 1)));
    xRow.push_back(aBase(xRowIdx.back()));
    xValid.push_back(g.cmp(arith::CmpIPredicate::ult, m, g.c32(M())));
  }
  // Rows of A past M (a batch of fewer than 8 rows, the last tile's) feed
  // outputs that are never stored: their lanes load nothing. (At M = 1
  // every lane loaded row 0, and those loads were 2/3 of the L1 requests of
  // an int4 kernel, which waited on L1 more than on memory.)
  bool padded = M() % (kMmaColsPerTile * mt);
  Value laneK = g.mul(g.zext64(ti), g.c64(span));

  // acc[(r * mt + i) * 4 + c]
  int64_t count = geo.accPerThread;
  SmallVector<Value> acc(count, g.cf32(0));
  auto [cBegin, cEnd] = pieceRange(chunks);

  // What a group of n steps reads from the weight stream, [u][row]: the
  // weight's words and their b inputs (pairs by piece; the factored form's
  // f32 values, one set a step, which lies in one group: checkMmaSchedule).
  struct Stream {
    SmallVector<SmallVector<Raw>> w;
    SmallVector<SmallVector<SmallVector<SmallVector<Value>>>> win;
    SmallVector<SmallVector<SmallVector<Value>>> fin;
    /// Every value, in one fixed order (what two stages carry).
    void forEachValue(llvm::function_ref<void(Value &)> f) {
      for (auto &u : w)
        for (Raw &r : u) {
          for (Value &v : r.words)
            f(v);
          if (r.narrow)
            f(r.narrow);
        }
      for (auto &u : win)
        for (auto &row : u)
          for (auto &p : row)
            for (Value &v : p)
              f(v);
      for (auto &u : fin)
        for (auto &row : u)
          for (Value &v : row)
            f(v);
    }
  };
  auto kOffset = [&](Value firstChunk, int64_t u) {
    return g.add(g.mul(g.add(firstChunk, g.c64(u)), g.c64(chunk)), laneK);
  };
  auto loadWeights = [&](Value firstChunk, int64_t n) {
    Stream st;
    st.w.resize(n);
    st.win.resize(n);
    st.fin.resize(n);
    for (int64_t u = 0; u < n; ++u) {
      Value kOff = kOffset(firstChunk, u);
      for (auto [i, row, nr] : llvm::enumerate(wRow, wN)) {
        st.w[u].push_back(
            loadStream(g.gep(row, weightOffset(kOff)), c.weightBytes(span)));
        // Entry i is row half i % 2 of tile i / 2, of weight i / 2 / rows.
        unsigned w = unsigned(i / 2 / s.rows);
        if (factors) {
          st.win[u].emplace_back();
          st.fin[u].push_back(
              llvm::map_to_vector(loadBInputs(nr, kOff, false, w),
                                  [&](Value v) { return toF32(v); }));
        } else {
          st.win[u].push_back(loadBInputSpan(nr, kOff, span, true, w));
        }
      }
    }
    return st;
  };
  auto loadActivations = [&](Value firstChunk, int64_t n) {
    SmallVector<SmallVector<Raw>> xraw(n);
    SmallVector<Value> kOffs;
    for (int64_t u = 0; u < n; ++u)
      kOffs.push_back(kOffset(firstChunk, u));
    for (int64_t u = 0; u < n; ++u) {
      Value kOff = kOffs[u];
      for (auto [row, idx, valid] : llvm::zip(xRow, xRowIdx, xValid)) {
        auto load = [&, row = row, idx = idx] {
          return applyPrologue(
              loadRaw(g.gep(row, g.mul(kOff, g.c64(ea))), span * ea, true), idx,
              kOff, span);
        };
        if (!padded) {
          xraw[u].push_back(load());
          continue;
        }
        Raw raw;
        raw.bytes = span * ea;
        raw.words = g.ifElse(
            valid, SmallVector<Type>(raw.bytes / 4, g.i32),
            [&] { return load().words; },
            [&] { return SmallVector<Value>(raw.bytes / 4, g.c32(0)); });
        xraw[u].push_back(raw);
      }
    }
    return xraw;
  };
  auto compute = [&](const Stream &st, ArrayRef<SmallVector<Raw>> xraw,
                     int64_t n, ValueRange iters) -> SmallVector<Value> {
    SmallVector<Value> a(iters.begin(), iters.end());
    for (int64_t u = 0; u < n; ++u) {
      // The factored form sums x * q of the step (and x, for the zero) from
      // zero, then adds s * sum(x * q) + z * sum(x) to the accumulators.
      SmallVector<Value> part, xsum;
      if (factors) {
        part.assign(count, g.cf32(0));
        if (factors->zero >= 0)
          xsum.assign(4 * mt, g.cf32(0));
      }
      MutableArrayRef<Value> sums =
          factors ? MutableArrayRef<Value>(part) : MutableArrayRef<Value>(a);
      for (int64_t j = 0; j < span / 4; ++j) {
        // A fragments of each weight tile for k-step j (k = 4j..4j+3 of
        // each lane's span).
        SmallVector<SmallVector<Value, 4>> afrag;
        auto in = [&](int64_t row) -> ArrayRef<Value> {
          auto &pieces = st.win[u][row];
          return pieces.empty() ? ArrayRef<Value>() : pieces[4 * j / piece];
        };
        for (int64_t r = 0; r < R; ++r)
          afrag.push_back(weightFragment(st.w[u][r * 2].words,
                                         st.w[u][r * 2 + 1].words, j, in(r * 2),
                                         in(r * 2 + 1)));
        for (int64_t i = 0; i < mt; ++i) {
          SmallVector<Value, 2> bx = activationPairs(xraw[u][i].words, j);
          for (int64_t r = 0; r < R; ++r)
            mma(afrag[r], bx, sums.slice((r * mt + i) * 4, 4), f16);
          if (!xsum.empty()) // a tile of ones: every row sums x
            mma(SmallVector<Value>(
                    4, g.c32(int32_t(f16 ? 0x3C003C00u : 0x3F803F80u))),
                bx, MutableArrayRef<Value>(xsum).slice(4 * i, 4), f16);
        }
      }
      if (!factors)
        continue;
      // Accumulator (r * mt + i) * 4 + cc is weight row g (cc < 2) or g + 8
      // of tile r, activation row 2t + cc % 2 of tile i.
      for (int64_t r = 0; r < R; ++r)
        for (int64_t i = 0; i < mt; ++i)
          for (int64_t cc = 0; cc < 4; ++cc) {
            int64_t idx = (r * mt + i) * 4 + cc;
            ArrayRef<Value> in = st.fin[u][r * 2 + (cc >= 2)];
            Value sum = part[idx];
            a[idx] = factors->scale >= 0
                         ? g.fma(in[factors->scale], sum, a[idx])
                         : g.fadd(a[idx], sum);
            if (factors->zero >= 0)
              a[idx] = g.fma(in[factors->zero], xsum[4 * i + cc], a[idx]);
          }
    }
    return a;
  };

  int64_t inFlight = stepsInFlight(chunks);
  if (s.stages == 1) {
    // Each group's weights, then its activations, then its sums.
    acc =
        unrolledLoop(cBegin, cEnd, inFlight, acc,
                     [&](Value first, int64_t n, ValueRange iters) {
                       Stream st = loadWeights(first, n);
                       return compute(st, loadActivations(first, n), n, iters);
                     });
  } else {
    // Two stages: the next group's weight stream is loaded while this one
    // computes (its activations, which the blocks share through L2, load
    // with its sums). The loop carries the stream's values; `shapes` keeps
    // where each goes, by the group's step count.
    std::map<int64_t, Stream> shapes;
    acc = pipelinedLoop(
        cBegin, cEnd, inFlight, acc,
        [&](Value first, int64_t n) {
          Stream st = loadWeights(first, n);
          SmallVector<Value> flat;
          st.forEachValue([&](Value &v) { flat.push_back(v); });
          shapes[n] = st;
          return flat;
        },
        [&](Value first, int64_t n, ArrayRef<Value> loaded, ValueRange iters) {
          Stream st = shapes.at(n);
          size_t next = 0;
          st.forEachValue([&](Value &v) { v = loaded[next++]; });
          return compute(st, loadActivations(first, n), n, iters);
        });
  }

  deliverMma(acc, geo.warpsN, wn, m0, n0, mt);
}
