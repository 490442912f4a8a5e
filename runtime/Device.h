//===- Device.h - A GPU, its modules and its memory -------------*- C++ -*-===//
//
// mtc's objects on top of the driver layer (CudaDriver.h): Device (a GPU's
// primary context and a stream), Module (PTX JIT-compiled by the driver),
// Function (a kernel and its attributes) and DeviceBuffer (RAII device
// memory). They call the driver only through its checked operations; their
// failures are RuntimeErrors, which the CLI reports with exit code 2.
//
// Objects created from a Device (modules, buffers, executors) must be
// destroyed before it.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_RUNTIME_DEVICE_H
#define MTC_RUNTIME_DEVICE_H

#include "runtime/CudaObjects.h"

namespace mtc {

/// What identifies a GPU for the tuning cache, found without creating a
/// context (cheap enough for a cached re-run).
struct DeviceIdentity {
  std::string name;              // "NVIDIA H200"
  std::string computeCapability; // "9.0"
  std::string driver;            // "13.0"
  /// What schedules are sized by (compiler/GpuTarget.h).
  int ccMajor = 0, ccMinor = 0, sms = 0;
  int64_t l2Bytes = 0, maxSharedPerBlockOptin = 0;
  /// Peak memory bandwidth, bytes/s: two transfers per memory clock over
  /// the bus, as the driver reports both (0 where it does not).
  int64_t memBandwidth = 0;
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
  cu::CUstream stream() const { return strm.handle(); }
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
  llvm::Expected<int64_t> freeMemory() const { return drv.freeMemory(); }

  /// Launch limits.
  int maxThreadsPerBlock() const { return maxThreads; }
  int maxBlockDim(unsigned i) const { return maxBlock[i]; }
  int64_t maxGridDim(unsigned i) const { return maxGrid[i]; }
  /// Shared memory a block may use without opting in (48 KiB), and with.
  int64_t maxSharedPerBlock() const { return maxShared; }
  int64_t maxSharedPerBlockOptin() const { return maxSharedOptin; }

  /// Makes the primary context current on the calling thread.
  llvm::Error makeCurrent() const { return drv.setCurrentContext(ctx); }
  /// Waits for the stream.
  llvm::Error synchronize() const { return drv.synchronizeStream(stream()); }

private:
  explicit Device(const CudaDriver &drv) : drv(drv) {}
  /// Reads the identity and limits of `dev` into this object.
  llvm::Error query(cu::CUdevice device);

  const CudaDriver &drv;
  int ord = 0;
  cu::CUdevice dev = 0;
  cu::CUcontext ctx = nullptr;
  Stream strm;
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
  /// Copies all of `src` into this buffer at byte `offset`, on the device.
  /// A failure is the driver's ("cuMemcpyDtoD failed: ..."); the caller says
  /// what was being copied.
  llvm::Error copyFrom(const DeviceBuffer &src, int64_t offset = 0);
  /// Fills the buffer with copies of its first `period` bytes, doubling
  /// what is filled with each device-side copy (failures as for copyFrom).
  llvm::Error repeatPrefix(int64_t period);
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

#endif // MTC_RUNTIME_DEVICE_H
