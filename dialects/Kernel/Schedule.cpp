//===- Schedule.cpp - Schedule legality and launch geometry ---------------===//
//
// Which schedules can run an op (checkSchedule: the verifier, the lowering,
// the tuner and --schedule all ask it) and the launch that a schedule
// implies. The fields are described in Schedule.h, their text form is in
// ScheduleFormat.cpp.
//
//===----------------------------------------------------------------------===//
#include "dialects/Kernel/Schedule.h"

#include "llvm/Support/MathExtras.h"

using namespace mtc;
using namespace mtc::kernel;

//===----------------------------------------------------------------------===//
// Problems
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// SIMT contraction geometry
//===----------------------------------------------------------------------===//

ContractGeometry mtc::kernel::contractGeometry(const ContractShape &c,
                                               const ScheduleParams &s) {
  ContractGeometry g;
  g.elemsPerLoad = std::max<int64_t>(1, s.vec * 8 / dtypeBits(c.b));
  bool tiled = s.kind == ScheduleKind::tiled;
  g.warpsN = std::max<int64_t>(
      1, s.warps / std::max<int64_t>(1, s.kwarps * (tiled ? s.mwarps : 1)));
  if (c.bTransposed) {
    g.colsPerBlock = g.warpsN * 32 * g.elemsPerLoad * s.rows;
    g.chunk = 1;
  } else {
    g.colsPerBlock = g.warpsN * s.rows;
    g.chunk = 32 * g.elemsPerLoad;
  }
  if (s.kind == ScheduleKind::mma) {
    g.colsPerBlock = g.warpsN * kMmaRowsPerTile * s.rows;
    g.chunk = 4 * s.vec; // four lanes of a group, vec k's each
    g.accPerThread = 4 * s.rows * std::max<int64_t>(1, s.mtile / 8) * c.weights;
  } else if (tiled) {
    g.colsPerBlock = g.warpsN * kMmaRowsPerTile * s.rows;
    g.chunk = 4 * s.vec * s.kwarps; // one K tile of the ring
    g.accPerThread =
        4 * s.rows *
        std::max<int64_t>(1, s.mtile / std::max<int64_t>(1, s.mwarps) / 8);
  } else if (s.kind == ScheduleKind::wgmma) {
    g.colsPerBlock = kWgmmaRowsPerGroup * s.rows;
    g.chunk = kWgmmaTileK;
    g.accPerThread = s.mtile / 2; // a 64 x mtile f32 tile per warpgroup
  } else {
    g.accPerThread = c.bTransposed ? s.mtile * s.rows * g.elemsPerLoad
                                   : s.mtile * s.rows * c.weights;
  }
  // The blocks of a cluster take consecutive column blocks: the last
  // cluster may run past N (its copies read zeros, its stores are masked).
  g.gridN = llvm::alignTo(llvm::divideCeil(c.n, g.colsPerBlock),
                          std::max<int64_t>(1, s.cluster));
  g.gridM = llvm::divideCeil(c.m, std::max<int64_t>(1, s.mtile));
  // Tiled kwarps split each K tile, wgmma's take turns at the block's K
  // tiles: neither splits the block's K range.
  g.pieces =
      tiled || s.kind == ScheduleKind::wgmma ? s.splitk : s.kwarps * s.splitk;
  g.reduceFloats = 0;
  g.stageBytes = g.weightTileBytes = 0;
  if (tiled || s.kind == ScheduleKind::wgmma) {
    g.weightTileBytes = c.weightBytes(g.colsPerBlock * g.chunk);
    g.stageBytes = g.weightTileBytes + s.mtile * g.chunk * dtypeBytes(c.a);
  }
  if (s.kwarps > 1 && s.kind != ScheduleKind::wgmma) {
    if (s.kind == ScheduleKind::mma || tiled)
      g.reduceFloats = s.warps * g.accPerThread * 32;
    else
      g.reduceFloats =
          c.bTransposed
              ? s.kwarps * g.warpsN * 32 * s.mtile * s.rows * g.elemsPerLoad
              : s.kwarps * g.warpsN * s.mtile * s.rows * c.weights;
  }
  return g;
}

