//===- CudaDriver.h - The CUDA driver, loaded at run time -------*- C++ -*-===//
//
// mtc does not link against CUDA: libcuda.so.1 is opened with dlopen when a
// command first needs a GPU (MTC_CUDA_LIBRARY overrides the path; the unit
// tests point it at a fake). The handful of driver types, enum values and
// entry points used are declared here, in namespace mtc::cu, with the values
// and versioned symbol names of CUDA's cuda.h (a unit test checks them
// against the real header when the toolkit is installed).
//
// On top of the raw entry points: Device (a GPU's primary context and a
// stream), Module (PTX JIT-compiled by the driver), Function (a kernel and its
// attributes) and DeviceBuffer (RAII device memory). Every CUresult is
// checked; failures are RuntimeErrors, which the CLI reports with exit code 2.
//
// Objects created from a Device (modules, buffers, executors) must be
// destroyed before it. Include this header before cuda.h, never after.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_RUNTIME_CUDADRIVER_H
#define MTC_RUNTIME_CUDADRIVER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

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
// cuFuncGetParamInfo (CUDA 12.4) checks kernel parameter lists when present.
#define MTC_CUDA_OPTIONAL_FUNCTIONS(X)                                         \
  X(cuEventElapsedTime_v2, float *, cu::CUevent, cu::CUevent)                  \
  X(cuEventElapsedTime, float *, cu::CUevent, cu::CUevent)                     \
  X(cuFuncGetParamInfo, cu::CUfunction, size_t, size_t *, size_t *)

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

/// "2.0 GiB", "512.0 MiB", "12.0 KiB", "100 B".
std::string formatBytes(int64_t bytes);

/// The driver's entry points, resolved from the loaded library.
struct CudaDriver {
#define MTC_CUDA_DECLARE(name, ...)                                            \
  using name##_fn = cu::CUresult (*)(__VA_ARGS__);                             \
  name##_fn name = nullptr;
  MTC_CUDA_REQUIRED_FUNCTIONS(MTC_CUDA_DECLARE)
  MTC_CUDA_OPTIONAL_FUNCTIONS(MTC_CUDA_DECLARE)
#undef MTC_CUDA_DECLARE

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
  /// cuEventElapsedTime_v2 if the driver has it, else cuEventElapsedTime.
  cu::CUresult elapsedTime(float *ms, cu::CUevent start, cu::CUevent end) const;
};

/// What identifies a GPU for the tuning cache, found without creating a
/// context (cheap enough for a cached re-run).
struct DeviceIdentity {
  std::string name;              // "NVIDIA H200"
  std::string computeCapability; // "9.0"
  std::string driver;            // "13.0"
};
llvm::Expected<DeviceIdentity> identifyDevice(int ordinal = 0);

/// A GPU: the driver, the device's primary context (made current on the
/// calling thread) and a stream that everything mtc launches goes to. The
/// stream is a blocking one, so the driver's synchronous copies and memsets
/// are ordered with the work on it.
class Device {
public:
  /// Initialises the driver and opens device `ordinal`.
  static llvm::Expected<std::unique_ptr<Device>> open(int ordinal = 0);
  /// The context current on the calling thread (a framework's, such as
  /// PyTorch's), borrowed: it is neither retained nor released, and no
  /// stream is created (stream() is the context's default stream, which
  /// work on the Device only uses while loading). Fails if no context is
  /// current.
  static llvm::Expected<std::unique_ptr<Device>> attachCurrent();
  ~Device();
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  const CudaDriver &driver() const { return drv; }
  cu::CUstream stream() const { return strm; }
  cu::CUcontext context() const { return ctx; }
  int ordinal() const { return ord; }

  /// "NVIDIA H200".
  const std::string &name() const { return devName; }
  /// Compute capability, e.g. {9, 0}.
  int computeMajor() const { return ccMajor; }
  int computeMinor() const { return ccMinor; }
  /// "sm_90".
  std::string arch() const;
  /// The driver's CUDA version as cuDriverGetVersion gives it (13000 = 13.0).
  int driverVersion() const { return drvVersion; }
  /// "13.0".
  std::string driverVersionString() const;
  int smCount() const { return sms; }
  int64_t l2Bytes() const { return l2; }
  int64_t totalMemory() const { return totalMem; }
  llvm::Expected<int64_t> freeMemory() const;

