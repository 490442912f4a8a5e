//===- Emitter.cpp - What every kernel emitter shares ---------------------===//
//
// The kernel function and its shared memory, vector loads and the
// conversion of their elements to f32 (int8 by byte permutes against the
// exponent of 2^23), and the scalar ops of kernel regions.
//
//===----------------------------------------------------------------------===//
#include "passes/emit/Emitter.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace mtc;
using namespace mtc::emit;
using llvm::SmallVector;

unsigned emit::bytesOf(Type t) { return (t.getIntOrFloatBitWidth() + 7) / 8; }

Type emit::elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

SmallVector<int64_t> emit::stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

//===----------------------------------------------------------------------===//
// The kernel function and its shared memory
//===----------------------------------------------------------------------===//

void Emitter::beginKernel(unsigned numParams, unsigned numReadOnly,
                          int64_t threads, int64_t maxRegs,
                          unsigned numTensorMaps) {
  MLIRContext *ctx = g.b.getContext();
  SmallVector<Type> params(numParams, g.globalPtr);
  auto generic = LLVM::LLVMPointerType::get(ctx);
  for (unsigned i = 0; i < numTensorMaps; ++i)
    params[i] = generic;
  auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), params);
  func = LLVM::LLVMFuncOp::create(g.b, g.loc, name, type);
  func->setAttr(NVVM::NVVMDialect::getKernelFuncAttrName(), g.b.getUnitAttr());
  func->setAttr(NVVM::NVVMDialect::getMaxntidAttrName(),
                g.b.getDenseI32ArrayAttr({int32_t(threads), 1, 1}));
  if (maxRegs)
    func->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                  g.b.getI32IntegerAttr(int32_t(maxRegs)));
  for (unsigned i = 0; i < numTensorMaps; ++i) {
    func.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(),
                    TypeAttr::get(LLVM::LLVMArrayType::get(g.i8, 128)));
    func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                    g.b.getI64IntegerAttr(64));
    func.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                    g.b.getUnitAttr());
  }
  for (unsigned i = numTensorMaps; i < numParams; ++i) {
    func.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                    g.b.getUnitAttr());
    func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                    g.b.getI64IntegerAttr(16));
    if (i < numReadOnly)
      func.setArgAttr(i, LLVM::LLVMDialect::getReadonlyAttrName(),
                      g.b.getUnitAttr());
  }
  Block *entry = func.addEntryBlock(g.b);
  g.b.setInsertionPointToStart(entry);
  if (opts.gridDependency) {
    // Wait for the previous kernel (its writes visible) before any load or
    // store; endKernel lets the next one launch.
    NVVM::GriddepcontrolOp::create(g.b, g.loc, NVVM::GridDepActionKind::wait);
  }
}

void Emitter::endKernel() {
  // Only after the last store: triggered at the start, the next kernel's
  // blocks took multiprocessors from ours while waiting on them (the
  // Llama-3-8B FFN graph at M = 2-16: 7-10 us lost; at the end, none).
  if (opts.gridDependency)
    NVVM::GriddepcontrolOp::create(g.b, g.loc,
                                   NVVM::GridDepActionKind::launch_dependents);
  LLVM::ReturnOp::create(g.b, g.loc, ValueRange{});
}

Value Emitter::sharedArray(StringRef suffix, Type type, int64_t count) {
  std::string sym = name + "_" + suffix.str();
  auto arrayType = LLVM::LLVMArrayType::get(type, count);
  {
    OpBuilder::InsertionGuard guard(g.b);
    g.b.setInsertionPoint(func);
    LLVM::GlobalOp::create(g.b, g.loc, arrayType, /*isConstant=*/false,
                           LLVM::Linkage::Internal, sym, Attribute(),
                           /*alignment=*/16, /*addrSpace=*/3);
  }
  return LLVM::AddressOfOp::create(g.b, g.loc, g.sharedPtr, sym);
}