static constexpr int64_t kMaxStaticShared = 48 * 1024;

static std::string checkRegs(const ScheduleParams &s) {
  if (s.regs != 0 && s.regs != 255 && (s.regs < 32 || s.regs % 8))
    return "regs must be 0 (ptxas decides), a multiple of 8 in [32, 248], "
           "or 255";
  // A block must fit in the registers of a multiprocessor.
  if (s.regs && s.regs * s.warps * 32 > kRegistersPerSM)
    return "regs " + std::to_string(s.regs) + " x " +
           std::to_string(s.warps * 32) +
           " threads exceeds the 64K registers of a multiprocessor";
  return "";
}
static constexpr int64_t kRegisterBudget = 224;

std::string mtc::kernel::mmaSupport(const ContractShape &c, bool aIsExtF,
                                    bool bIsCast, bool kInTiles) {
  if (c.aTransposed || c.bTransposed)
    return "tensor-core (mma) schedules need A stored [M, K] and the weight "
           "stored [N, K]";
  if (!(c.a == DType::BF16 || c.a == DType::F16) || !aIsExtF)
    return "tensor-core (mma) schedules need bf16 or f16 activations used "
           "as they are";
  if (!((isInteger(c.b) && bIsCast) || (c.b == c.a && bIsCast)))
    return "tensor-core (mma) schedules need an int8 or int4 weight converted "
           "to the activations' type (a dequantization rounding each step to "
           "that type, with scales and zeros of that type; on mma also one "
           "in f32, q * s + z), or a weight of that type";
  if (kInTiles && c.k % kMmaChunk)
    return "tensor-core (mma) schedules need K to be a multiple of 64, got " +
           std::to_string(c.k);
  if (c.group % 16)
    return "tensor-core (mma) schedules need a group size that is a "
           "multiple of 16, got " +
           std::to_string(c.group);
  return "";
}

/// A lane's `span` consecutive k's of the weight (one load's, from `vec`
/// of kind `kind`) lie in whole groups of the b inputs, or in one: one
/// divides the other.
static std::string checkGroupSpan(const ContractShape &c, llvm::StringRef kind,
                                  int64_t vec, int64_t span) {
  if (!c.group || span % c.group == 0 || c.group % span == 0)
    return "";
  return kind.str() + " vec " + std::to_string(vec) + " gives a lane " +
         std::to_string(span) + " consecutive k's; they and the group size " +
         std::to_string(c.group) +
         " must divide one another (a lane's k's lie in whole groups or in "
         "one)";
}

static std::string checkMmaSchedule(const ContractShape &c,
                                    const ScheduleParams &s) {
  if (s.vec != 16 && s.vec != 32 && s.vec != 64)
    return "mma schedules take vec = 16, 32 or 64 (K elements per lane and "
           "step)";
  if (c.k % (4 * s.vec))
    return "mma vec " + std::to_string(s.vec) +
           " needs K to be a multiple "
           "of " +
           std::to_string(4 * s.vec);
  if (s.mtile % 8 || s.mtile < 8 || s.mtile > 64)
    return "mma schedules need mtile to be 8, 16, 24, ... or 64 (rows of A "
           "in tiles of 8)";
  if (s.mtile > int64_t(llvm::alignTo(c.m, 8)))
    return "mtile " + std::to_string(s.mtile) +
           " exceeds M = " + std::to_string(c.m) + " rounded up to 8";
  if (!isPow2In(s.rows, 1, 8))
    return "rows (16-row weight tiles per warp) must be a power of two in "
           "[1, 8]";
  if (std::string e = checkGroupSpan(c, "mma", s.vec, s.vec); !e.empty())
    return e;
  if (c.factoredB && c.group % (4 * s.vec))
    return "mma vec " + std::to_string(s.vec) + " sums " +
           std::to_string(4 * s.vec) +
           " k's a step before applying their group's scale and zero (an "
           "f32 dequantization); the group size " +
           std::to_string(c.group) + " must be a multiple of it";
  int64_t mt = s.mtile / 8;
  int64_t acc = 4 * s.rows * mt;
  // Per step in flight: two weight rows of vec elements per 16-row tile
  // (of each stage) and vec activations per 8-row tile.
  int64_t wordsW = 2 * s.rows * std::max<int64_t>(1, c.weightBytes(s.vec) / 4);
  int64_t wordsA = mt * s.vec * 2 / 4;
  int64_t regs = acc + s.unroll * (s.stages * wordsW + wordsA) + 40;
  if (regs > kRegisterBudget)
    return "needs about " + std::to_string(regs) +
           " registers per thread (budget " + std::to_string(kRegisterBudget) +
           "); it would spill";
  return "";
}

