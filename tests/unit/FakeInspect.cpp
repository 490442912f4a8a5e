//===- FakeInspect.cpp - What the fake libcuda tells its tests ------------===//
//
// The fakeCuda* functions the runtime's unit tests call to see what
// happened (FAKE_CUDA_REPORT=1's report at exit, for the command-line tool's
// lit tests, which cannot call them, is beside the state in FakeCuda.cpp).
//
//===----------------------------------------------------------------------===//
#include "FakeState.h"

using namespace fake;

//===----------------------------------------------------------------------===//
// Inspection
//===----------------------------------------------------------------------===//

FAKE_API long fakeCudaExecutedKernels() { return state.executed; }
FAKE_API long fakeCudaLaunchCalls() { return state.launchCalls; }
FAKE_API long fakeCudaProgrammaticLaunches() {
  return state.programmaticLaunches;
}
FAKE_API void fakeCudaLastLaunch(unsigned *grid, unsigned *block,
                                 unsigned *shared) {
  for (int i = 0; i < 3; ++i) {
    grid[i] = state.last.grid[i];
    block[i] = state.last.block[i];
  }
  *shared = state.last.shared;
}
FAKE_API long fakeCudaDistinctFirstArgs() {
  return long(state.firstArgs.size());
}
FAKE_API long fakeCudaCopyMismatches() { return state.copyMismatches; }
FAKE_API void fakeCudaResetStats() {
  state.copySources.clear();
  state.copyMismatches = 0;
  state.executed = 0;
  state.launchCalls = 0;
  state.programmaticLaunches = 0;
  state.firstArgs.clear();
  state.last = Launch();
}
/// Allocations, modules, streams, events, graphs and context references
/// still alive.
FAKE_API long fakeCudaLiveObjects() {
  return long(state.allocations.size()) + state.liveModules +
         state.liveStreams + state.liveEvents + state.liveGraphs +
         state.liveExecs + state.contextRefs;
}
