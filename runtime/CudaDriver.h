//===- CudaDriver.h - The CUDA driver, loaded at run time -------*- C++ -*-===//
//
// mtc does not link against CUDA: libcuda.so.1 is opened with dlopen when a
// command first needs a GPU (MTC_CUDA_LIBRARY overrides the path; the unit
// tests point it at a fake). The handful of driver types, enum values and
// entry points used are declared here, in namespace mtc::cu, with the values
// and versioned symbol names of CUDA's cuda.h (a unit test checks them
// against the real header when the toolkit is installed).
//
// This is the thin driver layer: the raw entry points are called in
// CudaDriver.cpp and CudaObjects.cpp and nowhere else. CudaDriver's methods
// are one checked wrapper per driver operation, and Stream, Event, Graph and
// ContextScope (CudaObjects.h) own the driver objects mtc creates and
// destroys. Every CUresult is checked once, in the wrapper;
// failures are RuntimeErrors ("<entry point> failed: <name> (<text>)",
// carrying the CUresult), which the CLI reports with exit code 2.
//
// Device.h builds mtc's objects on top: Device (a GPU's primary context and
// a stream), Module, Function and DeviceBuffer. Include this header before
// cuda.h, never after.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_RUNTIME_CUDADRIVER_H
#define MTC_RUNTIME_CUDADRIVER_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

// Opaque driver handles, declared exactly as cuda.h declares them (global
// incomplete structs) so that the handle types are the same types.
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
struct CUgraph_st;
struct CUgraphExec_st;

