//===- HeuristicsSimt.cpp - The simt kind's start schedule ----------------===//
//
// The heuristic start on CUDA cores: 8-bit and float weights at M = 1, and
// whatever the tensor-core kinds cannot run; the other kinds' are in
// Heuristics.cpp, HeuristicsMma.cpp and HeuristicsWgmma.cpp.
//
//===----------------------------------------------------------------------===//
#include "dialects/Kernel/KernelOps.h"
#include "passes/HeuristicsSupport.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::kernel;

ScheduleParams mtc::defaultSimtSchedule(const ContractShape &c,
                                        const ScheduleTarget &t) {
  ScheduleParams s;
  s.kind = ScheduleKind::simt;
  // The narrowest load is a byte (two i4 elements).
  int64_t eb = c.weightBytes(1);
  int64_t alignedDim = c.bTransposed ? c.n : c.k;
  s.vec = 16;
  while (s.vec > eb && alignedDim % (s.vec * 8 / dtypeBits(c.b)))
    s.vec /= 2;
  if (s.vec < 16)
    noteRule(Twine(c.bTransposed ? "N" : "K") + " = " + Twine(alignedDim) +
             " is no multiple of 16 bytes of weights: " + Twine(s.vec) +
             "-byte loads");
  s.warps = 4;
  s.kwarps = 1;
  s.splitk = 1;
  s.mtile = std::min<int64_t>(c.m, 8);
  // An epilogue that reads each output's partner column needs a warp's
  // outputs in pairs.
  const int64_t fewestRows = c.pairs ? 2 : 1;
  if (c.bTransposed) {
    s.rows = 1;
    s.mtile = std::min<int64_t>(c.m, 4);
    s.unroll = 4;
    noteRule("weight stored [K, N]: each thread owns a vector along N and "
             "walks K");
  } else {
    // (Siblings keep the rows of one weight, each warp then reading them of
    // every weight: gate and up of Llama-3-8B at M = 1 with the norm's
    // prologue took 36.7 us at r2 kw2 u4, 60.7 at r1 kw2 u4;
    // bench/results/2026-12-04-siblings.)
    s.rows = s.mtile <= 2 ? 2 : fewestRows;
    s.unroll = s.mtile == 1 ? 4 : (s.mtile <= 4 ? 2 : 1);
    // M = 1: a warp's share of K in one round of loads. Warps split K while
    // each keeps at least `unroll` steps (fewer would leave the unrolled
    // loop to its one-step remainder): a step's load waits about a DRAM
    // latency, so a warp with 8 steps at 4 in flight waits twice. On eight
    // int8 shapes from 2048 x 2048 to 28672 x 4096 this took 1.00x to 1.51x
    // less time than one warp per row (2240 x 8704: 7.4 us against 11.2;
    // bench/results/2026-12-04-rules).
    // Siblings load each step's rows of every weight, so a warp holds
    // `weights` times the bytes a step: it splits K only where each part
    // keeps that many times the steps. Gate and up of Llama-3-8B with the
    // norm's prologue (M = 1, K = 4096, 8 steps) took 32.0 us with K in
    // one warp against 36.9 with two (the tuner, 49 probes;
    // bench/results/2026-12-04-siblings).
    // A contraction that derives its rows' statistic has every block sum
    // its row of A first, an L2 read that grows with the blocks: K stays in
    // one warp and a warp takes four rows, so the blocks are few (norm +
    // wqkv, 6144 x 4096 at M = 1: 13.42 us at r2 kw2, 10.95 at r2 or r4
    // kw1; gate and up of Llama-3-8B, 35.4 at r2, 33.8 at r4;
    // bench/results/2026-12-04-statistic).
    if (c.rowStatistic) {
      s.rows = 4;
      noteRule("each block derives its rows' statistic (an L2 read a "
               "block): four rows a warp, K in one warp, few blocks");
    } else if (s.mtile == 1) {
      int64_t steps = c.k / contractGeometry(c, s).chunk;
      while (s.kwarps < s.warps &&
             steps / (2 * s.kwarps) >= s.unroll * c.weights)
        s.kwarps *= 2;
      noteRule("M = 1: " + plural(s.rows, "weight row", "weight rows") +
               " a warp, " + plural(s.unroll, "step", "steps") +
               " in flight; K's " + plural(steps, "whole step", "whole steps") +
               (s.kwarps > 1
                    ? " over " + plural(s.kwarps, "warp", "warps") +
                          ", each keeping at least " +
                          std::to_string(s.unroll * c.weights)
                    : std::string(" in one warp (two would keep "
                                  "fewer than ") +
                          std::to_string(s.unroll * c.weights) + " each)"));
    } else {
      noteRule("M = " + Twine(c.m) + ": " + plural(s.mtile, "row", "rows") +
               " of A a block, " + plural(s.rows, "weight row", "weight rows") +
               " a warp, " + plural(s.unroll, "step", "steps") + " in flight");
    }
  }
  // Too few blocks to fill the SMs: narrow each block first (to pairs of
  // rows where the epilogue reads each output's partner column).
  int64_t rows = s.rows;
  while (s.rows > fewestRows &&
         contractGeometry(c, s).gridN * contractGeometry(c, s).gridM <
             2 * t.numSMs)
    s.rows /= 2;
  if (s.rows != rows)
    noteRule(plural(s.rows, "weight row", "weight rows") + " a warp: at " +
             Twine(rows) +
             " the blocks would be fewer than two a "
             "multiprocessor");
  // Back off until the schedule is legal (small or odd problems).
  bool legal = shrinkUntilLegal(c, s, t, [eb, fewestRows](ScheduleParams &s) {
    if (s.unroll > 1)
      s.unroll /= 2;
    else if (s.rows > fewestRows)
      s.rows /= 2;
    else if (s.mtile > 1)
      s.mtile = std::max<int64_t>(1, s.mtile / 2);
    else if (s.vec > eb)
      s.vec /= 2;
    else
      return false;
    return true;
  });
  if (legal)
    return s;
  // Outputs so large that narrow blocks need more than 2^31 - 1 of them:
  // take the legal schedule with the fewest blocks. One always exists for
  // the shapes the graph dialect accepts (M, N < 2^31, at most 2^40 outputs):
  // 32 warps of 16 rows, 8 rows of M and 1-element loads fit the registers.
  noteRule("no narrow start is legal (more than 2^31 - 1 blocks): the "
           "legal schedule with the fewest blocks");
  std::optional<ScheduleParams> widest;
  int64_t fewest = 0;
  ScheduleParams w = s;
  w.warps = 32;
  w.kwarps = w.unroll = w.splitk = 1;
  for (w.vec = 16; w.vec >= eb; w.vec /= 2)
    for (w.rows = 16; w.rows >= 1; w.rows /= 2)
      for (w.mtile = std::min<int64_t>(c.m, 16); w.mtile >= 1; w.mtile /= 2)
        if (checkContractSchedule(c, w).empty()) {
          int64_t blocks = contractLaunchConfig(c, w).grid[0];
          if (!widest || blocks < fewest)
            widest = w, fewest = blocks;
        }
  return widest.value_or(s);
}
