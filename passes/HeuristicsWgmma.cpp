//===- HeuristicsWgmma.cpp - The wgmma kind's start schedule --------------===//
//
// The heuristic start of the wgmma kind (sm_90a), at M >= 64 and, where
// the tiled start would split K, at M = 17 to 63; the other kinds' are in
// Heuristics.cpp.
//
//===----------------------------------------------------------------------===//
#include "dialects/Kernel/KernelOps.h"
#include "passes/HeuristicsSupport.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::kernel;

/// The heuristic wgmma start (sm_90a), from H200 points
/// (bench/results/2026-12-01-wgmma, -cluster, -consumer, 2026-12-02-convert
/// and -final) and H100 points (2026-12-07-waves).
///
/// Up to M = 256 a block holds all of M as wgmma's N, unless two tiles of
/// M fit one wave where one would need split-K and the weight fits half of
/// L2: 4096 x 4096 takes 14.9 us against 17.4 at M = 128 and 17.0 against
/// 26.5 at M = 256 (4096 x 14336, whose weight does not fit, 48.2 against
/// 37.1 at M = 128). Where tiles of up to 128 rows fit one wave of 132
/// multiprocessors, two warpgroups take turns at the K tiles (kwarps 2),
/// split-K going only as far as that wave, with a ring of eight: 6144 x
/// 4096 at M = 128 takes 19.2 us against 26.8 for split-K 2's 192 blocks,
/// 8192 x 8192 at M = 64 30.5 against 32.1. Otherwise split-K fills about
/// 100 blocks. The ring is deep unless more than a wave could run two to a
/// multiprocessor (M = 128 on 14336 x 4096: 34.6 us with four stages, 42.5
/// with six).
///
/// Tiles wider than 128 rows of M (above M = 256: 256 rows, the consumers
/// taking the producer's registers, setmaxnreg) hold a multiprocessor each,
/// so their grid runs in waves. Two warpgroups of 64 weight rows do about
/// 12% more per block than one and are taken unless one warpgroup's blocks
/// fill their waves 10% better all the same: 8192 x 8192 at M = 1024 takes
/// 196.0 us against 220.2 for one warpgroup, but 6144 x 4096 at M = 1024
/// (192 blocks of two, 1.45 waves; 384 of one, 2.91) 95.1 against 81.7. On
/// an H100 (2026-12-07-waves) that rule at M = 256, where one warpgroup had
/// been the rule, ran 15 shapes 1.09x faster (12480 x 15424: 195 blocks in
/// two waves, 185.2 us; 98 in one, 154.4), and without the old floor of
/// 100 blocks of two at M > 256 it runs 5120 x 5120 at M = 512 in one wave
/// of 80 blocks instead of two of 160, 55.3 us against 66.8. Wide tiles
/// split K only within the wave (6144 x 4096 at M = 256, 96 blocks: 25.8 us
/// unsplit, 42.9 with split-K 2) and, above M = 256, not at all: split
/// there lost on every shape measured but one, 1.2-2.2x (3072 x 2048 at
/// M = 512, 192 blocks of half K against 96 of all: 36.1 us against 16.4;
/// 2048 x 2048 in one wave, 23.3 against 15.1; 2048 x 8192 won, 40.1
/// against 45.1).
///
/// Clusters gain 2-4% at M >= 1024 and lose up to 7% on the many-block
/// shapes at M = 128 and 256; at M = 64 a cluster of two shares the
/// activations where more than a wave runs without split-K (14336 x 4096:
/// 29.4 us against 37.4 for the tiled start).
std::optional<ScheduleParams>
mtc::defaultWgmmaSchedule(const ContractShape &c, const ScheduleTarget &t) {
  ScheduleParams s;
  s.kind = ScheduleKind::wgmma;
  s.rows = s.kwarps = s.unroll = s.mwarps = 1;
  s.mtile = c.m <= 256 ? int64_t(llvm::alignTo(c.m, 8)) : 256;
  s.vec = 16;
  s.stages = 4;
  s.splitk = 1;
  auto blocksOf = [&](const ScheduleParams &t) {
    ScheduleParams u = t;
    deriveScheduleFields(u);
    ContractGeometry g = contractGeometry(c, u);
    return g.gridN * g.gridM;
  };
  if (c.m >= 128 && c.m <= 256) {
    // Two tiles of M instead of split-K, where both fit one wave and the
    // weight fits half of L2 (the second tile reads it from there).
    ScheduleParams half = s;
    half.mtile = int64_t(llvm::alignTo(llvm::divideCeil(c.m, 2), 8));
    if (blocksOf(s) < fillBlocks(t) && blocksOf(half) <= t.numSMs &&
        c.weightBytes(c.n * c.k) <= t.l2Bytes / 2) {
      s.mtile = half.mtile;
      noteRule("two tiles of " + Twine(s.mtile) +
               " rows of M instead of "
               "split K: both fit one wave, and the weight fits in half of L2");
    }
  }
  // Tiles wider than 128 rows of M hold a multiprocessor each (their ring
  // takes most of shared memory), so their grid runs in waves of numSMs.
  bool wide = s.mtile > 128;
  if (wide) {
    // Two warpgroups of rows do about 12% more per block than one, so they
    // stay unless one warpgroup's blocks fill their waves enough better to
    // be 10% faster all the same.
    ScheduleParams two = s;
    two.rows = 2;
    constexpr double kTwoRowsGain = 1.12, kClearWin = 1.1;
    constexpr double kOneRowNeeds = kTwoRowsGain * kClearWin;
    int64_t oneBlocks = blocksOf(s), twoBlocks = blocksOf(two);
    double oneFill = waveFill(oneBlocks, t), twoFill = waveFill(twoBlocks, t);
    std::string needs = llvm::formatv("{0:F2}x", kOneRowNeeds).str();
    if (oneFill <= kOneRowNeeds * twoFill) {
      s.rows = 2;
      noteRule("two warpgroups of rows (" + percent(kTwoRowsGain - 1) +
               "% more work a block): " + Twine(twoBlocks) + " blocks fill " +
               percent(twoFill) + "% of their waves, one warpgroup's " +
               Twine(oneBlocks) + " " + percent(oneFill) + "% (under " + needs +
               " that)");
    } else {
      noteRule("one warpgroup of rows: its " + Twine(oneBlocks) +
               " blocks fill " + percent(oneFill) + "% of their waves, over " +
               needs + " two warpgroups' " + Twine(twoBlocks) + " (" +
               percent(twoFill) + "%)");
    }
  }
  deriveScheduleFields(s);
  int64_t blocks = blocksOf(s);
  int64_t tiles = llvm::divideCeil(c.k, kWgmmaTileK);
  auto splitWhile = [&](auto more) {
    while (s.splitk < 16 && more(blocks * s.splitk) &&
           tiles / (s.splitk * 2) >= 2 * s.stages)
      s.splitk *= 2;
  };
  // Wide tiles never split past the wave (nor take turns), and above
  // M = 256 not at all (measured above).
  splitWhile([&](int64_t b) {
    return b < fillBlocks(t) && (!wide || (c.m <= 256 && 2 * b <= t.numSMs));
  });
  noteRule("mtile " + Twine(s.mtile) + ": " + Twine(blocks) + " blocks" +
           (s.splitk > 1 ? ", K split " + Twine(s.splitk) +
                               " ways toward three quarters of a wave (" +
                               Twine(fillBlocks(t)) + ")"
                         : Twine("")));
  auto sharedWith = [&](int64_t stages) {
    ScheduleParams t = s;
    t.stages = stages;
    return contractLaunchConfig(c, t).sharedBytes();
  };
  bool turns = c.m <= 256 && blocks <= t.numSMs && !wide;
  if (turns) {
    s.kwarps = 2;
    s.stages = 8;
    s.splitk = 1;
    // Where two blocks or more share a multiprocessor (the ring of 8 at
    // M <= 32, where the tiled start would split K), split until the
    // blocks number a wave (4096 x 14336 at M = 32, 64 blocks: split 4
    // ways 27.2 us, 2 ways 30.3; 3072 x 24576, 48 blocks: 4 ways 35.7, 8
    // ways 41.0; 2026-12-07-m32-split, an H100). From M = 33 they split
    // until they number half a wave, as at M = 64 (2026-12-01-wgmma): at
    // M = 48 that was the faster of the two splits timed on 20 of the 21
    // zoo shapes that take this path (6144 x 6144: unsplit 22.3 us, split
    // 2 ways 29.6; 2048 x 8192: 4 ways 13.4, 8 ways 16.6), and 0.1 us
    // slower on the last (3520 x 2752) (2026-12-08-m48, an H100).
    bool coresident = c.m <= 32 && 2 * sharedWith(8) <= t.maxSharedPerBlock;
    splitWhile([&](int64_t b) {
      return coresident ? b < t.numSMs : 2 * b <= t.numSMs;
    });
    noteRule(
        "two consumer warpgroups take turns over an 8-deep ring: the " +
        Twine(blocks) + " blocks fit one wave" +
        (s.splitk > 1 ? ", K split " + Twine(s.splitk) + " ways" : Twine("")) +
        (coresident ? " (two or more share a multiprocessor: split until "
                      "they number a wave)"
                    : ""));
  } else if (c.m <= 64) {
    s.stages = 8;
    s.cluster = s.splitk == 1 && blocks > t.numSMs ? 2 : 1;
    noteRule(s.cluster == 2 ? "an 8-deep ring; clusters of two share each "
                              "weight tile's load (more blocks than a wave)"
                            : "an 8-deep ring");
  } else if (c.m <= 256) {
    bool twoPerSM = 2 * sharedWith(4) <= t.maxSharedPerBlock;
    int64_t deep = s.rows == 2 ? 4 : s.mtile <= 128 ? 6 : 5;
    if (!(twoPerSM && blocks * s.splitk > t.numSMs) &&
        sharedWith(deep) <= t.maxSharedPerBlock)
      s.stages = deep;
  } else {
    s.stages = s.rows == 2 ? 4 : 5;
    s.cluster = 2;
    noteRule("M > 256: clusters of two share each weight tile's load");
  }
  deriveScheduleFields(s);
  bool legal = shrinkUntilLegal(c, s, t, [](ScheduleParams &s) {
    if (s.stages > 2 * s.kwarps)
      --s.stages;
    else if (s.kwarps > 1)
      s.kwarps /= 2;
    else if (s.mtile > 8)
      s.mtile -= 8;
    else
      return false;
    deriveScheduleFields(s);
    return true;
  });
  return legal ? std::optional(s) : std::nullopt;
}
