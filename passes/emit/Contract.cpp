//===- Contract.cpp - What the contraction emitters share -----------------===//
//
// Every contraction kernel has the parameters A, B, the b inputs, the
// epilogue inputs, the a inputs, the siblings' weights and their b inputs,
// the output and (when blocks split K) the workspace. Its threads own outputs
// and K pieces as the schedule's kind decides; the kinds deliver each output
// through the same path: warps that split K add their partial sums in shared
// memory, blocks that split K add theirs into a zeroed f32 workspace and the
// last block to arrive runs the epilogue and re-zeroes it, and the epilogue
// runs on one thread per output and stores the result.
//
//===----------------------------------------------------------------------===//
#include "passes/emit/Contract.h"

#include "mlir/IR/AffineExpr.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::emit;
using namespace mtc::kernel;
using llvm::SmallVector;
using Pred = arith::CmpIPredicate;

ContractEmitter::ContractEmitter(OpBuilder &b, ContractOp op, StringRef name,
                                 const EmitOptions &opts)
    : Emitter(b, op.getLoc(), name, opts), op(op), c(contractShape(op)),
      s(op.getSchedule()->getParams()), geo(contractGeometry(c, s)) {
  aElem = elementTypeOf(op.getA());
  bElem = elementTypeOf(op.getB());
  outElem = elementTypeOf(op.getResult());
  ea = bytesOf(aElem);
  eb = bytesOf(bElem);
  eo = bytesOf(outElem);
  aChain = op.getAChain();
  if (op.hasPrologue()) {
    aOps = op.getAOps();
    aPrologue = op.getAPrologueValue();
  }
  bChain = op.getBChain();
  // ContractShape asked WeightSide.h for an integer weight.
  weightPairs = isInteger(c.b) && c.mmaBChain;
  if (c.factoredB && s.kind == kernel::ScheduleKind::mma)
    factors = matchFactoredWeight(op.getBody().front());
}

ContractEmitter::~ContractEmitter() = default;

LogicalResult ContractEmitter::emit() {
  unsigned numB = op.getBInputs().size();
  unsigned numEp = op.getEpilogueInputs().size();
  unsigned numA = op.getAInputs().size();
  unsigned numSib = op.getSiblings().size();
  unsigned numIn = 2 + numB + numEp + numA + numSib * (1 + numB);
  unsigned numParams = numIn + 1 + (s.splitk > 1 ? 1 : 0);
  beginKernel(numParams, numIn, s.warps * 32, s.regs, tensorMapParams());
  A = param(0);
  B = param(1);
  BI.resize(1 + numSib);
  for (unsigned j = 0; j < numB; ++j)
    BI[0].push_back(param(2 + j));
  for (unsigned j = 0; j < numEp; ++j)
    E.push_back(param(2 + numB + j));
  for (unsigned j = 0; j < numA; ++j)
    AI.push_back(param(2 + numB + numEp + j));
  weights.push_back(B);
  unsigned firstSib = 2 + numB + numEp + numA;
  for (unsigned j = 0; j < numSib; ++j) {
    weights.push_back(param(firstSib + j));
    for (unsigned i = 0; i < numB; ++i)
      BI[1 + j].push_back(param(firstSib + numSib + j * numB + i));
  }
  Out = param(numIn);
  if (s.splitk > 1)
    WS = param(numIn + 1);

  tid = g.tidX();
  lane = g.band(tid, g.c32(31));
  Value warp = g.lshr(tid, g.c32(5));
  wn = g.band(warp, g.c32(geo.warpsN - 1));
  wk = g.lshr(warp, g.c32(llvm::Log2_64(geo.warpsN)));
  bid = g.ctaidX();
  // Blocks run through M first, then N; the blocks of a cluster (its rank
  // is the low bits of the block index) take neighbouring column blocks of
  // the same rows of A.
  int64_t cl = s.cluster;
  Value rest = cl > 1 ? g.lshr(bid, g.c32(llvm::Log2_64(cl))) : bid;
  Value by = g.urem(rest, g.c32(geo.gridM));
  bx = g.udiv(rest, g.c32(geo.gridM));
  if (cl > 1)
    bx = g.add(g.mul(bx, g.c32(cl)), g.band(bid, g.c32(cl - 1)));
  Value bz = s.splitk > 1 ? g.ctaidZ() : g.c32(0);
  m0 = g.mul(by, g.c32(s.mtile));
  assignPiece(bz);

  emitBody();
  endKernel();
  return success();
}

