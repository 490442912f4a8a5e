//===- TensorCore.cpp - What the tensor-core kinds share ------------------===//
//
// mma.sync m16n8k16 and its operands, for the mma and tiled kinds: the
// weight (A) fragments (integer weights converted into bf16x2 / f16x2
// words by Dequant.cpp), the accumulators' outputs, and their sum over the
// warps that split K. Contract.h describes the layout.
//
//===----------------------------------------------------------------------===//
#include "passes/emit/Contract.h"

#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::emit;
using llvm::SmallVector;

void TensorCoreEmitter::mma(ArrayRef<Value> a, ArrayRef<Value> bw,
                            MutableArrayRef<Value> acc, bool f16) {
  SmallVector<Value> operands(a.begin(), a.end());
  operands.append(bw.begin(), bw.end());
  operands.append(acc.begin(), acc.end());
  std::string asmText =
      std::string("mma.sync.aligned.m16n8k16.row.col.f32.") +
      (f16 ? "f16.f16" : "bf16.bf16") +
      ".f32 {$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};";
  SmallVector<Value> d = g.inlinePtx(SmallVector<Type>(4, g.f32), asmText,
                                     "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3",
                                     operands, /*sideEffects=*/false);
  llvm::copy(d, acc.begin());
}

SmallVector<Value, 4> TensorCoreEmitter::weightFragment(ArrayRef<Value> lo,
                                                        ArrayRef<Value> hi,
                                                        int64_t j,
                                                        ArrayRef<Value> loIn,
                                                        ArrayRef<Value> hiIn) {
  if (!quantized())
    return {lo[2 * j], hi[2 * j], lo[2 * j + 1], hi[2 * j + 1]};
  if (c.b == DType::I8 && op.getBInputs().empty()) {
    // Both pairs of word j at once (f16 shares their sign flip).
    bool f16 = aElem.isF16();
    auto [a0, a2] = dequantPairs(lo[j], f16);
    auto [a1, a3] = dequantPairs(hi[j], f16);
    return {a0, a1, a2, a3};
  }
  // int8: k's 4 j, 4 j + 1 (a0, a1) and 4 j + 2, 4 j + 3 (a2, a3), pairs
  // 0 and 1 of word j. i4: word j / 2 holds steps j and j + 1, step j
  // taking its pairs 2 (j % 2) and 2 (j % 2) + 1, k's (0, 4), (1, 5) or
  // (2, 6), (3, 7) of the word's eight (activationPairs matches them).
  bool i4 = c.b == DType::I4;
  int64_t w = i4 ? j / 2 : j;
  unsigned first = i4 ? unsigned(2 * (j % 2)) : 0;
  auto pair = [&](ArrayRef<Value> words, ArrayRef<Value> in, unsigned p) {
    return dequantPair(intPair(words[w], first + p), in);
  };
  return {pair(lo, loIn, 0), pair(hi, hiIn, 0), pair(lo, loIn, 1),
          pair(hi, hiIn, 1)};
}

SmallVector<Value, 2> TensorCoreEmitter::activationPairs(ArrayRef<Value> x,
                                                         int64_t j) {
  if (c.b != DType::I4)
    return {x[2 * j], x[2 * j + 1]};
  // Words 4 w .. 4 w + 3 hold k's (0, 1), (2, 3), (4, 5), (6, 7) of the
  // eight of word w of the weight; step 2 w + h takes k's (2 h, 2 h + 4)
  // and (2 h + 1, 2 h + 5).
  int64_t w = j / 2, h = j % 2;
  Value lo = x[4 * w + h], hi = x[4 * w + h + 2];
  return {g.prmt(lo, hi, 0x5410), g.prmt(lo, hi, 0x7632)};
}

Value TensorCoreEmitter::mmaOutputN(Value nWarp, int64_t j, int64_t mt) {
  int64_t r = j / (4 * mt), c = j % 4;
  return g.add(nWarp,
               g.add(g.lshr(lane, g.c32(2)), g.c32(16 * r + (c >= 2 ? 8 : 0))));
}

Value TensorCoreEmitter::mmaOutputM(Value mWarp, int64_t j, int64_t mt) {
  int64_t i = (j / 4) % mt, c = j % 4;
  return g.add(mWarp, g.add(g.mul(g.band(lane, g.c32(3)), g.c32(2)),
                            g.c32(8 * i + (c % 2))));
}

void TensorCoreEmitter::deliverMma(ArrayRef<Value> acc, int64_t slice,
                                   Value warpInSlice, Value mWarp, Value nWarp,
                                   int64_t mt) {
  int64_t count = acc.size();
  // Lane l holds weight rows l / 4 (+ 8, + 16 r): the partner column's
  // sums are lane l xor 4's.
  partnerLaneXor = 4;
  // Column 2 r + h: weight row g (+ 8 if h) of 16-row tile r (of the first
  // weight; each sibling's tile r has the same outputs).
  SmallVector<Value> cols;
  for (int64_t r = 0; r < count / c.weights / (4 * mt); ++r)
    for (int64_t h = 0; h < 2; ++h)
      cols.push_back(mmaOutputN(nWarp, r * mt * 4 + 2 * h, mt));
  auto nOf = [&](int64_t j) { return cols[2 * (j / (4 * mt)) + (j % 4 >= 2)]; };
  auto mOf = [&](int64_t j) { return mmaOutputM(mWarp, j, mt); };
  if (s.splitk == 1)
    preloadChannels(cols);
  // div.full.f32 where no split-K finish holds every total live: there its
  // freer schedule spills (tiled w4 r2 kw2 mt64 sk2 with silu: 10 bytes at
  // 255 registers).
  fastDivide = s.splitk == 1;
  llvm::scope_exit forget([&] { forgetChannels(); });
  if (s.kwarps == 1)
    return deliverAll(count, acc, nullptr, mOf, nOf);
  Value red = sharedArray("red", g.f32, geo.reduceFloats);
  auto slot = [&](Value w, int64_t j) {
    Value warpSlot = g.add(g.mul(w, g.c32(slice)), warpInSlice);
    Value idx = g.add(
        g.mul(g.add(g.mul(warpSlot, g.c32(count)), g.c32(j)), g.c32(32)), lane);
    return sharedElem(red, idx, 4);
  };
  deliverAll(count, acc, slot, mOf, nOf);
}
