//===- Schedule.h - Schedule fields, legality, launch geometry --*- C++ -*-===//
//
// A kernel's schedule as plain data, and everything that depends on it but
// not on the kernel's code: nothing here knows the ops (KernelOps.h takes a
// problem and a schedule from an op: contractShape, checkSchedule).
// kScheduleFields describes every field once: the text form, #kernel.schedule,
// the manifest and the tuner's search space are all written against it
// (ScheduleFormat.cpp). Schedule.cpp says which schedules are legal for an op
// and the grid/block/shared-memory/workspace that a schedule implies; the
// lowering, the manifest and the tuner all call it, so they agree. The
// heuristic start schedules, fitted to measurements, live with the passes
// (passes/Heuristics.h).
//
//===----------------------------------------------------------------------===//
#ifndef MTC_DIALECTS_KERNEL_SCHEDULE_H
#define MTC_DIALECTS_KERNEL_SCHEDULE_H

#include "dialects/Common/DType.h"
#include "dialects/Kernel/KernelEnums.h"

#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/StringRef.h"

#include <array>
#include <iterator>
#include <string>
#include <vector>

namespace mtc::kernel {

/// The problem a kernel.contract solves, without the IR.
struct ContractShape {
  int64_t m = 1, n = 1, k = 1;
  DType a = DType::BF16, b = DType::BF16, out = DType::BF16;
  bool aTransposed = false, bTransposed = false;
  /// The body in the forms tensor cores take: A extended to f32 as it is;
  /// B extended (16-bit) to f32, or an integer weight whose side (its
  /// conversion, or its dequantization with the b inputs) computes on
  /// pairs of A's type (WeightSide.h).
  bool mmaAChain = false, mmaBChain = false;
  /// An integer weight whose side is q * s + z in f32 (WeightSide.h's
  /// matchFactoredWeight): the mma kind sums x * q a step at a time and
  /// applies the step's group's s and z to the sums; the other tensor-core
  /// kinds do not take it.
  bool factoredB = false;
  /// The b inputs (group-wise scales and zeros) and the K elements each of
  /// their values covers: the group size, K where they are read per row, 0
  /// without b inputs.
  int64_t bInputs = 0, group = 0;
  /// The activations' side has a prologue (a_inputs): only the kinds that
  /// load A into registers (simt, mma) run it.
  bool aPrologue = false;
  /// The prologue's row statistic is derived in the kernel (the op's
  /// `statistic` regions): each block sums its rows of A first. Only the
  /// simt kind does.
  bool rowStatistic = false;
  /// Weights read with the same activations (B and its siblings: gate and
  /// up projections joined by horizontal fusion); each output has one sum
  /// per weight. Only the simt and mma kinds run more than one.
  int64_t weights = 1;
  /// The epilogue reads each output's partner column (kernel.partner: a
  /// rotary embedding): the kind must hold both columns of a pair where it
  /// runs the epilogue (simt: an even `rows`), and the weight is [N, K].
  bool pairs = false;
  /// The most weights one contraction reads: each adds its sums and its
  /// loads in flight to every thread's registers.
  static constexpr int64_t kMaxWeights = 4;
  /// Bytes of `elements` weight elements.
  int64_t weightBytes(int64_t elements) const {
    return tensorBytes(b, elements);
  }
};

/// A schedule as plain data (the tuner edits these): the kind, then one
/// member per row of kScheduleFields, which also gives the defaults.
struct ScheduleParams {
  ScheduleKind kind = ScheduleKind::simt;
  int64_t warps, rows, kwarps, vec, unroll, mtile, splitk;
  /// Register cap per thread (.maxnreg); 0 = ptxas decides.
  int64_t regs;
  /// Tiled kind: warps along M, and K tiles in the shared-memory ring
  /// (wgmma: the ring too; mma: 2 loads the next weights while the current
  /// ones are summed).
  int64_t mwarps, stages;
  /// wgmma kind: blocks per cluster, which share the activation tile
  /// through TMA multicast.
  int64_t cluster;

