//===- Wgmma.cpp - The wgmma contraction kind (Hopper, sm_90a) ------------===//
//
// Issue 12; checked by lit, ptxas (sm_90a, no spills) and the GPU matrix
// on an H200. Only for --arch sm_90a, where the heuristic picks it from
// M = 64 (passes/Heuristics.cpp) and the tuner searches it.
//
// The product is computed transposed, out^T = W x^T, as by the other
// tensor-core kinds: 64 weight rows (N) per consumer warpgroup are wgmma's
// M side, taken from registers, and the block's mtile activation rows are
// its N side (8 to 256), read from shared memory through a descriptor.
//
// Warpgroup 0 produces: one thread waits for a free slot of the ring of
// `stages` K tiles (64 wide), announces the slot's bytes on its "full"
// mbarrier and starts two TMA copies into it: the activations' box (mtile
// rows of 64 16-bit elements, 128-byte swizzled, the canonical layout a
// K-major wgmma operand with a 128-byte swizzle reads) and the weight's
// (64 rows of 64 bytes per consumer, 64-byte swizzled so that the eight
// rows a quarter warp reads hit different banks). Rows and k's beyond the
// tensors read as zero. Warpgroups 1..rows consume: each waits for the
// slot's "full" mbarrier, loads its weight fragments from shared memory
// (lane (g, t) of warp w: rows 16 w + g and + 8, k's 16 j + 2 t + {0, 1,
// 8, 9} of k-step j, in the natural k order the activations' descriptor
// also follows), dequantizes them in registers (TensorCore.cpp) and runs
// the four m64nNk16 wgmma's of the tile, each its own commit group and
// each issued once the previous tile's same step is done (its registers
// are rewritten), so a tile's wgmma's run while the next tile is
// converted; once the tile's last is issued the previous tile's slot goes
// back on its "empty" mbarrier (one arrival per consumer warp). The
// accumulators of warp w are the 16 rows 16 w + g (+ 8)
// of the warpgroup's 64 and columns 8 i + 2 t (+ 1) of the mtile, as in
// mma.sync's C fragment; the epilogue, and split-K across blocks, run from
// them as in every kind.
//
// With `kwarps` > 1, kwarps warpgroups share each 64 weight rows and take
// turns at the block's K tiles (q, q + kwarps, ...): more warps convert
// weights on each multiprocessor where too few blocks fill the machine,
// without split-K's trip through global memory. At the end they add their
// sums through the ring. Where the consumers then need more registers than
// an even share, the producer warpgroup gives its own up (setmaxnreg).
//
// An int4 weight tile has rows of 32 bytes (64 k's), 32-byte swizzled (bit
// 4 of a row's offset flipped by bit 2 of the row: the eight rows a quarter
// warp reads hit different banks); each consumer thread loads both 16-byte
// halves of its two rows (four ld.shared.v4) and takes, per k-step and
// row, the bytes of its k's 2 t, 2 t + 1 and 2 t + 8, 2 t + 9 alone (one
// prmt each) to convert them (Dequant.cpp's intPairOfByte).
// Group-wise b inputs (scales, zeros) are loaded from global memory one
// tile ahead: each iteration loads the next tile's while it converts this
// one's with the values the last iteration loaded.
//
// With `cluster` > 1 the blocks of a cluster hold neighbouring weight rows
// and the same activation rows (Contract.cpp maps the block index so).
// Each block's producer copies its share of the activation box, mtile /
// cluster rows, and multicasts it into the same place of every block's
// ring, where each block's "full" mbarrier counts the bytes. A slot is
// refilled only once the consumers of every block of the cluster have
// released it: their warps arrive on every block's "empty" mbarrier
// (mapa). The blocks meet (barrier.cluster) once their mbarriers are set
// up and again before they leave, so no block's ring is written or its
// mbarriers signalled by another after it has gone.
//
// Shared memory, from the first 1024-aligned byte of the dynamic segment:
// the activation tiles of every stage, the weight tiles, then a full and an
// empty mbarrier per stage (LaunchConfig in Schedule.cpp sizes it).
//
//===----------------------------------------------------------------------===//
#include "passes/emit/Wgmma.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::emit;
using namespace mtc::kernel;
using llvm::SmallVector;
using Pred = arith::CmpIPredicate;