namespace mtc {
namespace cu {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = CUctx_st *;
using CUmodule = CUmod_st *;
using CUfunction = CUfunc_st *;
using CUstream = CUstream_st *;
using CUevent = CUevent_st *;
using CUgraph = CUgraph_st *;
using CUgraphExec = CUgraphExec_st *;

/// The CUresult values mtc names (the driver can return others; they are
/// reported through cuGetErrorName).
enum : CUresult {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
  CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906,
};

enum CUjit_option {
  CU_JIT_MAX_REGISTERS = 0,
  CU_JIT_THREADS_PER_BLOCK = 1,
  CU_JIT_WALL_TIME = 2,
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_OPTIMIZATION_LEVEL = 7,
  CU_JIT_LOG_VERBOSE = 12,
};

enum CUdevice_attribute {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
  CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

enum CUfunction_attribute {
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2,
  CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CU_FUNC_ATTRIBUTE_PTX_VERSION = 5,
  CU_FUNC_ATTRIBUTE_BINARY_VERSION = 6,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

enum CUstreamCaptureMode {
  CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
  CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
  CU_STREAM_CAPTURE_MODE_RELAXED = 2,
};

/// A TMA descriptor (cuda.h's CUtensorMap): 128 opaque bytes, passed to
/// kernels by value. The driver needs 64-byte alignment; cuda.h declares 128.
struct alignas(128) CUtensorMap {
  unsigned long long opaque[16];
};

enum CUtensorMapDataType {
  CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
  CU_TENSOR_MAP_DATA_TYPE_UINT16 = 1,
  CU_TENSOR_MAP_DATA_TYPE_UINT32 = 2,
  CU_TENSOR_MAP_DATA_TYPE_INT32 = 3,
  CU_TENSOR_MAP_DATA_TYPE_UINT64 = 4,
  CU_TENSOR_MAP_DATA_TYPE_INT64 = 5,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7,
  CU_TENSOR_MAP_DATA_TYPE_FLOAT64 = 8,
  CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9,
};

enum CUtensorMapInterleave {
  CU_TENSOR_MAP_INTERLEAVE_NONE = 0,
};

enum CUtensorMapSwizzle {
  CU_TENSOR_MAP_SWIZZLE_NONE = 0,
  CU_TENSOR_MAP_SWIZZLE_32B = 1,
  CU_TENSOR_MAP_SWIZZLE_64B = 2,
  CU_TENSOR_MAP_SWIZZLE_128B = 3,
};

enum CUtensorMapL2promotion {
  CU_TENSOR_MAP_L2_PROMOTION_NONE = 0,
  CU_TENSOR_MAP_L2_PROMOTION_L2_64B = 1,
  CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2,
  CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3,
};

enum CUtensorMapFloatOOBfill {
  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0,
};

/// cuLaunchKernelEx's configuration (cuda.h's layout), with the one launch
/// attribute mtc sets: programmatic stream serialization (Hopper's
/// programmatic dependent launch).
enum CUlaunchAttributeID {
  CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6,
};
union CUlaunchAttributeValue {
  char pad[64];
  int programmaticStreamSerializationAllowed;
};
struct CUlaunchAttribute {
  CUlaunchAttributeID id;
  char pad[8 - sizeof(CUlaunchAttributeID)];
  CUlaunchAttributeValue value;
};
static_assert(sizeof(CUlaunchAttribute) == 72, "cuda.h's CUlaunchAttribute");
struct CUlaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute *attrs;
  unsigned numAttrs;
};

/// Flags of cuStreamCreate and cuEventCreate.
enum : unsigned {
  CU_STREAM_DEFAULT = 0x0,
  CU_STREAM_NON_BLOCKING = 0x1,
  CU_EVENT_DEFAULT = 0x0,
};

} // namespace cu

// The driver entry points mtc calls: X(symbol, parameter types...). The
// symbol is the exported (versioned) name; every entry returns CUresult.
#define MTC_CUDA_REQUIRED_FUNCTIONS(X)                                         \
  X(cuGetErrorName, cu::CUresult, const char **)                               \
  X(cuGetErrorString, cu::CUresult, const char **)                             \
  X(cuInit, unsigned)                                                          \
  X(cuDriverGetVersion, int *)                                                 \
  X(cuDeviceGetCount, int *)                                                   \
  X(cuDeviceGet, cu::CUdevice *, int)                                          \
  X(cuDeviceGetName, char *, int, cu::CUdevice)                                \
  X(cuDeviceGetAttribute, int *, cu::CUdevice_attribute, cu::CUdevice)         \
  X(cuDeviceTotalMem_v2, size_t *, cu::CUdevice)                               \
  X(cuDevicePrimaryCtxRetain, cu::CUcontext *, cu::CUdevice)                   \
  X(cuDevicePrimaryCtxRelease_v2, cu::CUdevice)                                \
  X(cuCtxSetCurrent, cu::CUcontext)                                            \
  X(cuCtxGetCurrent, cu::CUcontext *)                                          \
  X(cuCtxGetDevice, cu::CUdevice *)                                            \
  X(cuCtxPushCurrent_v2, cu::CUcontext)                                        \
  X(cuCtxPopCurrent_v2, cu::CUcontext *)                                       \
  X(cuCtxSynchronize, void)                                                    \
  X(cuStreamCreate, cu::CUstream *, unsigned)                                  \
  X(cuStreamDestroy_v2, cu::CUstream)                                          \
  X(cuStreamSynchronize, cu::CUstream)                                         \
  X(cuEventCreate, cu::CUevent *, unsigned)                                    \
  X(cuEventRecord, cu::CUevent, cu::CUstream)                                  \
  X(cuEventSynchronize, cu::CUevent)                                           \
  X(cuEventDestroy_v2, cu::CUevent)                                            \
  X(cuModuleLoadDataEx, cu::CUmodule *, const void *, unsigned,                \
    cu::CUjit_option *, void **)                                               \
  X(cuModuleUnload, cu::CUmodule)                                              \
  X(cuModuleGetFunction, cu::CUfunction *, cu::CUmodule, const char *)         \
  X(cuFuncGetAttribute, int *, cu::CUfunction_attribute, cu::CUfunction)       \
  X(cuFuncSetAttribute, cu::CUfunction, cu::CUfunction_attribute, int)         \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, int *, cu::CUfunction, int,   \
    size_t)                                                                    \
  X(cuMemGetInfo_v2, size_t *, size_t *)                                       \
  X(cuMemAlloc_v2, cu::CUdeviceptr *, size_t)                                  \
  X(cuMemFree_v2, cu::CUdeviceptr)                                             \
  X(cuMemcpyHtoD_v2, cu::CUdeviceptr, const void *, size_t)                    \
  X(cuMemcpyDtoH_v2, void *, cu::CUdeviceptr, size_t)                          \
  X(cuMemcpyDtoD_v2, cu::CUdeviceptr, cu::CUdeviceptr, size_t)                 \
  X(cuMemsetD8_v2, cu::CUdeviceptr, unsigned char, size_t)                     \
  X(cuLaunchKernel, cu::CUfunction, unsigned, unsigned, unsigned, unsigned,    \
    unsigned, unsigned, unsigned, cu::CUstream, void **, void **)              \
  X(cuStreamBeginCapture_v2, cu::CUstream, cu::CUstreamCaptureMode)            \
  X(cuStreamEndCapture, cu::CUstream, cu::CUgraph *)                           \
  X(cuGraphInstantiateWithFlags, cu::CUgraphExec *, cu::CUgraph,               \
    unsigned long long)                                                        \
  X(cuGraphLaunch, cu::CUgraphExec, cu::CUstream)                              \
  X(cuGraphExecDestroy, cu::CUgraphExec)                                       \
  X(cuGraphDestroy, cu::CUgraph)

// Entry points that older drivers lack: cuEventElapsedTime_v2 (CUDA 12.8) is
// preferred over cuEventElapsedTime, and one of the two must exist;
// cuFuncGetParamInfo (CUDA 12.4) checks kernel parameter lists when present;
// the tensor-map entries (CUDA 12.0) are needed only by kernels that take
// tensor maps.
#define MTC_CUDA_OPTIONAL_FUNCTIONS(X)                                         \
  X(cuEventElapsedTime_v2, float *, cu::CUevent, cu::CUevent)                  \
  X(cuEventElapsedTime, float *, cu::CUevent, cu::CUevent)                     \
  X(cuFuncGetParamInfo, cu::CUfunction, size_t, size_t *, size_t *)            \
  X(cuTensorMapEncodeTiled, cu::CUtensorMap *, cu::CUtensorMapDataType,        \
    unsigned, void *, const unsigned long long *, const unsigned long long *,  \
    const unsigned *, const unsigned *, cu::CUtensorMapInterleave,             \
    cu::CUtensorMapSwizzle, cu::CUtensorMapL2promotion,                        \
    cu::CUtensorMapFloatOOBfill)                                               \
  X(cuTensorMapReplaceAddress, cu::CUtensorMap *, void *)                      \
  X(cuLaunchKernelEx, const cu::CUlaunchConfig *, cu::CUfunction, void **,     \
    void **)

/// An environment or internal failure of the runtime: no driver or device,
/// a CUDA call that failed, a kernel that faulted, a buffer that does not fit.
/// The CLI exits with code 2 for these.
class RuntimeError : public llvm::ErrorInfo<RuntimeError> {
public:
  static char ID;

