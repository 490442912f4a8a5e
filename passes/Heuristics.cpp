//===- Heuristics.cpp - Start schedules for a target GPU ------------------===//
//
// The rules of thumb behind mtc-assign-schedules and the tuner's starts. Each
// starts from what measured best (bench/results) and backs off until
// checkSchedule accepts it and its shared memory fits the target, so it is
// legal whatever its numbers. Waves, L2, shared memory and the loads in
// flight come from the target (ScheduleTarget); the H200 numbers in the
// comments are where the rules were measured.
//
//===----------------------------------------------------------------------===//
#include "passes/Heuristics.h"
#include "dialects/Kernel/KernelOps.h"
#include "passes/HeuristicsSupport.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::kernel;

/// defaultSchedule's `why` while it runs (HeuristicsSupport.h's noteRule).
static thread_local llvm::SmallVectorImpl<std::string> *ruleNotes = nullptr;

void mtc::noteRule(const llvm::Twine &why) {
  if (ruleNotes)
    ruleNotes->push_back(why.str());
}
bool mtc::notingRules() { return ruleNotes != nullptr; }
size_t mtc::noteMark() { return ruleNotes ? ruleNotes->size() : 0; }
void mtc::noteRollback(size_t mark) {
  if (ruleNotes)
    ruleNotes->truncate(mark);
}
std::string mtc::lastNote() {
  return ruleNotes && !ruleNotes->empty() ? ruleNotes->back() : "";
}

/// From this many activation rows on, the heuristic start is the tiled kind.
/// At M = 16 it wins on 8192x8192 (21.1 us against the mma start's 28.2) but
/// loses on the 4096-wide shapes (4096x4096: 11.2 us, tuned mma 7.5), so
/// M <= 16 starts on mma unless the tiled start shares its activations
/// over most of the machine (sharesActivations), and the tuner tries both
/// (bench/results/2026-11-30-tiled).
static constexpr int64_t kTiledFromM = 17;
/// The tiled start's load width at M <= 32: 64 k's a lane, 256-wide K
/// tiles (it narrows them where K is no multiple of 256).
static constexpr int64_t kTiledWideVec = 64;

/// int8 weights at M = 17 to 32, where the tiled start's block shape and
/// split are chosen by its own rules (defaultTiledSchedule).
static bool int8M17To32(const ContractShape &c) {
  return c.m >= kTiledFromM && c.m <= 32 && dtypeBits(c.b) == 8;
}

