//===- Dequant.cpp - The integer weight's conversion and dequantization ---===//
//
// What every contraction kind does with an integer weight's elements: turn
// them into A's 16-bit type without cvt (byte permutes and masks under a
// magic exponent, then one fma.rn on the pair), and run the weight's side
// of the body (its dequantization with the group-wise b inputs) on those
// pairs, one fma.rn per step (WeightSide.h says when that is exact), or on
// single f32 elements where it is not.
//
// i4 pairs: a word holds elements 0-7, element e in bits 4 e .. 4 e + 3.
// Shifted right by 4 p, its bits 0-3 and 16-19 hold elements p and p + 4;
// one lop3 keeps those, flips their sign bits and sets the exponent of 128
// (bf16 0x43.., whose 7 mantissa bits hold a nibble only at bits 0-3; f16
// 1024, 0x64..): the halves are 128 + u, u = s + 8 the nibble as unsigned,
// and one fma (+ -136; f16 + -1032) leaves the pair {s_p, s_p+4}, exact. A
// word's four pairs are (0, 4), (1, 5), (2, 6), (3, 7): the kinds that
// take the weight's k's in any order (simt, mma, tiled) pair the
// activations so too. wgmma, which reads the activations in their order,
// takes the pair of k's 2 t, 2 t + 1 from one byte: an integer multiply by
// 0x1001 copies the byte 12 bits up, its high nibble to bits 16-19
// (intPairOfByte).
//
//===----------------------------------------------------------------------===//
#include "passes/emit/Contract.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::emit;
using namespace mtc::kernel;
using llvm::SmallVector;

namespace {
/// lop3's table for (b & (a ^ c)) | (~b & c): where b is set, a flipped by
/// c; elsewhere c.
constexpr unsigned kMaskFlipSet = 0x6A;
} // namespace

Value ContractEmitter::weightOffset(Value k) {
  if (c.b == DType::I4)
    return g.lshr(k, g.c64(1));
  return g.mul(k, g.c64(eb));
}

SmallVector<Value> ContractEmitter::loadBInputs(Value n, Value k, bool asPairs,
                                                unsigned w) {
  SmallVector<Value> out;
  for (auto [j, in] : llvm::enumerate(op.getBInputs())) {
    auto type = cast<RankedTensorType>(in.getType());
    AffineMap map = cast<AffineMapAttr>((*op.getBMaps())[j]).getValue();
    SmallVector<int64_t> strides = stridesOf(type.getShape());
    Value off = g.c64(0);
    for (auto [t, expr] : llvm::enumerate(map.getResults())) {
      MapResult r = decodeMapResult(expr);
      if (r.isZero())
        continue;
      Value i = r.dim == 0 ? g.zext64(n) : g.udiv(k, g.c64(r.divisor));
      off = g.add(off, g.mul(i, g.c64(strides[t])));
    }
    Type t = type.getElementType();
    unsigned bytes = bytesOf(t);
    Value ptr = g.gep(BI[w][j], g.mul(off, g.c64(bytes)));
    if (!asPairs) {
      out.push_back(g.load(t, ptr, bytes, true));
      continue;
    }
    Value h =
        arith::ExtUIOp::create(g.b, g.loc, g.i32, g.load(g.i16, ptr, 2, true));
    out.push_back(g.prmt(h, h, 0x1010));
  }
  return out;
}

SmallVector<SmallVector<Value>>
ContractEmitter::loadBInputSpan(Value n, Value k, int64_t span, bool asPairs,
                                unsigned w) {
  SmallVector<SmallVector<Value>> pieces;
  if (op.getBInputs().empty())
    return pieces;
  int64_t piece = bInputPiece(span);
  for (int64_t q = 0; q < span / piece; ++q)
    pieces.push_back(loadBInputs(n, g.add(k, g.c64(q * piece)), asPairs, w));
  return pieces;
}

static Value lop3(GpuBuilder &g, Value a, uint32_t b, uint32_t c,
                  unsigned table) {
  return g
      .inlinePtx(g.i32,
                 "lop3.b32 $0, $1, $2, $3, " + std::to_string(table) + ";",
                 "=r,r,r,r", {a, g.c32(int32_t(b)), g.c32(int32_t(c))},
                 /*sideEffects=*/false)
      .front();
}

static Value pairFma(GpuBuilder &g, bool f16, Value a, Value b, Value c) {
  return g
      .inlinePtx(g.i32,
                 std::string("fma.rn.") + (f16 ? "f16x2" : "bf16x2") +
                     " $0, $1, $2, $3;",
                 "=r,r,r,r", {a, b, c}, /*sideEffects=*/false)
      .front();
}

