//===- KernelEmitter.cpp - Kernel ops to GPU kernel functions --------------===//
//
// Emits one `llvm.func` GPU kernel per scheduled kernel op. The code is built
// from scf loops and branches, arith, llvm memory ops and nvvm intrinsics;
// mtc-lower-to-llvm then lowers scf/arith, and NVPTX does the rest.
//
// SIMT contraction, weight stored [N, K] (the linear layout):
//   - warp w of a block owns `rows` weight rows (output columns) and K piece
//     w / warpsN; lane l of it loads `vec` bytes of each row at K offset
//     (chunk * 32 + l) * elemsPerLoad: one warp reads 32 * vec contiguous
//     bytes of a row per step, `unroll` steps issued before the first use;
//   - each element is converted by the body's chains (int8: byte permute
//     against the exponent of 2^23, then one subtraction) and accumulated in
//     f32 (two partial sums per output to shorten the FMA chains);
//   - lanes reduce with butterfly shuffles; warps splitting K meet in shared
//     memory; blocks splitting K add into a zeroed f32 workspace and the last
//     block to arrive runs the epilogue and re-zeroes it;
//   - the epilogue runs on one lane per output and stores the result.
// SIMT contraction, weight stored [K, N] (the matmul layout): each thread
// owns `rows` vectors of `vec` bytes along N and walks K; no shuffles.
// Elementwise: each thread computes `vec` elements, a block-stride apart.
//
//===----------------------------------------------------------------------===//
#include "passes/KernelEmitter.h"

#include "dialects/Graph/GraphOps.h"
#include "dialects/Kernel/KernelOps.h"
#include "dialects/Kernel/Schedule.h"
#include "passes/GpuBuilder.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::kernel;
using llvm::SmallVector;
using Pred = arith::CmpIPredicate;

namespace {

/// Bytes loaded by one access: whole 32-bit words, or one narrower integer.
struct Raw {
  SmallVector<Value> words; // i32 (bytes >= 4)
  Value narrow;             // i8 / i16 (bytes < 4)
  unsigned bytes = 0;
};

unsigned bytesOf(Type t) { return (t.getIntOrFloatBitWidth() + 7) / 8; }

Type elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

/// Row-major strides of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

//===----------------------------------------------------------------------===//
// Shared emitter machinery
//===----------------------------------------------------------------------===//

class Emitter {
public:
  Emitter(OpBuilder &b, Location loc, ModuleOp module, StringRef name,
          const EmitOptions &opts)
      : g(b, loc), module(module), name(name.str()), opts(opts) {}

  GpuBuilder g;
  ModuleOp module;
  std::string name;
  EmitOptions opts;
  LLVM::LLVMFuncOp func;

  /// Creates the kernel function and positions the builder in its body.
  void beginKernel(unsigned numParams, unsigned numReadOnly, int64_t threads,
                   int64_t maxRegs) {
    MLIRContext *ctx = g.b.getContext();
    SmallVector<Type> params(numParams, g.globalPtr);
    auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                            params);
    func = LLVM::LLVMFuncOp::create(g.b, g.loc, name, type);
    func->setAttr(NVVM::NVVMDialect::getKernelFuncAttrName(),
                  g.b.getUnitAttr());
    func->setAttr(NVVM::NVVMDialect::getMaxntidAttrName(),
                  g.b.getDenseI32ArrayAttr({int32_t(threads), 1, 1}));
    if (maxRegs)
      func->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                    g.b.getI32IntegerAttr(int32_t(maxRegs)));
    for (unsigned i = 0; i < numParams; ++i) {
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
  }

  void endKernel() { LLVM::ReturnOp::create(g.b, g.loc, ValueRange{}); }

  Value param(unsigned i) { return func.getArgument(i); }

