//===- FakeState.h - What the fake libcuda's files share --------*- C++ -*-===//
//
// What the files of FakeCuda share: FAKE_API, which marks what the library
// exports (the cu* entry points and the fakeCuda* inspection functions), and,
// for FakeCuda.cpp, FakeModules.cpp and FakeStreams.cpp, the fake's kernels
// and recorded launches, the driver's state, the objects behind the driver's
// handle types, and the helpers that read FAKE_CUDA_MODE, check stream
// capture and execute a launch (none of which is exported).
//
//===----------------------------------------------------------------------===//
#ifndef MTC_TESTS_UNIT_FAKESTATE_H
#define MTC_TESTS_UNIT_FAKESTATE_H

#include "runtime/CudaDriver.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

/// A driver entry point or inspection function the library exports.
#define FAKE_API extern "C" __attribute__((visibility("default")))

// Not exported: the runtime and the tests resolve only FAKE_API names.
#pragma GCC visibility push(hidden)

namespace fake {

struct FakeFunction {
  std::string name;
  std::vector<size_t> paramSizes; // bytes, as the PTX declares them
  int maxDynamicShared = 0;
};

struct Launch {
  FakeFunction *fn = nullptr;
  std::vector<mtc::cu::CUdeviceptr> args;
  unsigned grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  unsigned shared = 0;
};

struct State {
  std::map<mtc::cu::CUdeviceptr, size_t> allocations;
  int64_t allocated = 0;
  int contextRefs = 0;
  long liveModules = 0, liveStreams = 0, liveEvents = 0, liveGraphs = 0,
       liveExecs = 0;
  long modulesLoaded = 0; // cuModuleLoadDataEx calls that loaded one
  long executed = 0;      // kernels executed (launched or replayed)
  /// Simulated microseconds: 1 a kernel, or (warps_time) its warps a block.
  long clock = 0;
  long launchCalls = 0; // cuLaunchKernel calls, captured or not
  /// cuLaunchKernelEx calls with programmatic stream serialization.
  long programmaticLaunches = 0;
  mtc::cu::CUresult sticky = mtc::cu::CUDA_SUCCESS;
  Launch last;
  std::set<mtc::cu::CUdeviceptr> firstArgs;
  /// What each *copy kernel first read, and how often it later read
  /// something else (rotated input copies must all hold the same data).
  std::map<std::string, std::vector<uint8_t>> copySources;
  long copyMismatches = 0;
};

/// The whole driver's state (FakeCuda.cpp).
extern State state;

/// FAKE_CUDA_MODE, or "ok" (FakeCuda.cpp).
std::string mode();

/// Runs `l` now: counts it, copies for *copy kernels, faults in "fault" mode
/// (FakeCuda.cpp).
mtc::cu::CUresult execute(const Launch &l);

/// Whether a stream is capturing (FakeStreams.cpp).
bool anyCapturing();

/// Synchronous calls during a capture invalidate it, as in the real driver
/// (FakeStreams.cpp).
mtc::cu::CUresult captureViolation();

/// The fake function behind a CUfunction handle.
inline FakeFunction *fakeFn(mtc::cu::CUfunction f) {
  return reinterpret_cast<FakeFunction *>(f);
}

} // namespace fake

#pragma GCC visibility pop

// The objects behind the driver's handles, at global scope as
// runtime/CudaDriver.h declares them; those that hold the fake's types are
// hidden like them.
struct CUctx_st {
  int unused;
};
struct __attribute__((visibility("hidden"))) CUmod_st {
  std::vector<fake::FakeFunction *> functions;
};
struct CUstream_st {
  bool capturing = false;
  bool invalidated = false;
  CUgraph_st *graph = nullptr;
};
struct CUevent_st {
  long clockAt = 0; // state.clock when recorded
  bool recorded = false;
};
struct __attribute__((visibility("hidden"))) CUgraph_st {
  std::vector<fake::Launch> launches;
};
struct __attribute__((visibility("hidden"))) CUgraphExec_st {
  std::vector<fake::Launch> launches;
};

#endif // MTC_TESTS_UNIT_FAKESTATE_H
