//===- Device.cpp - A GPU, its modules and its memory ---------------------===//
//
// See Device.h. Every driver call goes through CudaDriver's checked
// operations.
//
//===----------------------------------------------------------------------===//
#include "runtime/Device.h"

#include <fmt/format.h>

using namespace llvm;

namespace mtc {

//===----------------------------------------------------------------------===//
// Device
//===----------------------------------------------------------------------===//

/// cuInit, failing with what the failure means in front of the driver's
/// error.
static Error initDriver(const CudaDriver &drv) {
  Error e = drv.init();
  if (!e)
    return e;
  bool noDevice = resultOf(e) == cu::CUDA_ERROR_NO_DEVICE;
  return withContext(std::move(e), noDevice
                                       ? "no CUDA device found"
                                       : "cannot initialise the CUDA driver");
}

/// cuInit, a check that device `ordinal` exists, and its handle.
static Expected<cu::CUdevice> initDevice(const CudaDriver &drv, int ordinal) {
  if (Error e = initDriver(drv))
    return std::move(e);
  Expected<int> count = drv.deviceCount();
  if (!count)
    return count.takeError();
  if (*count == 0)
    return runtimeError("no CUDA device found", cu::CUDA_ERROR_NO_DEVICE);
  if (ordinal < 0 || ordinal >= *count)
    return runtimeError(
        fmt::format("there is no CUDA device {} ({} found)", ordinal, *count),
        cu::CUDA_ERROR_INVALID_DEVICE);
  return drv.deviceGet(ordinal);
}

namespace {
/// What names a device in the tuning cache, as the driver reports it.
struct RawIdentity {
  int driverVersion = 0, ccMajor = 0, ccMinor = 0, sms = 0;
  int64_t l2 = 0, maxSharedOptin = 0;
  int memClockKHz = 0, busBits = 0;
  std::string name;
};
} // namespace

/// "13.0" for the driver's 13000.
static std::string formatDriverVersion(int version) {
  return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

/// Stores attribute `attr` of `dev` in `out`.
template <typename T>
static Error getAttribute(const CudaDriver &drv, cu::CUdevice dev,
                          cu::CUdevice_attribute attr, T &out) {
  Expected<int> v = drv.deviceAttribute(dev, attr);
  if (!v)
    return v.takeError();
  out = *v;
  return Error::success();
}

static Expected<RawIdentity> queryIdentity(const CudaDriver &drv,
                                           cu::CUdevice dev) {
  RawIdentity id;
  Expected<int> version = drv.driverVersion();
  if (!version)
    return version.takeError();
  id.driverVersion = *version;
  Expected<std::string> name = drv.deviceName(dev);
  if (!name)
    return name.takeError();
  id.name = std::move(*name);
  if (Error e = getAttribute(drv, dev,
                             cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                             id.ccMajor))
    return std::move(e);
  if (Error e = getAttribute(drv, dev,
                             cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                             id.ccMinor))
    return std::move(e);
  if (Error e = getAttribute(
          drv, dev, cu::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, id.sms))
    return std::move(e);
  if (Error e =
          getAttribute(drv, dev, cu::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, id.l2))
    return std::move(e);
  if (Error e = getAttribute(
          drv, dev, cu::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
          id.maxSharedOptin))
    return std::move(e);
  // The bandwidth is optional: where the driver does not report it,
  // memBandwidth stays 0 (unknown; the heuristics take an H200's per
  // multiprocessor).
  if (Error e = getAttribute(
          drv, dev, cu::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, id.memClockKHz))
    consumeError(std::move(e));
  if (Error e = getAttribute(drv, dev,
                             cu::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH,
                             id.busBits))
    consumeError(std::move(e));
  return id;
}

Expected<DeviceIdentity> identifyDevice(int ordinal) {
  Expected<const CudaDriver &> drvOr = CudaDriver::get();
  if (!drvOr)
    return drvOr.takeError();
  Expected<cu::CUdevice> dev = initDevice(*drvOr, ordinal);
  if (!dev)
    return dev.takeError();
  Expected<RawIdentity> raw = queryIdentity(*drvOr, *dev);
  if (!raw)
    return raw.takeError();
  DeviceIdentity id;
  id.driver = formatDriverVersion(raw->driverVersion);
  id.name = raw->name;
  id.computeCapability = fmt::format("{}.{}", raw->ccMajor, raw->ccMinor);
  id.ccMajor = raw->ccMajor;
  id.ccMinor = raw->ccMinor;
  id.sms = raw->sms;
  id.l2Bytes = raw->l2;
  id.maxSharedPerBlockOptin = raw->maxSharedOptin;
  id.memBandwidth = int64_t(raw->memClockKHz) * 1000 * 2 * raw->busBits / 8;
  return id;
}

Error Device::query(cu::CUdevice device) {
  dev = device;
  Expected<RawIdentity> raw = queryIdentity(drv, dev);
  if (!raw)
    return raw.takeError();
  drvVersion = raw->driverVersion;
  devName = raw->name;
  ccMajor = raw->ccMajor;
  ccMinor = raw->ccMinor;
  sms = raw->sms;
  l2 = raw->l2;
  maxSharedOptin = raw->maxSharedOptin;

  auto attr = [&](cu::CUdevice_attribute a, auto &out) {
    return getAttribute(drv, dev, a, out);
  };
  using namespace cu;
  if (Error e = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, maxThreads))
    return e;
  if (Error e = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, maxBlock[0]))
    return e;
  if (Error e = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, maxBlock[1]))
    return e;
  if (Error e = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, maxBlock[2]))
    return e;
  if (Error e = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, maxGrid[0]))
    return e;
  if (Error e = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, maxGrid[1]))
    return e;
  if (Error e = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, maxGrid[2]))
    return e;
  if (Error e =
          attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, maxShared))
    return e;
  Expected<int64_t> total = drv.deviceTotalMemory(dev);
  if (!total)
    return total.takeError();
  totalMem = *total;
  return Error::success();
}

