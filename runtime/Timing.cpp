//===- Timing.cpp - Timing kernels with CUDA graphs -----------------------===//
//
// See Timing.h.
//
//===----------------------------------------------------------------------===//
#include "runtime/Timing.h"

#include "runtime/Program.h"

#include "llvm/Support/MathExtras.h"

#include <fmt/format.h>

#include <algorithm>

using namespace llvm;

namespace mtc {

//===----------------------------------------------------------------------===//
// Graph capture and replay
//===----------------------------------------------------------------------===//

void summarize(Timing &t) {
  std::vector<double> s = t.samplesMicros;
  std::sort(s.begin(), s.end());
  size_t n = s.size();
  if (n == 0)
    return;
  t.minMicros = s.front();
  t.maxMicros = s.back();
  t.medianMicros = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

GraphReplayer::~GraphReplayer() {
  // Nothing captured may still run when the graphs go.
  consumeError(dev.makeCurrent());
  consumeError(dev.synchronize());
}

Error GraphReplayer::capture(function_ref<Error()> enqueue) {
  Expected<Graph> graph = Graph::capture(dev.driver(), dev.stream(), enqueue);
  if (!graph)
    return graph.takeError();
  graphs.push_back(std::move(*graph));
  return Error::success();
}

Expected<std::vector<double>> GraphReplayer::replay(unsigned warmup,
                                                    unsigned replays) {
  if (graphs.empty())
    return runtimeError("no graph was captured");
  auto launchNext = [&]() -> Error {
    return graphs[launched++ % graphs.size()].launch(dev.stream());
  };
  unsigned warm = std::max<unsigned>(warmup, numGraphs());
  for (unsigned i = 0; i < warm; ++i)
    if (Error e = launchNext())
      return std::move(e);
  if (Error e = dev.synchronize())
    return std::move(e);

  // Replays go back to back; event i + 1 ends replay i and starts replay
  // i + 1, so the host never leaves the GPU idle inside a measurement.
  while (events.size() < size_t(replays) + 1) {
    Expected<Event> ev = Event::create(dev.driver());
    if (!ev)
      return ev.takeError();
    events.push_back(std::move(*ev));
  }
  if (Error e = events[0].record(dev.stream()))
    return std::move(e);
  for (unsigned i = 0; i < replays; ++i) {
    if (Error e = launchNext())
      return std::move(e);
    if (Error e = events[i + 1].record(dev.stream()))
      return std::move(e);
  }
  if (Error e = events[replays].synchronize())
    return std::move(e);
  std::vector<double> ms;
  for (unsigned i = 0; i < replays; ++i) {
    Expected<float> t = Event::elapsedMillis(events[i], events[i + 1]);
    if (!t)
      return t.takeError();
    ms.push_back(double(*t));
  }
  return ms;
}

//===----------------------------------------------------------------------===//
// Timing a program over rotated copies of its inputs
//===----------------------------------------------------------------------===//

Expected<Timing> timeProgram(Device &dev, const Program &program,
                             ArrayRef<DeviceBuffer> buffers,
                             const TimingOptions &o, StringRef what) {
  const Manifest &man = program.manifest();
  unsigned first = o.kernel ? *o.kernel : 0;
  unsigned last = o.kernel ? *o.kernel + 1 : program.numKernels();

  // The buffers that get a copy per call: for the program its inputs, for one
  // kernel the inputs and intermediates it reads (those an earlier kernel
  // produced). Outputs, other intermediates and workspaces are shared.
  std::vector<bool> earlier(buffers.size(), false), rotate(buffers.size());
  for (unsigned k = 0; k < first; ++k)
    for (unsigned b : program.kernelParams(k))
      earlier[b] = true;
  std::vector<unsigned> rotated;
  for (unsigned k = first; k < last; ++k)
    for (unsigned b : program.kernelParams(k)) {
      BufferInfo::Role r = man.buffers[b].role;
      bool reads =
          r == BufferInfo::Role::Input ||
          (o.kernel && r == BufferInfo::Role::Intermediate && earlier[b]);
      if (reads && !rotate[b]) {
        rotate[b] = true;
        rotated.push_back(b);
      }
    }
  // Copies of the rotated buffers live in one pool, copy after copy, each
  // buffer 256-byte aligned like a cuMemAlloc.
  int64_t rotatedBytes = 0, stride = 0;
  std::vector<int64_t> offsets;
  for (unsigned b : rotated) {
    rotatedBytes += buffers[b].bytes();
    offsets.push_back(stride);
    stride += int64_t(alignTo(uint64_t(buffers[b].bytes()), 256));
  }

  Timing t;
  t.rotatedBytes = rotatedBytes;
  int64_t copies = 1, maxCopies = 1;
  if (rotatedBytes > 0) {
    int64_t footprint =
        o.minFootprintBytes > 0 ? o.minFootprintBytes : 4 * dev.l2Bytes();
    Expected<int64_t> freeOr = dev.freeMemory();
    if (!freeOr)
      return freeOr.takeError();
    int64_t margin =
        std::max<int64_t>(int64_t(256) << 20, dev.totalMemory() / 20);
    maxCopies = 1 + std::max<int64_t>(0, *freeOr - margin) / stride;
    copies = std::min(
        {int64_t(divideCeil(uint64_t(footprint), uint64_t(rotatedBytes))),
         std::max<int64_t>(o.maxCopies, 1), maxCopies});
    copies = std::max<int64_t>(copies, 1);
  }
  // Call i of the sequence reads copy i mod copies, and the sequence runs on
  // across replays; so every graph holds whole rounds of copies or a copy
  // count is a whole number of graphs.
  unsigned calls = o.callsPerGraph, graphs = 1;
  if (copies <= calls) {
    calls = unsigned(divideCeil(calls, uint64_t(copies)) * copies);
  } else {
    int64_t up = int64_t(divideCeil(uint64_t(copies), calls)) * calls;
    copies = up <= maxCopies ? up : copies / calls * calls;
    graphs = unsigned(copies / calls);
  }
  t.copies = copies;
  t.footprintBytes = copies * rotatedBytes;
  t.graphs = graphs;
  t.callsPerGraph = calls;

  // Copy 0 is the program's own buffers; copies 1.. are filled from them,
  // the first directly and the rest by doubling.
  DeviceBuffer pool;
  std::vector<std::vector<cu::CUdeviceptr>> tables(static_cast<size_t>(copies));
  for (const DeviceBuffer &b : buffers)
    tables[0].push_back(b.ptr());
  if (copies > 1) {
    Expected<DeviceBuffer> poolOr = DeviceBuffer::allocate(
        dev, (copies - 1) * stride,
        fmt::format("{} copies of the timed inputs", copies - 1));
    if (!poolOr)
      return withContext(poolOr.takeError(), fmt::format("timing {}", what));
    pool = std::move(*poolOr);
    std::string copying = fmt::format("copying the inputs to time {}", what);
    for (size_t j = 0; j < rotated.size(); ++j)
      if (Error e = pool.copyFrom(buffers[rotated[j]], offsets[j]))
        return withContext(std::move(e), copying);
    if (Error e = pool.repeatPrefix(stride))
      return withContext(std::move(e), copying);
    for (int64_t c = 1; c < copies; ++c) {
      tables[c] = tables[0];
      for (size_t j = 0; j < rotated.size(); ++j)
        tables[c][rotated[j]] = pool.ptr() + (c - 1) * stride + offsets[j];
    }
  }
  if (Error e = dev.synchronize())
    return std::move(e);

  // Declared after `pool`: destroyed (and the stream drained) first.
  GraphReplayer replayer(dev);
  for (unsigned g = 0; g < graphs; ++g) {
    auto enqueue = [&]() -> Error {
      for (unsigned i = 0; i < calls; ++i) {
        const std::vector<cu::CUdeviceptr> &ptrs =
            tables[size_t((int64_t(g) * calls + i) % copies)];
        for (unsigned k = first; k < last; ++k)
          if (Error e = program.launch(k, ptrs, dev.stream()))
            return e;
      }
      return Error::success();
    };
    if (Error e = replayer.capture(enqueue))
      return withContext(std::move(e),
                         fmt::format("capturing a graph to time {}", what));
  }
  Expected<std::vector<double>> msOr = replayer.replay(o.warmup, o.replays);
  if (!msOr)
    return withContext(msOr.takeError(), fmt::format("timing {}", what));
  for (double ms : *msOr)
    t.samplesMicros.push_back(ms * 1000.0 / calls);
  summarize(t);
  return t;
}

} // namespace mtc
