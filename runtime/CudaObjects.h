//===- CudaObjects.h - Driver objects with lifetimes ------------*- C++ -*-===//
//
// The driver objects mtc creates and destroys, each owned by one object:
// streams, events, captured graphs, and the scope that makes a context
// current. Part of the thin driver layer (CudaDriver.h).
//
//===----------------------------------------------------------------------===//
#ifndef MTC_RUNTIME_CUDAOBJECTS_H
#define MTC_RUNTIME_CUDAOBJECTS_H

#include "runtime/CudaDriver.h"

namespace mtc {

/// A stream mtc created, destroyed with the object (whoever owns it waits
/// for it first). Empty when default-constructed: handle() is then null,
/// which the driver takes for the legacy default stream.
class Stream {
public:
  Stream() = default;
  static llvm::Expected<Stream> create(const CudaDriver &drv,
                                       unsigned flags = cu::CU_STREAM_DEFAULT);
  Stream(Stream &&other) noexcept { *this = std::move(other); }
  Stream &operator=(Stream &&other) noexcept;
  ~Stream() { reset(); }

  cu::CUstream handle() const { return stream; }
  /// Destroys the stream now; the object becomes empty.
  void reset();

private:
  const CudaDriver *drv = nullptr;
  cu::CUstream stream = nullptr;
};

/// An event, destroyed with the object.
class Event {
public:
  Event() = default;
  static llvm::Expected<Event> create(const CudaDriver &drv);
  Event(Event &&other) noexcept { *this = std::move(other); }
  Event &operator=(Event &&other) noexcept;
  ~Event();

  llvm::Error record(cu::CUstream stream) const;
  /// Waits until the work recorded before the event is done.
  llvm::Error synchronize() const;
  /// Milliseconds between two completed events (cuEventElapsedTime_v2 when
  /// the driver has it, else cuEventElapsedTime).
  static llvm::Expected<float> elapsedMillis(const Event &start,
                                             const Event &end);

private:
  const CudaDriver *drv = nullptr;
  cu::CUevent event = nullptr;
};

/// A CUDA graph captured from a stream and instantiated; the graph and its
/// executable are destroyed with the object.
class Graph {
public:
  /// Captures what `enqueue` launches on `stream` (thread-local capture) and
  /// instantiates it. The capture ends even if `enqueue` fails, whose error
  /// is then returned, so the stream never stays in capture mode.
  static llvm::Expected<Graph>
  capture(const CudaDriver &drv, cu::CUstream stream,
          llvm::function_ref<llvm::Error()> enqueue);
  Graph(Graph &&other) noexcept { *this = std::move(other); }
  Graph &operator=(Graph &&other) noexcept;
  ~Graph() { reset(); }

  llvm::Error launch(cu::CUstream stream) const;

private:
  Graph() = default;
  void reset();
  const CudaDriver *drv = nullptr;
  cu::CUgraph graph = nullptr;
  cu::CUgraphExec exec = nullptr;
};

/// Makes a context current on the calling thread for the scope's lifetime if
/// another one is: pushed on entry, popped on exit. When it already is current
/// (as a framework such as PyTorch keeps its device's primary context), this
/// is one cuCtxGetCurrent.
class ContextScope {
public:
  static llvm::Expected<ContextScope> enter(const CudaDriver &drv,
                                            cu::CUcontext ctx);
  ContextScope(ContextScope &&other) noexcept
      : drv(other.drv), pushed(other.pushed) {
    other.pushed = false;
  }
  ContextScope &operator=(ContextScope &&) = delete;
  ~ContextScope();

private:
  explicit ContextScope(const CudaDriver &drv) : drv(&drv) {}
  const CudaDriver *drv;
  bool pushed = false;
};

} // namespace mtc

#endif // MTC_RUNTIME_CUDAOBJECTS_H