/// The heuristic tiled start, from H200 measurements of the suite's int8
/// linears (bench/results/2026-11-30-tiled/points*.txt): small blocks of 2
/// to 4 warps, each warp on 16 or 32 weight rows and up to 64 activation
/// rows, 256-wide K tiles four deep in the ring, several blocks per
/// multiprocessor; split-K only when the blocks leave a quarter of the
/// multiprocessors idle (its atomics cost more than they bring otherwise).
static std::optional<ScheduleParams>
defaultTiledSchedule(const ContractShape &c, const ScheduleTarget &t) {
  ScheduleParams s;
  s.kind = ScheduleKind::tiled;
  s.mtile = std::min<int64_t>(llvm::alignTo(c.m, 8), 64);
  s.mwarps = 1;
  s.unroll = s.splitk = 1;
  s.stages = 4;
  if (c.m < kTiledFromM) {
    // Four warps of 16 weight rows by all of M (up to 16), 256-wide K
    // tiles: the activations staged once serve 64 weight rows
    // (sharesActivations).
    s.warps = 4, s.rows = 1, s.kwarps = 1;
    s.vec = kTiledWideVec;
    noteRule("M <= 16: four warps of 16 weight rows by all of M, 256-wide K "
             "tiles (the activations staged once serve 64 weight rows)");
  } else if (c.m <= 32) {
    // Two warps of 16 weight rows by all of M, 256-wide K tiles.
    s.warps = 2, s.rows = 1, s.kwarps = 1;
    s.vec = kTiledWideVec;
    noteRule("M = 17 to 32: two warps of 16 weight rows by all of M, "
             "256-wide K tiles");
  } else if (c.m <= 64) {
    // 32 weight rows per warp, two warps along N and two splitting K.
    s.warps = 4, s.rows = 2, s.kwarps = 2;
    s.vec = 32;
    noteRule("M = 33 to 64: 32 weight rows a warp, two warps along N and two "
             "splitting K");
  } else {
    // Two warps of 32 weight rows by 64 rows of M. int4, with its scales
    // and zeros, is there at the edge of the register file: left to itself
    // ptxas spilled 28 bytes at 255 registers (4096 x 14336, M = 128,
    // sm_90); given .maxnreg 255 it fits in 254 (110.8 us against 135.1,
    // bench/results/2026-12-04-int4-siblings).
    s.warps = 2, s.rows = 2, s.kwarps = 1;
    s.vec = 32;
    noteRule("M > 64: two warps of 32 weight rows by 64 rows of M");
    if (c.b == DType::I4) {
      s.regs = 255;
      noteRule("int4: .maxnreg 255 (at its own register count ptxas "
               "spilled)");
    }
  }
  // 16-bit weights: twice the registers per weight row (ptxas spills 32
  // rows per warp of f16 weights at M = 40).
  if (dtypeBits(c.b) > 8 && s.rows > 1) {
    s.rows = 1;
    noteRule("16-bit weights: 16 weight rows a warp (32 spill)");
  }
  int64_t wideVec = s.vec;
  while (s.vec > 16 && c.k % (4 * s.vec * s.kwarps))
    s.vec /= 2;
  if (c.k % (4 * s.vec * s.kwarps))
    s.kwarps = 1;
  if (s.vec != wideVec)
    noteRule("K = " + Twine(c.k) + " is no multiple of " +
             Twine(4 * wideVec * s.kwarps) + ": vec " + Twine(s.vec));
  // Its blocks, and split-K toward three quarters of a wave where they are
  // fewer (each piece keeping two rings' worth of K tiles).
  auto splitToFill = [&](ScheduleParams &s) {
    ContractGeometry g = contractGeometry(c, s);
    int64_t blocks = g.gridN * g.gridM, tiles = c.k / g.chunk;
    while (s.splitk < 16 && blocks * s.splitk < fillBlocks(t) &&
           tiles / (s.splitk * 2) >= 2 * s.stages)
      s.splitk *= 2;
    return blocks;
  };
  int64_t blocks = splitToFill(s);
  if (int8M17To32(c)) {
    // At M = 17 to 32 the activations of a K tile weigh twice a 32-row
    // block's int8 weights, and each block reads them from L2; its 96 KiB
    // ring leaves two such 2-warp blocks a multiprocessor. Four warps of
    // 32 rows (128 rows a block) read a quarter of those bytes per weight
    // byte, and win wherever their blocks still keep the machine busy: by
    // themselves (14336 x 4096 at M = 32: 21.6 us against 26.3; 28672 x
    // 4096 42.2 against 49.9; 128256 x 4096 179.4 against 221.8), or
    // split along K where the 32-row blocks would hold one multiprocessor
    // each anyway (4096 x 14336, 128 of them: split 4 ways, 29.7 against
    // 38.2). Split where the 32-row blocks fill more than a wave, they lost
    // (8192 x 8192: 34.0 against 24.5; 6144 x 4096: 19.2 against 13.7;
    // bench/results/2026-12-06-m32, an H200).
    //
    // Unsplit, their ring decides how the grid runs. A 256-wide K tile's
    // ring (192 KiB) holds a multiprocessor per block, so the blocks run
    // in waves of one a multiprocessor, and where the last wave leaves
    // more than a fifth of the waves' slots empty the idle multiprocessors
    // cost more than the reads saved: 19968 x 6656 (156 blocks, two waves
    // 59% full) 71.0 us against 61.2, 22016 x 4096 (65%) 46.4 / 40.6,
    // 35840 x 6656 (71%) 107.8 / 100.3, 37888 x 3584 (75%) 63.1 / 60.1;
    // from 82% full they won, 27648 x 5120 58.5 / 63.7, 44032 x 8192
    // (87%) 134.9 / 152.5. Narrower K tiles' rings (48 or 96 KiB) hold two
    // to four blocks a multiprocessor at once: they won wherever every
    // multiprocessor had one (21632 x 19072, 169 blocks: 159.6 / 198.2;
    // 27072 x 24896 334.2 / 354.4) and lost where some had none (14976 x
    // 4288, 117 blocks: 34.7 / 32.0) (bench/results/2026-12-07-m16, c1,
    // an H100 with 132 multiprocessors).
    ScheduleParams wide = s;
    wide.warps = 4, wide.rows = 2, wide.splitk = 1;
    int64_t wideBlocks = splitToFill(wide);
    bool fills = wideBlocks * wide.splitk >= fillBlocks(t);
    if (fills && wide.splitk == 1) {
      int64_t shared = contractLaunchConfig(c, wide).sharedBytes();
      bool onePerSM = 2 * shared > t.maxSharedPerBlock;
      fills =
          onePerSM ? waveFill(wideBlocks, t) >= 0.8 : wideBlocks >= t.numSMs;
      if (!fills)
        noteRule("M = 17 to 32, int8: not four warps of 32 weight rows: "
                 "their " +
                 plural(wideBlocks, "block", "blocks") +
                 (onePerSM ? " of a multiprocessor each fill " +
                                 percent(waveFill(wideBlocks, t)) +
                                 "% of their waves (under 80%)"
                           : " leave some of the " + Twine(t.numSMs) +
                                 " multiprocessors without one"));
    }
    if (fills && (wide.splitk == 1 || blocks <= t.numSMs)) {
      noteRule("M = 17 to 32, int8: four warps of 32 weight rows (128 a "
               "block) read a quarter of the activations a weight byte; " +
               Twine(wideBlocks) + " blocks" +
               (wide.splitk > 1 ? ", K split " + Twine(wide.splitk) +
                                      " ways (the 32-row blocks would hold "
                                      "one multiprocessor each)"
                                : Twine("")));
      s = wide;
      blocks = wideBlocks;
    }
    // 32-row blocks unsplit and at most one a multiprocessor: two tiles of
    // 16 rows of M double the blocks and halve each block's ring, so the
    // multiprocessors hold more loads in flight (4096 x 4096 at M = 32,
    // 128 blocks: 11.3 us against 12.9; 2048 x 2048 to 3584 x 4096, 64 to
    // 112 blocks: 1.13-1.17x; at M = 24, 13.1 against 13.7). Each tile
    // reads all the weight rows, so the second must hold at least half a
    // tile of M: at M = 17 (16 rows and 1) 4096 x 4096 took 17.2 us
    // against 14.5. From more than a wave the halved blocks lost (4608 x
    // 3584, 144 blocks: 14.4 against 12.2; 6144 x 4096 16.2 against 13.8)
    // (bench/results/2026-12-07-m32-split, an H100).
    constexpr int64_t kHalfRows = 16;
    if (s.warps == 2 && s.splitk == 1 && blocks <= t.numSMs &&
        2 * (c.m - kHalfRows) >= kHalfRows) {
      s.mtile = kHalfRows;
      ContractGeometry g = contractGeometry(c, s);
      noteRule("M = 24 to 32, int8: the " + plural(blocks, "block", "blocks") +
               " of 32 weight rows fit one wave: two tiles of 16 rows of M "
               "make " +
               Twine(g.gridN * g.gridM));
      blocks = g.gridN * g.gridM;
    }
  }
  if (s.splitk > 1)
    noteRule("split K " + Twine(s.splitk) + " ways: " + Twine(blocks) +
             " blocks are fewer than three quarters of a wave (" +
             Twine(fillBlocks(t)) + ")");
  bool legal = shrinkUntilLegal(c, s, t, [](ScheduleParams &s) {
    if (s.stages > 2)
      --s.stages;
    else if (s.vec > 16)
      s.vec /= 2;
    else if (s.kwarps > 1)
      s.kwarps /= 2;
    else if (s.rows > 1)
      s.rows /= 2;
    else if (s.mtile > 8)
      s.mtile -= 8;
    else
      return false;
    return true;
  });
  return legal ? std::optional(s) : std::nullopt;
}