/// The tiled kind: warps tile the block's weight rows x activation rows (and
/// kwarps split each K tile); the K loop streams 4 * vec * kwarps wide tiles
/// of both through `stages` shared buffers.
static std::string checkTiledSchedule(const ContractShape &c,
                                      const ScheduleParams &s) {
  if (s.unroll != 1)
    return "tiled schedules take unroll = 1 (the stages set the loads in "
           "flight)";
  if (!isPow2In(s.mwarps, 1, 32) || s.warps % (s.mwarps * s.kwarps))
    return "mwarps must be a power of two, and mwarps * kwarps must divide "
           "warps";
  if (c.b == DType::I4 && s.vec < 32)
    return "tiled schedules take vec = 32 or 64 for int4 weights (a lane's "
           "k's of a tile fill whole 16-byte pieces of shared memory)";
  if (s.stages < 2 || s.stages > 8)
    return "stages must be in [2, 8]";
  if (s.vec != 16 && s.vec != 32 && s.vec != 64)
    return "tiled schedules take vec = 16, 32 or 64 (K elements per lane and "
           "tile)";
  if (c.k % (4 * s.vec * s.kwarps))
    return "tiled vec " + std::to_string(s.vec) + " and kwarps " +
           std::to_string(s.kwarps) + " need K to be a multiple of " +
           std::to_string(4 * s.vec * s.kwarps);
  int64_t perWarp = s.mtile / s.mwarps;
  if (s.mtile % (8 * s.mwarps) || perWarp > 64)
    return "tiled schedules need mtile / mwarps to be 8, 16, ... or 64 (rows "
           "of A per warp, in tiles of 8)";
  if (s.mtile > int64_t(llvm::alignTo(c.m, 8 * s.mwarps)))
    return "mtile " + std::to_string(s.mtile) +
           " exceeds M = " + std::to_string(c.m) + " rounded up to " +
           std::to_string(8 * s.mwarps);
  if (!isPow2In(s.rows, 1, 8))
    return "rows (16-row weight tiles per warp) must be a power of two in "
           "[1, 8]";
  if (std::string e = checkGroupSpan(c, "tiled", s.vec, s.vec); !e.empty())
    return e;
  // Accumulators, one 16-k slice of operands from shared memory (two weight
  // rows per 16-row tile, one activation row per 8-row tile) and the
  // dequantized fragments.
  int64_t mt = perWarp / 8;
  int64_t regs = 4 * s.rows * mt + 2 * s.rows * c.weightBytes(4) + 8 * mt +
                 4 * s.rows + 40;
  if (regs > kRegisterBudget)
    return "needs about " + std::to_string(regs) +
           " registers per thread (budget " + std::to_string(kRegisterBudget) +
           "); it would spill";
  return "";
}

/// Whether the launch `s` implies fits a block: the kinds that stage tiles
/// in dynamic shared memory may opt in to 227 KiB, the others have 48 KiB.
static std::string checkLaunchFits(const ContractShape &c,
                                   const ScheduleParams &s) {
  LaunchConfig l = contractLaunchConfig(c, s);
  bool staged = s.kind == ScheduleKind::tiled || s.kind == ScheduleKind::wgmma;
  if (staged && l.sharedBytes() > kMaxOptinShared)
    return "needs " + std::to_string(l.sharedBytes()) +
           " bytes of shared memory (limit 227 KiB)";
  if (!staged && l.sharedBytes() > kMaxStaticShared)
    return "needs " + std::to_string(l.sharedBytes()) +
           " bytes of shared memory (limit 48 KiB)";
  if (l.grid[0] > (int64_t(1) << 31) - 1)
    return "grid too large";
  return "";
}