  /// A shared-memory array of `count` elements of `type`, private to this
  /// kernel.
  Value sharedArray(StringRef suffix, Type type, int64_t count) {
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

  /// The kernel's dynamic shared memory (its size is given at launch).
  Value dynamicShared() {
    std::string sym = name + "_dyn";
    {
      OpBuilder::InsertionGuard guard(g.b);
      g.b.setInsertionPoint(func);
      LLVM::GlobalOp::create(g.b, g.loc, LLVM::LLVMArrayType::get(g.i8, 0),
                             /*isConstant=*/false, LLVM::Linkage::External,
                             sym, Attribute(), /*alignment=*/16,
                             /*addrSpace=*/3);
    }
    return LLVM::AddressOfOp::create(g.b, g.loc, g.sharedPtr, sym);
  }

  Value sharedElem(Value base, Value index /*i32*/, unsigned elemBytes) {
    return g.gep(base, g.mul(g.zext64(index), g.c64(elemBytes)));
  }

  //===--------------------------------------------------------------------===//
  // Loads and element extraction
  //===--------------------------------------------------------------------===//

  /// Steps [begin, end) of a K loop, `unroll` at a time: a loop over groups
  /// of `unroll` steps (`step(first, unroll, iters)`), then single steps for
  /// the remainder.
  using Step = llvm::function_ref<SmallVector<Value>(Value first, int64_t n,
                                                      ValueRange iters)>;
  SmallVector<Value> unrolledLoop(Value begin, Value end, int64_t unroll,
                                  ValueRange init, Step step) {
    Value groups = g.udiv(g.sub(end, begin), g.c64(unroll));
    SmallVector<Value> acc = g.forLoop(
        g.c64(0), groups, g.c64(1), init, [&](Value iv, ValueRange iters) {
          return step(g.add(begin, g.mul(iv, g.c64(unroll))), unroll, iters);
        });
    if (unroll > 1)
      acc = g.forLoop(g.add(begin, g.mul(groups, g.c64(unroll))), end,
                      g.c64(1), acc, [&](Value iv, ValueRange iters) {
                        return step(iv, 1, iters);
                      });
    return acc;
  }

  Raw loadRaw(Value ptr, unsigned bytes, bool invariant) {
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

  /// The 32-bit word holding byte `byteOff` of `r` (zero-extended if narrow).
  Value wordOf(const Raw &r, unsigned byteOff) {
    if (r.bytes >= 4)
      return r.words[byteOff / 4];
    return arith::ExtUIOp::create(g.b, g.loc, g.i32, r.narrow);
  }

  /// Element `e` (of `eb` bytes) of `r` as an integer of eb * 8 bits.
  Value rawElement(const Raw &r, unsigned e, unsigned eb) {
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

  /// Reinterprets raw element bits as `elemType`.
  Value asElement(Value raw, Type elemType) {
    return g.bitcast(elemType, raw);
  }

  static bool isChain(ArrayRef<Operation *> chain, Type from, Type to,
                      bool signedIntToFloat) {
    if (chain.size() != 1 || chain[0]->getOperand(0).getType() != from ||
        chain[0]->getResult(0).getType() != to)
      return false;
    return signedIntToFloat ? isa<arith::SIToFPOp>(chain[0])
                            : isa<arith::ExtFOp>(chain[0]);
  }

  /// All `count` elements of `r` (element type `elemType`) converted to f32
  /// by `chain`.
  SmallVector<Value> convertAll(const Raw &r, unsigned count, Type elemType,
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
        Value bits = (e % 2 == 0 || r.bytes < 4) ? g.shl(w, g.c32(16))
                                                 : g.band(w, hiMask);
        out.push_back(g.bitcast(f32, bits));
      }
      return out;
    }
    for (unsigned e = 0; e < count; ++e)
      out.push_back(
          emitChain(chain, asElement(rawElement(r, e, eb), elemType)));
    return out;
  }

  //===--------------------------------------------------------------------===//
  // Scalar region ops
  //===--------------------------------------------------------------------===//

  Value toF32(Value v) {
    if (v.getType() == g.f32)
      return v;
    return arith::ExtFOp::create(g.b, g.loc, g.f32, v);
  }

  Value fromF32(Value v, Type t) {
    if (t == g.f32)
      return v;
    return arith::TruncFOp::create(g.b, g.loc, t, v);
  }

  /// Emits `op` with operands from `m`; lowers the ops whose meaning in a
  /// kernel region differs from their plain LLVM lowering.
  Value emitScalarOp(Operation *op, IRMapping &m) {
    if (auto cvt = dyn_cast<arith::FPToSIOp>(op)) {
      // Saturating, NaN -> 0 (mtc's convert semantics).
      Value x = toF32(m.lookup(cvt.getIn()));
      unsigned bits = cvt.getType().getIntOrFloatBitWidth();
      Value lo = g.cf32(-std::ldexp(1.0, bits - 1));
      Value hi = g.cf32(std::ldexp(1.0, bits - 1) - 1);
      Value isNan = arith::CmpFOp::create(g.b, g.loc, arith::CmpFPredicate::UNO,
                                          x, x);
      Value c = arith::MinimumFOp::create(
          g.b, g.loc, arith::MaximumFOp::create(g.b, g.loc, x, lo), hi);
      c = g.select(isNan, g.cf32(0), c);
      return arith::FPToSIOp::create(g.b, g.loc, cvt.getType(), c);
    }
    if (auto exp = dyn_cast<math::ExpOp>(op)) {
      // exp(x) = 2^(x log2 e), with the hardware's ex2.approx.
      Value x = toF32(m.lookup(exp.getOperand()));
      Value scaled = arith::MulFOp::create(g.b, g.loc, x,
                                           g.cf32(1.4426950408889634));
      Value r = LLVM::CallIntrinsicOp::create(
                    g.b, g.loc, g.f32,
                    g.b.getStringAttr("llvm.nvvm.ex2.approx.f32"),
                    ValueRange{scaled})
                    .getResult(0);
      return fromF32(r, exp.getType());
    }
    Operation *clone = g.b.clone(*op, m);
    return clone->getResult(0);
  }

  Value emitChain(ArrayRef<Operation *> chain, Value v) {
    for (Operation *op : chain) {
      IRMapping m;
      m.map(op->getOperand(0), v);
      v = emitScalarOp(op, m);
    }
    return v;
  }

  Value emitBlock(Block &block, ValueRange args) {
    IRMapping m;
    m.map(block.getArguments(), args);
    for (Operation &op : block.without_terminator())
      m.map(op.getResult(0), emitScalarOp(&op, m));
    return m.lookupOrDefault(cast<YieldOp>(block.getTerminator()).getValue());
  }

  /// Butterfly reduction: every lane ends with the warp's sum.
  Value warpSum(Value v) {
    for (int mask = 16; mask >= 1; mask /= 2)
      v = g.fadd(v, g.shflXor(v, mask));
    return v;
  }
};

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

class ContractEmitter : public Emitter {
public:
  ContractEmitter(OpBuilder &b, ContractOp op, ModuleOp module, StringRef name,
                  const EmitOptions &opts)
      : Emitter(b, op.getLoc(), module, name, opts), op(op),
        c(ContractShape::of(op)),
        s(ScheduleParams::of(*op.getSchedule())), geo(contractGeometry(c, s)) {
    aElem = elementTypeOf(op.getA());
    bElem = elementTypeOf(op.getB());
    outElem = elementTypeOf(op.getResult());
    ea = bytesOf(aElem);
    eb = bytesOf(bElem);
    eo = bytesOf(outElem);
    aChain = op.getAChain();
    bChain = op.getBChain();
  }