Expected<std::unique_ptr<Device>> Device::open(int ordinal) {
  Expected<const CudaDriver &> drvOr = CudaDriver::get();
  if (!drvOr)
    return drvOr.takeError();
  const CudaDriver &drv = *drvOr;
  Expected<cu::CUdevice> dev = initDevice(drv, ordinal);
  if (!dev)
    return dev.takeError();
  std::unique_ptr<Device> d(new Device(drv));
  d->ord = ordinal;
  if (Error e = d->query(*dev))
    return std::move(e);

  Expected<cu::CUcontext> ctx = drv.retainPrimaryContext(d->dev);
  if (!ctx)
    return ctx.takeError();
  d->ctx = *ctx;
  d->ownsContext = true;
  // From here on the destructor releases what was acquired.
  if (Error e = d->makeCurrent())
    return std::move(e);
  Expected<Stream> stream = Stream::create(drv, cu::CU_STREAM_DEFAULT);
  if (!stream)
    return stream.takeError();
  d->strm = std::move(*stream);
  return std::move(d);
}

Expected<std::unique_ptr<Device>> Device::attachCurrent() {
  Expected<const CudaDriver &> drvOr = CudaDriver::get();
  if (!drvOr)
    return drvOr.takeError();
  const CudaDriver &drv = *drvOr;
  // Without cuInit every other call fails with CUDA_ERROR_NOT_INITIALIZED;
  // a process that has a context has initialised the driver already.
  if (Error e = initDriver(drv))
    return std::move(e);
  Expected<cu::CUcontext> ctx = drv.currentContext();
  if (!ctx)
    return ctx.takeError();
  if (!*ctx)
    return runtimeError("no CUDA context is current on this thread: "
                        "initialise CUDA first (in PyTorch, any CUDA tensor "
                        "operation does)",
                        cu::CUDA_ERROR_INVALID_VALUE);
  Expected<cu::CUdevice> device = drv.currentDevice();
  if (!device)
    return device.takeError();
  std::unique_ptr<Device> d(new Device(drv));
  d->ord = int(*device);
  d->ctx = *ctx;
  if (Error e = d->query(*device))
    return std::move(e);
  return std::move(d);
}

Device::~Device() {
  if (stream()) {
    consumeError(makeCurrent());
    consumeError(synchronize());
    strm.reset();
  }
  if (ctx && ownsContext)
    consumeError(drv.releasePrimaryContext(dev));
}

std::string Device::arch() const {
  return fmt::format("sm_{}{}", ccMajor, ccMinor);
}

std::string Device::driverVersionString() const {
  return formatDriverVersion(drvVersion);
}

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

Expected<std::unique_ptr<Module>> Module::load(Device &device, StringRef ptx) {
  if (Error e = device.makeCurrent())
    return std::move(e);
  // The image must be NUL-terminated PTX text.
  std::string image = ptx.str(), info;
  Expected<cu::CUmodule> mod = device.driver().loadModule(image.c_str(), info);
  if (!mod)
    return withContext(mod.takeError(),
                       fmt::format("cannot JIT-compile the PTX for {} ({})",
                                   device.name(), device.arch()));
  return std::unique_ptr<Module>(new Module(device, *mod, std::move(info)));
}

Module::~Module() {
  if (mod) {
    consumeError(device.makeCurrent());
    consumeError(device.driver().unloadModule(mod));
  }
}

Expected<Function> Module::getFunction(StringRef name) const {
  const CudaDriver &drv = device.driver();
  Function f;
  f.name = name.str();
  std::string where = fmt::format("kernel '{}'", f.name);
  Expected<cu::CUfunction> handle = drv.moduleFunction(mod, f.name.c_str());
  if (!handle) {
    Error e = handle.takeError();
    if (resultOf(e) != cu::CUDA_ERROR_NOT_FOUND)
      return withContext(std::move(e), where);
    consumeError(std::move(e));
    return runtimeError(where + " is not in the PTX", cu::CUDA_ERROR_NOT_FOUND);
  }
  f.handle = *handle;
  struct {
    cu::CUfunction_attribute attr;
    int *out;
  } queries[] = {
      {cu::CU_FUNC_ATTRIBUTE_NUM_REGS, &f.attributes.registers},
      {cu::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &f.attributes.localBytes},
      {cu::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
       &f.attributes.staticSharedBytes},
      {cu::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
       &f.attributes.maxThreadsPerBlock},
      {cu::CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, &f.attributes.constBytes},
  };
  for (auto &q : queries) {
    Expected<int> v = drv.functionAttribute(f.handle, q.attr);
    if (!v)
      return withContext(v.takeError(), where);
    *q.out = *v;
  }
  return f;
}