  explicit RuntimeError(std::string message, cu::CUresult result = 0)
      : message(std::move(message)), result(result) {}

  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;

  const std::string &getMessage() const { return message; }
  /// The CUresult behind the error, or 0 (CUDA_SUCCESS) if none.
  cu::CUresult getResult() const { return result; }

private:
  std::string message;
  cu::CUresult result;
};

/// A RuntimeError with `message`.
llvm::Error runtimeError(const llvm::Twine &message, cu::CUresult result = 0);

/// `err` with "<context>: " in front of its message (RuntimeErrors stay
/// RuntimeErrors and keep their CUresult; other errors become RuntimeErrors).
llvm::Error withContext(llvm::Error err, const llvm::Twine &context);

/// The CUresult that `err` carries: 0 for success and for errors that are not
/// RuntimeErrors. `err` is left as it was (still to be handled).
cu::CUresult resultOf(llvm::Error &err);

/// "2.0 GiB", "512.0 MiB", "12.0 KiB", "100 B".
std::string formatBytes(int64_t bytes);

/// The loaded driver: its entry points, resolved from the library, are
/// private to the driver layer; everything else calls the checked
/// operations below.
class CudaDriver {
public:
#define MTC_CUDA_DECLARE_TYPE(name, ...)                                       \
  using name##_fn = cu::CUresult (*)(__VA_ARGS__);
  MTC_CUDA_REQUIRED_FUNCTIONS(MTC_CUDA_DECLARE_TYPE)
  MTC_CUDA_OPTIONAL_FUNCTIONS(MTC_CUDA_DECLARE_TYPE)
#undef MTC_CUDA_DECLARE_TYPE

