//===- Schedule.h - Schedules, legality and launch geometry -----*- C++ -*-===//
//
// Everything that depends on a kernel's schedule but not on its code: which
// schedules are legal for an op, and the grid/block/shared-memory/workspace
// that a schedule implies. The lowering, the manifest and the tuner all call
// these, so they agree. The heuristic start schedules, fitted to
// measurements, live with the passes (passes/Heuristics.h).
//
//===----------------------------------------------------------------------===//
#ifndef MTC_DIALECTS_KERNEL_SCHEDULE_H
#define MTC_DIALECTS_KERNEL_SCHEDULE_H

#include "dialects/Graph/ShapeRules.h"
#include "dialects/Kernel/KernelOps.h"

#include <array>
#include <string>

namespace mtc::kernel {

/// The problem a kernel.contract solves, without the IR.
struct ContractShape {
  int64_t m = 1, n = 1, k = 1;
  DType a = DType::BF16, b = DType::BF16, out = DType::BF16;
  bool aTransposed = false, bTransposed = false;
  /// The body's chains in the forms tensor cores take: A extended to f32 as
  /// it is; B sitofp'd (int8) or extended (16-bit) to f32.
  bool mmaAChain = false, mmaBChain = false;
  static ContractShape of(ContractOp op);
};

/// A schedule as plain data (the tuner edits these).
struct ScheduleParams {
  ScheduleKind kind = ScheduleKind::simt;
  int64_t warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 1,
          splitk = 1;
  /// Register cap per thread (.maxnreg); 0 = ptxas decides.
  int64_t regs = 0;
  /// Tiled kind: warps along M, and K tiles in the shared-memory ring.
  int64_t mwarps = 1, stages = 1;

  static ScheduleParams of(ScheduleAttr attr);
  ScheduleAttr toAttr(mlir::MLIRContext *ctx) const;
  /// "simt w4 r2 kw1 v16 u4 mt1 sk1" (then " rg128" if regs is set, and
  /// " mw2 st4" for fields away from their default of 1)
  std::string str() const;
  /// Parses str()'s format (spaces, commas or colons between fields; fields
  /// left out keep their defaults). Returns std::nullopt and sets `err` on
  /// malformed text.
  static std::optional<ScheduleParams> parse(llvm::StringRef text,
                                             std::string &err);
  bool operator==(const ScheduleParams &o) const;
  bool operator!=(const ScheduleParams &o) const { return !(*this == o); }
};

struct LaunchConfig {
  std::array<int64_t, 3> grid{1, 1, 1};
  std::array<int64_t, 3> block{1, 1, 1};
  /// Shared memory the kernel declares statically (reduction scratch, the
  /// split-K flag) and the dynamic shared memory it must be launched with
  /// (the tiled kind's staging ring).
  int64_t staticSharedBytes = 0;
  int64_t dynamicSharedBytes = 0;
  int64_t sharedBytes() const { return staticSharedBytes + dynamicSharedBytes; }
  /// Zero-initialised device scratch the kernel needs (split-K partial sums
  /// and arrival counters); kernels leave it zeroed again when they finish.
  int64_t workspaceBytes = 0;
};

/// Why `s` cannot run `op` ("" if it can).
std::string checkSchedule(mlir::Operation *op, const ScheduleParams &s);
std::string checkContractSchedule(const ContractShape &c,
                                  const ScheduleParams &s);
std::string checkElementwiseSchedule(int64_t numElements,
                                     const ScheduleParams &s);

LaunchConfig launchConfig(mlir::Operation *op, const ScheduleParams &s);
LaunchConfig contractLaunchConfig(const ContractShape &c,
                                  const ScheduleParams &s);

/// Derived quantities of a contraction schedule, shared by the lowering and
/// launchConfig.
struct ContractGeometry {
  int64_t elemsPerLoad;  // B elements one lane loads at once (vec / sizeof B)
  int64_t warpsN;        // warps along N (warps / kwarps)
  int64_t colsPerBlock;  // output columns (n) one block covers
  int64_t gridN, gridM;  // blocks along N and along M
  int64_t chunk;         // K elements one warp consumes per step (nk layout)
  int64_t pieces;        // K pieces: kwarps * splitk
  int64_t reduceFloats;  // shared-memory floats for the cross-warp reduction
  int64_t accPerThread;  // f32 accumulators per thread (mma: 4 * rows * mt)
  int64_t stageBytes;    // tiled: shared bytes of one pipeline stage
  int64_t weightTileBytes; // tiled: the weight's part of a stage (first)
};

/// Tensor-core (mma) tiles: each warp owns `rows` tiles of 16 weight rows and
/// the block's `mtile` rows of A as mtile / 8 tiles of 8; one K step is
/// 4 * vec (each lane of a group of four takes vec consecutive k's).
constexpr int64_t kMmaRowsPerTile = 16, kMmaColsPerTile = 8, kMmaChunk = 64;

/// Shared memory a block may use when it opts in (H100/H200: 227 KiB).
constexpr int64_t kMaxOptinShared = 227 * 1024;

/// Whether the body and layouts of `op` can use the mma and tiled kinds ("" if
/// so).
std::string mmaSupport(const ContractShape &c, bool aIsExtF, bool bIsCast);
ContractGeometry contractGeometry(const ContractShape &c, const ScheduleParams &s);

/// Elements of the result of an elementwise op.
int64_t numElementsOf(mlir::Type t);

} // namespace mtc::kernel

#endif // MTC_DIALECTS_KERNEL_SCHEDULE_H