  LogicalResult emit() {
    unsigned numEp = op.getEpilogueInputs().size();
    unsigned numParams = 2 + numEp + 1 + (s.splitk > 1 ? 1 : 0);
    beginKernel(numParams, 2 + numEp, s.warps * 32, s.regs);
    A = param(0);
    B = param(1);
    for (unsigned j = 0; j < numEp; ++j)
      E.push_back(param(2 + j));
    Out = param(2 + numEp);
    if (s.splitk > 1)
      WS = param(3 + numEp);

    Value tid = g.tidX();
    lane = g.band(tid, g.c32(31));
    Value warp = g.lshr(tid, g.c32(5));
    wn = g.band(warp, g.c32(geo.warpsN - 1));
    wk = g.lshr(warp, g.c32(llvm::Log2_64(geo.warpsN)));
    bid = g.ctaidX();
    Value by = g.urem(bid, g.c32(geo.gridM));
    bx = g.udiv(bid, g.c32(geo.gridM));
    Value bz = s.splitk > 1 ? g.ctaidZ() : g.c32(0);
    m0 = g.mul(by, g.c32(s.mtile));
    if (s.kind == ScheduleKind::tiled) {
      // Warps: warpsN along N, then mwarps along M, then kwarps along K
      // inside each tile. The block's K range is its split-K piece.
      wm = g.band(wk, g.c32(s.mwarps - 1));
      wk = g.lshr(wk, g.c32(llvm::Log2_64(s.mwarps)));
      piece = bz;
    } else {
      piece = g.add(g.mul(bz, g.c32(s.kwarps)), wk);
    }
    this->tid = tid;

    if (s.kind == ScheduleKind::mma)
      emitMmaNK();
    else if (s.kind == ScheduleKind::tiled)
      emitTiled();
    else if (c.bTransposed)
      emitKN();
    else
      emitNK();
    endKernel();
    return success();
  }

private:
  ContractOp op;
  ContractShape c;
  ScheduleParams s;
  ContractGeometry geo;
  Type aElem, bElem, outElem;
  unsigned ea, eb, eo;
  SmallVector<Operation *> aChain, bChain;
  Value A, B, Out, WS;
  SmallVector<Value> E;
  Value tid, lane, wn, wk, wm, bid, bx, m0, piece;

  int64_t M() const { return c.m; }
  int64_t N() const { return c.n; }
  int64_t K() const { return c.k; }

  /// Pointer to A's row `mi` (non-transposed) or column (transposed).
  Value aBase(Value mi) {
    int64_t stride = c.aTransposed ? ea : K() * ea;
    return g.gep(A, g.mul(g.zext64(mi), g.c64(stride)));
  }

  /// Byte offset of element k (i64) from aBase.
  Value aOffset(Value k) {
    int64_t stride = c.aTransposed ? M() * ea : ea;
    return g.mul(k, g.c64(stride));
  }

  /// A row index clamped into range (out-of-range rows compute garbage that
  /// is never stored).
  Value clampedRow(int64_t i) {
    return g.umin(g.add(m0, g.c32(i)), g.c32(M() - 1));
  }

  /// K range [begin, end) of this thread's piece, in units of `unit`
  /// elements out of `total` units.
  std::pair<Value, Value> pieceRange(int64_t total) {
    Value p = g.zext64(piece);
    Value begin = g.udiv(g.mul(p, g.c64(total)), g.c64(geo.pieces));
    Value end = g.udiv(g.mul(g.add(p, g.c64(1)), g.c64(total)),
                       g.c64(geo.pieces));
    return {begin, end};
  }

  /// Unflattens output row `m` and column `n` into the result's index and
  /// returns the element offset of epilogue input `j` (i64).
  Value epilogueOffset(unsigned j, Value m, Value n) {
    ArrayRef<int64_t> R = op.getType().getShape();
    AffineMap map = cast<AffineMapAttr>(op.getEpilogueMaps()[j]).getValue();
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(op.getEpilogueInputs()[j].getType()).getShape();
    SmallVector<int64_t> strides = stridesOf(shape);
    // Index of each result dim, computed on demand.
    SmallVector<Value> idx(R.size());
    idx[R.size() - 1] = g.zext64(n);
    auto dimIndex = [&](unsigned d) -> Value {
      if (idx[d])
        return idx[d];
      Value rest = g.zext64(m);
      for (int t = int(R.size()) - 2; t >= 0; --t) {
        Value here = t == 0 ? rest : g.urem(rest, g.c64(R[t]));
        if (!idx[t])
          idx[t] = here;
        if (t > 0)
          rest = g.udiv(rest, g.c64(R[t]));
      }
      return idx[d];
    };
    Value off = g.c64(0);
    for (auto [t, expr] : llvm::enumerate(map.getResults())) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (!dim)
        continue; // broadcast dim: index 0
      off = g.add(off, g.mul(dimIndex(dim.getPosition()), g.c64(strides[t])));
    }
    return off;
  }

  /// Applies the epilogue to `acc` for output (m, n) and stores it, if the
  /// output exists.
  void writeOutput(Value m, Value n, Value acc) {
    Value ok = g.andi(g.cmp(Pred::ult, m, g.c32(M())),
                      g.cmp(Pred::ult, n, g.c32(N())));
    g.ifThen(ok, [&] {
      SmallVector<Value> args{acc};
      for (unsigned j = 0; j < E.size(); ++j) {
        Type t = elementTypeOf(op.getEpilogueInputs()[j]);
        Value off = g.mul(epilogueOffset(j, m, n), g.c64(bytesOf(t)));
        args.push_back(g.load(t, g.gep(E[j], off), bytesOf(t), true));
      }
      Value v = emitBlock(op.getEpilogue().front(), args);
      Value off = g.mul(g.add(g.mul(g.zext64(m), g.c64(N())), g.zext64(n)),
                        g.c64(eo));
      g.store(v, g.gep(Out, off), eo);
    });
  }

