//===- CudaDriver.cpp - The CUDA driver, loaded at run time ---------------===//
//
// See CudaDriver.h.
//
//===----------------------------------------------------------------------===//
#include "runtime/CudaDriver.h"

#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

using namespace llvm;

namespace mtc {

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

char RuntimeError::ID = 0;

void RuntimeError::log(raw_ostream &os) const { os << message; }

std::error_code RuntimeError::convertToErrorCode() const {
  return inconvertibleErrorCode();
}

Error runtimeError(const Twine &message, cu::CUresult result) {
  return make_error<RuntimeError>(message.str(), result);
}

Error withContext(Error err, const Twine &context) {
  if (!err)
    return Error::success();
  std::string prefix = context.str();
  cu::CUresult result = 0;
  std::string message;
  handleAllErrors(
      std::move(err),
      [&](const RuntimeError &e) {
        result = e.getResult();
        message = e.getMessage();
      },
      [&](const ErrorInfoBase &e) { message = e.message(); });
  return make_error<RuntimeError>(prefix + ": " + message, result);
}

std::string formatBytes(int64_t bytes) {
  double b = double(bytes);
  if (bytes >= (int64_t(1) << 30))
    return fmt::format("{:.1f} GiB", b / double(int64_t(1) << 30));
  if (bytes >= (int64_t(1) << 20))
    return fmt::format("{:.1f} MiB", b / double(int64_t(1) << 20));
  if (bytes >= (int64_t(1) << 10))
    return fmt::format("{:.1f} KiB", b / double(int64_t(1) << 10));
  return fmt::format("{} B", bytes);
}

//===----------------------------------------------------------------------===//
// CudaDriver
//===----------------------------------------------------------------------===//

static constexpr const char *kDefaultLibrary = "libcuda.so.1";

Expected<const CudaDriver &> CudaDriver::get() {
  const char *env = std::getenv("MTC_CUDA_LIBRARY");
  return load(env && *env ? StringRef(env) : StringRef(kDefaultLibrary));
}

Expected<const CudaDriver &> CudaDriver::load(StringRef path) {
  // Loaded drivers live until the process exits: the driver must outlive
  // every static destructor that might still release device objects.
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<CudaDriver>> *loaded =
      new std::map<std::string, std::unique_ptr<CudaDriver>>();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = loaded->find(path.str());
  if (it != loaded->end())
    return *it->second;

  ::dlerror();
  void *lib = ::dlopen(path.str().c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = ::dlerror();
    return runtimeError(fmt::format(
        "cannot load the CUDA driver ({}): {}; mtc run/tune/bench need an "
        "NVIDIA GPU and driver (mtc compile does not)",
        path.str(), why ? why : "unknown dlopen error"));
  }
  auto drv = std::make_unique<CudaDriver>();
  drv->path = path.str();
  std::vector<std::string> missing;
#define MTC_CUDA_RESOLVE_REQUIRED(name, ...)                                   \
  drv->name = reinterpret_cast<name##_fn>(::dlsym(lib, #name));                \
  if (!drv->name)                                                              \
    missing.push_back(#name);
#define MTC_CUDA_RESOLVE_OPTIONAL(name, ...)                                   \
  drv->name = reinterpret_cast<name##_fn>(::dlsym(lib, #name));
  MTC_CUDA_REQUIRED_FUNCTIONS(MTC_CUDA_RESOLVE_REQUIRED)
  MTC_CUDA_OPTIONAL_FUNCTIONS(MTC_CUDA_RESOLVE_OPTIONAL)
#undef MTC_CUDA_RESOLVE_REQUIRED
#undef MTC_CUDA_RESOLVE_OPTIONAL
  if (!drv->cuEventElapsedTime_v2 && !drv->cuEventElapsedTime)
    missing.push_back("cuEventElapsedTime");
  if (!missing.empty()) {
    ::dlclose(lib);
    static constexpr size_t kListed = 6;
    std::string list;
    for (size_t i = 0; i < missing.size() && i < kListed; ++i)
      list += (i ? ", " : "") + missing[i];
    if (missing.size() > kListed)
      list += fmt::format(" and {} more", missing.size() - kListed);
    return runtimeError(fmt::format(
        "cannot use the CUDA driver ({}): it lacks {}; mtc needs a driver "
        "for CUDA 12.0 or newer",
        path.str(), list));
  }
  const CudaDriver &ref = *drv;
  (*loaded)[path.str()] = std::move(drv);
  return ref;
}

std::string CudaDriver::describe(cu::CUresult r) const {
  const char *name = nullptr, *text = nullptr;
  if (cuGetErrorName(r, &name) != cu::CUDA_SUCCESS || !name)
    name = nullptr;
  if (cuGetErrorString(r, &text) != cu::CUDA_SUCCESS || !text)
    text = nullptr;
  std::string n = name ? std::string(name) : fmt::format("CUDA error {}", r);
  return text ? fmt::format("{} ({})", n, text) : n;
}

Error CudaDriver::check(cu::CUresult r, StringRef call) const {
  if (r == cu::CUDA_SUCCESS)
    return Error::success();
  return runtimeError(fmt::format("{} failed: {}", call.str(), describe(r)), r);
}

cu::CUresult CudaDriver::elapsedTime(float *ms, cu::CUevent start,
                                     cu::CUevent end) const {
  if (cuEventElapsedTime_v2)
    return cuEventElapsedTime_v2(ms, start, end);
  return cuEventElapsedTime(ms, start, end);
}

//===----------------------------------------------------------------------===//
// Device
//===----------------------------------------------------------------------===//

/// cuInit, a check that device `ordinal` exists, and its handle.
static Expected<cu::CUdevice> initDevice(const CudaDriver &drv,
                                         int ordinal) {
  cu::CUresult r = drv.cuInit(0);
  if (r == cu::CUDA_ERROR_NO_DEVICE)
    return withContext(drv.check(r, "cuInit"), "no CUDA device found");
  if (r != cu::CUDA_SUCCESS)
    return withContext(drv.check(r, "cuInit"),
                       "cannot initialise the CUDA driver");
  int count = 0;
  if (Error e = drv.check(drv.cuDeviceGetCount(&count), "cuDeviceGetCount"))
    return std::move(e);
  if (count == 0)
    return runtimeError("no CUDA device found", cu::CUDA_ERROR_NO_DEVICE);
  if (ordinal < 0 || ordinal >= count)
    return runtimeError(
        fmt::format("there is no CUDA device {} ({} found)", ordinal, count),
        cu::CUDA_ERROR_INVALID_DEVICE);
  cu::CUdevice dev;
  if (Error e = drv.check(drv.cuDeviceGet(&dev, ordinal), "cuDeviceGet"))
    return std::move(e);
  return dev;
}

namespace {
/// What names a device in the tuning cache, as the driver reports it.
struct RawIdentity {
  int driverVersion = 0, ccMajor = 0, ccMinor = 0;
  std::string name;
};
} // namespace

/// "13.0" for the driver's 13000.
static std::string formatDriverVersion(int version) {
  return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

static Expected<RawIdentity> queryIdentity(const CudaDriver &drv,
                                           cu::CUdevice dev) {
  RawIdentity id;
  if (Error e = drv.check(drv.cuDriverGetVersion(&id.driverVersion),
                          "cuDriverGetVersion"))
    return std::move(e);
  char name[256] = {0};
  if (Error e = drv.check(drv.cuDeviceGetName(name, sizeof(name) - 1, dev),
                          "cuDeviceGetName"))
    return std::move(e);
  id.name = name;
  for (auto [attr, out] :
       {std::pair{cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &id.ccMajor},
        std::pair{cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                  &id.ccMinor}})
    if (Error e = drv.check(drv.cuDeviceGetAttribute(out, attr, dev),
                            fmt::format("cuDeviceGetAttribute({})", int(attr))))
      return std::move(e);
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

  auto attr = [&](cu::CUdevice_attribute a, auto &out) -> Error {
    int v = 0;
    if (Error e = drv.check(drv.cuDeviceGetAttribute(&v, a, dev),
                            fmt::format("cuDeviceGetAttribute({})", int(a))))
      return e;
    out = v;
    return Error::success();
  };
  using namespace cu;
  if (Error e = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, sms))
    return e;
  if (Error e = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, l2))
    return e;
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
  if (Error e = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, maxShared))
    return e;
  if (Error e = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                     maxSharedOptin))
    return e;
  size_t total = 0;
  if (Error e =
          drv.check(drv.cuDeviceTotalMem_v2(&total, dev), "cuDeviceTotalMem"))
    return e;
  totalMem = int64_t(total);
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

  if (Error e = drv.check(drv.cuDevicePrimaryCtxRetain(&d->ctx, d->dev),
                          "cuDevicePrimaryCtxRetain"))
    return std::move(e);
  d->ownsContext = true;
  // From here on the destructor releases what was acquired.
  if (Error e = d->makeCurrent())
    return std::move(e);
  if (Error e = drv.check(drv.cuStreamCreate(&d->strm, cu::CU_STREAM_DEFAULT),
                          "cuStreamCreate"))
    return std::move(e);
  return std::move(d);
}