  /// The path the library was opened with.
  std::string path;

  /// The driver at $MTC_CUDA_LIBRARY, or libcuda.so.1. Loaded once per path
  /// and never unloaded; fails if the library cannot be opened or lacks an
  /// entry point. Thread-safe.
  static llvm::Expected<const CudaDriver &> get();
  /// The driver at `path` (same caching).
  static llvm::Expected<const CudaDriver &> load(llvm::StringRef path);

  /// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
  std::string describe(cu::CUresult r) const;
  /// Success, or a RuntimeError "<call> failed: <name> (<description>)".
  llvm::Error check(cu::CUresult r, llvm::StringRef call) const;

  //===--------------------------------------------------------------------===//
  // Checked operations, one per entry point (Stream, Event, Graph and
  // ContextScope below wrap the rest).
  //===--------------------------------------------------------------------===//

  /// cuInit(0).
  llvm::Error init() const;
  /// The CUDA version of the driver (13000 = 13.0).
  llvm::Expected<int> driverVersion() const;
  llvm::Expected<int> deviceCount() const;
  llvm::Expected<cu::CUdevice> deviceGet(int ordinal) const;
  llvm::Expected<std::string> deviceName(cu::CUdevice dev) const;
  llvm::Expected<int> deviceAttribute(cu::CUdevice dev,
                                      cu::CUdevice_attribute attr) const;
  llvm::Expected<int64_t> deviceTotalMemory(cu::CUdevice dev) const;

  llvm::Expected<cu::CUcontext> retainPrimaryContext(cu::CUdevice dev) const;
  llvm::Error releasePrimaryContext(cu::CUdevice dev) const;
  llvm::Error setCurrentContext(cu::CUcontext ctx) const;
  /// The context current on the calling thread, or null.
  llvm::Expected<cu::CUcontext> currentContext() const;
  /// The device of the current context.
  llvm::Expected<cu::CUdevice> currentDevice() const;
  /// Waits for all work in the current context.
  llvm::Error synchronizeContext() const;
  /// Waits for `stream` (null: the legacy default stream).
  llvm::Error synchronizeStream(cu::CUstream stream) const;

  /// JIT-compiles the NUL-terminated PTX `image` with verbose logging; the
  /// info log goes to `infoLog`. A failure's message carries the error log
  /// (or else the info log) after the driver's error.
  llvm::Expected<cu::CUmodule> loadModule(const char *image,
                                          std::string &infoLog) const;
  llvm::Error unloadModule(cu::CUmodule mod) const;
  /// The entry `name`; CUDA_ERROR_NOT_FOUND if the module lacks it.
  llvm::Expected<cu::CUfunction> moduleFunction(cu::CUmodule mod,
                                                const char *name) const;
  llvm::Expected<int> functionAttribute(cu::CUfunction fn,
                                        cu::CUfunction_attribute attr) const;
  /// Allows launches of `fn` with `bytes` of dynamic shared memory.
  llvm::Error setMaxDynamicShared(cu::CUfunction fn, int bytes) const;
  /// The sizes of `fn`'s first parameters as the PTX declares them, asking
  /// for at most `max` (cuFuncGetParamInfo, CUDA 12.4+). `complete` says the
  /// list is known: the driver said there is no further parameter, or `max`
  /// were found. Any other answer stops the list there, incomplete; without
  /// the entry point (older drivers) it is empty and incomplete.
  struct ParamSizes {
    std::vector<size_t> sizes;
    bool complete = false;
  };
  ParamSizes parameterSizes(cu::CUfunction fn, unsigned max) const;
  llvm::Expected<int> maxActiveBlocksPerSM(cu::CUfunction fn, int threads,
                                           size_t dynamicShared) const;