void ContractEmitter::assignPiece(Value bz) {
  piece = g.add(g.mul(bz, g.c32(s.kwarps)), wk);
}

Value ContractEmitter::aInputElement(unsigned j, Value m, Value k) {
  Value in = op.getAInputs()[j];
  AffineMap map = cast<AffineMapAttr>((*op.getAMaps())[j]).getValue();
  return loadElement(AI[j], elementTypeOf(in),
                     mapOffset(map,
                               cast<RankedTensorType>(in.getType()).getShape(),
                               {g.zext64(m), k}));
}

void ContractEmitter::deriveRowStatistics(ArrayRef<Value> rows,
                                          ArrayRef<Value> rowIdx) {
  int64_t threads = s.warps * 32, mt = int64_t(rows.size());
  Block &term = op.getStatBody().front(),
        &finish = op.getStatEpilogue().front();
  // 16-byte loads where every row's start is 16-byte aligned.
  int64_t vecElems = (K() * ea) % 16 == 0 ? 16 / ea : 1;
  int64_t perRound = threads * vecElems, rounds = K() / perRound;
  int64_t tailStart = rounds * perRound, tail = K() - tailStart;
  Value warp = g.lshr(tid, g.c32(5));
  Value partial = sharedArray("stat", g.f32, s.warps * mt);
  Value mine = g.mul(g.zext64(tid), g.c64(vecElems));
  for (int64_t i = 0; i < mt; ++i) {
    auto add = [&](Value acc, Value raw) {
      return g.fadd(acc, emitBlock(term, {asElement(raw, aElem)}));
    };
    SmallVector<Value> sum = unrolledLoop(
        g.c64(0), g.c64(rounds),
        std::min<int64_t>(std::max<int64_t>(rounds, 1), 8),
        ValueRange{g.cf32(0)},
        [&](Value first, int64_t n, ValueRange iters) -> SmallVector<Value> {
          SmallVector<Raw> raw;
          for (int64_t u = 0; u < n; ++u) {
            Value k =
                g.add(g.mul(g.add(first, g.c64(u)), g.c64(perRound)), mine);
            raw.push_back(
                loadRaw(g.gep(rows[i], aOffset(k)), vecElems * ea, true));
          }
          Value acc = iters[0];
          for (const Raw &r : raw)
            for (int64_t e = 0; e < vecElems; ++e)
              acc = add(acc, rawElement(r, unsigned(e), ea));
          return {acc};
        });
    Value acc = sum[0];
    // The elements past the last whole round, one a thread per round.
    for (int64_t t = 0; t < (tail + threads - 1) / threads; ++t) {
      Value k = g.add(g.c64(tailStart + t * threads), g.zext64(tid));
      Value valid = g.cmp(Pred::ult, k, g.c64(K()));
      Value raw =
          g.load(g.b.getIntegerType(ea * 8),
                 g.gep(rows[i], aOffset(g.umin(k, g.c64(K() - 1)))), ea, true);
      acc = g.select(valid, add(acc, raw), acc);
    }
    Value total = warpSum(acc);
    g.ifThen(g.cmp(Pred::eq, lane, g.c32(0)), [&] {
      g.store(
          total,
          sharedElem(partial, g.add(g.mul(g.c32(i), g.c32(s.warps)), warp), 4),
          4);
    });
  }
  g.barrier();
  for (int64_t i = 0; i < mt; ++i) {
    Value total = g.cf32(0);
    for (int64_t w = 0; w < s.warps; ++w)
      total = g.fadd(
          total,
          g.load(g.f32, sharedElem(partial, g.c32(i * s.warps + w), 4), 4));
    rowStats[rowIdx[i]] = emitBlock(finish, {total});
  }
}