  /// Launch limits.
  int maxThreadsPerBlock() const { return maxThreads; }
  int maxBlockDim(unsigned i) const { return maxBlock[i]; }
  int64_t maxGridDim(unsigned i) const { return maxGrid[i]; }
  /// Shared memory a block may use without opting in (48 KiB), and with.
  int64_t maxSharedPerBlock() const { return maxShared; }
  int64_t maxSharedPerBlockOptin() const { return maxSharedOptin; }

  /// Makes the primary context current on the calling thread.
  llvm::Error makeCurrent() const;
  /// Waits for the stream.
  llvm::Error synchronize() const;
  /// drv.check.
  llvm::Error check(cu::CUresult r, llvm::StringRef call) const {
    return drv.check(r, call);
  }

private:
  explicit Device(const CudaDriver &drv) : drv(drv) {}
  /// Reads the identity and limits of `dev` into this object.
  llvm::Error query(cu::CUdevice device);

  const CudaDriver &drv;
  int ord = 0;
  cu::CUdevice dev = 0;
  cu::CUcontext ctx = nullptr;
  cu::CUstream strm = nullptr;
  bool ownsContext = false;
  std::string devName;
  int ccMajor = 0, ccMinor = 0, drvVersion = 0, sms = 0, maxThreads = 0;
  int maxBlock[3] = {0, 0, 0};
  int64_t maxGrid[3] = {0, 0, 0};
  int64_t l2 = 0, totalMem = 0, maxShared = 0, maxSharedOptin = 0;
};

/// What the driver reports about a compiled kernel.
struct FunctionAttributes {
  int registers = 0;          // per thread
  int localBytes = 0;         // per thread: spills and local arrays
  int staticSharedBytes = 0;  // per block
  int maxThreadsPerBlock = 0; // the most this kernel can launch with
  int constBytes = 0;
};

/// A kernel in a loaded Module.
struct Function {
  cu::CUfunction handle = nullptr;
  std::string name;
  FunctionAttributes attributes;
};

/// PTX compiled by the driver's JIT for the device.
class Module {
public:
  /// JIT-compiles `ptx`. A failure carries the JIT's error log verbatim.
  static llvm::Expected<std::unique_ptr<Module>> load(Device &device,
                                                      llvm::StringRef ptx);
  ~Module();
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  /// The kernel `name` ("kernel 'x' is not in the PTX" if missing) with its
  /// attributes.
  llvm::Expected<Function> getFunction(llvm::StringRef name) const;
  /// The JIT's info log (with verbose logging: registers, spills, shared
  /// memory per kernel).
  llvm::StringRef infoLog() const { return info; }
  cu::CUmodule handle() const { return mod; }

private:
  Module(Device &device, cu::CUmodule mod, std::string info)
      : device(device), mod(mod), info(std::move(info)) {}

  Device &device;
  cu::CUmodule mod;
  std::string info;
};

/// Device memory, freed on destruction.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  /// Allocates `bytes` (at least 1) for the buffer called `name`; running out
  /// of memory says how much was needed and how much is free.
  static llvm::Expected<DeviceBuffer> allocate(Device &device, int64_t bytes,
                                               llvm::StringRef name);
  DeviceBuffer(DeviceBuffer &&other) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer();

  cu::CUdeviceptr ptr() const { return p; }
  int64_t bytes() const { return size; }
  const std::string &name() const { return bufName; }

  /// Synchronous copies of the first `bytes` bytes (all if -1).
  llvm::Error copyFromHost(const void *src, int64_t bytes = -1);
  llvm::Error copyToHost(void *dst, int64_t bytes = -1) const;
  llvm::Error copyFrom(const DeviceBuffer &src);
  /// Sets every byte to `value`.
  llvm::Error fill(uint8_t value);

private:
  void release();

  Device *device = nullptr;
  cu::CUdeviceptr p = 0;
  int64_t size = 0;
  std::string bufName;
};

} // namespace mtc

#endif // MTC_RUNTIME_CUDADRIVER_H