Expected<std::unique_ptr<Device>> Device::attachCurrent() {
  Expected<const CudaDriver &> drvOr = CudaDriver::get();
  if (!drvOr)
    return drvOr.takeError();
  const CudaDriver &drv = *drvOr;
  // Without cuInit every other call fails with CUDA_ERROR_NOT_INITIALIZED;
  // a process that has a context has initialised the driver already.
  cu::CUresult r = drv.cuInit(0);
  if (r == cu::CUDA_ERROR_NO_DEVICE)
    return withContext(drv.check(r, "cuInit"), "no CUDA device found");
  if (Error e = drv.check(r, "cuInit"))
    return withContext(std::move(e), "cannot initialise the CUDA driver");
  cu::CUcontext ctx = nullptr;
  if (Error e = drv.check(drv.cuCtxGetCurrent(&ctx), "cuCtxGetCurrent"))
    return std::move(e);
  if (!ctx)
    return runtimeError("no CUDA context is current on this thread: "
                        "initialise CUDA first (in PyTorch, any CUDA tensor "
                        "operation does)",
                        cu::CUDA_ERROR_INVALID_VALUE);
  cu::CUdevice device = 0;
  if (Error e = drv.check(drv.cuCtxGetDevice(&device), "cuCtxGetDevice"))
    return std::move(e);
  std::unique_ptr<Device> d(new Device(drv));
  d->ord = int(device);
  d->ctx = ctx;
  if (Error e = d->query(device))
    return std::move(e);
  return std::move(d);
}

