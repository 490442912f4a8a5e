//===- Simt.cpp - The simt contraction kind -------------------------------===//
//
// Contractions on CUDA cores.
//
// Weight stored [N, K] (the linear layout):
//   - warp w of a block owns `rows` weight rows (output columns) and K piece
//     w / warpsN; lane l of it loads `vec` bytes of each row at K offset
//     (chunk * 32 + l) * elemsPerLoad: one warp reads 32 * vec contiguous
//     bytes of a row per step, `unroll` steps issued before the first use;
//   - each element is converted by the body's chains (int8: byte permute
//     against the exponent of 2^23, then one subtraction) and accumulated in
//     f32 (two partial sums per output to shorten the FMA chains); an int4
//     weight, or one dequantized with group-wise b inputs, is converted and
//     dequantized on pairs of A's 16-bit type (Dequant.cpp) and the pairs
//     split into f32, or one f32 element at a time where the body does not
//     compute on pairs;
//   - lanes reduce with butterfly shuffles; warps splitting K meet in shared
//     memory; blocks splitting K add into a zeroed f32 workspace and the last
//     block to arrive runs the epilogue and re-zeroes it;
//   - the epilogue runs on one lane per output and stores the result;
//   - with siblings (more weights of the same activations) a warp owns its
//     `rows` outputs' rows of every weight, and each output's epilogue gets
//     one sum per weight.
// Weight stored [K, N] (the matmul layout): each thread owns `rows` vectors
// of `vec` bytes along N and walks K; no shuffles.
//
//===----------------------------------------------------------------------===//
#include "passes/emit/Contract.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::emit;
using namespace mtc::kernel;
using llvm::SmallVector;
using Pred = arith::CmpIPredicate;

namespace {

class SimtEmitter : public ContractEmitter {
public:
  using ContractEmitter::ContractEmitter;

private:
  void emitBody() override {
    if (c.bTransposed)
      emitKN();
    else
      emitNK();
  }

  void emitNK();
  void emitKN();

  /// `count` consecutive A elements of row `row` (i32; its pointer `base`)
  /// from element `k` (i64), through the prologue and converted to f32.
  SmallVector<Value> aValues(Value base, Value row, Value k, int64_t count);
  /// The `count` elements of `raw` (row n of weight w, from element k),
  /// through the body's weight side to f32.
  SmallVector<Value> weightValues(const Raw &raw, Value n, Value k,
                                  int64_t count, unsigned w);
  /// Element k (i64) of the row at `row` (row index n of weight w) as an
  /// f32.
  Value weightScalar(Value row, Value n, Value k, unsigned w);
  /// The weight is a float, or an int8 with nothing but its conversion: the
  /// body's chain as the other CUDA-core paths convert it (convertAll).
  bool plainChain() {
    return !isInteger(c.b) || (c.b == DType::I8 && op.getBInputs().empty());
  }
  /// A element k (i64) of the row at `base`; through the prologue (row
  /// index `row`, i32) where there is one.
  Value aScalar(Value base, Value k, Value row = Value());
};

} // namespace

std::unique_ptr<ContractEmitter>
emit::createSimtEmitter(OpBuilder &b, ContractOp op, StringRef name,
                        const EmitOptions &opts) {
  return std::make_unique<SimtEmitter>(b, op, name, opts);
}

//===----------------------------------------------------------------------===//
// Weight stored [N, K]
//===----------------------------------------------------------------------===//

