//===- Tiled.cpp - The tiled contraction kind -----------------------------===//
//
// Tensor cores on shared-memory tiles.
//
// A block owns colsPerBlock weight rows (N) and mtile activation rows (M);
// its warps form a warpsN x mwarps x kwarps grid: each owns `rows` 16-row
// weight tiles and mtile / mwarps / 8 8-row activation tiles, and one of
// kwarps slices of every K tile (their partial sums meet in shared memory
// at the end). K advances in tiles of 4 * vec * kwarps: every thread
// copies 16-byte pieces of the next weight and activation tiles with
// cp.async into a ring of `stages` shared buffers, `stages - 1` tiles
// ahead of the one the warps multiply. One barrier per tile: after it,
// every warp is done with the buffer the new copies overwrite.
//
// The k order is mma's (Mma.cpp): lane t of a group of four in K slice
// s takes the vec k's from (4 s + t) * vec of each tile, so its operands
// are contiguous in shared memory and come in 16-byte loads; an integer
// weight is converted and dequantized in registers right before its mma,
// with the b inputs (group-wise scales, zeros) of its rows loaded from
// global memory at the start of the tile's iteration. Rows are
// XOR-swizzled in 16-byte pieces so that the eight lanes of each quarter
// warp hit different banks.
//
//===----------------------------------------------------------------------===//
#include "passes/emit/Contract.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::emit;
using namespace mtc::kernel;
using llvm::SmallVector;
using Pred = arith::CmpIPredicate;

namespace {

class TiledEmitter : public TensorCoreEmitter {
public:
  using TensorCoreEmitter::TensorCoreEmitter;

private:
  /// The warp along M.
  Value wm;

  void assignPiece(Value bz) override;
  void emitBody() override;
  /// Physical 16-byte piece of logical piece `c` in row `row` (i32).
  Value swizzle(Value c, Value row);
};

} // namespace

std::unique_ptr<ContractEmitter>
emit::createTiledEmitter(OpBuilder &b, ContractOp op, StringRef name,
                         const EmitOptions &opts) {
  return std::make_unique<TiledEmitter>(b, op, name, opts);
}

void TiledEmitter::assignPiece(Value bz) {
  // Warps: warpsN along N, then mwarps along M, then kwarps along K inside
  // each tile. The block's K range is its split-K piece.
  wm = g.band(wk, g.c32(s.mwarps - 1));
  wk = g.lshr(wk, g.c32(llvm::Log2_64(s.mwarps)));
  piece = bz;
}

Value TiledEmitter::swizzle(Value c, Value row) {
  Value x = g.bor(g.band(row, g.c32(1)),
                  g.shl(g.band(g.lshr(c, g.c32(3)), g.c32(3)), g.c32(1)));
  return g.bxor(c, x);
}