Device::~Device() {
  if (strm) {
    (void)drv.cuCtxSetCurrent(ctx);
    (void)drv.cuStreamSynchronize(strm);
    (void)drv.cuStreamDestroy_v2(strm);
  }
  if (ctx && ownsContext)
    (void)drv.cuDevicePrimaryCtxRelease_v2(dev);
}

std::string Device::arch() const {
  return fmt::format("sm_{}{}", ccMajor, ccMinor);
}

std::string Device::driverVersionString() const {
  return formatDriverVersion(drvVersion);
}

Expected<int64_t> Device::freeMemory() const {
  size_t freeBytes = 0, totalBytes = 0;
  if (Error e =
          check(drv.cuMemGetInfo_v2(&freeBytes, &totalBytes), "cuMemGetInfo"))
    return std::move(e);
  return int64_t(freeBytes);
}

Error Device::makeCurrent() const {
  return check(drv.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
}

Error Device::synchronize() const {
  return check(drv.cuStreamSynchronize(strm), "cuStreamSynchronize");
}

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

/// Log buffers for the JIT; longer logs are cut.
static constexpr unsigned kJitLogBytes = 1 << 16;

static std::string logText(const std::vector<char> &buf) {
  // The buffer was zeroed and is one byte longer than the driver was told.
  StringRef s(buf.data(), strnlen(buf.data(), buf.size()));
  return s.rtrim("\n\r\t ").str();
}

Expected<std::unique_ptr<Module>> Module::load(Device &device, StringRef ptx) {
  const CudaDriver &drv = device.driver();
  if (Error e = device.makeCurrent())
    return std::move(e);
  // The image must be NUL-terminated PTX text.
  std::string image = ptx.str();
  std::vector<char> errorLog(kJitLogBytes + 1, 0), infoLog(kJitLogBytes + 1, 0);
  cu::CUjit_option options[] = {
      cu::CU_JIT_ERROR_LOG_BUFFER, cu::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
      cu::CU_JIT_INFO_LOG_BUFFER, cu::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
      cu::CU_JIT_LOG_VERBOSE};
  void *values[] = {
      errorLog.data(), reinterpret_cast<void *>(uintptr_t(kJitLogBytes)),
      infoLog.data(), reinterpret_cast<void *>(uintptr_t(kJitLogBytes)),
      reinterpret_cast<void *>(uintptr_t(1))};
  static_assert(sizeof(options) / sizeof(options[0]) ==
                sizeof(values) / sizeof(values[0]));
  cu::CUmodule mod = nullptr;
  cu::CUresult r = drv.cuModuleLoadDataEx(
      &mod, image.c_str(), unsigned(sizeof(options) / sizeof(options[0])),
      options, values);
  std::string info = logText(infoLog);
  if (r != cu::CUDA_SUCCESS) {
    std::string err = logText(errorLog);
    std::string message =
        fmt::format("cannot JIT-compile the PTX for {} ({}): "
                    "cuModuleLoadDataEx failed: {}",
                    device.name(), device.arch(), drv.describe(r));
    if (!err.empty())
      message += "\nJIT error log:\n" + err;
    else if (!info.empty())
      message += "\nJIT info log:\n" + info;
    return runtimeError(message, r);
  }
  return std::unique_ptr<Module>(new Module(device, mod, std::move(info)));
}

Module::~Module() {
  if (mod) {
    (void)device.driver().cuCtxSetCurrent(device.context());
    (void)device.driver().cuModuleUnload(mod);
  }
}

Expected<Function> Module::getFunction(StringRef name) const {
  const CudaDriver &drv = device.driver();
  Function f;
  f.name = name.str();
  cu::CUresult r = drv.cuModuleGetFunction(&f.handle, mod, f.name.c_str());
  if (r == cu::CUDA_ERROR_NOT_FOUND)
    return runtimeError(fmt::format("kernel '{}' is not in the PTX", f.name),
                        r);
  if (Error e = drv.check(r, "cuModuleGetFunction"))
    return withContext(std::move(e), fmt::format("kernel '{}'", f.name));
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
  for (auto &q : queries)
    if (Error e = drv.check(drv.cuFuncGetAttribute(q.out, q.attr, f.handle),
                            fmt::format("cuFuncGetAttribute({})", int(q.attr))))
      return withContext(std::move(e), fmt::format("kernel '{}'", f.name));
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
  DeviceBuffer b;
  cu::CUresult r = drv.cuMemAlloc_v2(&b.p, n);
  if (r == cu::CUDA_ERROR_OUT_OF_MEMORY) {
    std::string freeText = "unknown amount";
    size_t freeBytes = 0, totalBytes = 0;
    if (drv.cuMemGetInfo_v2(&freeBytes, &totalBytes) == cu::CUDA_SUCCESS)
      freeText = formatBytes(int64_t(freeBytes));
    return runtimeError(
        fmt::format("out of device memory: needed {} for buffer '{}', {} free "
                    "(cuMemAlloc failed: {})",
                    formatBytes(int64_t(n)), name.str(), freeText,
                    drv.describe(r)),
        r);
  }
  if (Error e = drv.check(r, "cuMemAlloc"))
    return withContext(std::move(e),
                       fmt::format("allocating {} for buffer '{}'",
                                   formatBytes(int64_t(n)), name.str()));
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
    (void)device->driver().cuCtxSetCurrent(device->context());
    (void)device->driver().cuMemFree_v2(p);
  }
  device = nullptr;
  p = 0;
  size = 0;
}