Value Emitter::dynamicShared() {
  std::string sym = name + "_dyn";
  {
    OpBuilder::InsertionGuard guard(g.b);
    g.b.setInsertionPoint(func);
    LLVM::GlobalOp::create(g.b, g.loc, LLVM::LLVMArrayType::get(g.i8, 0),
                           /*isConstant=*/false, LLVM::Linkage::External, sym,
                           Attribute(), /*alignment=*/16,
                           /*addrSpace=*/3);
  }
  return LLVM::AddressOfOp::create(g.b, g.loc, g.sharedPtr, sym);
}

Value Emitter::sharedElem(Value base, Value index, unsigned elemBytes) {
  return g.gep(base, g.mul(g.zext64(index), g.c64(elemBytes)));
}

//===----------------------------------------------------------------------===//
// Loads and element extraction
//===----------------------------------------------------------------------===//

SmallVector<Value> Emitter::unrolledLoop(Value begin, Value end, int64_t unroll,
                                         ValueRange init, Step step) {
  Value groups = g.udiv(g.sub(end, begin), g.c64(unroll));
  SmallVector<Value> acc = g.forLoop(
      g.c64(0), groups, g.c64(1), init, [&](Value iv, ValueRange iters) {
        return step(g.add(begin, g.mul(iv, g.c64(unroll))), unroll, iters);
      });
  return remainderSteps(begin, end, unroll, groups, acc, step);
}

SmallVector<Value> Emitter::remainderSteps(Value begin, Value end,
                                           int64_t unroll, Value groups,
                                           ValueRange acc, Step step) {
  if (unroll == 1)
    return SmallVector<Value>(acc.begin(), acc.end());
  return g.forLoop(
      g.add(begin, g.mul(groups, g.c64(unroll))), end, g.c64(1), acc,
      [&](Value iv, ValueRange iters) { return step(iv, 1, iters); });
}

SmallVector<Value> Emitter::pipelinedLoop(Value begin, Value end,
                                          int64_t unroll, ValueRange init,
                                          Load load, Compute compute) {
  using Pred = arith::CmpIPredicate;
  Value groups = g.udiv(g.sub(end, begin), g.c64(unroll));
  size_t n = init.size();
  auto firstOf = [&](Value group) {
    return g.add(begin, g.mul(group, g.c64(unroll)));
  };
  SmallVector<Value> acc = g.ifElse(
      g.cmp(Pred::ugt, groups, g.c64(0)), init.getTypes(),
      [&] {
        // Group 0's loads, then groups 1.. loaded one ahead of the group
        // that computes; the last computes after the loop.
        SmallVector<Value> carried(init.begin(), init.end());
        llvm::append_range(carried, load(begin, unroll));
        Value last = g.sub(groups, g.c64(1));
        carried = g.forLoop(
            g.c64(0), last, g.c64(1), carried, [&](Value iv, ValueRange iters) {
              Value first = firstOf(iv);
              SmallVector<Value> next =
                  load(g.add(first, g.c64(unroll)), unroll);
              SmallVector<Value> a = compute(
                  first, unroll, SmallVector<Value>(iters.drop_front(n)),
                  iters.take_front(n));
              llvm::append_range(a, next);
              return a;
            });
        ArrayRef<Value> out(carried);
        return compute(firstOf(last), unroll, out.drop_front(n),
                       ValueRange(out.take_front(n)));
      },
      [&] { return SmallVector<Value>(init.begin(), init.end()); });
  return remainderSteps(begin, end, unroll, groups, acc,
                        [&](Value first, int64_t n, ValueRange iters) {
                          SmallVector<Value> loaded = load(first, n);
                          return compute(first, n, loaded, iters);
                        });
}

SmallVector<Value> Emitter::unflatten(Value idx, ArrayRef<int64_t> shape) {
  SmallVector<Value> dims(shape.size());
  Value rest = idx;
  for (int t = int(shape.size()) - 1; t >= 0; --t) {
    dims[t] = t == 0 ? rest : g.urem(rest, g.c64(shape[t]));
    if (t > 0)
      rest = g.udiv(rest, g.c64(shape[t]));
  }
  return dims;
}