std::unique_ptr<ContractEmitter>
emit::createWgmmaEmitter(OpBuilder &b, ContractOp op, StringRef name,
                         const EmitOptions &opts) {
  return std::make_unique<WgmmaEmitter>(b, op, name, opts);
}

void WgmmaEmitter::emitBody() {
  fastDivide = true;
  // Tell ptxas how many blocks run on a multiprocessor (.minnctapersm): as
  // many as its shared memory holds and the registers allow (a consumer
  // thread holds mtile / 2 accumulators and about 48 other values), up to
  // two. Told nothing, ptxas fitted the consumers into the registers of
  // more blocks than the ring leaves room for, merging each pair of weight
  // loads as soon as it landed (4096 x 14336, M = 64: 42.3 us against 35.6
  // told 1); told 1 where two fit, it took the registers of the second
  // (14336 x 4096, M = 128: 47.3 us against 33.4;
  // bench/results/2026-12-01-consumer).
  int64_t threads = s.warps * 32;
  int64_t bySmem = kSharedPerSM / (contractLaunchConfig(c, s).sharedBytes() +
                                   kSharedReservedPerBlock);
  // (Warpgroups that take turns hold their sums and the turns' loop besides:
  // there the estimate of the legality check, which has room for them; at
  // 48 the split-K finish spilled, M = 64 with SiLU at 80 registers.)
  WgmmaRegisters regs = wgmmaRegisters(s);
  int64_t byRegs =
      kRegistersPerSM /
      (threads * (s.kwarps > 1 ? regs.perConsumer : s.mtile / 2 + 48));
  func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                g.b.getI32IntegerAttr(int32_t(
                    std::clamp<int64_t>(std::min(bySmem, byRegs), 1, 2))));
  // Where the consumers need more than an even share, the producer
  // warpgroup gives its registers to them (setmaxnreg, below), which needs
  // the count each warp starts with.
  if (regs.launch)
    func->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                  g.b.getI32IntegerAttr(int32_t(regs.launch)));
  // Each branch sets its count on entry and puts the launch count back
  // before the branches join (the split-K finish and the cluster's last
  // meeting run on every thread). A warpgroup meets between its two
  // setmaxnreg's, as PTX requires.
  std::string consumersMeet =
      "bar.sync 1, " + std::to_string(128 * s.rows * s.kwarps) + ";";
  auto setMaxRegs = [&](bool raise, int64_t count, StringRef meet = "") {
    if (!regs.launch)
      return;
    if (!meet.empty())
      ptx(meet, "");
    ptx(std::string("setmaxnreg.") + (raise ? "inc" : "dec") +
            ".sync.aligned.u32 " + std::to_string(count) + ";",
        "");
  };
  // C warpgroups of 64 weight rows each, and KW of each taking turns at the
  // block's K tiles.
  int64_t C = s.rows, KW = s.kwarps, MT = s.mtile, S = s.stages, CL = s.cluster;
  int64_t aTile = MT * kWgmmaTileK * ea, wTile = geo.weightTileBytes;
  int64_t kTiles = llvm::divideCeil(K(), kWgmmaTileK);
  bool f16 = aElem.isF16();
  // This block's K tiles (all of them, or its split-K piece's).
  auto [tBegin, tEnd] = pieceRange(kTiles);

  // The ring from the first 1024-aligned byte of dynamic shared memory.
  Value smem = dynamicShared();
  Value base = sharedAddress(smem);
  Value pad = g.band(g.sub(g.c32(0), base), g.c32(kWgmmaAlignSlack - 1));
  Value ringAddr = g.add(base, pad);
  auto aSlot = [&](Value slot) {
    return g.add(ringAddr, g.mul(slot, g.c32(aTile)));
  };
  int64_t wFirst = S * aTile, barFirst = S * (aTile + wTile);
  // The weight tile of a slot, from the ring's start.
  auto wSlotOffset = [&](Value slot) {
    return g.add(g.c32(wFirst), g.mul(slot, g.c32(wTile)));
  };
  auto fullBar = [&](Value slot) {
    return g.add(ringAddr, g.add(g.c32(barFirst), g.mul(slot, g.c32(8))));
  };
  auto emptyBar = [&](Value slot) {
    return g.add(ringAddr,
                 g.add(g.c32(barFirst + 8 * S), g.mul(slot, g.c32(8))));
  };

  // Thread 0 sets up the mbarriers: "full" completes when the producer's
  // arrival and all the slot's bytes have landed, "empty" when every
  // consumer warp has released the slot; in a cluster, every consumer warp
  // of every block, whose copies write into all of them. The fences make
  // the initialised barriers visible to the TMA unit (the async proxy) and
  // to the other blocks of the cluster before anyone uses them.
  g.ifThen(g.cmp(Pred::eq, tid, g.c32(0)), [&] {
    for (int64_t st = 0; st < S; ++st) {
      ptx("mbarrier.init.shared::cta.b64 [$0], $1;", "r,r",
          {fullBar(g.c32(st)), g.c32(1)});
      ptx("mbarrier.init.shared::cta.b64 [$0], $1;", "r,r",
          {emptyBar(g.c32(st)), g.c32(4 * C * CL)});
    }
    ptx("fence.proxy.async.shared::cta;", "");
    ptx("fence.mbarrier_init.release.cluster;", "");
  });
  if (CL > 1) {
    func->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(),
                  g.b.getDenseI32ArrayAttr({int32_t(CL), 1, 1}));
    clusterSync();
  } else {
    g.barrier();
  }
  // This block's rank in its cluster, and the part of the activation tile
  // it copies for all of them.
  Value rank = g.band(bid, g.c32(CL - 1));
  int64_t aPart = aTile / CL, rowsPart = MT / CL;

  Value group = g.lshr(tid, g.c32(7));
  Value nBlock = g.mul(bx, g.c32(geo.colsPerBlock));
  Value aMap = LLVM::PtrToIntOp::create(g.b, g.loc, g.i64, A);
  Value wMap = LLVM::PtrToIntOp::create(g.b, g.loc, g.i64, B);
  // A tile's place in the ring, carried through the loops as (slot, the
  // parity of its round): the block's first tile takes slot 0 of round 0.
  // (Computing it from the tile index divides by the stage count, which
  // costs tens of instructions per tile unless that is a power of two.)
  auto nextPlace = [&](Value slot, Value parity) -> SmallVector<Value> {
    Value next = g.add(slot, g.c32(1));
    Value wrap = g.cmp(Pred::eq, next, g.c32(S));
    return {g.select(wrap, g.c32(0), next),
            g.select(wrap, g.bxor(parity, g.c32(1)), parity)};
  };
  SmallVector<Value> firstPlace = {g.c32(0), g.c32(0)};
  // Consumer warpgroup 1 + c (`consumer`) owns weight rows 64 r .. 64 r + 63 of
  // the block's tile, r = c % C, and takes K tiles q, q + KW, ... of the
  // block's, q = c / C; lane (g, t) of its warp w, rows 16 w + g and + 8.
  Value isConsumer = g.cmp(Pred::ne, group, g.c32(0));
  Value consumer = g.sub(group, g.c32(1));
  // (With KW = 1, r is c itself: written so, the epilogue's addresses fold
  // their offsets as before kwarps existed, 2 instructions an output less.)
  Value r = KW == 1 ? consumer : g.band(consumer, g.c32(C - 1));
  Value q = KW == 1 ? g.c32(0) : g.lshr(consumer, g.c32(llvm::Log2_64(C)));
  Value w = g.lshr(g.band(tid, g.c32(127)), g.c32(5));
  Value gi = g.lshr(lane, g.c32(2)), ti = g.band(lane, g.c32(3));
  Value rowLo = g.add(g.mul(r, g.c32(kWgmmaRowsPerGroup)),
                      g.add(g.mul(w, g.c32(16)), gi));
  // Accumulator 4 i + q: weight row g (+ 8 for q >= 2), activation row
  // 8 i + 2 t (+ 1 for odd q).
  Value nWarp = g.add(nBlock, rowLo);
  Value mLane = g.add(m0, g.mul(ti, g.c32(2)));
  Value nLo = nWarp, nHi = g.add(nWarp, g.c32(8));
  auto nOf = [&](int64_t j) { return j % 4 >= 2 ? nHi : nLo; };
  auto mOf = [&](int64_t j) {
    return g.add(mLane, g.c32(8 * (j / 4) + (j % 4 & 1)));
  };
  int64_t count = geo.accPerThread;
  // The b inputs (per row, or per group of K: a group of a multiple of 16
  // k's holds whole k-steps) come in pieces of pieceK k's of a tile.
  int64_t numIn = op.getBInputs().size();
  int64_t pieceK = c.group % kWgmmaTileK == 0   ? kWgmmaTileK
                   : kWgmmaTileK % c.group == 0 ? c.group
                                                : 16;

  assert((KW - 1) * C * 128 * count * 4 <= S * (aTile + wTile) &&
         "checkWgmmaSchedule's stages >= 2 kwarps leaves room for the sums");

  g.ifElse(
      g.cmp(Pred::eq, group, g.c32(0)), TypeRange(),
      [&]() -> SmallVector<Value> {
        // The producer.
        setMaxRegs(false, kWgmmaProducerRegisters);
        g.ifThen(g.cmp(Pred::eq, tid, g.c32(0)), [&] {
          g.forLoop(
              tBegin, tEnd, g.c64(1), firstPlace,
              [&](Value kt, ValueRange place) -> SmallVector<Value> {
                Value slot = place[0];
                // Round r waits for the consumers' release of round
                // r - 1 (round 0 passes: the phase "before" it).
                waitParity(emptyBar(slot), g.bxor(place[1], g.c32(1)));
                Value full = fullBar(slot);
                ptx("mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], "
                    "$1;",
                    "r,r", {full, g.c32(aTile + wTile)});
                Value k0 = g.trunc(g.i32, g.mul(kt, g.c64(kWgmmaTileK)));
                // An i4 weight's map moves bytes: 32 per 64 k's.
                Value wk0 = c.b == DType::I4 ? g.lshr(k0, g.c32(1)) : k0;
                const char *copy =
                    "cp.async.bulk.tensor.2d.shared::cluster.global."
                    "mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], "
                    "[$4];";
                if (CL == 1) {
                  ptx(copy, "r,l,r,r,r", {aSlot(slot), aMap, k0, m0, full});
                } else {
                  // Into the same place of every block's ring, each
                  // block's "full" mbarrier counting the bytes.
                  Value dst = g.add(aSlot(slot), g.mul(rank, g.c32(aPart)));
                  Value m = g.add(m0, g.mul(rank, g.c32(rowsPart)));
                  Value mask = arith::ConstantIntOp::create(
                      g.b, g.loc, g.b.getI16Type(), (1 << CL) - 1);
                  ptx("cp.async.bulk.tensor.2d.shared::cluster.global."
                      "mbarrier::complete_tx::bytes.multicast::cluster "
                      "[$0], [$1, {$2, $3}], [$4], $5;",
                      "r,l,r,r,r,h", {dst, aMap, k0, m, full, mask});
                }
                Value wDst = g.add(ringAddr, wSlotOffset(slot));
                ptx(copy, "r,l,r,r,r", {wDst, wMap, wk0, nBlock, full});
                return nextPlace(slot, place[1]);
              });
        });
        setMaxRegs(true, regs.launch, "bar.sync 2, 128;");
        return {};
      },
      [&]() -> SmallVector<Value> {
        // The consumers.
        setMaxRegs(true, regs.consumerLimit);
        // Where the bytes of this lane lie in a weight tile, whose 64-byte
        // swizzle moves each 16-byte piece of a 128-byte line by the line's
        // index (bits 7-8 of the offset; tiles are 512-byte aligned, so
        // offsets and addresses agree on them): k's 16 j + 2 t + {0, 1} of
        // row `rowLo` are at 64 rowLo + 16 (j ^ s) + 2 t, s = bits 1-2 of
        // the row; k's 8 on are 8 bytes on, and row rowLo + 8,
        // whose bits 1-2 are the same, is 512 bytes on. So each tile needs
        // one address per j, and its 16 loads take the rest as immediates.
        Value swz = g.band(g.lshr(rowLo, g.c32(1)), g.c32(3));
        SmallVector<Value> laneOff; // [j]
        for (int64_t j = 0; j < 4; ++j)
          laneOff.push_back(g.add(g.mul(rowLo, g.c32(64)),
                                  g.add(g.shl(g.bxor(swz, g.c32(j)), g.c32(4)),
                                        g.mul(ti, g.c32(2)))));
        // i4: row rowLo's two 16-byte halves (swapped where bit 2 of the row
        // is set), row rowLo + 8's 256 bytes on.
        Value swz4 = g.shl(g.band(g.lshr(rowLo, g.c32(2)), g.c32(1)), g.c32(4));
        Value half0 = g.add(g.mul(rowLo, g.c32(32)), swz4);
        Value half1 = g.add(g.mul(rowLo, g.c32(32)), g.bxor(swz4, g.c32(16)));
        // prmt's selector of byte t of a word, zeros above it.
        Value laneByte = g.add(ti, g.c32(0x4440));
        auto loadRows4 = [&](Value wTile) {
          return loadSharedRowsI4(g.add(wTile, half0), g.add(wTile, half1));
        };
        // The b inputs of a tile (i64 index kt) for rows g and g + 8 of
        // this thread, in pieces of pieceK k's: [piece][row][input].
        auto tileInputs = [&](Value kt) {
          SmallVector<Value> in;
          Value k0 = g.mul(kt, g.c64(kWgmmaTileK));
          Value nLoIn = g.umin(nWarp, g.c32(N() - 1));
          Value nHiIn = g.umin(g.add(nWarp, g.c32(8)), g.c32(N() - 1));
          for (int64_t p = 0; p < kWgmmaTileK / pieceK; ++p) {
            // Tiles past the piece's end (the prefetch past the last) read
            // the last group.
            Value k = g.umin(g.add(k0, g.c64(p * pieceK)), g.c64(K() - 1));
            for (Value n : {nLoIn, nHiIn})
              llvm::append_range(in, loadBInputs(n, k, /*asPairs=*/true));
          }
          return in;
        };
        // The tile's 16 halfwords of this lane (k's 2 t + {0, 1} and + 8 of
        // each row and k-step), loaded by one asm through 32-bit shared
        // addresses, one per k-step, and immediate offsets (LLVM's 64-bit
        // shared pointers cost three instructions per load); its side
        // effects keep the loads after the wait for the slot.
        auto loadHalves = [&](Value wTile) {
          SmallVector<Value> addrs;
          for (int64_t j = 0; j < 4; ++j)
            addrs.push_back(g.add(wTile, laneOff[j]));
          return loadSharedHalves(addrs);
        };
        // k-step j's fragments {a0, a1, a2, a3}: rows g and g + 8 (a1, a3)
        // at k's 2 t + {0, 1} and + 8 (a2, a3), from halfwords
        // h[4 j + {0, 1, 2, 3}] = (g, 0), (g, 8), (g + 8, 0), (g + 8, 8).
        // bf16 pairs come straight from each halfword; f16's conversion
        // (and cvt's, without fast dequantization) takes whole words, the
        // two halfwords of a row merged.
        auto converted = [&](ArrayRef<Value> h,
                             int64_t j) -> SmallVector<Value> {
          if (c.b == DType::I4) {
            // Row g's words 2 j, 2 j + 1 (h[0..7]) and row g + 8's
            // (h[8..15]): byte t of each is this lane's pair of k's
            // 2 t, 2 t + 1 and 2 t + 8, 2 t + 9, taken alone.
            auto pair = [&](int64_t w) {
              return intPairOfByte(
                  g.inlinePtx(g.i32, "prmt.b32 $0, $1, $2, $3;", "=r,r,r,r",
                              {h[w], g.c32(0), laneByte},
                              /*sideEffects=*/false)
                      .front());
            };
            return {pair(2 * j), pair(8 + 2 * j), pair(2 * j + 1),
                    pair(8 + 2 * j + 1)};
          }
          if (!f16 && opts.fastDequant)
            return {bf16Pair(h[4 * j], 0, 1), bf16Pair(h[4 * j + 2], 0, 1),
                    bf16Pair(h[4 * j + 1], 0, 1), bf16Pair(h[4 * j + 3], 0, 1)};
          auto [a0, a2] =
              dequantPairs(g.prmt(h[4 * j], h[4 * j + 1], 0x5410), f16);
          auto [a1, a3] =
              dequantPairs(g.prmt(h[4 * j + 2], h[4 * j + 3], 0x5410), f16);
          return {a0, a1, a2, a3};
        };
        // The fragments of step j, dequantized with the b inputs of rows g
        // and g + 8 (`in`: [piece][row][input], flattened).
        auto fragments = [&](ArrayRef<Value> h, int64_t j,
                             ArrayRef<Value> in) -> SmallVector<Value> {
          SmallVector<Value> a = converted(h, j);
          if (!numIn)
            return a;
          int64_t at = (16 * j / pieceK) * 2 * numIn;
          ArrayRef<Value> lo = in.slice(at, numIn),
                          hi = in.slice(at + numIn, numIn);
          return {dequantPair(a[0], lo), dequantPair(a[1], hi),
                  dequantPair(a[2], lo), dequantPair(a[3], hi)};
        };
        // The k16 step's activation descriptor: K-major, 128-byte swizzle,
        // 8-row groups 1024 bytes apart; its start address (bits 0-13,
        // address / 16) moves 32 bytes, 2, per step within a tile.
        int64_t descHigh = int64_t(1024 >> 4) << 32 | int64_t(1) << 62;

        // The zeroed accumulators are written before the first fence. The
        // loop carries them, then the tile's place in the ring and the
        // previous tile's slot (released during this tile). Warpgroup q's
        // first tile is the block's q-th, in slot q of round 0 (KW < S).
        SmallVector<Value> init = pin(SmallVector<Value>(count, g.cf32(0)), 0);
        init.append({q, g.c32(0)});
        init.push_back(g.c32(S - 1));
        Value qBegin = g.add(tBegin, g.zext64(q));
        // Then the b inputs of the warpgroup's first tile.
        if (numIn)
          llvm::append_range(init, tileInputs(qBegin));
        Value secondTurn = g.add(tBegin, g.c64(KW - 1));
        SmallVector<Value> carried = g.forLoop(
            qBegin, tEnd, g.c64(KW), init,
            [&](Value kt, ValueRange iters) -> SmallVector<Value> {
              SmallVector<Value> a(iters.begin(), iters.begin() + count);
              Value slot = iters[count], parity = iters[count + 1];
              Value prevSlot = iters[count + 2];
              // The next tile's b inputs, while this one's are used.
              SmallVector<Value> in(iters.begin() + count + 3, iters.end());
              SmallVector<Value> next;
              if (numIn)
                next = tileInputs(g.add(kt, g.c64(KW)));
              waitParity(fullBar(slot), parity);
              Value wAt = g.add(ringAddr, wSlotOffset(slot));
              SmallVector<Value> halves =
                  c.b == DType::I4 ? loadRows4(wAt) : loadHalves(wAt);
              // One commit group per k16 step. A wgmma reads its register
              // operand until it completes, and each step's fragments are
              // written by the same instructions (the same registers) in
              // every tile, so step j's fragments of this tile are written
              // only once step j of the previous tile is done: the three
              // groups issued since may still run (wait_group 3) while
              // this one is converted. wgmma reads registers written by
              // other instructions only across a wgmma.fence, so the
              // fragments are pinned before it. (The accumulators are
              // touched by nothing but wgmma's of one shape until the loop
              // ends.)
              Value start =
                  g.bor(g.band(g.lshr(aSlot(slot), g.c32(4)), g.c32(0x3FFF)),
                        g.c32(1 << 16));
              for (int64_t j = 0; j < 4; ++j) {
                ptx("wgmma.wait_group.sync.aligned 3;", "");
                SmallVector<Value> regs = pin(fragments(halves, j, in), 4);
                ptx("wgmma.fence.sync.aligned;", "");
                Value desc = g.bor(g.zext64(g.add(start, g.c32(2 * j))),
                                   g.c64(descHigh));
                wgmma(regs, desc, a, f16);
                ptx("wgmma.commit_group.sync.aligned;", "");
              }
              // The wait before step 3 left tile kt - 1's wgmma's done: its
              // slot goes back to the producer (each consumer warp
              // arrives; its lanes' weight loads fed them), while tile
              // kt's run on into the next tile's conversion. In a cluster,
              // lane r arrives on block r's barrier: every block's
              // producer writes into this block's slot.
              g.ifThen(g.andi(g.cmp(Pred::ult, lane, g.c32(CL)),
                              g.cmp(Pred::ugt, kt, secondTurn)),
                       [&] {
                         if (CL == 1) {
                           ptx("mbarrier.arrive.shared::cta.b64 _, [$0];", "r",
                               {emptyBar(prevSlot)});
                           return;
                         }
                         Value remote =
                             g.inlinePtx(g.i32,
                                         "mapa.shared::cluster.u32 $0, $1, "
                                         "$2;",
                                         "=r,r,r", {emptyBar(prevSlot), lane},
                                         /*sideEffects=*/false)
                                 .front();
                         // Release at the CTA's scope, the default: at the
                         // cluster's it waits for the warp's memory
                         // operations each tile (8192 x 8192, M = 128: 98
                         // against 46 us). The slot's reads it orders are
                         // done: their values fed the finished wgmma's.
                         ptx("mbarrier.arrive.shared::cluster.b64 _, [$0];",
                             "r", {remote});
                       });
              // KW tiles on: the ring wraps at most once (KW < S).
              if (KW == 1) {
                a.append(nextPlace(slot, parity));
              } else {
                Value next = g.add(slot, g.c32(KW));
                Value wrap = g.cmp(Pred::uge, next, g.c32(S));
                a.push_back(g.select(wrap, g.sub(next, g.c32(S)), next));
                a.push_back(g.select(wrap, g.bxor(parity, g.c32(1)), parity));
              }
              a.push_back(slot);
              a.append(next);
              return a;
            });
        // The accumulators are read only after the last wgmma's are done.
        ptx("wgmma.wait_group.sync.aligned 0;", "");
        SmallVector<Value> acc =
            pin(ArrayRef<Value>(carried).take_front(count), 0);
        if (KW > 1)
          addTurns(acc, q, r, ringAddr, consumersMeet);

        // Each output to the epilogue, or (split-K) into the workspace. A
        // thread's outputs lie in two columns: their per-channel inputs
        // are loaded once, not once per output.
        // Lane l holds weight rows l / 4 (+ 8): the partner column's sums
        // are lane l xor 4's.
        partnerLaneXor = 4;
        auto deliverAcc = [&] {
          if (s.splitk == 1)
            preloadChannels({nLo, nHi});
          for (int64_t j = 0; j < count; ++j)
            deliver(mOf(j), nOf(j), acc[j]);
          forgetChannels();
        };
        if (KW == 1)
          deliverAcc();
        else
          g.ifThen(g.cmp(Pred::eq, q, g.c32(0)), deliverAcc);
        setMaxRegs(false, regs.launch, consumersMeet);
        return {};
      });
  // No block of a cluster leaves while another may still release a slot
  // of its ring.
  if (CL > 1)
    clusterSync();
  // Split-K: every thread of the block meets here; the last block to
  // arrive runs the epilogue on the totals.
  Value firstTurn =
      KW == 1 ? isConsumer : g.andi(isConsumer, g.cmp(Pred::eq, q, g.c32(0)));
  splitKFinish(count, [&](int64_t) { return firstTurn; }, mOf, nOf);
}