Raw ContractEmitter::applyPrologue(const Raw &raw, Value m, Value k,
                                   int64_t count) {
  if (aOps.empty())
    return raw;
  Block &body = op.getBody().front();
  unsigned firstA = 2 + op.getBInputs().size();
  Value stat;
  if (op.hasRowStatistic()) {
    stat = rowStats.lookup(m);
    assert(stat && "deriveRowStatistics runs before the prologue");
  }
  // Inputs that do not vary along K (a row's statistic) are loaded once.
  SmallVector<Value> fixed(AI.size());
  for (unsigned j = 0; j < AI.size(); ++j) {
    AffineMap map = cast<AffineMapAttr>((*op.getAMaps())[j]).getValue();
    if (llvm::none_of(map.getResults(),
                      [](AffineExpr e) { return decodeMapResult(e).dim == 1; }))
      fixed[j] = aInputElement(j, m, k);
  }
  SmallVector<Value> out;
  for (int64_t e = 0; e < count; ++e) {
    IRMapping map;
    map.map(body.getArgument(0),
            asElement(rawElement(raw, unsigned(e), ea), aElem));
    Value ke = g.add(k, g.c64(e));
    for (unsigned j = 0; j < AI.size(); ++j)
      map.map(body.getArgument(firstA + j),
              fixed[j] ? fixed[j] : aInputElement(j, m, ke));
    if (stat)
      map.map(body.getArgument(firstA + AI.size()), stat);
    for (Operation *o : aOps)
      map.map(o->getResult(0), emitScalarOp(o, map));
    out.push_back(g.bitcast(g.b.getIntegerType(ea * 8), map.lookup(aPrologue)));
  }
  // Repacked as loaded: 32-bit words, two 16-bit elements to a word.
  Raw r;
  r.bytes = raw.bytes;
  if (r.bytes < 4) {
    r.narrow = out[0];
    return r;
  }
  for (int64_t w = 0; w < int64_t(r.bytes / 4); ++w) {
    if (ea == 4) {
      r.words.push_back(out[w]);
      continue;
    }
    auto wide = [&](Value v) {
      return LLVM::ZExtOp::create(g.b, g.loc, g.i32, v).getResult();
    };
    r.words.push_back(
        g.bor(wide(out[2 * w]), g.shl(wide(out[2 * w + 1]), g.c32(16))));
  }
  return r;
}

Value ContractEmitter::aBase(Value mi) {
  int64_t stride = c.aTransposed ? ea : K() * ea;
  return g.gep(A, g.mul(g.zext64(mi), g.c64(stride)));
}

Value ContractEmitter::aOffset(Value k) {
  int64_t stride = c.aTransposed ? M() * ea : ea;
  return g.mul(k, g.c64(stride));
}

Value ContractEmitter::clampedRow(int64_t i) {
  return g.umin(g.add(m0, g.c32(i)), g.c32(M() - 1));
}

std::pair<Value, Value> ContractEmitter::pieceRange(int64_t total) {
  Value p = g.zext64(piece);
  Value begin = g.udiv(g.mul(p, g.c64(total)), g.c64(geo.pieces));
  Value end =
      g.udiv(g.mul(g.add(p, g.c64(1)), g.c64(total)), g.c64(geo.pieces));
  return {begin, end};
}

int64_t ContractEmitter::stepsInFlight(int64_t total) const {
  return std::clamp<int64_t>(total / geo.pieces, 1, s.unroll);
}

//===----------------------------------------------------------------------===//
// The epilogue and split-K
//===----------------------------------------------------------------------===//

Value ContractEmitter::epilogueOffset(unsigned j, Value m, Value n) {
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
    MapResult r = decodeMapResult(expr);
    if (r.isZero())
      continue; // broadcast dim: index 0
    Value i = dimIndex(r.dim);
    if (r.divisor > 1)
      i = g.udiv(i, g.c64(r.divisor));
    if (r.modulus)
      i = g.urem(i, g.c64(r.modulus));
    off = g.add(off, g.mul(i, g.c64(strides[t])));
  }
  return off;
}