std::string mtc::kernel::checkContractSchedule(const ContractShape &c,
                                               const ScheduleParams &s) {
  if (s.kind == ScheduleKind::elementwise || s.kind == ScheduleKind::reduce)
    return std::string("a contraction cannot use ") +
           (s.kind == ScheduleKind::elementwise ? "an " : "a ") +
           stringifyScheduleKind(s.kind).str() + " schedule";
  if (c.b == DType::I4 && c.bTransposed)
    return "int4 weights must be stored [N, K] (the layout of linear)";
  bool wgmma = s.kind == ScheduleKind::wgmma;
  if (c.aPrologue && (wgmma || s.kind == ScheduleKind::tiled))
    return "a contraction with an activation prologue (a_inputs) runs on the "
           "simt or mma kind: the " +
           stringifyScheduleKind(s.kind).str() +
           " kind stages A in shared memory, where the prologue has no place";
  if (c.rowStatistic && s.kind != ScheduleKind::simt)
    return "a contraction that derives its rows' statistic (a norm's rsqrt) "
           "runs on the simt kind: the " +
           stringifyScheduleKind(s.kind).str() +
           " kind does not sum A's rows before its first step";
  if (c.pairs && c.bTransposed)
    return "an epilogue that reads each output's partner column "
           "(kernel.partner) needs the weight stored [N, K] (the layout of "
           "linear)";
  if (c.pairs && s.kind == ScheduleKind::simt && s.rows % 2)
    return "an epilogue that reads each output's partner column "
           "(kernel.partner) needs the outputs of a simt warp in pairs: rows "
           "must be even, got " +
           std::to_string(s.rows);
  if (c.weights > ContractShape::kMaxWeights)
    return "a contraction reads at most " +
           std::to_string(ContractShape::kMaxWeights) + " weights, got " +
           std::to_string(c.weights);
  if (c.weights > 1 && (wgmma || s.kind == ScheduleKind::tiled))
    return "a contraction over several weights (siblings) runs on the simt "
           "or mma kind: the " +
           stringifyScheduleKind(s.kind).str() +
           " kind stages one weight's tiles in shared memory";
  if (c.weights > 1 && s.splitk != 1)
    return "a contraction over several weights (siblings) keeps its sums in "
           "registers: splitk must be 1";
  if (s.kind != ScheduleKind::tiled && !wgmma && s.mwarps != 1)
    return "mwarps is a field of tiled schedules (1 otherwise)";
  if (s.kind == ScheduleKind::mma && s.stages != 1 && s.stages != 2)
    return "mma schedules take stages = 1 or 2 (2: the next unroll steps' "
           "weights load while the current ones are summed)";
  if (s.kind == ScheduleKind::simt && s.stages != 1)
    return "simt schedules take stages = 1";
  if (!wgmma && s.cluster != 1)
    return "cluster is a field of wgmma schedules (1 otherwise)";
  if (s.kind == ScheduleKind::mma || s.kind == ScheduleKind::tiled || wgmma) {
    // TMA reads the wgmma kind's K tiles past K as zeros.
    bool factored = c.factoredB && s.kind == ScheduleKind::mma;
    if (c.factoredB && !factored)
      return "the " + stringifyScheduleKind(s.kind).str() +
             " kind needs a dequantization rounded to the activations' type; "
             "an f32 one (q * s + z) runs on mma, which applies s and z to "
             "each step's sums of x * q, or on simt";
    if (std::string e =
            mmaSupport(c, c.mmaAChain, c.mmaBChain || factored, !wgmma);
        !e.empty())
      return e;
  }
  if (wgmma) {
    if (std::string e = checkWgmmaSchedule(c, s); !e.empty())
      return e;
    if (std::string e = checkRegs(s); !e.empty())
      return e;
    return checkLaunchFits(c, s);
  }
  if (!isPow2In(s.warps, 1, 32))
    return "warps must be a power of two in [1, 32]";
  if (std::string e = checkRegs(s); !e.empty())
    return e;
  if (!isPow2In(s.kwarps, 1, 32) || s.warps % s.kwarps)
    return "kwarps must be a power of two dividing warps";
  if (!isPow2In(s.rows, 1, 16))
    return "rows must be a power of two in [1, 16]";
  if (!isPow2In(s.unroll, 1, 16))
    return "unroll must be a power of two in [1, 16]";
  if (s.kind == ScheduleKind::mma) {
    if (std::string e = checkMmaSchedule(c, s); !e.empty())
      return e;
  } else if (s.kind == ScheduleKind::tiled) {
    if (std::string e = checkTiledSchedule(c, s); !e.empty())
      return e;
  } else {
    if (s.mtile < 1 || s.mtile > 16)
      return "mtile must be in [1, 16]";
    if (s.mtile > c.m)
      return "mtile " + std::to_string(s.mtile) +
             " exceeds M = " + std::to_string(c.m);
  }
  if (!isPow2In(s.splitk, 1, 64))
    return "splitk must be a power of two in [1, 64]";
  // (An i4 weight's narrowest load is a byte, two elements.)
  int64_t eb = c.weightBytes(1), ea = dtypeBytes(c.a);
  bool tensorCores =
      s.kind == ScheduleKind::mma || s.kind == ScheduleKind::tiled;
  if (!tensorCores && (!isPow2In(s.vec, 1, 16) || s.vec < eb))
    return "vec must be a power of two in [" + std::to_string(eb) +
           ", 16] bytes for " + dtypeName(c.b).str() + " weights";
  ContractGeometry g = contractGeometry(c, s);
  int64_t epl = g.elemsPerLoad;
  if (c.bTransposed) {
    if (c.n % epl)
      return "vec " + std::to_string(s.vec) +
             " needs N = " + std::to_string(c.n) + " to be a multiple of " +
             std::to_string(epl) + " (aligned vector loads)";
    if (g.pieces > c.k)
      return "kwarps * splitk exceeds K";
  } else {
    if (c.k % epl)
      return "vec " + std::to_string(s.vec) +
             " needs K = " + std::to_string(c.k) + " to be a multiple of " +
             std::to_string(epl) + " (aligned vector loads)";
    if (!tensorCores)
      if (std::string e = checkGroupSpan(c, "simt", s.vec, epl); !e.empty())
        return e;
    int64_t chunks = c.k / g.chunk;
    if (g.pieces > std::max<int64_t>(1, chunks))
      return "kwarps * splitk = " + std::to_string(g.pieces) + " exceeds the " +
             std::to_string(chunks) + " K steps of " + std::to_string(g.chunk);
  }
  int64_t words = std::max<int64_t>(1, s.vec / 4);
  int64_t regs = 0;
  if (tensorCores)
    regs = 0; // checked by checkMmaSchedule / checkTiledSchedule
  else if (c.bTransposed)
    regs = s.mtile * s.rows * epl + s.unroll * s.rows * words +
           s.unroll * s.mtile + 24;
  else
    regs = s.mtile * s.rows + s.unroll * s.rows * words +
           s.unroll * s.mtile * std::max<int64_t>(1, epl * ea / 4) + 24;
  if (regs > kRegisterBudget)
    return "needs about " + std::to_string(regs) +
           " registers per thread (budget " + std::to_string(kRegisterBudget) +
           "); it would spill";
  return checkLaunchFits(c, s);
}