void TiledEmitter::emitBody() {
  int64_t R = s.rows, V = s.vec, tileK = geo.chunk;
  int64_t mtw = s.mtile / s.mwarps / kMmaColsPerTile;
  int64_t threads = s.warps * 32;
  int64_t wRowBytes = c.weightBytes(tileK), xRowBytes = tileK * ea;
  int64_t tiles = K() / tileK;
  bool f16 = aElem.isF16();
  Value smem = dynamicShared();
  Value nBlock = g.mul(bx, g.c32(geo.colsPerBlock));

  // Copies: thread tid moves pieces tid, tid + threads, ... of each tile.
  // The global source (less the tile's K offset) and the shared
  // destination (less the stage's offset) are the same for every tile.
  struct Copy {
    Value src, dst, active; // active: null if every thread copies
  };
  SmallVector<Copy> copies;
  auto plan = [&](int64_t rowsInTile, int64_t rowBytes, int64_t tileOffset,
                  function_ref<Value(Value)> rowBase) {
    int64_t perRow = rowBytes / 16, pieces = rowsInTile * perRow;
    for (int64_t i = 0; i * threads < pieces; ++i) {
      Value p = g.add(tid, g.c32(i * threads));
      Value row = g.udiv(p, g.c32(perRow)), c = g.urem(p, g.c32(perRow));
      Copy cp;
      cp.src = g.gep(rowBase(row), g.zext64(g.mul(c, g.c32(16))));
      cp.dst =
          g.add(g.c32(tileOffset), g.add(g.mul(row, g.c32(rowBytes)),
                                         g.mul(swizzle(c, row), g.c32(16))));
      if ((i + 1) * threads > pieces)
        cp.active = g.cmp(Pred::ult, p, g.c32(pieces));
      copies.push_back(cp);
    }
  };
  plan(geo.colsPerBlock, wRowBytes, 0, [&](Value row) {
    Value n = g.umin(g.add(nBlock, row), g.c32(N() - 1));
    return g.gep(B, g.mul(g.zext64(n), g.c64(c.weightBytes(K()))));
  });
  size_t weightCopies = copies.size();
  plan(s.mtile, xRowBytes, geo.weightTileBytes, [&](Value row) {
    return aBase(g.umin(g.add(m0, row), g.c32(M() - 1)));
  });

  /// Starts the copies of K tile `t` (i64) into ring slot `slot` (i32).
  auto issue = [&](Value t, Value slot) {
    Value stage = g.mul(slot, g.c32(geo.stageBytes));
    Value wK = g.mul(t, g.c64(wRowBytes)), xK = g.mul(t, g.c64(xRowBytes));
    for (auto [i, cp] : llvm::enumerate(copies)) {
      auto copy = [&, &cp = cp, i = i] {
        Value src = g.gep(cp.src, i < weightCopies ? wK : xK);
        Value dst = g.gep(smem, g.zext64(g.add(stage, cp.dst)));
        NVVM::CpAsyncOp::create(g.b, g.loc, dst, src, 16,
                                NVVM::LoadCacheModifierKind::CG, Value());
      };
      if (cp.active)
        g.ifThen(cp.active, copy);
      else
        copy();
    }
  };
  auto commit = [&] { NVVM::CpAsyncCommitGroupOp::create(g.b, g.loc); };

  // This lane's operand rows in a tile: weight rows g and g + 8 of each
  // 16-row tile, activation row g of each 8-row tile.
  Value gi = g.lshr(lane, g.c32(2)), ti = g.band(lane, g.c32(3));
  Value wRow0 = g.mul(wn, g.c32(kMmaRowsPerTile * R));
  Value xRow0 = g.mul(wm, g.c32(mtw * kMmaColsPerTile));
  SmallVector<Value> wRows, xRows;
  for (int64_t r = 0; r < R; ++r)
    for (int64_t h = 0; h < 2; ++h)
      wRows.push_back(g.add(wRow0, g.add(gi, g.c32(16 * r + 8 * h))));
  for (int64_t i = 0; i < mtw; ++i)
    xRows.push_back(g.add(xRow0, g.add(gi, g.c32(8 * i))));
  // Shared offset of the 16-byte piece `q` of this lane's k's in `row`.
  // Lane t of K group wk takes the vec k's from (4 wk + t) * vec.
  Value kLane = g.add(g.mul(wk, g.c32(4)), ti);
  auto laneOffset = [&](Value row, int64_t rowBytes, int64_t laneBytes,
                        int64_t q, int64_t tileOffset) {
    Value c = g.add(g.mul(kLane, g.c32(laneBytes / 16)), g.c32(q));
    return g.add(g.c32(tileOffset), g.add(g.mul(row, g.c32(rowBytes)),
                                          g.mul(swizzle(c, row), g.c32(16))));
  };

  // acc[(r * mtw + i) * 4 + c]
  int64_t count = geo.accPerThread;
  SmallVector<Value> acc(count, g.cf32(0));
  auto [tBegin, tEnd] = pieceRange(tiles);

  // The b inputs of tile t (i64) for each of this lane's weight rows and
  // each piece of its vec k's (one group, or all of them in one), as
  // pairs: [row][piece].
  int64_t piece = bInputPiece(V);
  auto tileInputs = [&](Value t) {
    SmallVector<SmallVector<SmallVector<Value>>> in;
    if (op.getBInputs().empty())
      return in;
    Value k0 = g.add(g.mul(t, g.c64(tileK)), g.zext64(g.mul(kLane, g.c32(V))));
    for (Value row : wRows)
      in.push_back(loadBInputSpan(g.umin(g.add(nBlock, row), g.c32(N() - 1)),
                                  k0, V, true));
    return in;
  };

  /// The mma's on K tile in ring slot `slot`: 16 k's of each lane at a
  /// time (16 * eb bytes of each weight row, 32 of each activation row).
  auto multiply = [&](Value slot, ValueRange iters,
                      ArrayRef<SmallVector<SmallVector<Value>>> in) {
    SmallVector<Value> a(iters.begin(), iters.end());
    Value stage = g.gep(smem, g.zext64(g.mul(slot, g.c32(geo.stageBytes))));
    auto loadPieces = [&](Value row, int64_t rowBytes, int64_t laneBytes,
                          int64_t firstPiece, int64_t n, int64_t tileOffset) {
      SmallVector<Value> words;
      for (int64_t q = firstPiece; q < firstPiece + n; ++q) {
        Value off = laneOffset(row, rowBytes, laneBytes, q, tileOffset);
        Raw raw = loadRaw(g.gep(stage, g.zext64(off)), 16, false);
        words.append(raw.words.begin(), raw.words.end());
      }
      return words;
    };
    // An i4 lane's 16 k's are 8 bytes: each 16-byte piece serves two q's.
    int64_t laneBytes = c.weightBytes(V);
    SmallVector<SmallVector<Value>> w;
    for (int64_t q = 0; q < V / 16; ++q) {
      SmallVector<SmallVector<Value>> x;
      if (c.b != DType::I4) {
        w.clear();
        for (Value row : wRows)
          w.push_back(loadPieces(row, wRowBytes, laneBytes, q * eb, eb, 0));
      } else if (q % 2 == 0) {
        w.clear();
        for (Value row : wRows)
          w.push_back(loadPieces(row, wRowBytes, laneBytes, q / 2, 1, 0));
      }
      for (Value row : xRows)
        x.push_back(
            loadPieces(row, xRowBytes, V * ea, q * 2, 2, geo.weightTileBytes));
      // This q's words of each weight row.
      auto words = [&](int64_t row) -> ArrayRef<Value> {
        ArrayRef<Value> all = w[row];
        return c.b == DType::I4 ? all.slice(2 * (q % 2), 2) : all;
      };
      for (int64_t j = 0; j < 4; ++j) {
        SmallVector<SmallVector<Value, 4>> afrag;
        auto inputs = [&](int64_t row) -> ArrayRef<Value> {
          return in.empty()
                     ? ArrayRef<Value>()
                     : ArrayRef<Value>(in[row][(16 * q + 4 * j) / piece]);
        };
        for (int64_t r = 0; r < R; ++r)
          afrag.push_back(weightFragment(words(2 * r), words(2 * r + 1), j,
                                         inputs(2 * r), inputs(2 * r + 1)));
        for (int64_t i = 0; i < mtw; ++i)
          for (int64_t r = 0; r < R; ++r)
            mma(afrag[r], activationPairs(x[i], j),
                MutableArrayRef<Value>(a).slice((r * mtw + i) * 4, 4), f16);
      }
    }
    return a;
  };

  // Prologue: the first stages - 1 tiles.
  for (int64_t st = 0; st + 1 < s.stages; ++st) {
    Value t = g.add(tBegin, g.c64(st));
    g.ifThen(g.cmp(Pred::ult, t, tEnd), [&] { issue(t, g.c32(st)); });
    commit();
  }
  acc = g.forLoop(
      tBegin, tEnd, g.c64(1), acc,
      [&](Value t, ValueRange iters) -> SmallVector<Value> {
        // Its b inputs' loads overlap the wait.
        auto in = tileInputs(t);
        // Tile t has landed (at most stages - 2 younger groups pending)
        // and every warp is done with tile t - 1's slot.
        NVVM::CpAsyncWaitGroupOp::create(
            g.b, g.loc, g.b.getI32IntegerAttr(int32_t(s.stages - 2)));
        g.barrier();
        Value rel = g.sub(t, tBegin);
        Value next = g.add(t, g.c64(s.stages - 1));
        g.ifThen(g.cmp(Pred::ult, next, tEnd), [&] {
          Value slot = g.urem(g.add(rel, g.c64(s.stages - 1)), g.c64(s.stages));
          issue(next, g.trunc(g.i32, slot));
        });
        commit();
        return multiply(g.trunc(g.i32, g.urem(rel, g.c64(s.stages))), iters,
                        in);
      });

  Value nWarp = g.add(nBlock, wRow0), mWarp = g.add(m0, xRow0);
  deliverMma(acc, geo.warpsN * s.mwarps,
             g.add(g.mul(wm, g.c32(geo.warpsN)), wn), mWarp, nWarp, mtw);
}