static Error checkCopySize(const DeviceBuffer &b, int64_t bytes) {
  if (bytes < 0 || bytes > b.bytes())
    return runtimeError(
        fmt::format("copy of {} bytes does not fit buffer '{}' of {} bytes",
                    bytes, b.name(), b.bytes()));
  return Error::success();
}

Error DeviceBuffer::copyFromHost(const void *src, int64_t bytes) {
  if (bytes < 0)
    bytes = size;
  if (Error e = checkCopySize(*this, bytes))
    return e;
  if (bytes == 0)
    return Error::success();
  return withContext(
      device->check(device->driver().cuMemcpyHtoD_v2(p, src, size_t(bytes)),
                    "cuMemcpyHtoD"),
      fmt::format("copying buffer '{}' to the device", bufName));
}

Error DeviceBuffer::copyToHost(void *dst, int64_t bytes) const {
  if (bytes < 0)
    bytes = size;
  if (Error e = checkCopySize(*this, bytes))
    return e;
  if (bytes == 0)
    return Error::success();
  return withContext(
      device->check(device->driver().cuMemcpyDtoH_v2(dst, p, size_t(bytes)),
                    "cuMemcpyDtoH"),
      fmt::format("copying buffer '{}' to the host", bufName));
}

Error DeviceBuffer::copyFrom(const DeviceBuffer &src) {
  if (src.size != size)
    return runtimeError(
        fmt::format("cannot copy buffer '{}' ({} bytes) into '{}' ({} bytes)",
                    src.bufName, src.size, bufName, size));
  if (size == 0)
    return Error::success();
  return withContext(
      device->check(device->driver().cuMemcpyDtoD_v2(p, src.p, size_t(size)),
                    "cuMemcpyDtoD"),
      fmt::format("copying buffer '{}' to '{}'", src.bufName, bufName));
}

Error DeviceBuffer::fill(uint8_t value) {
  if (size == 0)
    return Error::success();
  return withContext(
      device->check(device->driver().cuMemsetD8_v2(p, value, size_t(size)),
                    "cuMemsetD8"),
      fmt::format("filling buffer '{}'", bufName));
}

} // namespace mtc