Value Emitter::mapOffset(AffineMap map, ArrayRef<int64_t> shape,
                         ArrayRef<Value> dims) {
  SmallVector<int64_t> strides = stridesOf(shape);
  Value off = g.c64(0);
  for (auto [t, expr] : llvm::enumerate(map.getResults())) {
    kernel::MapResult r = kernel::decodeMapResult(expr);
    if (r.isZero())
      continue; // a broadcast dimension: index 0
    Value i = dims[r.dim];
    if (r.divisor > 1)
      i = g.udiv(i, g.c64(r.divisor));
    if (r.modulus)
      i = g.urem(i, g.c64(r.modulus));
    off = g.add(off, g.mul(i, g.c64(strides[t])));
  }
  return off;
}

Value Emitter::loadElement(Value base, Type t, Value off) {
  if (t.isInteger(4)) {
    Value byte = g.load(g.i8, g.gep(base, g.lshr(off, g.c64(1))), 1, true);
    Value shift = g.trunc(g.i8, g.shl(g.band(off, g.c64(1)), g.c64(2)));
    return g.trunc(t, g.lshr(byte, shift));
  }
  return g.load(t, g.gep(base, g.mul(off, g.c64(bytesOf(t)))), bytesOf(t),
                true);
}

Raw Emitter::loadRaw(Value ptr, unsigned bytes, bool invariant) {
  Raw r;
  r.bytes = bytes;
  if (bytes < 4) {
    r.narrow = g.load(g.b.getIntegerType(bytes * 8), ptr, bytes, invariant);
    return r;
  }
  for (unsigned off = 0; off < bytes; off += 16) {
    unsigned piece = std::min(16u, bytes - off);
    Value p = off ? g.gep(ptr, g.c64(off)) : ptr;
    if (piece == 4) {
      r.words.push_back(g.load(g.i32, p, 4, invariant));
      continue;
    }
    auto vt = VectorType::get({int64_t(piece / 4)}, g.i32);
    Value v = g.load(vt, p, piece, invariant);
    for (unsigned w = 0; w < piece / 4; ++w)
      r.words.push_back(
          LLVM::ExtractElementOp::create(g.b, g.loc, v, g.c32(w)));
  }
  return r;
}

Raw Emitter::loadStream(Value ptr, unsigned bytes) {
  if (bytes < 4)
    return loadRaw(ptr, bytes, true);
  Raw r;
  r.bytes = bytes;
  for (unsigned off = 0; off < bytes; off += 16) {
    unsigned words = std::min(16u, bytes - off) / 4;
    Value p = off ? g.gep(ptr, g.c64(off)) : ptr;
    std::string text = "ld.global.nc.L1::evict_first";
    std::string outs, cons;
    for (unsigned w = 0; w < words; ++w) {
      outs += (w ? ",$" : "$") + std::to_string(w);
      cons += "=r,";
    }
    text += words == 1 ? ".u32 " + outs
                       : ".v" + std::to_string(words) + ".u32 {" + outs + "}";
    text += ", [$" + std::to_string(words) + "];";
    auto res = g.inlinePtx(SmallVector<Type>(words, g.i32), text, cons + "l",
                           {p}, /*sideEffects=*/false);
    r.words.append(res.begin(), res.end());
  }
  return r;
}

Value Emitter::wordOf(const Raw &r, unsigned byteOff) {
  if (r.bytes >= 4)
    return r.words[byteOff / 4];
  return arith::ExtUIOp::create(g.b, g.loc, g.i32, r.narrow);
}

Value Emitter::rawElement(const Raw &r, unsigned e, unsigned eb) {
  if (r.bytes < 4 && eb == r.bytes)
    return r.narrow;
  unsigned byteOff = e * eb;
  Value w = wordOf(r, byteOff);
  if (eb == 4)
    return w;
  unsigned shift = (byteOff % 4) * 8;
  if (shift)
    w = g.lshr(w, g.c32(shift));
  return g.trunc(g.b.getIntegerType(eb * 8), w);
}

