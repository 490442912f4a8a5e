//===- Executor.h - Runs a compiled graph on the GPU ------------*- C++ -*-===//
//
// The Executor runs what a Manifest describes: it JIT-loads the PTX, resolves
// and checks every kernel (a Program), allocates every buffer, takes inputs,
// launches the kernels in order and hands back outputs. It also times the
// program (or one kernel) the way `mtc bench` and the autotuner need it
// (Timing.h): CUDA graphs of many calls, replayed, over enough rotated copies
// of the inputs that every call reads them from DRAM rather than from L2.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_RUNTIME_EXECUTOR_H
#define MTC_RUNTIME_EXECUTOR_H

#include "runtime/Device.h"
#include "runtime/HostTensor.h"
#include "runtime/Manifest.h"
#include "runtime/Program.h"
#include "runtime/Timing.h"

#include <memory>
#include <optional>
#include <vector>

namespace mtc {

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
  llvm::Error checkInputsSet(llvm::StringRef what) const;
  int findBuffer(llvm::StringRef name) const {
    return program->findBuffer(name);
  }

  Device &dev;
  Manifest man;
  std::unique_ptr<Program> program;  // refers to `man`
  std::vector<DeviceBuffer> buffers; // parallel to man.buffers
  std::vector<bool> inputSet;        // parallel to man.buffers
};

} // namespace mtc

#endif // MTC_RUNTIME_EXECUTOR_H