void SimtEmitter::emitNK() {
  int64_t epl = geo.elemsPerLoad, chunk = geo.chunk;
  int64_t chunks = K() / chunk, tailStart = chunks * chunk;
  // The warp's weight rows: its `rows` outputs' rows of each weight, weight
  // by weight (row h * outRows + r of weight h's output r); below, `rows`
  // counts them all.
  int64_t outRows = s.rows, rows = outRows * c.weights, mt = s.mtile;
  Value n0 =
      g.add(g.mul(bx, g.c32(geo.colsPerBlock)), g.mul(wn, g.c32(outRows)));
  SmallVector<Value> bRow, bN, aRow, aRowIdx;
  for (Value w : weights)
    for (int64_t r = 0; r < outRows; ++r) {
      Value nr = g.umin(g.add(n0, g.c32(r)), g.c32(N() - 1));
      bN.push_back(nr);
      bRow.push_back(g.gep(w, g.mul(g.zext64(nr), g.c64(c.weightBytes(K())))));
    }
  for (int64_t i = 0; i < mt; ++i) {
    aRowIdx.push_back(clampedRow(i));
    aRow.push_back(aBase(aRowIdx.back()));
  }
  if (op.hasRowStatistic())
    deriveRowStatistics(aRow, aRowIdx);
  Value laneElems = g.mul(g.zext64(lane), g.c64(epl));

  // Two partial sums per output: acc[(i * rows + r) * 2 + parity].
  SmallVector<Value> acc(mt * rows * 2, g.cf32(0));
  auto [cBegin, cEnd] = pieceRange(chunks);

  auto step = [&](Value firstChunk, int64_t count,
                  ValueRange iters) -> SmallVector<Value> {
    SmallVector<Value> a(iters.begin(), iters.end());
    SmallVector<SmallVector<Raw>> braw(count);
    SmallVector<Value> kBase(count);
    for (int64_t u = 0; u < count; ++u) {
      Value k =
          g.add(g.mul(g.add(firstChunk, g.c64(u)), g.c64(chunk)), laneElems);
      kBase[u] = k;
      for (int64_t r = 0; r < rows; ++r)
        braw[u].push_back(loadStream(g.gep(bRow[r], weightOffset(k)), s.vec));
    }
    for (int64_t u = 0; u < count; ++u) {
      SmallVector<SmallVector<Value>> av;
      for (int64_t i = 0; i < mt; ++i)
        av.push_back(aValues(aRow[i], aRowIdx[i], kBase[u], epl));
      for (int64_t r = 0; r < rows; ++r) {
        SmallVector<Value> bv = weightValues(braw[u][r], bN[r], kBase[u], epl,
                                             unsigned(r / outRows));
        for (int64_t e = 0; e < epl; ++e)
          for (int64_t i = 0; i < mt; ++i) {
            Value &slot = a[(i * rows + r) * 2 + (e & 1)];
            slot = g.fma(av[i][e], bv[e], slot);
          }
      }
    }
    return a;
  };

  acc = unrolledLoop(cBegin, cEnd, stepsInFlight(chunks), acc, step);
  // K % chunk leftover elements, one a lane per round of 32: piece p takes
  // rounds p, p + pieces, ... Straight-line code, so a lane's loads go out
  // together. (A loop on the last piece waited a memory latency per round,
  // 12 rounds at K = 4992.)
  if (int64_t tail = K() - tailStart) {
    int64_t rounds = (tail + 31) / 32;
    int64_t mine = (rounds + geo.pieces - 1) / geo.pieces;
    for (int64_t t = 0; t < mine; ++t) {
      Value round = g.add(g.zext64(piece), g.c64(t * geo.pieces));
      Value k = g.add(g.add(g.c64(tailStart), g.mul(round, g.c64(32))),
                      g.zext64(lane));
      Value valid = g.cmp(Pred::ult, k, g.c64(K()));
      Value kc = g.umin(k, g.c64(K() - 1));
      for (int64_t r = 0; r < rows; ++r) {
        Value bv = weightScalar(bRow[r], bN[r], kc, unsigned(r / outRows));
        for (int64_t i = 0; i < mt; ++i) {
          Value av = aScalar(aRow[i], kc, aRowIdx[i]);
          Value &slot = acc[(i * rows + r) * 2 + (t & 1)];
          slot = g.select(valid, g.fma(av, bv, slot), slot);
        }
      }
    }
  }

  // Sum t = i * rows + row (every lane has it after the butterfly).
  int64_t sumsPerWarp = mt * rows;
  SmallVector<Value> total;
  for (int64_t t = 0; t < sumsPerWarp; ++t)
    total.push_back(warpSum(g.fadd(acc[2 * t], acc[2 * t + 1])));

  // Output j = i * outRows + r belongs to lane j % 32 of the K-piece-0
  // warp; its sum of weight h is sum sumOf(j, h).
  auto mOf = [&](int64_t j) { return g.add(m0, g.c32(j / outRows)); };
  auto nOf = [&](int64_t j) { return g.add(n0, g.c32(j % outRows)); };
  auto sumOf = [&](int64_t j, int64_t h) {
    return j / outRows * rows + h * outRows + j % outRows;
  };
  auto isOwnerLane = [&](int64_t j) {
    return g.cmp(Pred::eq, lane, g.c32(j % 32));
  };
  int64_t outs = mt * outRows;
  // With pairs (c.pairs), output j's partner column is output j xor 1 of
  // the same warp (rows is even: checkContractSchedule).
  if (s.kwarps == 1) {
    for (int64_t j = 0; j < outs; ++j)
      g.ifThen(isOwnerLane(j), [&] {
        SmallVector<Value> sums, partner;
        for (int64_t h = 0; h < c.weights; ++h) {
          sums.push_back(total[sumOf(j, h)]);
          if (c.pairs)
            partner.push_back(total[sumOf(j ^ 1, h)]);
        }
        deliver(mOf(j), nOf(j), sums, partner);
      });
  } else {
    Value red = sharedArray("red", g.f32, geo.reduceFloats);
    auto slot = [&](Value w, int64_t t) {
      Value idx = g.add(
          g.mul(g.add(g.mul(w, g.c32(geo.warpsN)), wn), g.c32(sumsPerWarp)),
          g.c32(t));
      return sharedElem(red, idx, 4);
    };
    for (int64_t t = 0; t < sumsPerWarp; ++t)
      g.ifThen(isOwnerLane(t), [&] { g.store(total[t], slot(wk, t), 4); });
    g.barrier();
    Value firstPiece = g.cmp(Pred::eq, wk, g.c32(0));
    for (int64_t j = 0; j < outs; ++j)
      g.ifThen(g.andi(firstPiece, isOwnerLane(j)), [&] {
        auto sumOver = [&](int64_t t) {
          Value sum = g.cf32(0);
          for (int64_t w = 0; w < s.kwarps; ++w)
            sum = g.fadd(sum, g.load(g.f32, slot(g.c32(w), t), 4));
          return sum;
        };
        SmallVector<Value> sums, partner;
        for (int64_t h = 0; h < c.weights; ++h) {
          sums.push_back(sumOver(sumOf(j, h)));
          if (c.pairs)
            partner.push_back(sumOver(sumOf(j ^ 1, h)));
        }
        deliver(mOf(j), nOf(j), sums, partner);
      });
  }
  Value firstPiece = g.cmp(Pred::eq, wk, g.c32(0));
  splitKFinish(
      outs, [&](int64_t j) { return g.andi(firstPiece, isOwnerLane(j)); }, mOf,
      nOf);
}

