//===- FakeStreams.cpp - Streams, events and graphs of the fake libcuda ---===//
//
// Streams, events (the simulated microseconds of the kernels executed between
// two), stream capture, which records launches into a graph, and graph
// instantiation and replay, which executes them. Synchronous calls during a
// capture fail and invalidate it, as in the real driver.
//
//===----------------------------------------------------------------------===//
#include "FakeState.h"

#include <vector>

using namespace mtc::cu;
using namespace fake;

namespace {

std::vector<CUstream_st *> streams;

} // namespace

bool fake::anyCapturing() {
  for (CUstream_st *s : streams)
    if (s->capturing)
      return true;
  return false;
}

/// Synchronous calls during a capture invalidate it, as in the real driver.
CUresult fake::captureViolation() {
  for (CUstream_st *s : streams)
    if (s->capturing)
      s->invalidated = true;
  return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
}

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

FAKE_API CUresult cuStreamCreate(CUstream *s, unsigned flags) {
  if (flags > 1)
    return CUDA_ERROR_INVALID_VALUE;
  *s = new CUstream_st;
  streams.push_back(*s);
  ++state.liveStreams;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamDestroy_v2(CUstream s) {
  for (size_t i = 0; i < streams.size(); ++i)
    if (streams[i] == s) {
      streams.erase(streams.begin() + long(i));
      delete s->graph;
      delete s;
      --state.liveStreams;
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_INVALID_HANDLE;
}

FAKE_API CUresult cuStreamSynchronize(CUstream s) {
  // The null stream is the legacy default stream, which waits for all.
  if (!s ? anyCapturing() : s->capturing)
    return captureViolation();
  return state.sticky;
}

FAKE_API CUresult cuEventCreate(CUevent *e, unsigned flags) {
  if (flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  *e = new CUevent_st;
  ++state.liveEvents;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuEventRecord(CUevent e, CUstream s) {
  if (!e || !s)
    return CUDA_ERROR_INVALID_HANDLE;
  if (s->capturing)
    return captureViolation();
  e->clockAt = state.clock;
  e->recorded = true;
  return state.sticky;
}

FAKE_API CUresult cuEventSynchronize(CUevent e) {
  if (!e)
    return CUDA_ERROR_INVALID_HANDLE;
  return state.sticky;
}

FAKE_API CUresult cuEventDestroy_v2(CUevent e) {
  if (!e)
    return CUDA_ERROR_INVALID_HANDLE;
  delete e;
  --state.liveEvents;
  return CUDA_SUCCESS;
}

/// The simulated microseconds of the kernels executed between the events.
FAKE_API CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end) {
  if (!start || !end || !start->recorded || !end->recorded)
    return CUDA_ERROR_INVALID_HANDLE;
  *ms = float(end->clockAt - start->clockAt) * 0.001f;
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Stream capture and graphs
//===----------------------------------------------------------------------===//

FAKE_API CUresult cuStreamBeginCapture_v2(CUstream s,
                                          CUstreamCaptureMode captureMode) {
  if (!s || s->capturing || captureMode > CU_STREAM_CAPTURE_MODE_RELAXED)
    return CUDA_ERROR_INVALID_VALUE;
  s->capturing = true;
  s->invalidated = false;
  s->graph = new CUgraph_st;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamEndCapture(CUstream s, CUgraph *graph) {
  if (!s || !s->capturing)
    return CUDA_ERROR_INVALID_VALUE;
  s->capturing = false;
  CUgraph_st *g = s->graph;
  s->graph = nullptr;
  if (s->invalidated) {
    delete g;
    *graph = nullptr;
    return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  }
  *graph = g;
  ++state.liveGraphs;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph g,
                                              unsigned long long flags) {
  if (!g || flags)
    return CUDA_ERROR_INVALID_VALUE;
  *exec = new CUgraphExec_st;
  (*exec)->launches = g->launches;
  ++state.liveExecs;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuGraphLaunch(CUgraphExec exec, CUstream s) {
  if (!exec || !s)
    return CUDA_ERROR_INVALID_HANDLE;
  if (s->capturing)
    return CUDA_ERROR_INVALID_VALUE;
  if (state.sticky)
    return state.sticky;
  for (const Launch &l : exec->launches)
    execute(l);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuGraphExecDestroy(CUgraphExec exec) {
  if (!exec)
    return CUDA_ERROR_INVALID_HANDLE;
  delete exec;
  --state.liveExecs;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuGraphDestroy(CUgraph g) {
  if (!g)
    return CUDA_ERROR_INVALID_HANDLE;
  delete g;
  --state.liveGraphs;
  return CUDA_SUCCESS;
}
