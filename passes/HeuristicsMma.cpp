//===- HeuristicsMma.cpp - The mma kind's start schedule ------------------===//
//
// The heuristic start of the mma kind (tensor cores fed from registers, up
// to M = 32): a weight stream to M = 8, one 16-row tile a block above; the
// other kinds' are in Heuristics.cpp and HeuristicsWgmma.cpp.
//
//===----------------------------------------------------------------------===//
#include "dialects/Kernel/KernelOps.h"
#include "passes/HeuristicsSupport.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::kernel;

/// Bytes of weight loads in flight per multiprocessor that keep memory busy:
/// Little's law gives the bandwidth per multiprocessor times the loaded
/// latency (about 0.875 us), doubled for warps between rounds: 64 KiB on an
/// H200 (4916 GB/s over 132 multiprocessors), 43 KiB on an H100, 10 KiB on
/// an L40S. The mma rule below spreads K over warps until the machine has
/// this much in flight (bench/results/2026-12-04-rules). An unknown
/// bandwidth is taken as an H200's per multiprocessor.
static int64_t loadBytesInFlightPerSM(const ScheduleTarget &t) {
  constexpr double kLoadedLatencySeconds = 0.875e-6;
  const ScheduleTarget &known = t.memBandwidth > 0 ? t : ScheduleTarget();
  double perSM = double(known.memBandwidth) / double(known.numSMs);
  return int64_t(2 * kLoadedLatencySeconds * perSM);
}

/// Warps of an mma stream resident on one multiprocessor: its 54 to 64
/// registers a thread against the 64 Ki registers of every sm_80 to sm_90
/// multiprocessor.
static constexpr int64_t kStreamWarpsPerSM = 32;
/// Warps of an mma stream at about 100 to 128 registers a thread resident on
/// one multiprocessor (64 Ki / (128 x 32)): one block of 16 or two of 8.
/// Two-stage streams (two tiles a block, st2) hold that many (ptxas gave 64
/// to 108, int4 at M = 5 to 8), as do int4 streams without a register cap
/// (90 to 124, M = 1 and 4).
static constexpr int64_t kWideWarpsPerSM = 16;
/// Warps of an int4 stream of eight warps on K resident on one
/// multiprocessor at the registers ptxas chooses itself, 54 to 86 a thread
/// (M = 1 to 8): three blocks of eight at 80.
static constexpr int64_t kCappedStreamWarpsPerSM = 24;
/// The most warps of such a stream resident on one multiprocessor at the
/// fewest registers ptxas chose for one, 54 to 56 a thread: nine blocks of
/// four warps (four of eight).
static constexpr int64_t kLeanStreamWarpsPerSM = 36;
/// Warps of an int4 stream of two tiles a warp (r2) resident on one
/// multiprocessor: ptxas gave 96 to 166 registers a thread (M = 4), three
/// blocks of four warps at the most.
static constexpr int64_t kTwoTileWarpsPerSM = 12;
/// The weight bytes a lane of an mma kernel over several weights (siblings)
/// keeps in flight, at most: int8's stream (four steps of 32 bytes).
static constexpr int64_t kSiblingLaneBytes = 4 * 32;