/// From this many activation rows on, the heuristic start on sm_90a is the
/// wgmma kind: at M = 64 it is faster than the tiled start on six of the
/// seven suite shapes (4096 x 14336: 35.7 us against 52.9; 8192 x 8192:
/// 35.6 against 34.7), at M = 32 on one of three
/// (bench/results/2026-12-01-cluster).
static constexpr int64_t kWgmmaFromM = 64;

/// Whether the tiled start `tiled` beats mma's at M = 9 to 16. There mma
/// multiplies each 16-row weight tile by two 8-row activation tiles that
/// every warp loads for itself from L2: 2 bytes of activations per int8
/// weight byte (4 per int4 byte), so L2 carries three times what DRAM does
/// and bounds the kernel (14336 x 4096 at M = 16: 21.7 us, about 8 TB/s
/// through L2). The tiled start stages the activations in shared memory
/// once for a block's 64 weight rows, a quarter of those bytes, and wins
/// where its blocks, one per multiprocessor, keep most of the machine busy:
/// 18.2 us there, 35.6 against 42.3 on 28672 x 4096, 151.3 against 220.3
/// on 128256 x 4096 (bench/results/2026-12-05-stream). Through L2 at about
/// 1.65x DRAM's bandwidth (8.1 TB/s measured, 4.9 rated), mma's three
/// bytes per weight byte stream the weight at about 0.55 of DRAM's rate;
/// the tiled blocks on a fraction f of the multiprocessors stream it at
/// about f of it. So tiled wins from f a little over a half: it takes
/// three quarters, for margin. On an H100, 8192 x 8192 at M = 16 (128
/// blocks on 132 multiprocessors) took 26.6 us tiled against 32.7 mma
/// (bench/results/2026-12-05-m16-tiled), which a full wave as the bar
/// left on mma. With half the machine idle mma wins (4096 x 4096 at
/// M = 16, 64 blocks: 11.2 us tiled, 7.5 mma; 2026-11-30-tiled). The
/// three quarters hold for 256-wide K tiles only. Where K is no multiple
/// of 256 the start narrows them (vec 16 or 32), each block streams less
/// per K step, and tiled needs a full wave: below one it lost to mma by
/// 1.26x to 1.61x (7040 x 27584, 7296 x 15040 and 8064 x 15552 at M = 12
/// and 16, the same run); from one it won in 10 of 12 zoo shapes, up to
/// 1.52x (24128 x 4992 at M = 16: 43.4 us against 66.1; 21632 x 19072:
/// 140.8 against 205.8), and lost on 14976 x 4288 (31.2 against 29.2) and
/// 12480 x 15424 at M = 12 (96.1 against 78.8;
/// bench/results/2026-12-05-fuse-rows, an H100).
/// int4 keeps mma: the GPU matrix passes this start on it (its 256-wide K
/// tiles hold two groups of 128), but it took 0.96x to 1.16x of mma's time
/// on three shapes, and 8192 x 8192 at M = 16 26.2 us against 22.5
/// (bench/results/2026-12-06-probe).
static bool sharesActivations(const ContractShape &c,
                              const ScheduleParams &tiled,
                              const ScheduleTarget &t,
                              std::string *whyNot = nullptr) {
  auto no = [&](std::string why) {
    if (whyNot)
      *whyNot = std::move(why);
    return false;
  };
  if (c.m <= kMmaColsPerTile)
    return no("M <= 8: one 8-row tile of A a warp, a weight stream");
  if (c.b == DType::I4)
    return no("int4 keeps mma (the tiled start lost on three shapes)");
  ContractGeometry g = contractGeometry(c, tiled);
  int64_t blocks = g.gridN * g.gridM;
  if (tiled.splitk != 1)
    return no("the tiled start would split K");
  bool wide = tiled.vec == kTiledWideVec;
  if (wide ? 4 * blocks >= 3 * t.numSMs : blocks >= t.numSMs)
    return true;
  return no("its " + plural(blocks, "block", "blocks") +
            " would keep fewer "
            "than " +
            (wide ? "three quarters of the " : "all ") +
            std::to_string(t.numSMs) + " multiprocessors busy");
}

