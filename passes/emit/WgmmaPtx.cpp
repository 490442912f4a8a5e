//===- WgmmaPtx.cpp - The inline PTX of the wgmma kind -----------------===//
//
// See Wgmma.cpp.
//
//===----------------------------------------------------------------------===//
#include "passes/emit/Wgmma.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::emit;
using llvm::SmallVector;
using Pred = arith::CmpIPredicate;

void WgmmaEmitter::ptx(StringRef text, StringRef constraints,
                       ValueRange operands) {
  g.inlinePtx(TypeRange(), text, constraints, operands, /*sideEffects=*/true);
}

void WgmmaEmitter::clusterSync() {
  ptx("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;", "");
}

SmallVector<Value> WgmmaEmitter::pin(ArrayRef<Value> regs, size_t ints) {
  SmallVector<Type> types;
  std::string constraints;
  for (size_t i = 0; i < regs.size(); ++i) {
    types.push_back(i < ints ? g.i32 : g.f32);
    constraints += i < ints ? "=r," : "=f,";
  }
  for (size_t i = 0; i < regs.size(); ++i)
    constraints += std::to_string(i) + (i + 1 < regs.size() ? "," : "");
  return g.inlinePtx(types, "", constraints, regs, /*sideEffects=*/true);
}

SmallVector<Value> WgmmaEmitter::loadSharedHalves(ValueRange addrs) {
  std::string text, constraints;
  int64_t out = 0;
  for (int64_t j = 0; j < 4; ++j)
    for (int64_t off : {0, 8, 512, 520})
      text += "ld.shared.u16 $" + std::to_string(out++) + ", [$" +
              std::to_string(16 + j) + "+" + std::to_string(off) + "];\n";
  for (int64_t i = 0; i < 16; ++i)
    constraints += "=r,";
  constraints += "r,r,r,r";
  // Side effects: the loads stay after the wait for the slot.
  return g.inlinePtx(SmallVector<Type>(16, g.i32), text, constraints, addrs,
                     /*sideEffects=*/true);
}

SmallVector<Value> WgmmaEmitter::loadSharedRowsI4(Value half0, Value half1) {
  std::string text, constraints;
  for (int64_t i = 0; i < 4; ++i)
    text += "ld.shared.v4.u32 {$" + std::to_string(4 * i) + ", $" +
            std::to_string(4 * i + 1) + ", $" + std::to_string(4 * i + 2) +
            ", $" + std::to_string(4 * i + 3) + "}, [$" +
            std::to_string(16 + i % 2) + (i >= 2 ? "+256" : "") + "];\n";
  for (int64_t i = 0; i < 16; ++i)
    constraints += "=r,";
  constraints += "r,r";
  return g.inlinePtx(SmallVector<Type>(16, g.i32), text, constraints,
                     {half0, half1}, /*sideEffects=*/true);
}

Value WgmmaEmitter::sharedAddress(Value ptr) {
  return g.trunc(g.i32, LLVM::PtrToIntOp::create(g.b, g.loc, g.i64, ptr));
}

void WgmmaEmitter::waitParity(Value bar, Value parity) {
  ptx("{\n.reg .pred p;\nmtc_wait_${:uid}:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [$0], $1;\n"
      "@!p bra mtc_wait_${:uid};\n}",
      "r,r", {bar, parity});
}

void WgmmaEmitter::wgmma(ArrayRef<Value> a, Value desc,
                         MutableArrayRef<Value> acc, bool f16) {
  int64_t n = acc.size();
  std::string text =
      "{\n.reg .pred p;\nsetp.ne.b32 p, $" + std::to_string(n + 5) + ", 0;\n" +
      "wgmma.mma_async.sync.aligned.m64n" + std::to_string(2 * n) + "k16.f32." +
      (f16 ? "f16.f16" : "bf16.bf16") + " {";
  std::string constraints;
  for (int64_t i = 0; i < n; ++i) {
    text += (i ? ", $" : "$") + std::to_string(i);
    constraints += "=f,";
  }
  text += "}, {$" + std::to_string(n) + ", $" + std::to_string(n + 1) + ", $" +
          std::to_string(n + 2) + ", $" + std::to_string(n + 3) + "}, $" +
          std::to_string(n + 4) + ", p, 1, 1, 0;\n}";
  constraints += "r,r,r,r,l,r";
  for (int64_t i = 0; i < n; ++i)
    constraints += "," + std::to_string(i);
  SmallVector<Value> operands(a.begin(), a.end());
  operands.push_back(desc);
  operands.push_back(g.c32(1)); // scale-d: accumulate
  operands.append(acc.begin(), acc.end());
  SmallVector<Value> d =
      g.inlinePtx(SmallVector<Type>(n, g.f32), text, constraints, operands,
                  /*sideEffects=*/true);
  llvm::copy(d, acc.begin());
}

// After the K loop, the warpgroups that took turns add their sums:
// those of q > 0 park them in the ring, which no copy or wgmma touches
// once every consumer is past its last tile (nor any other block's copy:
// this block's every tile has landed), and those of q = 0 add them.
// Thread i of warpgroup (q, r) parks accumulator j at float
// ((q - 1) C + r) count 128 + 128 j + i: a warp's stores hit 32 banks.
void WgmmaEmitter::addTurns(MutableArrayRef<Value> acc, Value q, Value r,
                            Value ringAddr, StringRef consumersMeet) {
  int64_t C = s.rows, KW = s.kwarps, count = acc.size();
  Value i = g.band(tid, g.c32(127));
  auto parked = [&](Value turn, int64_t j) {
    Value first = g.mul(g.add(g.mul(g.sub(turn, g.c32(1)), g.c32(C)), r),
                        g.c32(count * 128));
    return g.add(ringAddr,
                 g.shl(g.add(first, g.add(i, g.c32(128 * j))), g.c32(2)));
  };
  ptx(consumersMeet, "");
  g.ifThen(g.cmp(Pred::ne, q, g.c32(0)), [&] {
    for (int64_t j = 0; j < count; ++j)
      ptx("st.shared.f32 [$0], $1;", "r,f", {parked(q, j), acc[j]});
  });
  ptx(consumersMeet, "");
  SmallVector<Value> sums = g.ifElse(
      g.cmp(Pred::eq, q, g.c32(0)), SmallVector<Type>(count, g.f32),
      [&]() -> SmallVector<Value> {
        SmallVector<Value> sum(acc.begin(), acc.end());
        for (int64_t turn = 1; turn < KW; ++turn)
          for (int64_t j = 0; j < count; ++j)
            sum[j] =
                g.fadd(sum[j], g.inlinePtx(g.f32, "ld.shared.f32 $0, [$1];",
                                           "=f,r", {parked(g.c32(turn), j)},
                                           /*sideEffects=*/true)
                                   .front());
        return sum;
      },
      [&]() -> SmallVector<Value> { return {acc.begin(), acc.end()}; });
  llvm::copy(sums, acc.begin());
}
