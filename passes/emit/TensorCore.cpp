//===- TensorCore.cpp - What the tensor-core kinds share ------------------===//
//
// mma.sync m16n8k16 and its operands, for the mma and tiled kinds: the int8
// weight's dequantization into bf16x2 / f16x2 words, the weight (A)
// fragments, the accumulators' outputs, and their sum over the warps that
// split K. Contract.h describes the layout.
//
//===----------------------------------------------------------------------===//
#include "passes/emit/Contract.h"

#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::emit;
using llvm::SmallVector;

std::pair<Value, Value> TensorCoreEmitter::dequantPairs(Value word, bool f16) {
  if (!opts.fastDequant) {
    // One cvt per element, for comparison with the byte-permute path.
    Type half = f16 ? g.b.getF16Type() : g.b.getBF16Type();
    Value h[4];
    for (unsigned j = 0; j < 4; ++j) {
      Value byte = g.trunc(g.i8, j ? g.lshr(word, g.c32(8 * j)) : word);
      Value f = arith::SIToFPOp::create(g.b, g.loc, g.f32, byte);
      Value t = arith::TruncFOp::create(g.b, g.loc, half, f);
      h[j] = arith::ExtUIOp::create(g.b, g.loc, g.i32, g.bitcast(g.i16, t));
    }
    auto pack = [&](Value lo, Value hi) {
      return arith::OrIOp::create(g.b, g.loc, lo, g.shl(hi, g.c32(16)))
          .getResult();
    };
    return {pack(h[0], h[1]), pack(h[2], h[3])};
  }
  if (f16) {
    Value x = g.bxor(word, g.c32(int32_t(0x80808080u)));
    Value magic = g.c32(0x64646464);
    auto half2 = VectorType::get({2}, g.b.getF16Type());
    Value bias = LLVM::ConstantOp::create(
        g.b, g.loc, half2,
        DenseElementsAttr::get(
            half2, llvm::ArrayRef<Attribute>{g.b.getF16FloatAttr(1152.0),
                                             g.b.getF16FloatAttr(1152.0)}));
    auto sub = [&](Value v) {
      Value h = LLVM::BitcastOp::create(g.b, g.loc, half2, v);
      Value d = LLVM::FSubOp::create(g.b, g.loc, h, bias);
      return LLVM::BitcastOp::create(g.b, g.loc, g.i32, d).getResult();
    };
    return {sub(g.prmt(x, magic, 0x4140)), sub(g.prmt(x, magic, 0x4342))};
  }
  return {bf16Pair(word, 0, 1), bf16Pair(word, 2, 3)};
}

// Byte b of the pair goes under the bf16 exponent of 128 (0x43): each half
// 0x43bb. Its low 7 bits are then mantissa bits worth 0..127 and its sign
// bit the exponent's lowest, so masking gives 128 + (b & 127) and, from the
// sign alone, 128 or 256; their difference is b, exact in bf16 as every
// operand and the result are. (The f32 magic 2^23 took 4 permutes, 4
// subtractions and 2 more permutes per four bytes, and an xor for the sign;
// this takes 2 permutes, 4 masks and 2 bf16x2 fma's.)
Value TensorCoreEmitter::bf16Pair(Value src, unsigned lo, unsigned hi) {
  Value p = g.prmt(src, g.c32(0x43434343), lo | 0x40 | hi << 8 | 0x4000);
  Value mag = g.band(p, g.c32(int32_t(0xFF7FFF7Fu)));
  Value off = g.band(p, g.c32(int32_t(0xFF80FF80u)));
  return g
      .inlinePtx(g.i32, "fma.rn.bf16x2 $0, $1, $2, $3;", "=r,r,r,r",
                 {off, g.c32(int32_t(0xBF80BF80u)), mag},
                 /*sideEffects=*/false)
      .front();
}

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

SmallVector<Value, 4>
TensorCoreEmitter::weightFragment(ArrayRef<Value> lo, ArrayRef<Value> hi,
                                  int64_t j, bool quantized, bool f16) {
  Value a0, a1, a2, a3;
  if (quantized) {
    std::tie(a0, a2) = dequantPairs(lo[j], f16);
    std::tie(a1, a3) = dequantPairs(hi[j], f16);
  } else {
    a0 = lo[2 * j];
    a2 = lo[2 * j + 1];
    a1 = hi[2 * j];
    a3 = hi[2 * j + 1];
  }
  return {a0, a1, a2, a3};
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
  // Column 2 r + h: weight row g (+ 8 if h) of 16-row tile r.
  SmallVector<Value> cols;
  for (int64_t r = 0; r < count / (4 * mt); ++r)
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