SmallVector<Value> SimtEmitter::weightValues(const Raw &raw, Value n, Value k,
                                             int64_t count, unsigned w) {
  if (plainChain())
    return convertAll(raw, count, bElem, bChain);
  // The b inputs of each group the elements lie in.
  int64_t piece = bInputPiece(count);
  // Pairs: int8 bytes 2 p, 2 p + 1; i4 elements p, p + 4 of a word's eight,
  // which must lie in one group.
  bool i4 = c.b == DType::I4;
  int64_t perWord = i4 ? 8 : 4, pairSpan = i4 ? 8 : 2;
  bool pairs = weightPairs && count >= pairSpan && piece >= pairSpan;
  SmallVector<SmallVector<Value>> inputs =
      loadBInputSpan(n, k, count, pairs, w);
  SmallVector<Value> out(count);
  for (int64_t e = 0; e < count; ++e) {
    // The word holding element e (i4: eight a word; int8: four).
    Value word = wordOf(raw, unsigned(e / perWord) * 4);
    ArrayRef<Value> in =
        inputs.empty() ? ArrayRef<Value>() : ArrayRef<Value>(inputs[e / piece]);
    int64_t inWord = e % perWord;
    if (!pairs) {
      out[e] = dequantScalar(intScalar(word, unsigned(inWord)), in);
      continue;
    }
    // Element e starts pair p: i4 its first four of each eight, int8 its
    // even ones.
    if (i4 ? inWord >= 4 : inWord % 2)
      continue;
    auto [lo, hi] = unpackPair(
        dequantPair(intPair(word, unsigned(i4 ? inWord : inWord / 2)), in));
    out[e] = lo;
    out[e + (i4 ? 4 : 1)] = hi;
  }
  return out;
}

Value SimtEmitter::weightScalar(Value row, Value n, Value k, unsigned w) {
  if (plainChain()) {
    Value raw = g.load(g.b.getIntegerType(eb * 8),
                       g.gep(row, g.mul(k, g.c64(eb))), eb, true);
    return emitChain(bChain, asElement(raw, bElem));
  }
  Value word = arith::ExtUIOp::create(
      g.b, g.loc, g.i32, g.load(g.i8, g.gep(row, weightOffset(k)), 1, true));
  if (c.b == DType::I4) // the element's nibble, low
    word = g.lshr(word, g.trunc(g.i32, g.shl(g.band(k, g.c64(1)), g.c64(2))));
  return dequantScalar(intScalar(word, 0),
                       loadBInputs(n, k, /*asPairs=*/false, w));
}

