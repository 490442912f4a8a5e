//===- GpuTarget.h - The GPU that schedules are sized for -------*- C++ -*-===//
//
// The facts of a GPU that the heuristic schedules depend on (multiprocessors,
// L2, shared memory per block, memory bandwidth: passes/Heuristics.h's
// ScheduleTarget) and the
// architecture its PTX is for. `mtc compile` names one (--target NAME, or the
// default for --arch); the commands that run on a GPU, and the PyTorch
// package, take the GPU at hand's (--target gpu, queried from the driver).
//
//===----------------------------------------------------------------------===//
#ifndef MTC_COMPILER_GPUTARGET_H
#define MTC_COMPILER_GPUTARGET_H

#include "passes/Heuristics.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mtc {

struct GpuTarget {
  /// "h100", the GPU's name for the one at hand, or "custom".
  std::string name;
  /// The architecture mtc compiles for on it: "sm_90a".
  std::string arch;
  /// What the heuristics size schedules by (`wgmma` follows the arch
  /// compiled for, see forArch).
  ScheduleTarget facts;

  /// The facts with `wgmma` set for `arch`: the arch actually compiled for.
  ScheduleTarget forArch(llvm::StringRef arch) const;
  /// "h100 (132 SMs, 50 MiB L2, 227 KiB shared memory per block, 3352 GB/s)".
  std::string describe() const;
};

/// "a100, h100, h200, l40s, rtx4090".
std::string knownTargetNames();

/// The target of --target SPEC (not "gpu", which the commands resolve): a
/// name of knownTargetNames(), or "sms=N,l2=BYTES,smem=BYTES[,bw=GB/s]"
/// (shared memory per block, opted in; without bw, an H200's bandwidth per
/// multiprocessor) for another GPU, whose arch is `archIfCustom`.
/// Errors are InputErrors naming the flag.
llvm::Expected<GpuTarget> parseTarget(llvm::StringRef spec,
                                      llvm::StringRef archIfCustom);

/// The named target `mtc compile --arch ARCH` sizes schedules for when no
/// --target is given: sm_90 and sm_90a an H100's, sm_89 an L40S's, sm_80 an
/// A100's.
GpuTarget defaultTargetFor(llvm::StringRef arch);

/// The architecture for a GPU of compute capability major.minor: 9.0 (Hopper)
/// sm_90a; other 9.x and newer sm_90 (PTX that the driver compiles for the
/// GPU); 8.9 sm_89; other 8.x sm_80. An error below 8.0, which mtc cannot
/// run on.
llvm::Expected<std::string> archForComputeCapability(int major, int minor);

} // namespace mtc

#endif // MTC_COMPILER_GPUTARGET_H
