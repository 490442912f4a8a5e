//===- Manifest.h - What a compiled graph needs to run ----------*- C++ -*-===//
//
// The contract between the compiler and the runtime, written next to the PTX
// as <graph>.json: the graph's tensors, the buffers between kernels, and for
// every kernel its PTX entry, parameters, launch geometry, schedule and the
// graph nodes it covers. The runtime executes a Manifest and nothing else.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_RUNTIME_MANIFEST_H
#define MTC_RUNTIME_MANIFEST_H

#include "dialects/Common/DType.h"
#include "runtime/TensorMap.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace mtc {

/// A device buffer: a graph input, an output, an intermediate between kernels
/// or a kernel's zero-initialised workspace.
///
/// Whoever runs a manifest provides inputs and outputs, and allocates the
/// others once, when it loads the program: intermediates need no
/// initialisation; a workspace must be zero before the first launch, and
/// every launch leaves it zero again (the manifest says "init": "zero_once").
/// Launches that share a workspace must not overlap in time.
struct BufferInfo {
  enum class Role { Input, Output, Intermediate, Workspace };
  std::string name;
  Role role = Role::Intermediate;
  DType dtype = DType::F32;
  Shape shape; // for workspaces: {bytes}, dtype i8
  int64_t bytes() const;
};

struct KernelInfo {
  std::string name;                // PTX .entry
  std::string kind;                // "contract" | "elementwise" | "reduce"
  std::vector<std::string> nodes;  // graph nodes this kernel computes
  std::vector<std::string> params; // buffer names, in parameter order
  /// The parameters passed as tensor maps (the others are pointers).
  std::vector<TensorMapInfo> tensorMaps;
  std::array<int64_t, 3> grid{1, 1, 1};
  std::array<int64_t, 3> block{1, 1, 1};
  /// Shared memory per block, static and dynamic together (an upper bound of
  /// what the module declares plus the dynamic part).
  int64_t sharedBytes = 0;
  /// What the launch passes as dynamic shared memory. Beyond the device's
  /// default (48 KiB) the kernel must first be allowed it with
  /// cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
  int64_t dynamicSharedBytes = 0;
  std::string schedule;              // ScheduleParams::str()
  llvm::json::Object scheduleFields; // the same, field by field
  double flops = 0;                  // useful floating-point operations
  double minBytes = 0;               // bytes that must move (each input once)
  std::optional<double> tunedMicros; // measured time of the tuned winner
};

struct Manifest {
  std::string mtcVersion;
  std::string graph;  // graph name
  std::string source; // graph file
  std::string arch;   // "sm_90"
  /// Every kernel starts with griddepcontrol.wait, so it may be launched
  /// with programmatic stream serialization (the runtime does so with
  /// MTC_GRID_DEPENDENCY=1, where the driver has cuLaunchKernelEx).
  bool gridDependency = false;
  std::string ptxFile; // relative to the manifest
  /// For graphs compiled with --bind: the bound symbol values ("M" -> 4).
  std::vector<std::pair<std::string, int64_t>> bindings;
  std::vector<BufferInfo> buffers;  // inputs first (in signature order)
  std::vector<std::string> outputs; // output buffer names, in return order
  std::vector<KernelInfo> kernels;  // launch order

  const BufferInfo *findBuffer(llvm::StringRef name) const;
  std::vector<const BufferInfo *> inputs() const;

  llvm::json::Value toJSON() const;
  static llvm::Expected<Manifest> fromJSON(const llvm::json::Value &v);
};

/// For a graph compiled with several values of one symbolic dimension
/// (`--bind M=1,2,4`): which manifest serves which value. A runtime value v
/// goes to the smallest bucket >= v; the runtime zero-pads the inputs along
/// that dimension to the bucket and returns the first v rows of each output.
struct DispatchManifest {
  std::string mtcVersion, graph, source, symbol;
  struct Bucket {
    int64_t value = 0;
    std::string manifest; // file name, next to the dispatch manifest
  };
  std::vector<Bucket> buckets; // ascending values

  /// The bucket for runtime value `v`, or none if v exceeds the largest.
  std::optional<size_t> select(int64_t v) const;
  llvm::json::Value toJSON() const;
  static llvm::Expected<DispatchManifest> fromJSON(const llvm::json::Value &v);
};

} // namespace mtc

#endif // MTC_RUNTIME_MANIFEST_H
