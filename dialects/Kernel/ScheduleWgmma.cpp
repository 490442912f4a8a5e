//===- ScheduleWgmma.cpp - The wgmma kind's schedule rules ----------------===//
//
// What Schedule.cpp says for the other kinds, for wgmma: which schedules
// are legal, the fields it ties together, and its threads' registers.
//
//===----------------------------------------------------------------------===//
#include "dialects/Kernel/Schedule.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::kernel;

void mtc::kernel::deriveScheduleFields(ScheduleParams &s) {
  if (s.kind == ScheduleKind::wgmma)
    s.warps = 4 * (s.rows * s.kwarps + 1);
}

WgmmaRegisters mtc::kernel::wgmmaRegisters(const ScheduleParams &s) {
  WgmmaRegisters r;
  int64_t threads = s.warps * 32;
  r.perConsumer = s.mtile / 2 + kWgmmaOtherRegisters;
  int64_t uniform = std::min<int64_t>(255, kRegistersPerSM / threads) / 8 * 8;
  if (s.regs)
    uniform = std::min(uniform, s.regs);
  r.consumerLimit = uniform;
  if (r.perConsumer > uniform && !s.regs) {
    // The producer warpgroup gives registers back (setmaxnreg) for the
    // consumers to take. They come from the block's own: setmaxnreg.inc
    // waits until the block has them (asking for more hung the GPU matrix's
    // rows 2 x kwarps 2 case, 640 threads at 96).
    r.launch = uniform;
    int64_t consumers = threads - 128;
    r.consumerLimit =
        std::min<int64_t>(kWgmmaMaxRegisters,
                          (uniform * threads - 128 * kWgmmaProducerRegisters) /
                              consumers / 8 * 8);
  }
  return r;
}

/// The wgmma kind: a producer warpgroup and rows x kwarps consumer
/// warpgroups, each multiplying 64 weight rows by the block's mtile rows of
/// A, K tiles of 64 through `stages` shared buffers filled by TMA; the
/// kwarps warpgroups of the same rows take turns at the K tiles. A's box is 64
/// k's of 16-bit elements, one 128-byte swizzled row per activation row; the
/// weight's, 64 bytes per weight row.
std::string mtc::kernel::checkWgmmaSchedule(const ContractShape &c,
                                            const ScheduleParams &s) {
  if (!isInteger(c.b))
    return "wgmma schedules take int8 or int4 weights (converted in "
           "registers)";
  if (c.b == DType::I4 && c.k % 32)
    return "wgmma schedules need K to be a multiple of 32 for int4 weights "
           "(the rows of the weight are copied by TMA, whose strides are "
           "multiples of 16 bytes)";
  if (s.rows != 1 && s.rows != 2)
    return "wgmma rows (consumer warpgroups of 64 weight rows) must be 1 or 2";
  if (!isPow2In(s.kwarps, 1, 4) || s.rows * s.kwarps > 4)
    return "wgmma kwarps (consumer warpgroups taking turns at the K tiles) "
           "must be 1, 2 or 4, with rows x kwarps at most 4";
  if (s.warps != 4 * (s.rows * s.kwarps + 1))
    return "wgmma schedules need warps = 4 * (rows * kwarps + 1): a "
           "producer warpgroup and rows x kwarps consumer warpgroups (warps " +
           std::to_string(4 * (s.rows * s.kwarps + 1)) + " for rows " +
           std::to_string(s.rows) + " and kwarps " + std::to_string(s.kwarps) +
           ")";
  if (s.unroll != 1 || s.mwarps != 1 || s.vec != 16)
    return "wgmma schedules take unroll and mwarps 1 and vec 16";
  int64_t kTiles = llvm::divideCeil(c.k, kWgmmaTileK);
  if (!isPow2In(s.splitk, 1, 64) || s.splitk > kTiles)
    return "wgmma splitk must be a power of two in [1, 64] and at most the " +
           std::to_string(kTiles) + " K tiles of 64";
  if (s.stages < 2 || s.stages > 8)
    return "stages must be in [2, 8]";
  if (s.stages < 2 * s.kwarps)
    return "wgmma kwarps " + std::to_string(s.kwarps) + " needs at least " +
           std::to_string(2 * s.kwarps) +
           " stages (two K tiles in flight per consumer warpgroup)";
  // (So the ring, S (64 rows 64 + 128 mtile) bytes, holds the (kwarps - 1)
  // rows 64 mtile f32 sums the warpgroups that took turns add through it.)
  if (s.mtile < 8 || s.mtile > 256 || s.mtile % 8)
    return "wgmma mtile (the N of wgmma) must be a multiple of 8 in [8, 256]";
  if (!isPow2In(s.cluster, 1, 4) || s.mtile % (8 * s.cluster))
    return "wgmma cluster must be 1, 2 or 4, dividing mtile into multiples "
           "of 8 rows (each block of a cluster loads mtile / cluster rows of "
           "the activations)";
  if (s.mtile > int64_t(llvm::alignTo(c.m, 8)))
    return "mtile " + std::to_string(s.mtile) +
           " exceeds M = " + std::to_string(c.m) + " rounded up to 8";
  if (c.k % 16)
    return "wgmma schedules need K to be a multiple of 16 (the rows of the "
           "weight are copied by TMA, whose strides are multiples of 16 "
           "bytes)";
  // The accumulators, then the weight's words, their conversion and the
  // addresses (ptxas: 123 to 126 registers at mtile 128, 189 at 256), within
  // what each consumer thread may have of the 64K registers.
  WgmmaRegisters r = wgmmaRegisters(s);
  if (r.perConsumer > r.consumerLimit)
    return "needs about " + std::to_string(r.perConsumer) +
           " registers per consumer thread, more than the " +
           std::to_string(r.consumerLimit) + " each can have (of " +
           std::to_string(s.warps * 32) + " threads); it would spill";
  return "";
}