Value ContractEmitter::intPair(Value word, unsigned p) {
  bool f16 = aElem.isF16();
  if (c.b == DType::I8) {
    if (!f16 && opts.fastDequant)
      return bf16Pair(word, 2 * p, 2 * p + 1);
    auto pairs = dequantPairs(p == 0 ? word : g.prmt(word, word, 0x3232), f16);
    return pairs.first;
  }
  return nibblePair(p ? g.lshr(word, g.c32(4 * p)) : word);
}

Value ContractEmitter::intPairOfByte(Value byte) {
  return nibblePair(g.mul(byte, g.c32(0x1001)));
}

Value ContractEmitter::nibblePair(Value bits) {
  bool f16 = aElem.isF16();
  Value v = lop3(g, bits, 0x000F000Fu,
                 (f16 ? 0x64006400u : 0x43004300u) | 0x00080008u, kMaskFlipSet);
  // v + -(128 + 8) (f16: -(1024 + 8)) in each half.
  return pairFma(g, f16, v, g.c32(int32_t(f16 ? 0x3C003C00u : 0x3F803F80u)),
                 g.c32(int32_t(f16 ? 0xE408E408u : 0xC308C308u)));
}

std::pair<Value, Value> ContractEmitter::dequantPairs(Value word, bool f16) {
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
Value ContractEmitter::bf16Pair(Value src, unsigned lo, unsigned hi) {
  Value p = g.prmt(src, g.c32(0x43434343), lo | 0x40 | hi << 8 | 0x4000);
  Value mag = g.band(p, g.c32(int32_t(0xFF7FFF7Fu)));
  Value off = g.band(p, g.c32(int32_t(0xFF80FF80u)));
  return pairFma(g, /*f16=*/false, off, g.c32(int32_t(0xBF80BF80u)), mag);
}

Value ContractEmitter::dequantPair(Value converted, ArrayRef<Value> inputs) {
  // No b inputs, or the factored form's (applied to sums, not elements).
  if (inputs.empty())
    return converted;
  bool f16 = aElem.isF16();
  uint32_t one = f16 ? 0x3C003C00u : 0x3F803F80u;
  WeightPairBuilder build{
      [&](Operation *) { return converted; },
      [&](unsigned i) { return inputs[i]; },
      [&](Operation *inner, Value lhs, Value rhs) -> Value {
        if (isa<arith::MulFOp>(inner)) // a * b + (-0)
          return pairFma(g, f16, lhs, rhs, g.c32(int32_t(0x80008000u)));
        if (isa<arith::AddFOp>(inner)) // a * 1 + b
          return pairFma(g, f16, lhs, g.c32(int32_t(one)), rhs);
        // a - b: b * -1 + a
        return pairFma(g, f16, rhs, g.c32(int32_t(one | 0x80008000u)), lhs);
      }};
  Value r = walkWeightPairs(op.getBody().front(), aElem, build);
  assert(r && "the schedule's legality checked the weight side on pairs");
  return r;
}

Value ContractEmitter::intScalar(Value word, unsigned e) {
  // Under 2^23 (0x4B000000): 2^23 + u, u the element plus 8 (i4) or 128
  // (int8) as unsigned; minus 2^23 + 8 (+ 128) it is the element.
  bool i4 = c.b == DType::I4;
  unsigned shift = i4 ? 4 * e : 8 * e;
  Value x = shift ? g.lshr(word, g.c32(shift)) : word;
  Value bits = lop3(g, x, i4 ? 0xFu : 0xFFu, 0x4B000000u | (i4 ? 0x8u : 0x80u),
                    kMaskFlipSet);
  return g.fsub(g.bitcast(g.f32, bits), g.cf32(8388608.0 + (i4 ? 8 : 128)));
}

Value ContractEmitter::dequantScalar(Value value, ArrayRef<Value> inputs) {
  Block &body = op.getBody().front();
  IRMapping m;
  for (auto [i, v] : llvm::enumerate(inputs))
    m.map(body.getArgument(2 + i), v);
  Value last = value;
  for (Operation *inner : op.getBOps()) {
    if (isa<arith::SIToFPOp>(inner)) {
      // Exact: the integer is in range of every float type.
      last = fromF32(value, inner->getResult(0).getType());
    } else {
      last = emitScalarOp(inner, m);
    }
    m.map(inner->getResult(0), last);
  }
  return toF32(last);
}

std::pair<Value, Value> ContractEmitter::unpackPair(Value pair) {
  if (aElem.isF16()) {
    auto half2 = VectorType::get({2}, g.b.getF16Type());
    Value h = LLVM::BitcastOp::create(g.b, g.loc, half2, pair);
    auto half = [&](unsigned i) {
      Value e = LLVM::ExtractElementOp::create(g.b, g.loc, h, g.c32(i));
      return toF32(e);
    };
    return {half(0), half(1)};
  }
  return {g.bitcast(g.f32, g.shl(pair, g.c32(16))),
          g.bitcast(g.f32, g.band(pair, g.c32(int32_t(0xFFFF0000u))))};
}