std::string mtc::kernel::checkElementwiseSchedule(int64_t numElements,
                                                  const ScheduleParams &s) {
  if (s.kind != ScheduleKind::elementwise)
    return "an elementwise kernel needs an elementwise schedule";
  if (!isPow2In(s.warps, 1, 32))
    return "warps must be a power of two in [1, 32]";
  if (!isPow2In(s.vec, 1, 16))
    return "vec (elements per thread) must be a power of two in [1, 16]";
  if (s.rows != 1 || s.kwarps != 1 || s.unroll != 1 || s.mtile != 1 ||
      s.splitk != 1 || s.cluster != 1)
    return "rows, kwarps, unroll, mtile, splitk and cluster must be 1 for "
           "elementwise kernels";
  if (std::string e = checkRegs(s); !e.empty())
    return e;
  if (llvm::divideCeil(numElements, s.warps * 32 * s.vec) >
      (int64_t(1) << 31) - 1)
    return "grid too large";
  return "";
}

std::string mtc::kernel::checkReduceSchedule(int64_t rows,
                                             const ScheduleParams &s) {
  if (s.kind != ScheduleKind::reduce)
    return "a row reduction needs a reduce schedule";
  if (!isPow2In(s.warps, 1, 32))
    return "warps must be a power of two in [1, 32]";
  if (!isPow2In(s.rows, 1, 16))
    return "rows (per warp) must be a power of two in [1, 16]";
  if (!isPow2In(s.vec, 1, 8))
    return "vec (elements per lane and load) must be a power of two in "
           "[1, 8]";
  if (!isPow2In(s.unroll, 1, 16))
    return "unroll (steps loaded at once) must be a power of two in [1, 16]";
  if (!isPow2In(s.kwarps, 1, s.warps))
    return "kwarps (warps that share a row) must be a power of two no "
           "larger than warps";
  if (s.mtile != 1 || s.splitk != 1 || s.cluster != 1)
    return "mtile, splitk and cluster must be 1 for row reductions";
  if (std::string e = checkRegs(s); !e.empty())
    return e;
  if (llvm::divideCeil(rows, s.warps / s.kwarps * s.rows) >
      (int64_t(1) << 31) - 1)
    return "grid too large";
  return "";
}