  /// A simt schedule with every field at its default.
  ScheduleParams();
  /// "simt w4 r2 kw1 v16 u4 mt1 sk1": the kind, then every field in table
  /// order, those that are not shown at their default (" rg128 mw2 st4")
  /// only when set.
  std::string str() const;
  /// Parses str()'s format (spaces, commas or colons between fields; fields
  /// left out keep their defaults). Returns std::nullopt and sets `err` on
  /// malformed text.
  static std::optional<ScheduleParams> parse(llvm::StringRef text,
                                             std::string &err);
  bool operator==(const ScheduleParams &o) const;
  bool operator!=(const ScheduleParams &o) const { return !(*this == o); }
};

/// For #kernel.schedule's storage.
llvm::hash_code hash_value(const ScheduleParams &s);

/// The values the tuner tries for a field under one kind, in order: the
/// powers of two in [lo, hi], or the first `count` entries of `list`. An
/// empty range leaves the field where the start has it.
struct TuneRange {
  int64_t lo = 0, hi = 0;
  std::array<int64_t, 6> list = {};
  size_t count = 0;
  constexpr bool empty() const { return lo == 0 && count == 0; }
  std::vector<int64_t> values() const;
};
constexpr TuneRange powersOfTwo(int64_t lo, int64_t hi) {
  return {lo, hi, {}, 0};
}
template <typename... T> constexpr TuneRange oneOf(T... values) {
  static_assert(sizeof...(T) <= std::tuple_size_v<decltype(TuneRange::list)>);
  return {0, 0, {int64_t(values)...}, sizeof...(T)};
}

/// A field as the tuner's coordinate: the coordinates are swept in `order`,
/// over the field's range for the schedule's kind. With `plusM`, M itself
/// (rounded up to 8 for tiled) and the current value join the range.
struct TuneAxis {
  int order;
  TuneRange simtAndMma, tiled, elementwise, wgmma, reduce;
  bool plusM = false;
  constexpr const TuneRange &forKind(ScheduleKind kind) const {
    return kind == ScheduleKind::tiled         ? tiled
           : kind == ScheduleKind::elementwise ? elementwise
           : kind == ScheduleKind::reduce      ? reduce
           : kind == ScheduleKind::wgmma       ? wgmma
                                               : simtAndMma;
  }
};

/// One field of a schedule.
struct ScheduleField {
  /// The manifest's key and the #kernel.schedule parameter: "warps".
  llvm::StringLiteral name;
  /// The text form's prefix: "w" of "w4".
  llvm::StringLiteral letters;
  int64_t ScheduleParams::*member;
  int64_t defaultValue;
  /// Shown at its default too, by str() and #kernel.schedule (which then
  /// requires it); the other fields appear only when set.
  bool shownAtDefault;
  TuneAxis tune;
};

/// Every field but the kind, in the order of the text form and of
/// #kernel.schedule. Adding a field: a member of ScheduleParams, a row here
/// and its use in the lowering; the text form, the attribute, the manifest
/// and the tuner follow (legality, in Schedule.cpp, knows only the rules it
/// is given).
inline constexpr ScheduleField kScheduleFields[] = {
    // name, letters, member, default, shown at default,
    //   {tuner order, range for simt and mma, for tiled, for elementwise,
    //    for wgmma, for reduce}
    {"warps",
     "w",
     &ScheduleParams::warps,
     4,
     true,
     // wgmma: follows rows (deriveScheduleFields).
     {1,
      powersOfTwo(1, 32),
      powersOfTwo(1, 32),
      powersOfTwo(1, 32),
      {},
      powersOfTwo(1, 16)}},
    {"rows",
     "r",
     &ScheduleParams::rows,
     1,
     true,
     {2,
      powersOfTwo(1, 16),
      powersOfTwo(1, 16),
      {},
      oneOf(1, 2),
      powersOfTwo(1, 4)}},
    {"kwarps",
     "kw",
     &ScheduleParams::kwarps,
     1,
     true,
     // wgmma: consumer warpgroups taking turns at the K tiles; reduce:
     // warps that share a row.
     {5,
      powersOfTwo(1, 32),
      powersOfTwo(1, 8),
      {},
      oneOf(1, 2),
      powersOfTwo(1, 16)}},
    {"vec",
     "v",
     &ScheduleParams::vec,
     16,
     true,
     {7,
      powersOfTwo(1, 64),
      powersOfTwo(1, 64),
      powersOfTwo(1, 16),
      {},
      powersOfTwo(1, 8)}},
    {"unroll",
     "u",
     &ScheduleParams::unroll,
     1,
     true,
     {4, powersOfTwo(1, 16), {}, {}, {}, powersOfTwo(1, 16)}},
    // Rows of M per block: also M itself and wherever the start is.
    // wgmma: its N, so the multiples of 64 between powers of two too.
    {"mtile",
     "mt",
     &ScheduleParams::mtile,
     1,
     true,
     {8,
      powersOfTwo(1, 16),
      powersOfTwo(8, 256),
      {},
      oneOf(16, 32, 64, 128, 192, 256),
      {},
      /*plusM=*/true}},
    {"splitk",
     "sk",
     &ScheduleParams::splitk,
     1,
     true,
     {9, powersOfTwo(1, 64), powersOfTwo(1, 64), {}, powersOfTwo(1, 16)}},
    // Register caps: 0 lets ptxas choose (it may sink loads to gain
    // occupancy); 255 is no cap at all, but ptxas stops trading registers
    // for occupancy; then tighter caps keep more loads in flight.
    {"regs",
     "rg",
     &ScheduleParams::regs,
     0,
     false,
     {0, oneOf(0, 255, 168, 128, 96), oneOf(0, 255, 168, 128, 96), {}, {}}},
    {"mwarps",
     "mw",
     &ScheduleParams::mwarps,
     1,
     false,
     {3, {}, powersOfTwo(1, 8), {}, {}}},
    {"stages",
     "st",
     &ScheduleParams::stages,
     1,
     false,
     // mma may take 2 (the next unroll steps' weights load while the
     // current ones are summed), simt only 1 (its 2 is illegal, skipped).
     {6, oneOf(1, 2), oneOf(2, 3, 4, 5, 6, 8), {}, oneOf(2, 3, 4, 5, 6, 8)}},
    // Blocks per cluster (wgmma): each loads 1/cluster of the activation
    // tile and multicasts it to all. The tuner leaves 4 out: on an H200 it
    // doubled the time of every point tried (8192 x 8192, M = 128: 84.4 us
    // against 43.0 with 2, bench/results/2026-12-01-cluster).
    {"cluster",
     "cl",
     &ScheduleParams::cluster,
     1,
     false,
     {10, {}, {}, {}, oneOf(1, 2)}},
};
inline constexpr size_t kNumScheduleFields = std::size(kScheduleFields);

static_assert(sizeof(ScheduleParams) ==
                  sizeof(int64_t) * (1 + kNumScheduleFields),
              "every int64_t member of ScheduleParams but the kind needs a "
              "row in kScheduleFields");

inline ScheduleParams::ScheduleParams() {
  for (const ScheduleField &f : kScheduleFields)
    this->*f.member = f.defaultValue;
}

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
  /// Operands the kernel takes as TMA tensor maps instead of pointers (the
  /// wgmma kind): operand 0 is A ([M, K], seen as {K, M}), 1 is B ([N, K],
  /// seen as {K, N}); each copy moves a box of boxK x boxRows elements,
  /// swizzled in shared memory over `swizzleBytes` (0: none).
  struct TmaOperand {
    unsigned operand;
    int64_t boxK, boxRows, swizzleBytes;
  };
  std::vector<TmaOperand> tmaOperands;
};