  /// Free device memory in bytes.
  llvm::Expected<int64_t> freeMemory() const;
  llvm::Expected<cu::CUdeviceptr> memAlloc(size_t bytes) const;
  llvm::Error memFree(cu::CUdeviceptr ptr) const;
  /// Synchronous copies and fills (ordered with work on blocking streams).
  llvm::Error copyHostToDevice(cu::CUdeviceptr dst, const void *src,
                               size_t bytes) const;
  llvm::Error copyDeviceToHost(void *dst, cu::CUdeviceptr src,
                               size_t bytes) const;
  llvm::Error copyDeviceToDevice(cu::CUdeviceptr dst, cu::CUdeviceptr src,
                                 size_t bytes) const;
  llvm::Error memsetD8(cu::CUdeviceptr dst, uint8_t value, size_t bytes) const;

  /// A tiled tensor map (cuTensorMapEncodeTiled) of a dense tensor at
  /// `address`: `dims` elements per dimension, innermost first, `strides`
  /// the byte strides of the outer dimensions, `box` the tile one copy
  /// moves; element strides 1, no interleave, out-of-bounds elements zero.
  struct TensorMapShape {
    cu::CUtensorMapDataType dtype = cu::CU_TENSOR_MAP_DATA_TYPE_UINT8;
    std::vector<unsigned long long> dims, strides;
    std::vector<unsigned> box;
    cu::CUtensorMapSwizzle swizzle = cu::CU_TENSOR_MAP_SWIZZLE_NONE;
    cu::CUtensorMapL2promotion l2Promotion =
        cu::CU_TENSOR_MAP_L2_PROMOTION_NONE;
  };
  llvm::Error encodeTensorMap(cu::CUtensorMap &map, const TensorMapShape &shape,
                              cu::CUdeviceptr address) const;
  /// Points an encoded `map` at `address` (cuTensorMapReplaceAddress).
  llvm::Error replaceTensorMapAddress(cu::CUtensorMap &map,
                                      cu::CUdeviceptr address) const;

  /// The geometry of a kernel launch.
  struct LaunchConfig {
    std::array<unsigned, 3> grid = {1, 1, 1}, block = {1, 1, 1};
    unsigned dynamicShared = 0;
    /// The kernel starts with griddepcontrol.wait: launch it with
    /// programmatic stream serialization where the driver has
    /// cuLaunchKernelEx (CUDA 12.0), so it may start while the previous
    /// kernel of the stream finishes. Without, griddepcontrol is a no-op.
    bool gridDependency = false;
  };
  /// Enqueues `fn` on `stream`; `params` points to each parameter's value.
  llvm::Error launchKernel(cu::CUfunction fn, const LaunchConfig &config,
                           cu::CUstream stream, void **params) const;

private:
  friend class Stream;
  friend class Event;
  friend class Graph;
  friend class ContextScope;
#define MTC_CUDA_DECLARE_POINTER(name, ...) name##_fn name = nullptr;
  MTC_CUDA_REQUIRED_FUNCTIONS(MTC_CUDA_DECLARE_POINTER)
  MTC_CUDA_OPTIONAL_FUNCTIONS(MTC_CUDA_DECLARE_POINTER)
#undef MTC_CUDA_DECLARE_POINTER
};

} // namespace mtc

#endif // MTC_RUNTIME_CUDADRIVER_H
