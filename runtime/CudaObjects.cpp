//===- CudaObjects.cpp - Driver objects with lifetimes --------------------===//
//
// See CudaObjects.h. With CudaDriver.cpp, the only file that calls the
// driver's entry points.
//
//===----------------------------------------------------------------------===//
#include "runtime/CudaObjects.h"

#include <utility>

using namespace llvm;

namespace mtc {

Expected<Stream> Stream::create(const CudaDriver &drv, unsigned flags) {
  Stream s;
  if (Error e =
          drv.check(drv.cuStreamCreate(&s.stream, flags), "cuStreamCreate"))
    return std::move(e);
  s.drv = &drv;
  return std::move(s);
}

Stream &Stream::operator=(Stream &&other) noexcept {
  if (this != &other) {
    reset();
    drv = std::exchange(other.drv, nullptr);
    stream = std::exchange(other.stream, nullptr);
  }
  return *this;
}

void Stream::reset() {
  if (stream)
    (void)drv->cuStreamDestroy_v2(stream);
  drv = nullptr;
  stream = nullptr;
}

Expected<Event> Event::create(const CudaDriver &drv) {
  Event ev;
  if (Error e = drv.check(drv.cuEventCreate(&ev.event, cu::CU_EVENT_DEFAULT),
                          "cuEventCreate"))
    return std::move(e);
  ev.drv = &drv;
  return std::move(ev);
}

Event &Event::operator=(Event &&other) noexcept {
  if (this != &other) {
    if (event)
      (void)drv->cuEventDestroy_v2(event);
    drv = std::exchange(other.drv, nullptr);
    event = std::exchange(other.event, nullptr);
  }
  return *this;
}

Event::~Event() {
  if (event)
    (void)drv->cuEventDestroy_v2(event);
}

Error Event::record(cu::CUstream stream) const {
  return drv->check(drv->cuEventRecord(event, stream), "cuEventRecord");
}

Error Event::synchronize() const {
  return drv->check(drv->cuEventSynchronize(event), "cuEventSynchronize");
}

Expected<float> Event::elapsedMillis(const Event &start, const Event &end) {
  const CudaDriver &drv = *start.drv;
  float ms = 0;
  cu::CUresult r = drv.cuEventElapsedTime_v2
                       ? drv.cuEventElapsedTime_v2(&ms, start.event, end.event)
                       : drv.cuEventElapsedTime(&ms, start.event, end.event);
  if (Error e = drv.check(r, "cuEventElapsedTime"))
    return std::move(e);
  return ms;
}

Expected<Graph> Graph::capture(const CudaDriver &drv, cu::CUstream stream,
                               function_ref<Error()> enqueue) {
  if (Error e = drv.check(drv.cuStreamBeginCapture_v2(
                              stream, cu::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                          "cuStreamBeginCapture"))
    return std::move(e);
  Error launchErr = enqueue();
  // The capture must end even if a launch failed, or the stream stays in
  // capture mode.
  Graph g;
  g.drv = &drv;
  cu::CUresult r = drv.cuStreamEndCapture(stream, &g.graph);
  if (launchErr)
    return std::move(launchErr);
  if (Error e = drv.check(r, "cuStreamEndCapture"))
    return std::move(e);
  if (!g.graph)
    return runtimeError("cuStreamEndCapture returned no graph");
  if (Error e = drv.check(drv.cuGraphInstantiateWithFlags(&g.exec, g.graph, 0),
                          "cuGraphInstantiateWithFlags"))
    return std::move(e);
  return std::move(g);
}

Graph &Graph::operator=(Graph &&other) noexcept {
  if (this != &other) {
    reset();
    drv = std::exchange(other.drv, nullptr);
    graph = std::exchange(other.graph, nullptr);
    exec = std::exchange(other.exec, nullptr);
  }
  return *this;
}

void Graph::reset() {
  if (exec)
    (void)drv->cuGraphExecDestroy(exec);
  if (graph)
    (void)drv->cuGraphDestroy(graph);
  exec = nullptr;
  graph = nullptr;
}

Error Graph::launch(cu::CUstream stream) const {
  return drv->check(drv->cuGraphLaunch(exec, stream), "cuGraphLaunch");
}

Expected<ContextScope> ContextScope::enter(const CudaDriver &drv,
                                           cu::CUcontext ctx) {
  ContextScope scope(drv);
  Expected<cu::CUcontext> current = drv.currentContext();
  if (!current)
    return current.takeError();
  if (*current != ctx) {
    if (Error e = drv.check(drv.cuCtxPushCurrent_v2(ctx), "cuCtxPushCurrent"))
      return std::move(e);
    scope.pushed = true;
  }
  return std::move(scope);
}

ContextScope::~ContextScope() {
  if (pushed) {
    cu::CUcontext popped = nullptr;
    (void)drv->cuCtxPopCurrent_v2(&popped);
  }
}

} // namespace mtc