//===----------------------------------------------------------------------===//
// DeviceBuffer
//===----------------------------------------------------------------------===//

Expected<DeviceBuffer> DeviceBuffer::allocate(Device &device, int64_t bytes,
                                              StringRef name) {
  const CudaDriver &drv = device.driver();
  if (bytes < 0)
    return runtimeError(
        fmt::format("buffer '{}' has a negative size", name.str()));
  size_t n = size_t(std::max<int64_t>(bytes, 1));
  if (Error e = device.makeCurrent())
    return std::move(e);
  Expected<cu::CUdeviceptr> p = drv.memAlloc(n);
  if (!p) {
    Error e = p.takeError();
    cu::CUresult r = resultOf(e);
    if (r != cu::CUDA_ERROR_OUT_OF_MEMORY)
      return withContext(std::move(e),
                         fmt::format("allocating {} for buffer '{}'",
                                     formatBytes(int64_t(n)), name.str()));
    std::string why = toString(std::move(e)); // "cuMemAlloc failed: ..."
    std::string freeText = "unknown amount";
    if (Expected<int64_t> freeBytes = drv.freeMemory())
      freeText = formatBytes(*freeBytes);
    else
      consumeError(freeBytes.takeError());
    return runtimeError(fmt::format("out of device memory: needed {} for "
                                    "buffer '{}', {} free ({})",
                                    formatBytes(int64_t(n)), name.str(),
                                    freeText, why),
                        r);
  }
  DeviceBuffer b;
  b.p = *p;
  b.device = &device;
  b.size = bytes;
  b.bufName = name.str();
  return std::move(b);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer &&other) noexcept
    : device(other.device), p(other.p), size(other.size),
      bufName(std::move(other.bufName)) {
  other.device = nullptr;
  other.p = 0;
  other.size = 0;
}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept {
  if (this != &other) {
    release();
    device = other.device;
    p = other.p;
    size = other.size;
    bufName = std::move(other.bufName);
    other.device = nullptr;
    other.p = 0;
    other.size = 0;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { release(); }

void DeviceBuffer::release() {
  if (device && p) {
    consumeError(device->makeCurrent());
    consumeError(device->driver().memFree(p));
  }
  device = nullptr;
  p = 0;
  size = 0;
}

/// Checks that `bytes` bytes at `offset` lie in `b`.
static Error checkRange(const DeviceBuffer &b, int64_t offset, int64_t bytes) {
  if (bytes < 0 || offset < 0 || offset > b.bytes() ||
      bytes > b.bytes() - offset)
    return runtimeError(
        fmt::format("copy of {} bytes does not fit buffer '{}' of {} bytes{}",
                    bytes, b.name(), b.bytes(),
                    offset ? fmt::format(" at offset {}", offset) : ""));
  return Error::success();
}

Error DeviceBuffer::copyFromHost(const void *src, int64_t bytes) {
  if (bytes < 0)
    bytes = size;
  if (Error e = checkRange(*this, 0, bytes))
    return e;
  if (bytes == 0)
    return Error::success();
  return withContext(device->driver().copyHostToDevice(p, src, size_t(bytes)),
                     fmt::format("copying buffer '{}' to the device", bufName));
}

Error DeviceBuffer::copyToHost(void *dst, int64_t bytes) const {
  if (bytes < 0)
    bytes = size;
  if (Error e = checkRange(*this, 0, bytes))
    return e;
  if (bytes == 0)
    return Error::success();
  return withContext(device->driver().copyDeviceToHost(dst, p, size_t(bytes)),
                     fmt::format("copying buffer '{}' to the host", bufName));
}

Error DeviceBuffer::copyFrom(const DeviceBuffer &src, int64_t offset) {
  if (Error e = checkRange(*this, offset, src.size))
    return e;
  if (src.size == 0)
    return Error::success();
  return device->driver().copyDeviceToDevice(p + cu::CUdeviceptr(offset), src.p,
                                             size_t(src.size));
}

Error DeviceBuffer::repeatPrefix(int64_t period) {
  if (period <= 0 || period > size)
    return runtimeError(fmt::format("cannot repeat the first {} bytes of "
                                    "buffer '{}' of {} bytes",
                                    period, bufName, size));
  for (int64_t filled = period; filled < size;) {
    int64_t n = std::min(filled, size - filled);
    if (Error e = device->driver().copyDeviceToDevice(
            p + cu::CUdeviceptr(filled), p, size_t(n)))
      return e;
    filled += n;
  }
  return Error::success();
}

Error DeviceBuffer::fill(uint8_t value) {
  if (size == 0)
    return Error::success();
  return withContext(device->driver().memsetD8(p, value, size_t(size)),
                     fmt::format("filling buffer '{}'", bufName));
}

} // namespace mtc