SmallVector<Value> SimtEmitter::aValues(Value base, Value row, Value k,
                                        int64_t count) {
  if (c.aTransposed) {
    SmallVector<Value> out;
    for (int64_t e = 0; e < count; ++e)
      out.push_back(aScalar(base, g.add(k, g.c64(e))));
    return out;
  }
  Raw raw = loadRaw(g.gep(base, aOffset(k)), count * ea, true);
  return convertAll(applyPrologue(raw, row, k, count), count, aElem, aChain);
}

Value SimtEmitter::aScalar(Value base, Value k, Value row) {
  Value raw =
      g.load(g.b.getIntegerType(ea * 8), g.gep(base, aOffset(k)), ea, true);
  if (!aOps.empty()) {
    assert(row && "a prologue needs the row");
    Raw r;
    r.bytes = ea;
    if (ea < 4)
      r.narrow = raw;
    else
      r.words = {raw};
    r = applyPrologue(r, row, k, 1);
    raw = ea < 4 ? r.narrow : r.words[0];
  }
  return emitChain(aChain, asElement(raw, aElem));
}

//===----------------------------------------------------------------------===//
// Weight stored [K, N]
//===----------------------------------------------------------------------===//

void SimtEmitter::emitKN() {
  int64_t epl = geo.elemsPerLoad, rows = s.rows, mt = s.mtile;
  int64_t threadsN = geo.warpsN * 32;
  Value tn = g.add(g.mul(wn, g.c32(32)), lane);
  SmallVector<Value> col, bCol, aRow;
  for (int64_t r = 0; r < rows; ++r) {
    Value n = g.add(g.mul(bx, g.c32(geo.colsPerBlock)),
                    g.mul(g.add(g.c32(r * threadsN), tn), g.c32(epl)));
    col.push_back(n);
    Value clamped = g.umin(n, g.c32(N() - epl));
    bCol.push_back(g.gep(B, g.mul(g.zext64(clamped), g.c64(eb))));
  }
  for (int64_t i = 0; i < mt; ++i)
    aRow.push_back(aBase(clampedRow(i)));

  int64_t count = mt * rows * epl; // acc[(i * rows + r) * epl + e]
  SmallVector<Value> acc(count, g.cf32(0));
  auto [kBegin, kEnd] = pieceRange(K());

  auto step = [&](Value k0, int64_t n, ValueRange iters) {
    SmallVector<Value> a(iters.begin(), iters.end());
    SmallVector<SmallVector<Raw>> braw(n);
    for (int64_t u = 0; u < n; ++u) {
      Value rowOff = g.mul(g.add(k0, g.c64(u)), g.c64(N() * eb));
      for (int64_t r = 0; r < rows; ++r)
        braw[u].push_back(loadRaw(g.gep(bCol[r], rowOff), s.vec, true));
    }
    for (int64_t u = 0; u < n; ++u) {
      SmallVector<Value> av;
      for (int64_t i = 0; i < mt; ++i)
        av.push_back(aScalar(aRow[i], g.add(k0, g.c64(u))));
      for (int64_t r = 0; r < rows; ++r) {
        SmallVector<Value> bv = convertAll(braw[u][r], epl, bElem, bChain);
        for (int64_t e = 0; e < epl; ++e)
          for (int64_t i = 0; i < mt; ++i) {
            Value &slot = a[(i * rows + r) * epl + e];
            slot = g.fma(av[i], bv[e], slot);
          }
      }
    }
    return a;
  };
  acc = unrolledLoop(kBegin, kEnd, stepsInFlight(K()), acc, step);

  auto mOf = [&](int64_t j) { return g.add(m0, g.c32(j / (rows * epl))); };
  auto nOf = [&](int64_t j) {
    return g.add(col[(j / epl) % rows], g.c32(j % epl));
  };
  if (s.kwarps > 1) {
    Value red = sharedArray("red", g.f32, geo.reduceFloats);
    auto slot = [&](Value w, int64_t j) {
      return sharedElem(
          red,
          g.add(g.mul(g.add(g.mul(w, g.c32(count)), g.c32(j)), g.c32(threadsN)),
                tn),
          4);
    };
    deliverAll(count, acc, slot, mOf, nOf);
  } else {
    deliverAll(count, acc, nullptr, mOf, nOf);
  }
}