//===----------------------------------------------------------------------===//
// Launch geometry
//===----------------------------------------------------------------------===//

LaunchConfig mtc::kernel::contractLaunchConfig(const ContractShape &c,
                                               const ScheduleParams &s) {
  LaunchConfig l;
  ContractGeometry g = contractGeometry(c, s);
  l.grid = {g.gridN * g.gridM, 1, s.splitk};
  l.block = {s.warps * 32, 1, 1};
  // A derived row statistic: one partial sum per warp and row.
  l.staticSharedBytes = g.reduceFloats * 4 + (s.splitk > 1 ? 16 : 0) +
                        (c.rowStatistic ? s.warps * s.mtile * 4 : 0);
  if (s.kind == ScheduleKind::tiled)
    l.dynamicSharedBytes = s.stages * g.stageBytes;
  if (s.kind == ScheduleKind::wgmma) {
    // The ring, the slack that aligns it, and a full and an empty mbarrier
    // per stage.
    l.dynamicSharedBytes =
        kWgmmaAlignSlack + s.stages * g.stageBytes + 16 * s.stages;
    // The weight's rows: 64 bytes of int8, 32 of i4 (its map moves bytes),
    // swizzled over a row.
    int64_t wRow = c.weightBytes(kWgmmaTileK);
    l.tmaOperands = {{0, kWgmmaTileK, s.mtile / s.cluster, 128},
                     {1, wRow, g.colsPerBlock, wRow}};
  }
  if (s.splitk > 1)
    l.workspaceBytes = llvm::alignTo(c.m * c.n * 4, 256) +
                       llvm::alignTo(g.gridN * g.gridM * 4, 256);
  return l;
}

LaunchConfig mtc::kernel::elementwiseLaunchConfig(int64_t numElements,
                                                  const ScheduleParams &s) {
  LaunchConfig l;
  int64_t threads = s.warps * 32;
  // divideCeil of two int64_t is unsigned; braces do not narrow implicitly.
  l.grid = {
      static_cast<int64_t>(llvm::divideCeil(numElements, threads * s.vec)), 1,
      1};
  l.block = {threads, 1, 1};
  return l;
}

LaunchConfig mtc::kernel::reduceLaunchConfig(int64_t rows,
                                             const ScheduleParams &s) {
  LaunchConfig l;
  l.grid = {
      static_cast<int64_t>(llvm::divideCeil(rows, s.warps / s.kwarps * s.rows)),
      1, 1};
  l.block = {s.warps * 32, 1, 1};
  return l;
}