void ContractEmitter::writeOutput(Value m, Value n, ArrayRef<Value> sums,
                                  bool hoist, ArrayRef<Value> partner) {
  Value ok =
      g.andi(g.cmp(Pred::ult, m, g.c32(M())), g.cmp(Pred::ult, n, g.c32(N())));
  auto input = [&](unsigned j, Value mIn, Value nIn) {
    Type t = elementTypeOf(op.getEpilogueInputs()[j]);
    Value off = g.mul(epilogueOffset(j, mIn, nIn), g.c64(bytesOf(t)));
    return g.load(t, g.gep(E[j], off), bytesOf(t), true);
  };
  auto epilogue = [&](Value mIn, Value nIn) {
    SmallVector<Value> args(sums);
    for (unsigned j = 0; j < E.size(); ++j) {
      Value v = channels.lookup({j, n});
      args.push_back(v ? v : input(j, mIn, nIn));
    }
    if (!c.pairs)
      return emitBlock(op.getEpilogue().front(), args);
    // The partner column n xor 1 (N is even: in range where n is).
    assert(partner.size() == sums.size() && "the partner's sums");
    Value nPartner = g.bxor(nIn, g.c32(1));
    auto partnerArg = [&](unsigned i) {
      return i < sums.size() ? partner[i]
                             : input(unsigned(i - sums.size()), mIn, nPartner);
    };
    Position position{nIn, partnerArg};
    return emitBlock(op.getEpilogue().front(), args, &position);
  };
  auto store = [&](Value v) {
    Value off =
        g.mul(g.add(g.mul(g.zext64(m), g.c64(N())), g.zext64(n)), g.c64(eo));
    g.store(v, g.gep(Out, off), eo);
  };
  if (!hoist) {
    g.ifThen(ok, [&] { store(epilogue(m, n)); });
    return;
  }
  Value v = epilogue(g.umin(m, g.c32(M() - 1)), g.umin(n, g.c32(N() - 1)));
  g.ifThen(ok, [&] { store(v); });
}

void ContractEmitter::preloadChannels(ArrayRef<Value> ns) {
  unsigned last = op.getType().getRank() - 1;
  for (unsigned j = 0; j < E.size(); ++j) {
    AffineMap map = cast<AffineMapAttr>(op.getEpilogueMaps()[j]).getValue();
    bool perChannel = llvm::all_of(map.getResults(), [&](AffineExpr e) {
      MapResult r = decodeMapResult(e);
      return r.isZero() || unsigned(r.dim) == last;
    });
    if (!perChannel)
      continue;
    Type t = elementTypeOf(op.getEpilogueInputs()[j]);
    for (Value n : ns) {
      Value clamped = g.umin(n, g.c32(N() - 1));
      Value off =
          g.mul(epilogueOffset(j, g.c32(0), clamped), g.c64(bytesOf(t)));
      channels[{j, n}] = g.load(t, g.gep(E[j], off), bytesOf(t), true);
    }
  }
}

Value ContractEmitter::workspaceElem(Value m, Value n) {
  Value idx = g.add(g.mul(g.zext64(m), g.c64(N())), g.zext64(n));
  return g.gep(WS, g.mul(idx, g.c64(4)));
}

void ContractEmitter::deliver(Value m, Value n, ArrayRef<Value> sums,
                              ArrayRef<Value> partner) {
  if (s.splitk == 1) {
    SmallVector<Value> exchanged;
    if (c.pairs && partner.empty()) {
      assert(partnerLaneXor && "the kind passes the partner's sums itself");
      for (Value v : sums)
        exchanged.push_back(g.shflXor(v, int(partnerLaneXor)));
      partner = exchanged;
    }
    return writeOutput(m, n, sums, /*hoist=*/true, partner);
  }
  assert(sums.size() == 1 && "split-K takes one weight (checkSchedule)");
  Value v = sums.front();
  Value ok =
      g.andi(g.cmp(Pred::ult, m, g.c32(M())), g.cmp(Pred::ult, n, g.c32(N())));
  g.ifThen(ok, [&] {
    LLVM::AtomicRMWOp::create(g.b, g.loc, LLVM::AtomicBinOp::fadd,
                              workspaceElem(m, n), v,
                              LLVM::AtomicOrdering::monotonic, "device");
  });
}