  /// Workspace element for output (m, n).
  Value workspaceElem(Value m, Value n) {
    Value idx = g.add(g.mul(g.zext64(m), g.c64(N())), g.zext64(n));
    return g.gep(WS, g.mul(idx, g.c64(4)));
  }

  /// What the owner of output (m, n) does with its block's sum: store it
  /// through the epilogue, or add it into the split-K workspace.
  void deliver(Value m, Value n, Value v) {
    if (s.splitk == 1)
      return writeOutput(m, n, v);
    Value ok = g.andi(g.cmp(Pred::ult, m, g.c32(M())),
                      g.cmp(Pred::ult, n, g.c32(N())));
    g.ifThen(ok, [&] {
      LLVM::AtomicRMWOp::create(g.b, g.loc, LLVM::AtomicBinOp::fadd,
                                workspaceElem(m, n), v,
                                LLVM::AtomicOrdering::monotonic, "device");
    });
  }

  /// Split-K: after every block added its sums, the last block to arrive
  /// takes the totals (re-zeroing the workspace) and runs the epilogue.
  /// Output j (of `count`) is (mOf(j), nOf(j)), delivered by the threads
  /// where ownerOf(j) holds. All totals are loaded first, unconditionally
  /// (clamped addresses), so the loads overlap instead of each waiting for
  /// the epilogue of the one before.
  void splitKFinish(int64_t count, function_ref<Value(int64_t)> ownerOf,
                    function_ref<Value(int64_t)> mOf,
                    function_ref<Value(int64_t)> nOf) {
    if (s.splitk == 1)
      return;
    Value flag = sharedArray("last", g.i32, 1);
    g.fenceGpu();
    g.barrier();
    int64_t countersAt = llvm::alignTo(M() * N() * 4, 256);
    Value counter = g.gep(WS, g.add(g.c64(countersAt),
                                    g.mul(g.zext64(bid), g.c64(4))));
    g.ifThen(g.cmp(Pred::eq, tid, g.c32(0)), [&] {
      Value ticket = LLVM::AtomicRMWOp::create(
          g.b, g.loc, LLVM::AtomicBinOp::add, counter, g.c32(1),
          LLVM::AtomicOrdering::acq_rel, "device");
      Value last = g.cmp(Pred::eq, ticket, g.c32(s.splitk - 1));
      g.store(arith::ExtUIOp::create(g.b, g.loc, g.i32, last), flag, 4);
    });
    g.barrier();
    Value isLast = g.cmp(Pred::ne, g.load(g.i32, flag, 4), g.c32(0));
    g.ifThen(isLast, [&] {
      g.fenceGpu();
      SmallVector<Value> totals;
      for (int64_t j = 0; j < count; ++j) {
        Value ws = workspaceElem(g.umin(mOf(j), g.c32(M() - 1)),
                                 g.umin(nOf(j), g.c32(N() - 1)));
        // Relaxed at device scope: the other blocks' sums are in L2.
        totals.push_back(LLVM::LoadOp::create(
            g.b, g.loc, g.f32, ws, g.b.getI64IntegerAttr(4), /*volatile_=*/false,
            /*nontemporal=*/false, /*invariant=*/false,
            /*invariantGroup=*/false, LLVM::AtomicOrdering::monotonic,
            g.b.getStringAttr("device"), nullptr, nullptr, nullptr, nullptr,
            nullptr));
      }
      for (int64_t j = 0; j < count; ++j) {
        Value m = mOf(j), n = nOf(j);
        Value ok = g.andi(ownerOf(j), g.andi(g.cmp(Pred::ult, m, g.c32(M())),
                                             g.cmp(Pred::ult, n, g.c32(N()))));
        g.ifThen(ok, [&] {
          g.store(g.cf32(0), workspaceElem(m, n), 4);
          writeOutput(m, n, totals[j]);
        });
      }
      g.ifThen(g.cmp(Pred::eq, tid, g.c32(0)),
               [&] { g.store(g.c32(0), counter, 4); });
    });
  }

  /// For schedules where every thread owns `count` outputs: sums the partial
  /// results of the warps splitting K through shared memory (`slot(w, j)`
  /// is output j's place for K piece w; none when kwarps is 1), delivers
  /// each output from the threads of piece 0, and finishes split-K.
  void deliverAll(int64_t count, ArrayRef<Value> acc,
                  function_ref<Value(Value, int64_t)> slot,
                  function_ref<Value(int64_t)> mOf,
                  function_ref<Value(int64_t)> nOf) {
    Value firstPiece = g.cmp(Pred::eq, wk, g.c32(0));
    if (slot) {
      for (int64_t j = 0; j < count; ++j)
        g.store(acc[j], slot(wk, j), 4);
      g.barrier();
      g.ifThen(firstPiece, [&] {
        for (int64_t j = 0; j < count; ++j) {
          Value sum = g.cf32(0);
          for (int64_t w = 0; w < s.kwarps; ++w)
            sum = g.fadd(sum, g.load(g.f32, slot(g.c32(w), j), 4));
          deliver(mOf(j), nOf(j), sum);
        }
      });
    } else {
      for (int64_t j = 0; j < count; ++j)
        deliver(mOf(j), nOf(j), acc[j]);
    }
    splitKFinish(count, [&](int64_t) { return firstPiece; }, mOf, nOf);
  }

  //===--------------------------------------------------------------------===//
  // Weight stored [N, K]
  //===--------------------------------------------------------------------===//