std::optional<ScheduleParams>
mtc::defaultContractSchedule(const ContractShape &c, ScheduleKind kind,
                             const ScheduleTarget &target) {
  if (kind == ScheduleKind::wgmma)
    return target.wgmma ? defaultWgmmaSchedule(c, target) : std::nullopt;
  if (kind == ScheduleKind::mma || kind == ScheduleKind::tiled) {
    if (!mmaSupport(c, c.mmaAChain, c.mmaBChain || c.factoredB).empty())
      return std::nullopt;
    return kind == ScheduleKind::mma ? defaultMmaSchedule(c, target)
                                     : defaultTiledSchedule(c, target);
  }
  if (kind != ScheduleKind::simt)
    return std::nullopt;
  ScheduleParams s = defaultSimtSchedule(c, target);
  if (!legalOn(c, s, target))
    return std::nullopt;
  return s;
}

ScheduleParams mtc::defaultContractSchedule(const ContractShape &c,
                                            const ScheduleTarget &target) {
  // A prologue, or siblings, need a kind that holds A and the sums in
  // registers (simt, mma).
  bool staged = !c.aPrologue && c.weights == 1;
  std::string m = "M = " + std::to_string(c.m);
  if (target.wgmma && c.m >= kWgmmaFromM) {
    if (!staged) {
      noteRule("not wgmma at " + m + ": " +
               (c.aPrologue ? "a prologue" : "siblings") +
               " need A and the sums in registers (simt, mma)");
    } else {
      size_t mark = noteMark();
      noteRule("wgmma: an sm_90a target and " + m +
               " >= " + Twine(kWgmmaFromM));
      if (std::optional<ScheduleParams> wgmma = defaultWgmmaSchedule(c, target))
        return *wgmma;
      std::string why = lastNote();
      noteRollback(mark);
      noteRule("not wgmma: no legal start" +
               (why.empty() ? "" : " (" + why + ")"));
    }
  }
  // int4 weights take tensor cores from M = 1: on CUDA cores their
  // conversion, dequantization and the split of each bf16 pair into two
  // f32 for the FMAs leave the kernel bound by integer instructions
  // (8192 x 8192: 18.7 us simt, 17.4 mma).
  bool fromOne = c.b == DType::I4;
  std::string noMma = mmaSupport(c, c.mmaAChain, c.mmaBChain || c.factoredB);
  if ((c.m >= 2 || fromOne) && noMma.empty()) {
    if (staged) {
      // Built without notes first (and again, to note why, only where
      // they are asked for): only the start taken explains itself.
      size_t mark = noteMark();
      std::optional<ScheduleParams> tiled = defaultTiledSchedule(c, target);
      std::string tiledFailed = tiled ? "" : lastNote();
      noteRollback(mark);
      // Where the tiled start of int8 weights at M = 17 to 63 splits K
      // (its blocks are too few for the machine), wgmma's blocks of 64
      // weight rows split it better: 4096 x 14336 at M = 32, 27.1 us
      // against 33.0; 3520 x 22016 34.4 against 56.7; 2048 x 8192 at
      // M = 17 11.9 against 22.4 (the zoo's eleven such shapes at M = 32,
      // 1.18-1.75x; bench/results/2026-12-07-m32-split). At M = 48 the
      // schedule it now takes ran 1.25-1.91x faster on the 21 such zoo
      // shapes timed, geomean 1.54x (6144 x 4096 15.6 us against 29.5;
      // 2048 x 8192 13.4 against 17.4; bench/results/2026-12-08-m48; the
      // 22nd, 12480 x 15424, takes clusters and was not timed). Both on an
      // H100.
      bool int8BelowWgmma =
          c.m >= kTiledFromM && c.m < kWgmmaFromM && dtypeBits(c.b) == 8;
      if (tiled && tiled->splitk > 1 && target.wgmma && int8BelowWgmma) {
        size_t wmark = noteMark();
        noteRule("wgmma at " + m + ": the tiled start would split K " +
                 Twine(tiled->splitk) + " ways");
        if (std::optional<ScheduleParams> w = defaultWgmmaSchedule(c, target))
          return *w;
        noteRollback(wmark);
      }
      std::string notShared;
      if (tiled && (c.m >= kTiledFromM ||
                    sharesActivations(c, *tiled, target, &notShared))) {
        if (c.m >= kTiledFromM)
          noteRule("tiled: " + m + " >= " + Twine(kTiledFromM));
        else
          noteRule("tiled at " + m +
                   ": blocks of 64 weight rows stage the "
                   "activations once, and keep the machine busy "
                   "(sharesActivations)");
        return notingRules() ? *defaultTiledSchedule(c, target) : *tiled;
      }
      if (!tiled && c.m >= kTiledFromM)
        noteRule("not tiled: no legal start (" + tiledFailed + ")");
      else if (tiled && c.m < kTiledFromM && c.m > kMmaColsPerTile)
        noteRule("not tiled at " + m + ": " + notShared);
    }
    size_t mark = noteMark();
    if (c.m >= 2)
      noteRule("mma: " + m + ", tensor cores fed from registers");
    else
      noteRule("mma: int4 weights take tensor cores from M = 1 (on CUDA "
               "cores their conversion bounds the kernel)");
    if (std::optional<ScheduleParams> mma = defaultMmaSchedule(c, target))
      return *mma;
    std::string why = lastNote();
    noteRollback(mark);
    noteRule("not mma: no legal start" + (why.empty() ? "" : " (" + why + ")"));
  }
  if (!noMma.empty() && (c.m >= 2 || fromOne))
    noteRule("simt: tensor cores cannot run it (" + noMma + ")");
  else if (c.m < 2 && !fromOne)
    noteRule("simt: M = 1 with " + Twine(dtypeBits(c.b)) +
             "-bit weights, a stream on CUDA cores");
  else
    noteRule("simt: no tensor-core start is legal");
  return defaultSimtSchedule(c, target);
}

