//===- Program.h - A manifest's kernels, loaded and checked -----*- C++ -*-===//
//
// A Program is the code half of a compiled graph: its PTX JIT-loaded into a
// device's context, every kernel of the manifest resolved, its launch
// geometry checked against the kernel's and the device's limits, and its
// dynamic shared memory allowed. It owns no buffers: a launch takes one
// device pointer per manifest buffer, so the Executor (which owns every
// buffer) and the C ABI (where the caller owns inputs and outputs) share it.
//
// Launching never allocates, synchronises or touches host memory beyond the
// call's own arguments, so launches can be captured into CUDA graphs.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_RUNTIME_PROGRAM_H
#define MTC_RUNTIME_PROGRAM_H

#include "runtime/Device.h"
#include "runtime/Manifest.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"

#include <memory>
#include <vector>

namespace mtc {

class Program {
public:
  /// The most parameters a kernel may take, and the most of them that are
  /// tensor maps (launches keep them on the stack).
  static constexpr unsigned kMaxParams = 128;
  static constexpr unsigned kMaxTensorMaps = 8;

  /// JIT-loads `ptx` into `device`'s context and resolves and checks every
  /// kernel of `manifest`. `manifest` must outlive the Program.
  static llvm::Expected<std::unique_ptr<Program>>
  load(Device &device, const Manifest &manifest, llvm::StringRef ptx);

  /// Launches kernel `k` on `stream` with manifest buffer i at `ptrs[i]`.
  /// `ptrs` must hold one pointer per manifest buffer.
  llvm::Error launch(unsigned k, llvm::ArrayRef<cu::CUdeviceptr> ptrs,
                     cu::CUstream stream) const;

  unsigned numKernels() const { return unsigned(kernels.size()); }
  const Manifest &manifest() const { return man; }
  /// The index of buffer `name` in the manifest, or -1.
  int findBuffer(llvm::StringRef name) const;
  /// Buffer indices of kernel `k`'s parameters, in order.
  llvm::ArrayRef<unsigned> kernelParams(unsigned k) const {
    return kernels[k].params;
  }
  /// Registers, spills and shared memory of kernel `k` as the JIT built it.
  const FunctionAttributes &kernelAttributes(unsigned k) const {
    return kernels[k].fn.attributes;
  }
  /// The JIT's info log for the whole module.
  llvm::StringRef jitInfoLog() const { return module->infoLog(); }

private:
  struct Kernel {
    Function fn;
    std::vector<unsigned> params; // buffer indices, in parameter order
    CudaDriver::LaunchConfig launch;
    /// The tensor-map parameters: which, and their encoding (at a
    /// placeholder address that every launch replaces).
    struct Map {
      unsigned param;
      cu::CUtensorMap encoded;
    };
    std::vector<Map> maps;
  };

  Program(Device &device, const Manifest &manifest)
      : dev(device), man(manifest) {}
  llvm::Error checkKernel(unsigned k, Kernel &kernel) const;
  llvm::Error encodeTensorMaps(unsigned k, Kernel &kernel) const;

  Device &dev;
  const Manifest &man;
  llvm::StringMap<unsigned> bufferIndex; // name -> index in man.buffers
  std::unique_ptr<Module> module;
  std::vector<Kernel> kernels;
};

} // namespace mtc

#endif // MTC_RUNTIME_PROGRAM_H