/// Sets the fields a kind ties to others (wgmma: warps = 4 * (rows * kwarps
/// + 1), a producer warpgroup and rows x kwarps consumers), so that a tuner
/// step on one field keeps the schedule well formed.
void deriveScheduleFields(ScheduleParams &s);

/// A wgmma consumer thread holds mtile / 2 accumulators and about this many
/// other values (the weight's words, their conversion, addresses).
constexpr int64_t kWgmmaOtherRegisters = 64;
/// What setmaxnreg leaves the producer warpgroup, and the most it may give
/// a thread.
constexpr int64_t kWgmmaProducerRegisters = 40, kWgmmaMaxRegisters = 256;

/// The registers of a wgmma schedule's threads. Where the consumers need
/// more than an even share of the 64K (launch != 0), the kernel launches
/// with `launch` per thread, the producer warpgroup gives all but
/// kWgmmaProducerRegisters back, and the consumers raise theirs to
/// consumerLimit (setmaxnreg).
struct WgmmaRegisters {
  int64_t perConsumer;   // what a consumer thread needs, about
  int64_t consumerLimit; // what it may have
  int64_t launch = 0;    // .maxnreg when the warpgroups trade
};
WgmmaRegisters wgmmaRegisters(const ScheduleParams &s);

/// True if v is a power of two in [lo, hi].
inline bool isPow2In(int64_t v, int64_t lo, int64_t hi) {
  return v >= lo && v <= hi && v > 0 && (v & (v - 1)) == 0;
}