bool Emitter::isChain(ArrayRef<Operation *> chain, Type from, Type to,
                      bool signedIntToFloat) {
  if (chain.size() != 1 || chain[0]->getOperand(0).getType() != from ||
      chain[0]->getResult(0).getType() != to)
    return false;
  return signedIntToFloat ? isa<arith::SIToFPOp>(chain[0])
                          : isa<arith::ExtFOp>(chain[0]);
}

SmallVector<Value> Emitter::convertAll(const Raw &r, unsigned count,
                                       Type elemType,
                                       ArrayRef<Operation *> chain) {
  SmallVector<Value> out;
  unsigned eb = bytesOf(elemType);
  Type f32 = g.f32;
  if (opts.fastDequant && elemType.isInteger(8) &&
      isChain(chain, elemType, f32, /*signedIntToFloat=*/true)) {
    // (b ^ 0x80) is b + 128 as an unsigned byte; placed in the low byte of
    // 2^23 (0x4B000000) it makes the float 2^23 + b + 128 exactly.
    Value magic = g.c32(0x4B000000);
    Value bias = g.cf32(8388608.0 + 128.0);
    Value flip = g.c32(int32_t(0x80808080u));
    for (unsigned w = 0; w * 4 < count; ++w) {
      Value word = g.bxor(wordOf(r, w * 4), flip);
      for (unsigned j = 0; j < 4 && w * 4 + j < count; ++j) {
        Value bits = g.prmt(word, magic, 0x7650u | j);
        out.push_back(g.fsub(g.bitcast(f32, bits), bias));
      }
    }
    return out;
  }
  if (elemType.isBF16() && isChain(chain, elemType, f32, false)) {
    // A bf16 is the top half of an f32.
    Value hiMask = g.c32(int32_t(0xFFFF0000u));
    for (unsigned e = 0; e < count; ++e) {
      Value w = wordOf(r, e * 2);
      Value bits =
          (e % 2 == 0 || r.bytes < 4) ? g.shl(w, g.c32(16)) : g.band(w, hiMask);
      out.push_back(g.bitcast(f32, bits));
    }
    return out;
  }
  for (unsigned e = 0; e < count; ++e)
    out.push_back(emitChain(chain, asElement(rawElement(r, e, eb), elemType)));
  return out;
}

//===----------------------------------------------------------------------===//
// Scalar region ops
//===----------------------------------------------------------------------===//

Value Emitter::toF32(Value v) {
  if (v.getType() == g.f32)
    return v;
  return arith::ExtFOp::create(g.b, g.loc, g.f32, v);
}

Value Emitter::fromF32(Value v, Type t) {
  if (t == g.f32)
    return v;
  return arith::TruncFOp::create(g.b, g.loc, t, v);
}