ScheduleParams mtc::defaultSchedule(Operation *op, const ScheduleTarget &target,
                                    llvm::SmallVectorImpl<std::string> *why) {
  // The notes go to `why` while this runs (nested calls keep theirs).
  llvm::SmallVectorImpl<std::string> *outer = ruleNotes;
  ruleNotes = why;
  llvm::scope_exit restore([&] { ruleNotes = outer; });
  if (auto c = dyn_cast<ContractOp>(op))
    return defaultContractSchedule(contractShape(c), target);
  if (auto r = dyn_cast<ReduceOp>(op)) {
    // 16 bytes a lane and load. A row's sum is a chain of latencies (its
    // loads, then the butterfly), not a stream: spread each row over up to
    // 8 warps that meet in shared memory, each keeping at least two warp
    // steps of its own. (RMSNorm of 4096 bf16, 16 steps: a block of 8
    // warps a row took 2.1 us at M = 1 to 64 on an H200, 4 warps 2.5, one
    // warp 4.0, and blocks of 4 rows of one warp 6.3-6.8;
    // bench/results/2026-12-05-norm-pdl.) Rows too short to share: a warp per
    // row, blocks of up to 4 rows.
    ScheduleParams s;
    s.kind = ScheduleKind::reduce;
    s.rows = s.mtile = s.splitk = 1;
    unsigned bits = 8;
    for (Value v : r.getInputs())
      bits = std::max(bits, cast<RankedTensorType>(v.getType())
                                .getElementType()
                                .getIntOrFloatBitWidth());
    s.vec = std::clamp<int64_t>(128 / bits, 1, 8);
    int64_t steps = llvm::divideCeil(int64_t(r.getExtent()), 32 * s.vec);
    // The largest power of two in [1, 8] that is at most n.
    auto upTo8 = [](int64_t n) {
      return std::clamp<int64_t>(int64_t(llvm::bit_floor(uint64_t(n))), 1, 8);
    };
    s.kwarps = upTo8(steps / 2);
    s.warps = s.kwarps > 1
                  ? s.kwarps
                  : std::min<int64_t>(4, llvm::PowerOf2Ceil(r.getNumRows()));
    // A lane's steps in flight at once, up to 8.
    s.unroll = upTo8(llvm::divideCeil(steps, s.kwarps));
    if (s.kwarps > 1)
      noteRule("a row of " + Twine(r.getExtent()) + " in " + Twine(steps) +
               " warp steps of " + Twine(s.vec) + " elements a lane: " +
               Twine(s.kwarps) + " warps share it, each keeping " +
               Twine(s.unroll) + " steps in flight");
    else
      noteRule("a row of " + Twine(r.getExtent()) +
               " is too short to share "
               "(" +
               Twine(steps) + " warp steps): a warp a row, " +
               plural(s.warps, "row", "rows") + " a block");
    return s;
  }
  ScheduleParams s;
  s.kind = ScheduleKind::elementwise;
  s.warps = 4;
  s.vec = 4;
  s.rows = s.kwarps = s.unroll = s.mtile = s.splitk = 1;
  // Huge tensors: bigger blocks until the grid fits (2^40 elements need at
  // most 32 warps of 16 elements per thread).
  int64_t n = numElementsOf(op->getResult(0).getType());
  while (!checkElementwiseSchedule(n, s).empty() && s.warps < 32)
    s.warps *= 2;
  while (!checkElementwiseSchedule(n, s).empty() && s.vec < 16)
    s.vec *= 2;
  noteRule(s.warps == 4 && s.vec == 4
               ? Twine("4 warps a block, 4 elements a thread")
               : "blocks of " + Twine(s.warps) + " warps and " + Twine(s.vec) +
                     " elements a thread: at 4 and 4 the " + Twine(n) +
                     " elements need too many blocks");
  return s;
}