/// Why the wgmma schedule `s` cannot run `c` ("" if it can;
/// ScheduleWgmma.cpp). checkContractSchedule asks it, after the rules all
/// tensor-core kinds share.
std::string checkWgmmaSchedule(const ContractShape &c, const ScheduleParams &s);

/// Why `s` cannot run a contraction of `c`, or an elementwise kernel of
/// `numElements` ("" if it can); checkSchedule (KernelOps.h) asks them.
std::string checkContractSchedule(const ContractShape &c,
                                  const ScheduleParams &s);
std::string checkElementwiseSchedule(int64_t numElements,
                                     const ScheduleParams &s);
/// A row reduction of `rows` rows (the result's elements).
std::string checkReduceSchedule(int64_t rows, const ScheduleParams &s);

LaunchConfig contractLaunchConfig(const ContractShape &c,
                                  const ScheduleParams &s);

/// Derived quantities of a contraction schedule, shared by the lowering and
/// launchConfig.
struct ContractGeometry {
  int64_t elemsPerLoad;    // B elements one lane loads at once (vec / sizeof B)
  int64_t warpsN;          // warps along N (warps / kwarps)
  int64_t colsPerBlock;    // output columns (n) one block covers
  int64_t gridN, gridM;    // blocks along N (a multiple of the cluster)
                           // and along M
  int64_t chunk;           // K elements one warp consumes per step (nk layout)
  int64_t pieces;          // K pieces: kwarps * splitk
  int64_t reduceFloats;    // shared-memory floats for the cross-warp reduction
  int64_t accPerThread;    // f32 accumulators per thread (mma: 4 * rows * mt)
  int64_t stageBytes;      // tiled, wgmma: shared bytes of one stage
  int64_t weightTileBytes; // tiled: the weight's part of a stage (first);
                           // wgmma: the weight tile (after all A tiles)
};

/// The wgmma kind: a 64-row weight tile per consumer warpgroup (`rows` of
/// them, after one producer warpgroup), K tiles of 64, and the shared
/// memory before the ring that aligns it to the 1024 bytes a 128-byte
/// swizzle needs (dynamic shared memory is only 16-byte aligned).
constexpr int64_t kWgmmaRowsPerGroup = 64, kWgmmaTileK = 64,
                  kWgmmaAlignSlack = 1024;

/// Tensor-core (mma) tiles: each warp owns `rows` tiles of 16 weight rows and
/// the block's `mtile` rows of A as mtile / 8 tiles of 8; one K step is
/// 4 * vec (each lane of a group of four takes vec consecutive k's).
constexpr int64_t kMmaRowsPerTile = 16, kMmaColsPerTile = 8, kMmaChunk = 64;

/// Shared memory a block may use when it opts in (H100/H200: 227 KiB), a
/// multiprocessor's (228 KiB), and what the system keeps of it per block.
constexpr int64_t kMaxOptinShared = 227 * 1024, kSharedPerSM = 228 * 1024,
                  kSharedReservedPerBlock = 1024;
/// 32-bit registers of a multiprocessor.
constexpr int64_t kRegistersPerSM = 64 * 1024;

/// Whether the body and layouts of `op` can use the mma, tiled and wgmma
/// kinds ("" if so).
/// `kInTiles`: K must be a multiple of the 64 of a K step (not for wgmma,
/// whose TMA copies read past K as zeros).
std::string mmaSupport(const ContractShape &c, bool aIsExtF, bool bIsCast,
                       bool kInTiles = true);
ContractGeometry contractGeometry(const ContractShape &c,
                                  const ScheduleParams &s);
LaunchConfig elementwiseLaunchConfig(int64_t numElements,
                                     const ScheduleParams &s);
/// The reduce kind: `warps` warps a block, each summing `rows` rows.
LaunchConfig reduceLaunchConfig(int64_t rows, const ScheduleParams &s);

} // namespace mtc::kernel

#endif // MTC_DIALECTS_KERNEL_SCHEDULE_H
