//===- Timing.h - Timing kernels with CUDA graphs ---------------*- C++ -*-===//
//
// How `mtc bench`, the autotuner and the read-bandwidth ceiling time GPU
// work: many calls captured in CUDA graphs, replayed back to back between
// events, the per-call time being a replay's time over its calls. A program
// (or one kernel of it) is timed over enough rotated copies of the buffers it
// reads that every call reads them from DRAM rather than from L2.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_RUNTIME_TIMING_H
#define MTC_RUNTIME_TIMING_H

#include "runtime/Device.h"

#include "llvm/ADT/ArrayRef.h"

#include <optional>
#include <vector>

namespace mtc {

class Program;

struct TimingOptions {
  /// The kernel to time (an index into Manifest::kernels), or the whole
  /// program if unset.
  std::optional<unsigned> kernel;
  /// Calls captured in one CUDA graph; the per-call time is a replay's time
  /// divided by the calls in it. Rounded up to a multiple of the number of
  /// input copies when there are fewer copies than calls.
  unsigned callsPerGraph = 40;
  /// Timed graph replays (one sample each).
  unsigned replays = 15;
  /// Untimed replays first (at least one per graph).
  unsigned warmup = 3;
  /// The least number of bytes of rotated inputs that separate two reads of
  /// the same copy; 0 means 4 x the device's L2.
  int64_t minFootprintBytes = 0;
  /// At most this many copies (before rounding to whole graphs): inputs
  /// smaller than footprint / maxCopies are timed with less than the
  /// footprint (Timing::footprintBytes says how much). Each copy beyond
  /// callsPerGraph costs `callsPerGraph` launches in one more graph.
  int64_t maxCopies = 16384;
};

struct Timing {
  /// Per-call times in microseconds over the replays.
  double medianMicros = 0, minMicros = 0, maxMicros = 0;
  /// One per timed replay, in replay order.
  std::vector<double> samplesMicros;
  /// Copies of the rotated buffers (1 = no rotation), the bytes of one, and
  /// the bytes of all (read between two reads of the same copy).
  int64_t copies = 1;
  int64_t rotatedBytes = 0;
  int64_t footprintBytes = 0;
  /// Graphs captured and calls in each (replays cycle through the graphs).
  unsigned graphs = 1;
  unsigned callsPerGraph = 0;
};

/// Sets the median, min and max of `t.samplesMicros`.
void summarize(Timing &t);

/// CUDA graphs captured on a device's stream, replayed between events.
/// Everything is destroyed (after the stream drains) with the object.
class GraphReplayer {
public:
  explicit GraphReplayer(Device &dev) : dev(dev) {}
  ~GraphReplayer();

  /// Captures what `enqueue` launches on the stream into a new graph.
  llvm::Error capture(llvm::function_ref<llvm::Error()> enqueue);
  /// Launches max(warmup, graphs) untimed replays, then `replays` timed ones,
  /// cycling through the graphs in capture order; returns the milliseconds of
  /// each timed replay.
  llvm::Expected<std::vector<double>> replay(unsigned warmup, unsigned replays);

  unsigned numGraphs() const { return unsigned(graphs.size()); }

private:
  Device &dev;
  std::vector<Graph> graphs;
  std::vector<Event> events;
  unsigned launched = 0; // replays so far, for cycling through the graphs
};

/// Times `program`, or one kernel of it (`options.kernel`, which must exist),
/// on the device's stream with manifest buffer i in `buffers[i]`, whose inputs
/// hold real values (as do the intermediates a single kernel reads). `what`
/// names the timed work in errors ("graph 'g'", "kernel 'k'").
llvm::Expected<Timing> timeProgram(Device &dev, const Program &program,
                                   llvm::ArrayRef<DeviceBuffer> buffers,
                                   const TimingOptions &options,
                                   llvm::StringRef what);

} // namespace mtc

#endif // MTC_RUNTIME_TIMING_H