  void emitNK() {
    int64_t epl = geo.elemsPerLoad, chunk = geo.chunk;
    int64_t chunks = K() / chunk, tailStart = chunks * chunk;
    int64_t rows = s.rows, mt = s.mtile;
    Value n0 = g.add(g.mul(bx, g.c32(geo.colsPerBlock)),
                     g.mul(wn, g.c32(rows)));
    SmallVector<Value> bRow, aRow;
    for (int64_t r = 0; r < rows; ++r) {
      Value nr = g.umin(g.add(n0, g.c32(r)), g.c32(N() - 1));
      bRow.push_back(g.gep(B, g.mul(g.zext64(nr), g.c64(K() * eb))));
    }
    for (int64_t i = 0; i < mt; ++i)
      aRow.push_back(aBase(clampedRow(i)));
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
        Value k = g.add(g.mul(g.add(firstChunk, g.c64(u)), g.c64(chunk)),
                        laneElems);
        kBase[u] = k;
        for (int64_t r = 0; r < rows; ++r)
          braw[u].push_back(
              loadRaw(g.gep(bRow[r], g.mul(k, g.c64(eb))), s.vec, true));
      }
      for (int64_t u = 0; u < count; ++u) {
        SmallVector<SmallVector<Value>> av;
        for (int64_t i = 0; i < mt; ++i)
          av.push_back(aValues(aRow[i], kBase[u], epl));
        for (int64_t r = 0; r < rows; ++r) {
          SmallVector<Value> bv = convertAll(braw[u][r], epl, bElem, bChain);
          for (int64_t e = 0; e < epl; ++e)
            for (int64_t i = 0; i < mt; ++i) {
              Value &slot = a[(i * rows + r) * 2 + (e & 1)];
              slot = g.fma(av[i][e], bv[e], slot);
            }
        }
      }
      return a;
    };

    acc = unrolledLoop(cBegin, cEnd, s.unroll, acc, step);
    // K % chunk leftover elements: the last piece, one element per lane.
    if (tailStart < K()) {
      Value isLast = g.cmp(Pred::eq, piece, g.c32(geo.pieces - 1));
      SmallVector<Type> types(acc.size(), g.f32);
      acc = g.ifElse(
          isLast, types,
          [&] {
            return g.forLoop(
                g.add(g.c64(tailStart), g.zext64(lane)), g.c64(K()),
                g.c64(32), acc, [&](Value k, ValueRange iters) {
                  SmallVector<Value> a(iters.begin(), iters.end());
                  for (int64_t r = 0; r < rows; ++r) {
                    Value raw = g.load(g.b.getIntegerType(eb * 8),
                                       g.gep(bRow[r], g.mul(k, g.c64(eb))),
                                       eb, true);
                    Value bv = emitChain(bChain, asElement(raw, bElem));
                    for (int64_t i = 0; i < mt; ++i) {
                      Value av = aScalar(aRow[i], k);
                      Value &slot = a[(i * rows + r) * 2];
                      slot = g.fma(av, bv, slot);
                    }
                  }
                  return a;
                });
          },
          [&] { return acc; });
    }

    SmallVector<Value> total;
    for (int64_t j = 0; j < mt * rows; ++j)
      total.push_back(warpSum(g.fadd(acc[2 * j], acc[2 * j + 1])));

    // Output j = i * rows + r belongs to lane j % 32 of the K-piece-0 warp.
    auto mOf = [&](int64_t j) { return g.add(m0, g.c32(j / rows)); };
    auto nOf = [&](int64_t j) { return g.add(n0, g.c32(j % rows)); };
    auto isOwnerLane = [&](int64_t j) {
      return g.cmp(Pred::eq, lane, g.c32(j % 32));
    };
    int64_t outs = mt * rows;
    if (s.kwarps == 1) {
      for (int64_t j = 0; j < outs; ++j)
        g.ifThen(isOwnerLane(j), [&] { deliver(mOf(j), nOf(j), total[j]); });
    } else {
      Value red = sharedArray("red", g.f32, geo.reduceFloats);
      for (int64_t j = 0; j < outs; ++j)
        g.ifThen(isOwnerLane(j), [&] {
          Value idx = g.add(g.mul(g.add(g.mul(wk, g.c32(geo.warpsN)), wn),
                                  g.c32(outs)),
                            g.c32(j));
          g.store(total[j], sharedElem(red, idx, 4), 4);
        });
      g.barrier();
      Value firstPiece = g.cmp(Pred::eq, wk, g.c32(0));
      for (int64_t j = 0; j < outs; ++j)
        g.ifThen(g.andi(firstPiece, isOwnerLane(j)), [&] {
          Value sum = g.cf32(0);
          for (int64_t w = 0; w < s.kwarps; ++w) {
            Value idx = g.add(
                g.mul(g.add(g.c32(w * geo.warpsN), wn), g.c32(outs)),
                g.c32(j));
            sum = g.fadd(sum, g.load(g.f32, sharedElem(red, idx, 4), 4));
          }
          deliver(mOf(j), nOf(j), sum);
        });
    }
    Value firstPiece = g.cmp(Pred::eq, wk, g.c32(0));
    splitKFinish(
        outs, [&](int64_t j) { return g.andi(firstPiece, isOwnerLane(j)); },
        mOf, nOf);
  }

  /// `count` consecutive A elements from element `k` (i64), converted to f32.
  SmallVector<Value> aValues(Value base, Value k, int64_t count) {
    if (c.aTransposed) {
      SmallVector<Value> out;
      for (int64_t e = 0; e < count; ++e)
        out.push_back(aScalar(base, g.add(k, g.c64(e))));
      return out;
    }
    Raw raw = loadRaw(g.gep(base, aOffset(k)), count * ea, true);
    return convertAll(raw, count, aElem, aChain);
  }

  Value aScalar(Value base, Value k) {
    Value raw = g.load(g.b.getIntegerType(ea * 8), g.gep(base, aOffset(k)),
                       ea, true);
    return emitChain(aChain, asElement(raw, aElem));
  }


  //===--------------------------------------------------------------------===//
  // Tensor cores: mma.sync m16n8k16, weight stored [N, K]
  //===--------------------------------------------------------------------===//
  //
  // The product is computed transposed, out^T = W x^T: the weight is mma's
  // A operand (16 rows of N by 16 of K) and the activations its B operand
  // (16 of K by 8 rows of M), so a batch of 1 to 8 rows wastes nothing of a
  // weight tile. The order of the 16 k's inside one mma is free as long as A
  // and B agree, so lane (g = lane / 4, t = lane % 4) takes physical k =
  // 16 t + 4 j + {0..3} for step j of a 64-wide K chunk: each lane loads 16
  // contiguous k of its weight rows g and g + 8 and of its activation row g,
  // and the fragments are consecutive words of those loads. int8 becomes
  // bf16 pairs by byte permutes against 2^23 (f32), one subtraction and a
  // permute packing the high halves; for f16, by permutes against 1024 and
  // one f16x2 subtraction.

  /// {lo, hi} bf16x2 / f16x2 words for the four int8 of `word`.
  std::pair<Value, Value> dequantPairs(Value word, bool f16) {
    if (!opts.fastDequant) {
      // One cvt per element, for comparison with the byte-permute path.
      Type half = f16 ? g.b.getF16Type() : g.b.getBF16Type();
      Value h[4];
      for (unsigned j = 0; j < 4; ++j) {
        Value byte = g.trunc(g.i8, j ? g.lshr(word, g.c32(8 * j)) : word);
        Value f = arith::SIToFPOp::create(g.b, g.loc, g.f32, byte);
        Value t = arith::TruncFOp::create(g.b, g.loc, half, f);
        h[j] = arith::ExtUIOp::create(g.b, g.loc, g.i32,
                                      g.bitcast(g.i16, t));
      }
      auto pack = [&](Value lo, Value hi) {
        return arith::OrIOp::create(g.b, g.loc, lo, g.shl(hi, g.c32(16)))
            .getResult();
      };
      return {pack(h[0], h[1]), pack(h[2], h[3])};
    }
    Value x = g.bxor(word, g.c32(int32_t(0x80808080u)));
    if (f16) {
      Value magic = g.c32(0x64646464);
      auto half2 = VectorType::get({2}, g.b.getF16Type());
      Value bias = LLVM::ConstantOp::create(
          g.b, g.loc, half2,
          DenseElementsAttr::get(half2, llvm::ArrayRef<Attribute>{
                                            g.b.getF16FloatAttr(1152.0),
                                            g.b.getF16FloatAttr(1152.0)}));
      auto sub = [&](Value v) {
        Value h = LLVM::BitcastOp::create(g.b, g.loc, half2, v);
        Value d = LLVM::FSubOp::create(g.b, g.loc, h, bias);
        return LLVM::BitcastOp::create(g.b, g.loc, g.i32, d).getResult();
      };
      return {sub(g.prmt(x, magic, 0x4140)), sub(g.prmt(x, magic, 0x4342))};
    }
    Value magic = g.c32(0x4B000000);
    Value bias = g.cf32(8388608.0 + 128.0);
    Value f[4];
    for (unsigned j = 0; j < 4; ++j)
      f[j] = g.bitcast(g.i32, g.fsub(g.bitcast(g.f32, g.prmt(x, magic,
                                                                 0x7650u | j)),
                                     bias));
    return {g.prmt(f[0], f[1], 0x7632), g.prmt(f[2], f[3], 0x7632)};
  }

  /// D = A B + C for one m16n8k16 tile (accumulators in f32).
  void mma(ArrayRef<Value> a, ArrayRef<Value> bw, MutableArrayRef<Value> acc,
           bool f16) {
    MLIRContext *ctx = g.b.getContext();
    auto resType = LLVM::LLVMStructType::getLiteral(
        ctx, {g.f32, g.f32, g.f32, g.f32});
    SmallVector<Value> operands(a.begin(), a.end());
    operands.append(bw.begin(), bw.end());
    operands.append(acc.begin(), acc.end());
    std::string asmText =
        std::string("mma.sync.aligned.m16n8k16.row.col.f32.") +
        (f16 ? "f16.f16" : "bf16.bf16") +
        ".f32 {$0,$1,$2,$3}, {$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};";
    auto op = LLVM::InlineAsmOp::create(
        g.b, g.loc, resType, operands, asmText,
        "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3", /*has_side_effects=*/false,
        /*is_align_stack=*/false, LLVM::TailCallKind::None,
        LLVM::AsmDialectAttr(), ArrayAttr());
    for (int64_t i = 0; i < 4; ++i)
      acc[i] = LLVM::ExtractValueOp::create(g.b, g.loc, op.getResult(0), i);
  }

  /// mma's A fragment for k-step j from a lane's words of weight rows g
  /// (`lo`) and g + 8 (`hi`): int8 words are dequantized (one word, four k's,
  /// per step), 16-bit words are used as they are (two words per step).
  SmallVector<Value, 4> weightFragment(ArrayRef<Value> lo, ArrayRef<Value> hi,
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

  /// Output row (m) and column (n) of accumulator j = (r * mt + i) * 4 + c of
  /// a warp whose tiles start at weight row `nWarp` and activation row
  /// `mWarp`: weight row g (+8 for c >= 2) of 16-row tile r, activation row
  /// 2t (+1 for odd c) of 8-row tile i.
  Value mmaOutputN(Value nWarp, int64_t j, int64_t mt) {
    int64_t r = j / (4 * mt), c = j % 4;
    return g.add(nWarp, g.add(g.lshr(lane, g.c32(2)),
                              g.c32(16 * r + (c >= 2 ? 8 : 0))));
  }
  Value mmaOutputM(Value mWarp, int64_t j, int64_t mt) {
    int64_t i = (j / 4) % mt, c = j % 4;
    return g.add(mWarp, g.add(g.mul(g.band(lane, g.c32(3)), g.c32(2)),
                              g.c32(8 * i + (c % 2))));
  }

  /// Sums the accumulators of the kwarps warps that split K (each of the
  /// `slice` warps of K piece w parks them at [w][its index][j][lane] in
  /// shared memory) and delivers them; with one K piece, delivers directly.
  void deliverMma(ArrayRef<Value> acc, int64_t slice, Value warpInSlice,
                  function_ref<Value(int64_t)> mOf,
                  function_ref<Value(int64_t)> nOf) {
    int64_t count = acc.size();
    if (s.kwarps == 1)
      return deliverAll(count, acc, nullptr, mOf, nOf);
    Value red = sharedArray("red", g.f32, geo.reduceFloats);
    auto slot = [&](Value w, int64_t j) {
      Value warpSlot = g.add(g.mul(w, g.c32(slice)), warpInSlice);
      Value idx = g.add(
          g.mul(g.add(g.mul(warpSlot, g.c32(count)), g.c32(j)), g.c32(32)),
          lane);
      return sharedElem(red, idx, 4);
    };
    deliverAll(count, acc, slot, mOf, nOf);
  }

  void emitMmaNK() {
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
        kOff[u] = g.add(g.mul(g.add(firstChunk, g.c64(u)), g.c64(chunk)),
                        laneK);
        for (Value row : wRow)
          wraw[u].push_back(loadRaw(g.gep(row, g.mul(kOff[u], g.c64(eb))),
                                    span * eb, true));
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
                                           wraw[u][r * 2 + 1].words, j,
                                           quantized, f16));
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

    deliverMma(
        acc, geo.warpsN, wn, [&](int64_t j) { return mmaOutputM(m0, j, mt); },
        [&](int64_t j) { return mmaOutputN(n0, j, mt); });
  }

  //===--------------------------------------------------------------------===//
  // Tensor cores on shared-memory tiles: the tiled kind
  //===--------------------------------------------------------------------===//
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
  // The k order is mma's (emitMmaNK): lane t of a group of four in K slice
  // s takes the vec k's from (4 s + t) * vec of each tile, so its operands
  // are contiguous in shared memory and come in 16-byte loads; the int8
  // weight is dequantized in registers right before its mma. Rows are
  // XOR-swizzled in 16-byte pieces so that the eight lanes of each quarter
  // warp hit different banks.

  /// Physical 16-byte piece of logical piece `c` in row `row` (i32).
  Value swizzle(Value c, Value row) {
    Value x = g.bor(g.band(row, g.c32(1)),
                    g.shl(g.band(g.lshr(c, g.c32(3)), g.c32(3)), g.c32(1)));
    return g.bxor(c, x);
  }

  void emitTiled() {
    int64_t R = s.rows, V = s.vec, tileK = geo.chunk;
    int64_t mtw = s.mtile / s.mwarps / kMmaColsPerTile;
    int64_t threads = s.warps * 32;
    int64_t wRowBytes = tileK * eb, xRowBytes = tileK * ea;
    int64_t tiles = K() / tileK;
    bool f16 = aElem.isF16();
    bool quantized = bElem.isInteger(8);
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
        cp.dst = g.add(g.c32(tileOffset),
                       g.add(g.mul(row, g.c32(rowBytes)),
                             g.mul(swizzle(c, row), g.c32(16))));
        if ((i + 1) * threads > pieces)
          cp.active = g.cmp(Pred::ult, p, g.c32(pieces));
        copies.push_back(cp);
      }
    };
    plan(geo.colsPerBlock, wRowBytes, 0, [&](Value row) {
      Value n = g.umin(g.add(nBlock, row), g.c32(N() - 1));
      return g.gep(B, g.mul(g.zext64(n), g.c64(K() * eb)));
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
      return g.add(g.c32(tileOffset),
                   g.add(g.mul(row, g.c32(rowBytes)),
                         g.mul(swizzle(c, row), g.c32(16))));
    };

    // acc[(r * mtw + i) * 4 + c]
    int64_t count = geo.accPerThread;
    SmallVector<Value> acc(count, g.cf32(0));
    auto [tBegin, tEnd] = pieceRange(tiles);

    /// The mma's on K tile in ring slot `slot`: 16 k's of each lane at a
    /// time (16 * eb bytes of each weight row, 32 of each activation row).
    auto multiply = [&](Value slot, ValueRange iters) {
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
      for (int64_t q = 0; q < V / 16; ++q) {
        SmallVector<SmallVector<Value>> w, x;
        for (Value row : wRows)
          w.push_back(loadPieces(row, wRowBytes, V * eb, q * eb, eb, 0));
        for (Value row : xRows)
          x.push_back(loadPieces(row, xRowBytes, V * ea, q * 2, 2,
                                 geo.weightTileBytes));
        for (int64_t j = 0; j < 4; ++j) {
          SmallVector<SmallVector<Value, 4>> afrag;
          for (int64_t r = 0; r < R; ++r)
            afrag.push_back(
                weightFragment(w[2 * r], w[2 * r + 1], j, quantized, f16));
          for (int64_t i = 0; i < mtw; ++i)
            for (int64_t r = 0; r < R; ++r)
              mma(afrag[r], {x[i][2 * j], x[i][2 * j + 1]},
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
          // Tile t has landed (at most stages - 2 younger groups pending)
          // and every warp is done with tile t - 1's slot.
          NVVM::CpAsyncWaitGroupOp::create(g.b, g.loc,
                                           g.b.getI32IntegerAttr(
                                               int32_t(s.stages - 2)));
          g.barrier();
          Value rel = g.sub(t, tBegin);
          Value next = g.add(t, g.c64(s.stages - 1));
          g.ifThen(g.cmp(Pred::ult, next, tEnd), [&] {
            Value slot = g.urem(g.add(rel, g.c64(s.stages - 1)),
                                g.c64(s.stages));
            issue(next, g.trunc(g.i32, slot));
          });
          commit();
          return multiply(g.trunc(g.i32, g.urem(rel, g.c64(s.stages))), iters);
        });

    Value nWarp = g.add(nBlock, wRow0), mWarp = g.add(m0, xRow0);
    deliverMma(
        acc, geo.warpsN * s.mwarps, g.add(g.mul(wm, g.c32(geo.warpsN)), wn),
        [&](int64_t j) { return mmaOutputM(mWarp, j, mtw); },
        [&](int64_t j) { return mmaOutputN(nWarp, j, mtw); });
  }

  //===--------------------------------------------------------------------===//
  // Weight stored [K, N]
  //===--------------------------------------------------------------------===//

  void emitKN() {
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
    acc = unrolledLoop(kBegin, kEnd, s.unroll, acc, step);

    auto mOf = [&](int64_t j) { return g.add(m0, g.c32(j / (rows * epl))); };
    auto nOf = [&](int64_t j) {
      return g.add(col[(j / epl) % rows], g.c32(j % epl));
    };
    if (s.kwarps > 1) {
      Value red = sharedArray("red", g.f32, geo.reduceFloats);
      auto slot = [&](Value w, int64_t j) {
        return sharedElem(
            red,
            g.add(g.mul(g.add(g.mul(w, g.c32(count)), g.c32(j)),
                        g.c32(threadsN)),
                  tn),
            4);
      };
      deliverAll(count, acc, slot, mOf, nOf);
    } else {
      deliverAll(count, acc, nullptr, mOf, nOf);
    }
  }
};

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class ElementwiseEmitter : public Emitter {
public:
  ElementwiseEmitter(OpBuilder &b, ElementwiseOp op, ModuleOp module,
                     StringRef name, const EmitOptions &opts)
      : Emitter(b, op.getLoc(), module, name, opts), op(op),
        s(ScheduleParams::of(*op.getSchedule())) {}

  LogicalResult emit() {
    unsigned numIn = op.getInputs().size();
    int64_t threads = s.warps * 32;
    beginKernel(numIn + 1, numIn, threads, s.regs);
    ArrayRef<int64_t> R = op.getType().getShape();
    int64_t total = numElementsOf(op.getType());
    Type outElem = elementTypeOf(op.getResult());
    Value out = param(numIn);
    Value tid = g.zext64(g.tidX());
    Value bid = g.zext64(g.ctaidX());
    for (int64_t v = 0; v < s.vec; ++v) {
      Value idx = g.add(
          g.mul(g.add(g.mul(bid, g.c64(s.vec)), g.c64(v)), g.c64(threads)),
          tid);
      g.ifThen(g.cmp(Pred::ult, idx, g.c64(total)), [&] {
        SmallVector<Value> dims = unflatten(idx, R);
        SmallVector<Value> args;
        for (auto [j, in] : llvm::enumerate(op.getInputs())) {
          Type t = elementTypeOf(in);
          Value off = inputOffset(j, idx, dims);
          args.push_back(g.load(t, g.gep(param(j), g.mul(off, g.c64(
                                                              bytesOf(t)))),
                                bytesOf(t), true));
        }
        Value r = emitBlock(op.getBody().front(), args);
        g.store(r, g.gep(out, g.mul(idx, g.c64(bytesOf(outElem)))),
                bytesOf(outElem));
      });
    }
    endKernel();
    return success();
  }

private:
  ElementwiseOp op;
  ScheduleParams s;

  SmallVector<Value> unflatten(Value idx, ArrayRef<int64_t> R) {
    SmallVector<Value> dims(R.size());
    Value rest = idx;
    for (int t = int(R.size()) - 1; t >= 0; --t) {
      dims[t] = t == 0 ? rest : g.urem(rest, g.c64(R[t]));
      if (t > 0)
        rest = g.udiv(rest, g.c64(R[t]));
    }
    return dims;
  }

  Value inputOffset(unsigned j, Value flat, ArrayRef<Value> dims) {
    AffineMap map = cast<AffineMapAttr>(op.getIndexingMaps()[j]).getValue();
    auto type = cast<RankedTensorType>(op.getInputs()[j].getType());
    if (map.isIdentity())
      return flat; // same shape as the result
    SmallVector<int64_t> strides = stridesOf(type.getShape());
    Value off = g.c64(0);
    for (auto [t, expr] : llvm::enumerate(map.getResults()))
      if (auto dim = dyn_cast<AffineDimExpr>(expr))
        off = g.add(off, g.mul(dims[dim.getPosition()], g.c64(strides[t])));
    return off;
  }
};

} // namespace

LogicalResult mtc::emitKernel(OpBuilder &b, Operation *op, StringRef name,
                              const EmitOptions &opts) {
  auto module = b.getInsertionBlock()->getParentOp();
  auto moduleOp = dyn_cast<ModuleOp>(module);
  if (!moduleOp)
    return op->emitOpError("kernels must be emitted into a module");
  auto scheduleAttr = op->getAttrOfType<ScheduleAttr>("schedule");
  if (!scheduleAttr)
    return op->emitOpError("has no schedule; run mtc-assign-schedules first");
  std::string err = checkSchedule(op, ScheduleParams::of(scheduleAttr));
  if (!err.empty())
    return op->emitOpError("cannot be lowered with schedule ")
           << ScheduleParams::of(scheduleAttr).str() << ": " << err;
  if (auto c = dyn_cast<ContractOp>(op))
    return ContractEmitter(b, c, moduleOp, name, opts).emit();
  if (auto e = dyn_cast<ElementwiseOp>(op))
    return ElementwiseEmitter(b, e, moduleOp, name, opts).emit();
  return op->emitOpError("is not a kernel op");
}