Value Emitter::emitScalarOp(Operation *op, IRMapping &m) {
  if (auto cvt = dyn_cast<arith::FPToSIOp>(op)) {
    // Saturating, NaN -> 0 (mtc's convert semantics).
    Value x = toF32(m.lookup(cvt.getIn()));
    unsigned bits = cvt.getType().getIntOrFloatBitWidth();
    Value lo = g.cf32(-std::ldexp(1.0, bits - 1));
    Value hi = g.cf32(std::ldexp(1.0, bits - 1) - 1);
    Value isNan =
        arith::CmpFOp::create(g.b, g.loc, arith::CmpFPredicate::UNO, x, x);
    Value c = arith::MinimumFOp::create(
        g.b, g.loc, arith::MaximumFOp::create(g.b, g.loc, x, lo), hi);
    c = g.select(isNan, g.cf32(0), c);
    return arith::FPToSIOp::create(g.b, g.loc, cvt.getType(), c);
  }
  if (auto exp = dyn_cast<math::ExpOp>(op)) {
    // exp(x) = 2^(x log2 e), with the hardware's ex2.approx.
    Value x = toF32(m.lookup(exp.getOperand()));
    Value scaled =
        arith::MulFOp::create(g.b, g.loc, x, g.cf32(1.4426950408889634));
    Value r =
        LLVM::CallIntrinsicOp::create(
            g.b, g.loc, g.f32, g.b.getStringAttr("llvm.nvvm.ex2.approx.f32"),
            ValueRange{scaled})
            .getResult(0);
    return fromF32(r, exp.getType());
  }
  if (auto rs = dyn_cast<math::RsqrtOp>(op)) {
    // 1 / sqrt(x): sqrt.rn and div.rn, each correctly rounded (a row's
    // statistic, once per row).
    Value x = toF32(m.lookup(rs.getOperand()));
    Value root = LLVM::SqrtOp::create(g.b, g.loc, x);
    return fromF32(arith::DivFOp::create(g.b, g.loc, g.cf32(1), root),
                   rs.getType());
  }
  auto div = dyn_cast<arith::DivFOp>(op);
  if (fastDivide && div && div.getType().isF32()) {
    // The epilogue's silu divides once per output, whose inputs and results
    // are 16-bit: 2 ulp of f32 are far below their rounding.
    return LLVM::CallIntrinsicOp::create(
               g.b, g.loc, g.f32, g.b.getStringAttr("llvm.nvvm.div.full"),
               ValueRange{m.lookup(div.getLhs()), m.lookup(div.getRhs())})
        .getResult(0);
  }
  Operation *clone = g.b.clone(*op, m);
  return clone->getResult(0);
}

Value Emitter::emitChain(ArrayRef<Operation *> chain, Value v) {
  for (Operation *op : chain) {
    IRMapping m;
    m.map(op->getOperand(0), v);
    v = emitScalarOp(op, m);
  }
  return v;
}

Value Emitter::emitBlock(Block &block, ValueRange args,
                         const Position *position) {
  IRMapping m;
  m.map(block.getArguments(), args);
  // The partner's values: built as far as the last kernel.partner needs.
  IRMapping partner;
  bool partnerArgs = false;
  Block::iterator partnerDone = block.begin();
  // kernel.column, or (at the partner) a kernel.partner, whose partner is
  // the element itself: `other` is the other side's mapping.
  auto emitPositional = [&](Operation &op, IRMapping &other,
                            bool atPartner) -> Value {
    assert(position && "a region that reads its position needs one");
    if (isa<kernel::ColumnOp>(op))
      return atPartner ? g.bxor(position->column, g.c32(1)) : position->column;
    return other.lookup(op.getOperand(0));
  };
  for (Operation &op : block.without_terminator()) {
    if (auto p = dyn_cast<kernel::PartnerOp>(op)) {
      assert(position && "a region that reads its position needs one");
      if (!std::exchange(partnerArgs, true))
        for (auto [i, arg] : llvm::enumerate(block.getArguments()))
          partner.map(arg, position->partnerArg(unsigned(i)));
      for (; &*partnerDone != &op; ++partnerDone) {
        Operation &prev = *partnerDone;
        partner.map(prev.getResult(0),
                    isa<kernel::ColumnOp, kernel::PartnerOp>(prev)
                        ? emitPositional(prev, m, true)
                        : emitScalarOp(&prev, partner));
      }
      m.map(op.getResult(0), partner.lookup(p.getValue()));
      continue;
    }
    m.map(op.getResult(0), isa<kernel::ColumnOp>(op)
                               ? emitPositional(op, partner, false)
                               : emitScalarOp(&op, m));
  }
  return m.lookupOrDefault(
      cast<kernel::YieldOp>(block.getTerminator()).getValue());
}

Value Emitter::warpSum(Value v) {
  for (int mask = 16; mask >= 1; mask /= 2)
    v = g.fadd(v, g.shflXor(v, mask));
  return v;
}
