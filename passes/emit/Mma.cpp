//===- Mma.cpp - The mma contraction kind ---------------------------------===//
//
// Tensor cores fed from registers: each warp owns `rows` 16-row tiles of the
// weight and the block's mtile rows of activations as 8-row tiles, loads its
// operands straight from global memory (each lane 16 contiguous k of its
// rows per k-step, `unroll` 64-wide K chunks ahead) and runs mma.sync on
// them. Contract.h describes the fragment layout.
//
//===----------------------------------------------------------------------===//
#include "passes/emit/Contract.h"

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
  int64_t R = s.rows, mt = s.mtile / kMmaColsPerTile, U = s.unroll;
  int64_t span = s.vec; // K elements per lane and step
  int64_t chunk = geo.chunk, chunks = K() / chunk;
  bool f16 = aElem.isF16();
  bool quantized = bElem.isInteger(8);
  Value gi = g.lshr(lane, g.c32(2)), ti = g.band(lane, g.c32(3));
  Value n0 = g.add(g.mul(bx, g.c32(geo.colsPerBlock)),
                   g.mul(wn, g.c32(kMmaRowsPerTile * R)));
  // Weight rows g and g + 8 of each tile, activation row g of each tile.
  SmallVector<Value> wRow; // [r * 2 + half]
  for (int64_t r = 0; r < R; ++r)
    for (int64_t h = 0; h < 2; ++h) {
      Value n = g.add(n0, g.add(gi, g.c32(16 * r + 8 * h)));
      Value nr = g.umin(n, g.c32(N() - 1));
      wRow.push_back(g.gep(B, g.mul(g.zext64(nr), g.c64(K() * eb))));
    }
  SmallVector<Value> xRow;
  for (int64_t i = 0; i < mt; ++i) {
    Value m = g.add(m0, g.add(gi, g.c32(8 * i)));
    xRow.push_back(aBase(g.umin(m, g.c32(M() - 1))));
  }
  Value laneK = g.mul(g.zext64(ti), g.c64(span));

  // acc[(r * mt + i) * 4 + c]
  int64_t count = geo.accPerThread;
  SmallVector<Value> acc(count, g.cf32(0));
  auto [cBegin, cEnd] = pieceRange(chunks);

  auto step = [&](Value firstChunk, int64_t n,
                  ValueRange iters) -> SmallVector<Value> {
    SmallVector<Value> a(iters.begin(), iters.end());
    SmallVector<SmallVector<Raw>> wraw(n), xraw(n);
    SmallVector<Value> kOff(n);
    for (int64_t u = 0; u < n; ++u) {
      kOff[u] = g.add(g.mul(g.add(firstChunk, g.c64(u)), g.c64(chunk)), laneK);
      for (Value row : wRow)
        wraw[u].push_back(
            loadRaw(g.gep(row, g.mul(kOff[u], g.c64(eb))), span * eb, true));
    }
    for (int64_t u = 0; u < n; ++u)
      for (Value row : xRow)
        xraw[u].push_back(
            loadRaw(g.gep(row, g.mul(kOff[u], g.c64(ea))), span * ea, true));
    for (int64_t u = 0; u < n; ++u)
      for (int64_t j = 0; j < span / 4; ++j) {
        // A fragments of each weight tile for k-step j (k = 4j..4j+3 of
        // each lane's span).
        SmallVector<SmallVector<Value, 4>> afrag;
        for (int64_t r = 0; r < R; ++r)
          afrag.push_back(weightFragment(wraw[u][r * 2].words,
                                         wraw[u][r * 2 + 1].words, j, quantized,
                                         f16));
        for (int64_t i = 0; i < mt; ++i) {
          Value b0 = xraw[u][i].words[2 * j], b1 = xraw[u][i].words[2 * j + 1];
          for (int64_t r = 0; r < R; ++r)
            mma(afrag[r], {b0, b1},
                MutableArrayRef<Value>(a).slice((r * mt + i) * 4, 4), f16);
        }
      }
    return a;
  };
  acc = unrolledLoop(cBegin, cEnd, U, acc, step);

  deliverMma(acc, geo.warpsN, wn, m0, n0, mt);
}