void ContractEmitter::splitKFinish(int64_t count,
                                   function_ref<Value(int64_t)> ownerOf,
                                   function_ref<Value(int64_t)> mOf,
                                   function_ref<Value(int64_t)> nOf) {
  if (s.splitk == 1)
    return;
  Value flag = sharedArray("last", g.i32, 1);
  g.fenceGpu();
  g.barrier();
  int64_t countersAt = llvm::alignTo(M() * N() * 4, 256);
  Value counter =
      g.gep(WS, g.add(g.c64(countersAt), g.mul(g.zext64(bid), g.c64(4))));
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
    // Relaxed at device scope: the other blocks' sums are in L2.
    auto total = [&](Value m, Value n) -> Value {
      return LLVM::LoadOp::create(
          g.b, g.loc, g.f32, workspaceElem(m, n), g.b.getI64IntegerAttr(4),
          /*volatile_=*/false, /*nontemporal=*/false, /*invariant=*/false,
          /*invariantGroup=*/false, LLVM::AtomicOrdering::monotonic,
          g.b.getStringAttr("device"), nullptr, nullptr, nullptr, nullptr,
          nullptr);
    };
    // With pairs, each partner's total too (this block's: pairs of
    // columns never straddle blocks).
    SmallVector<Value> totals, partners;
    for (int64_t j = 0; j < count; ++j) {
      Value m = g.umin(mOf(j), g.c32(M() - 1)),
            n = g.umin(nOf(j), g.c32(N() - 1));
      totals.push_back(total(m, n));
      if (c.pairs)
        partners.push_back(total(m, g.bxor(n, g.c32(1))));
    }
    // Another thread may own the partner and re-zero it below.
    if (c.pairs)
      g.barrier();
    for (int64_t j = 0; j < count; ++j) {
      Value m = mOf(j), n = nOf(j);
      Value ok = g.andi(ownerOf(j), g.andi(g.cmp(Pred::ult, m, g.c32(M())),
                                           g.cmp(Pred::ult, n, g.c32(N()))));
      g.ifThen(ok, [&] {
        g.store(g.cf32(0), workspaceElem(m, n), 4);
        writeOutput(m, n, totals[j], /*hoist=*/false,
                    c.pairs ? ArrayRef<Value>(partners[j]) : ArrayRef<Value>());
      });
    }
    g.ifThen(g.cmp(Pred::eq, tid, g.c32(0)),
             [&] { g.store(g.c32(0), counter, 4); });
  });
}

//===----------------------------------------------------------------------===//
// The sum over the warps that split K
//===----------------------------------------------------------------------===//

void ContractEmitter::deliverAll(int64_t count, ArrayRef<Value> acc,
                                 function_ref<Value(Value, int64_t)> slot,
                                 function_ref<Value(int64_t)> mOf,
                                 function_ref<Value(int64_t)> nOf) {
  Value firstPiece = g.cmp(Pred::eq, wk, g.c32(0));
  int64_t outs = count / c.weights;
  if (slot) {
    for (int64_t j = 0; j < count; ++j)
      g.store(acc[j], slot(wk, j), 4);
    g.barrier();
    g.ifThen(firstPiece, [&] {
      for (int64_t j = 0; j < outs; ++j) {
        SmallVector<Value> sums;
        for (int64_t h = 0; h < c.weights; ++h) {
          Value sum = g.cf32(0);
          for (int64_t w = 0; w < s.kwarps; ++w)
            sum = g.fadd(sum, g.load(g.f32, slot(g.c32(w), h * outs + j), 4));
          sums.push_back(sum);
        }
        deliver(mOf(j), nOf(j), sums);
      }
    });
  } else {
    for (int64_t j = 0; j < outs; ++j) {
      SmallVector<Value> sums;
      for (int64_t h = 0; h < c.weights; ++h)
        sums.push_back(acc[h * outs + j]);
      deliver(mOf(j), nOf(j), sums);
    }
  }
  splitKFinish(outs, [&](int64_t) { return firstPiece; }, mOf, nOf);
}
