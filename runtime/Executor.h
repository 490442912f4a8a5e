//===- Executor.h - Runs a compiled graph on the GPU ------------*- C++ -*-===//
//
// The Executor runs what a Manifest describes: it JIT-loads the PTX, resolves
// and checks every kernel, allocates every buffer, takes inputs, launches the
// kernels in order and hands back outputs. It also times the program (or one
// kernel) the way `mtc bench` and the autotuner need it: CUDA graphs of many
// calls, replayed, over enough rotated copies of the inputs that every call
// reads them from DRAM rather than from L2.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_RUNTIME_EXECUTOR_H
#define MTC_RUNTIME_EXECUTOR_H

#include "runtime/Device.h"
#include "runtime/HostTensor.h"
#include "runtime/Manifest.h"
#include "runtime/Program.h"

#include <memory>
#include <optional>
#include <vector>

namespace mtc {

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

/// A compiled graph, loaded on a device and ready to run.
class Executor {
public:
  /// Loads `manifest`'s Program from `ptx` and allocates every buffer (all
  /// zeroed; workspaces must stay zero between kernels).
  static llvm::Expected<std::unique_ptr<Executor>>
  create(Device &device, const Manifest &manifest, llvm::StringRef ptx);
  ~Executor();

  /// Copies `t` into the input buffer `name` (dtype, shape and size must
  /// match the manifest).
  llvm::Error setInput(llvm::StringRef name, const HostTensor &t);
  /// Fills outputs and intermediates with 0xFF bytes (NaN for floats), so a
  /// kernel that skips an element is caught.
  llvm::Error poison();
  /// Launches every kernel in order and waits for it; a failure names the
  /// kernel. All inputs must have been set.
  llvm::Error run();
  /// The contents of buffer `name` (normally an output).
  llvm::Expected<HostTensor> getOutput(llvm::StringRef name);
  /// Times the program or one kernel (see TimingOptions). All inputs must
  /// have been set; the program runs once first (so intermediates a kernel
  /// reads hold real values) and outputs hold its results afterwards.
  llvm::Expected<Timing> time(const TimingOptions &options = {});

  const Manifest &manifest() const { return man; }
  Device &device() const { return dev; }
  /// The JIT's info log for the whole module.
  llvm::StringRef jitInfoLog() const;
  /// Registers, spills and shared memory of kernel `k` as the JIT built it.
  const FunctionAttributes &kernelAttributes(unsigned k) const;

private:
  Executor(Device &device, const Manifest &manifest)
      : dev(device), man(manifest) {}
  /// Launches kernel `k` on the device's stream with buffer i at `ptrs[i]`.
  llvm::Error launch(unsigned k, llvm::ArrayRef<cu::CUdeviceptr> ptrs) {
    return program->launch(k, ptrs, dev.stream());
  }
  llvm::Error checkInputsSet(llvm::StringRef what) const;
  int findBuffer(llvm::StringRef name) const {
    return program->findBuffer(name);
  }

  Device &dev;
  Manifest man;
  std::unique_ptr<Program> program; // refers to `man`
  std::vector<DeviceBuffer> buffers; // parallel to man.buffers
  std::vector<bool> inputSet;        // parallel to man.buffers
};

/// The PTX of mtc's streaming-read kernel (sm_80+): `mtc_read_bw(src,
/// vectors, sink)` reads `vectors` 16-byte vectors from `src`.
llvm::StringRef readBandwidthPTX();

/// The device's streaming-read ceiling in bytes per second: mtc's read kernel
/// over a random-filled buffer of `bytes` (1 GiB: far beyond L2), timed with
/// graphs and replays like Executor::time, median of the replays.
llvm::Expected<double> measureReadBandwidth(Device &device,
                                            int64_t bytes = int64_t(1) << 30);

} // namespace mtc

#endif // MTC_RUNTIME_EXECUTOR_H