/// The heuristic tensor-core start: one 16-row weight tile per warp, all of
/// M (up to 32 rows) in one block so every weight byte is read once, and
/// warps splitting K until loadBytesInFlightPerSM are in flight. A lane's
/// steps in flight hold its bytes: with a single 8-row tile of M (M <= 8)
/// the kernel is a weight stream of 32-byte loads (32 k's of int8, 64 of
/// int4), several steps in flight and every warp of a block on the same
/// weight rows. int4 streams at M = 1 took 1.02x to 1.07x less time with
/// 64 k's and two steps than with 32 k's and four, on six shapes from
/// 4096 x 4096 to 28672 x 4096, and the most warps on K won or tied on all
/// six; at M = 16 one 16-row tile per block, 8 warps on K, was 1.02x to
/// 1.13x faster than two tiles of 8 warps, or four warps on K, on four
/// (bench/results/2026-12-04-rules). The int8 stream's 32 k's and four
/// steps came from the suite's seven shapes at M = 2 (1.1x to 1.6x faster
/// than 16 k's and two steps; `git show
/// a15d773:bench/results/2026-11-29-rerun/heuristic_points.txt`).
std::optional<ScheduleParams> mtc::defaultMmaSchedule(const ContractShape &c,
                                                      const ScheduleTarget &t) {
  ScheduleParams s;
  s.kind = ScheduleKind::mma;
  s.rows = 1;
  s.mtile = std::min<int64_t>(llvm::alignTo(c.m, 8), 32);
  bool stream = s.mtile == kMmaColsPerTile;
  int64_t bits = dtypeBits(c.b);
  // A stream takes 32-byte loads, or the widest narrower load whose steps
  // (4 lanes' k's) divide K, with the steps in flight scaled up to hold the
  // same bytes, up to the four that int8's stream takes: int4's 64 k's and
  // two steps, or 32 and four where K is not a multiple of 256 (21632 x
  // 19072: 98.8 us against 113.7 for 16 k's and two steps).
  int64_t streamVec = 32 * 8 / bits; // a 32-byte load
  s.vec = 16;
  s.unroll = stream ? (bits < 8 ? 2 : 4) : 2;
  // An f32 dequantization applies a group's scale to a step's sums: its
  // steps stay inside a group (checkMmaSchedule).
  auto inGroup = [&](int64_t v) {
    return !c.factoredB || c.group % (4 * v) == 0;
  };
  if (stream)
    for (int64_t v = std::min<int64_t>(streamVec, 64); v >= 16; v /= 2)
      if (c.k % (4 * v) == 0 && inGroup(v)) {
        s.vec = v;
        s.unroll = std::min<int64_t>(4, s.unroll * streamVec / v);
        break;
      }
  if (stream)
    noteRule("a weight stream (M <= 8, one 8-row tile of A): " + Twine(s.vec) +
             " k's a lane a step, " + plural(s.unroll, "step", "steps") +
             " in flight");
  else
    noteRule("M = " + Twine(c.m) + ": " + Twine(s.mtile) +
             " rows of A a block, every weight byte read once; " +
             Twine(s.vec) + " k's a step, " + Twine(s.unroll) + " in flight");
  // An activation prologue computes every activation of a step in scalar
  // registers: with 16 rows and two steps in flight, int4's conversion
  // beside it spills (1024 x 2816, M = 16: 28 bytes).
  if (c.aPrologue && s.mtile > kMmaColsPerTile) {
    s.unroll = 1;
    noteRule("an activation prologue over more than 8 rows: one step in "
             "flight (two spill)");
  }
  // Siblings load a tile of each weight a step: a lane keeps at most the
  // bytes in flight of int8's stream (four steps of 32 bytes) over all the
  // weights, and a block may take 128 registers a thread. Left to itself
  // ptxas kept 4-warp blocks at 72 registers and spilled (int8 gate and up
  // of Llama-3-8B at M = 8); at 128 registers with all four of int8's
  // steps of each weight, it spilled on K = 1024 (M = 3 to 8). The cost
  // there: gate and up at M = 8 took 32.4 us with two steps of each, 31.4
  // with four (bench/results/2026-12-04-siblings, c4). int4's stream, two
  // steps of 32 bytes, keeps both of each weight: int4 gate and up of
  // Llama-3-8B at M = 1 took 22.9 us so, 26.1 with one step of each
  // (bench/results/2026-12-04-int4-siblings). Those bytes hold twice the
  // k's of int8's, and their conversion the registers: at 128 ptxas
  // spilled 24 to 68 bytes (K = 1024 to 8192, M = 1 to 8), at 168 none.
  if (c.weights > 1) {
    int64_t stepBytes = c.weightBytes(s.vec);
    s.unroll = std::max<int64_t>(
        1, std::min(s.unroll, kSiblingLaneBytes / (stepBytes * c.weights)));
    s.regs = s.unroll * s.vec * c.weights > 128 ? 168 : 128;
    noteRule(Twine(c.weights) +
             " weights (siblings): " + plural(s.unroll, "step", "steps") +
             " of each in flight, at most int8's stream's bytes a lane; "
             ".maxnreg " +
             Twine(s.regs));
  }
  s.splitk = 1;
  int64_t tiles =
      llvm::divideCeil(c.n, kMmaRowsPerTile) * llvm::divideCeil(c.m, s.mtile);
  // K steps. More warps split them while each keeps `unroll` steps, or,
  // where the warps' steps take more than one round of `unroll` in flight
  // (a warp with more waits a second memory latency), while each keeps one
  // and the grid still fits in one wave (a second wave of a few blocks
  // costs more than the shorter warps save). int4 at M = 1 and K = 3072
  // (12 steps of 64 k's, two in flight), 8 warps of 1.5 steps against 4
  // of 3: 3072 rows 5.0 us against 5.7, 8192 x 3584 8.0 against 8.3; 9216
  // rows, whose 576 blocks of 8 warps take two waves, 9.7 against 8.0
  // (bench/results/2026-12-06-probe).
  int64_t chunks = c.k / (4 * s.vec);
  // A warp's loads in flight: 32 lanes, `unroll` steps of `vec` k's, of
  // each weight.
  int64_t warpBytes = 32 * s.unroll * c.weightBytes(s.vec) * c.weights;
  auto oneWave = [&](int64_t kwarps) {
    return tiles * std::max<int64_t>(4, kwarps) <= kStreamWarpsPerSM * t.numSMs;
  };
  // Twice `kw` warps would each still keep `unroll` steps.
  auto keepsSteps = [&](int64_t kw) { return chunks / (2 * kw) >= s.unroll; };
  auto moreWarps = [&](int64_t kw) {
    return keepsSteps(kw) ||
           (chunks > kw * s.unroll && chunks >= 2 * kw && oneWave(2 * kw));
  };
  s.kwarps = 1;
  while (s.kwarps < 8 &&
         tiles * s.kwarps * warpBytes < loadBytesInFlightPerSM(t) * t.numSMs &&
         moreWarps(s.kwarps))
    s.kwarps *= 2;
  if (notingRules()) {
    int64_t inFlight = tiles * s.kwarps * warpBytes;
    std::string why =
        s.kwarps == 8 ? "the most"
        : inFlight >= loadBytesInFlightPerSM(t) * t.numSMs
            ? "the fewest that keep " +
                  std::to_string(loadBytesInFlightPerSM(t) / 1024) +
                  " KiB of loads in flight a multiprocessor (" +
                  std::to_string(inFlight / 1024) + " KiB in all)"
            : "more would leave a warp too few steps, or need a second wave";
    noteRule(plural(tiles, "tile", "tiles") + " of 16 weight rows; K over " +
             plural(s.kwarps, "warp", "warps") + ": " + why);
  }
  // Grids past the in-flight cap (several waves) stop it at one or two
  // warps on K, but an int4 stream's blocks there still gain from four:
  // shorter blocks end the last wave sooner. int4 at M = 1, heuristic
  // against four warps on K: 128256 x 4096 93.7 us against 85.8, 128256 x
  // 2048 47.7 / 43.7, 256000 x 3584 163.3 / 150.7, 37888 x 3584 28.4 /
  // 26.3, 57344 x 8192 84.2 / 81.3 (bench/results/2026-12-06-probe, c6;
  // int8 streams were not measured there).
  if (stream && bits < 8 && s.kwarps < 4 && keepsSteps(s.kwarps)) {
    while (s.kwarps < 4 && keepsSteps(s.kwarps))
      s.kwarps *= 2;
    noteRule("int4 past the in-flight cap: " + Twine(s.kwarps) +
             " warps on K all the same (shorter blocks end the last wave "
             "sooner)");
  }
  s.warps = std::max<int64_t>(4, s.kwarps);
  // Every block reads the stream's activations again: per k, M of them
  // against its tiles' 16 weights. Where those activations outweigh one
  // tile's weights (int4 at M = 5 to 8: 16 bytes against 8), a block
  // takes two tiles, and each warp loads its next step's weights while it
  // sums the current ones (two stages), in steps of half a load (64 k's
  // with two stages spilled). int4 at M = 8 on an H100, the old start
  // against two tiles of four warps on K: 8192 x 8192 25.9 us / 19.2,
  // 14336 x 4096 31.6 / 17.9, 28672 x 4096 47.9 / 32.1, 13824 x 5120 36.7
  // / 22.5. At M = 4 (equal bytes) it won 1.09x and 1.13x on two shapes
  // and lost up to 1.23x on two; at M = 16 (16-k steps, no stream) two
  // tiles lost too, 8192 x 8192 25.3 us against 22.2. Siblings and the f32
  // form keep theirs: neither was measured so.
  //
  // Two tiles halve the grid. Where the one-tile grid has fewer tiles than
  // the machine has multiprocessors, half of them would idle: 2048 x 8192
  // keeps one tile (8.7 / 8.7 / 8.4 us at M = 5 / 6 / 8, against 10.8 /
  // 10.8 / 11.7). The two-stage blocks hold about 100 registers a thread
  // (kWideWarpsPerSM). Where blocks of two tiles with the loop's eight
  // warps on K each fit in one wave at that, they keep the eight: 4096 x
  // 4096 6.5 us against 7.5 with four, 4096 x 14336 16.4 against 20.3 (M =
  // 8). Past one wave they take four, whose blocks pair up on a
  // multiprocessor: eight lost there, 5120 x 5120 14.1 us against 10.4
  // (M = 5), 8192 x 8192 19.0 against 16.8 (bench/results/2026-12-06-h100,
  // c2 and c3; 2026-12-06-two-tiles). On 22 zoo shapes not timed before:
  // 1.19x the one-tile start at M = 8, geomean, but only 1.05x at M = 5,
  // where 8 of them lost 4-12% (2026-12-06-two-tiles, c5).
  int64_t halfLoad = streamVec / 2, tileKWarps = 0;
  if (stream && c.weights == 1 && !c.factoredB &&
      tensorBytes(c.a, c.m) > c.weightBytes(kMmaRowsPerTile) &&
      tiles >= t.numSMs) {
    bool oneWaveOfEight =
        llvm::divideCeil(tiles, 2) * 2 * 8 <= kWideWarpsPerSM * t.numSMs;
    tileKWarps = s.kwarps >= 8 && oneWaveOfEight ? 8 : 4;
    while (tileKWarps >= 4 && c.k % (4 * halfLoad * tileKWarps))
      tileKWarps /= 2;
  }
  if (tileKWarps >= 4) {
    s.vec = halfLoad;
    s.unroll = 2;
    s.kwarps = tileKWarps;
    s.warps = 2 * tileKWarps;
    s.stages = 2;
    noteRule("two tiles a block, two stages: M = " + Twine(c.m) + "'s " +
             Twine(tensorBytes(c.a, c.m)) +
             " bytes of activations a k "
             "outweigh a tile's " +
             Twine(c.weightBytes(kMmaRowsPerTile)) + ", and the " +
             Twine(tiles) + " tiles fill the " + Twine(t.numSMs) +
             " multiprocessors; " + Twine(tileKWarps) + " warps on K each");
  }
  // Left to choose, ptxas keeps an int4 stream at 54 to 86 registers a
  // thread for occupancy and sinks its loads toward their use; without a
  // cap (.maxnreg 255) it takes 90 to 124 and keeps them in flight. That
  // pays wherever the grid's warps fit one wave at that size: int4 at M = 1,
  // 16 of the zoo's 68 shapes qualify, 1.00x to 1.24x faster (2048 x 2048
  // 4.1 us against 3.3, 3584 x 14336 14.9 / 13.1), none slower; at M = 4
  // 0.98x to 1.14x. Where the capped grid fits one wave and the uncapped
  // one needs a second, it lost up to 1.25x (6144 x 16384 at M = 1: 21.6 us
  // against 26.3). Where the grid takes several waves even at ptxas's
  // fewest registers (kLeanStreamWarpsPerSM), more waves cost little
  // beside the loads kept in flight, and it runs uncapped too: on the 30
  // zoo shapes there (the lm_heads, the large MLPs), 1.033x at M = 1 and
  // 1.077x at M = 4, geomean, worst 0.96x (152064 x 3584); 21632 x 19072
  // at M = 1 87.9 us against 98.9 on the H200 (bench/results/
  // 2026-12-06-regs: c3 on an H100, c2, both as forced schedules).
  //
  // A grid of eight warps on K that needs a second wave even at ptxas's own
  // occupancy (kCappedStreamWarpsPerSM) but fits one with four, each capped
  // at 128 registers, takes four: 6656 to 8192 rows, 0.96x (8192 x 3584)
  // to 1.41x at M = 1 to 4 (8192 x 6144 at M = 4: 17.3 us against 13.1),
  // 1.01x to 1.41x on the other seven shapes. Four warps lost
  // where eight fit one wave (5120 x 13824, 0.87x to 0.95x), and uncapped
  // on long K, where ptxas took 133 to 138 registers (6656 x 17920 at M = 1:
  // 41.7 us against 32.8; capped 31.2) (bench/results/2026-12-06-regs,
  // H100). As the heuristic, against the schedule before the rule: 1.09x,
  // 1.12x and 1.20x at M = 1, 2 and 4 (2026-12-06-r2).
  //
  // These rules, and r2 below, were measured on an int4 one-tile stream of
  // one weight in gpt-fast's form only.
  bool int4Stream =
      stream && bits < 8 && c.weights == 1 && !c.factoredB && s.stages == 1;
  if (int4Stream) {
    int64_t wide = kWideWarpsPerSM * t.numSMs;
    int64_t warps = tiles * s.kwarps;
    if (warps <= wide || warps > kLeanStreamWarpsPerSM * t.numSMs) {
      s.regs = 255;
      noteRule(warps <= wide
                   ? "uncapped (.maxnreg 255): the grid's " + Twine(warps) +
                         " warps fit one wave at " + Twine(kWideWarpsPerSM) +
                         " a multiprocessor (" + Twine(wide) +
                         "), so the loads stay in flight"
                   : "uncapped (.maxnreg 255): the grid's " + Twine(warps) +
                         " warps take several waves at any register count (" +
                         Twine(kLeanStreamWarpsPerSM * t.numSMs) +
                         " at the most resident), so the loads stay in "
                         "flight");
    } else if (s.kwarps == 8 &&
               tiles * 8 > kCappedStreamWarpsPerSM * t.numSMs &&
               tiles * 4 <= wide) {
      s.kwarps = s.warps = 4;
      s.regs = 128;
      noteRule("four warps on K at .maxnreg 128: eight would need a second "
               "wave even at ptxas's registers (" +
               Twine(tiles * 8) + " warps against " +
               Twine(kCappedStreamWarpsPerSM * t.numSMs) +
               "), four fit "
               "one (" +
               Twine(tiles * 4) + " against " + Twine(wide) + ")");
      // Whole steps a warp, as measured: where K is not a multiple of four
      // warps' 64-k steps, 32 k's and four steps (the same bytes).
      if (s.vec == 64 && c.k % (4 * s.vec * 4)) {
        s.vec = 32;
        s.unroll = 4;
      }
    }
  }
  // Two tiles a warp (r2): every step's activations, loaded once, feed two
  // tiles' mma. At M = 4 they weigh as much as a tile's weights, so r2 cuts
  // a step's loads by a quarter; it also halves the grid. It paid where four
  // warps on K stream a grid that still fills a wave of its own blocks at
  // their registers (kTwoTileWarpsPerSM): on the 29 zoo shapes so at M = 4,
  // 1.06x and 1.05x in two runs, worst 0.96x (20672 x 18176). r2 against
  // r1: 15360 x 5120 19.0 us / 23.9, 128256 x 4096 95.9 / 105.4. Where the
  // halved grid leaves part of that wave empty it lost (8192 x 6144, 256
  // blocks: 14.1 / 13.0), as did eight warps on K, whose blocks at those
  // registers sit one a multiprocessor (10240 x 8192: 26.1 / 22.7), and
  // steps of 32 k's, four of two tiles in flight (8192 x 22016: 57.5 /
  // 41.2). On the same 29 shapes at M = 2 and 3, with lighter activations,
  // it lost: 0.98x and 1.00x (bench/results/2026-12-06-r2, H100). Heavier
  // ones take two tiles a block above.
  int64_t halvedWarps = llvm::divideCeil(tiles, 2) * s.kwarps;
  if (int4Stream && !c.aPrologue && s.warps == 4 && s.kwarps == 4 &&
      s.vec == 64 && tensorBytes(c.a, c.m) == c.weightBytes(kMmaRowsPerTile) &&
      halvedWarps >= kTwoTileWarpsPerSM * t.numSMs) {
    s.rows = 2;
    noteRule("two tiles a warp (r2): M = " + Twine(c.m) +
             "'s activations feed both tiles' mma, and the halved grid's " +
             Twine(halvedWarps) + " warps still fill a wave at " +
             Twine(kTwoTileWarpsPerSM) + " a multiprocessor (" +
             Twine(kTwoTileWarpsPerSM * t.numSMs) + ")");
  }
  bool legal = shrinkUntilLegal(c, s, t, [](ScheduleParams &s) {
    if (s.unroll > 1)
      s.unroll /= 2;
    else if (s.warps > s.kwarps)
      s.warps /= 2;
    else if (s.mtile > 8)
      s.mtile -= 8;
    else
      return false;
    return true;
  });
  return legal ? std::optional(s) : std::nullopt;
}
