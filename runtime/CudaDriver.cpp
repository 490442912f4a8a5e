//===- CudaDriver.cpp - The CUDA driver, loaded at run time ---------------===//
//
// See CudaDriver.h. With CudaObjects.cpp, the only file that calls the
// driver's entry points.
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

cu::CUresult resultOf(Error &err) {
  cu::CUresult result = 0;
  err = handleErrors(std::move(err),
                     [&](std::unique_ptr<RuntimeError> e) -> Error {
                       result = e->getResult();
                       return Error(std::move(e));
                     });
  return result;
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

//===----------------------------------------------------------------------===//
// Checked operations
//===----------------------------------------------------------------------===//

/// `value` once `r` is checked. (Every caller calls the driver first, in a
/// statement of its own: the order of evaluation of arguments is unspecified.)
template <typename T>
static Expected<T> checked(const CudaDriver &drv, cu::CUresult r,
                           StringRef call, T value) {
  if (Error e = drv.check(r, call))
    return std::move(e);
  return value;
}

Error CudaDriver::init() const { return check(cuInit(0), "cuInit"); }

Expected<int> CudaDriver::driverVersion() const {
  int v = 0;
  cu::CUresult r = cuDriverGetVersion(&v);
  return checked(*this, r, "cuDriverGetVersion", v);
}

Expected<int> CudaDriver::deviceCount() const {
  int n = 0;
  cu::CUresult r = cuDeviceGetCount(&n);
  return checked(*this, r, "cuDeviceGetCount", n);
}

Expected<cu::CUdevice> CudaDriver::deviceGet(int ordinal) const {
  cu::CUdevice dev = 0;
  cu::CUresult r = cuDeviceGet(&dev, ordinal);
  return checked(*this, r, "cuDeviceGet", dev);
}

Expected<std::string> CudaDriver::deviceName(cu::CUdevice dev) const {
  char name[256] = {0};
  cu::CUresult r = cuDeviceGetName(name, sizeof(name) - 1, dev);
  return checked(*this, r, "cuDeviceGetName", std::string(name));
}

Expected<int> CudaDriver::deviceAttribute(cu::CUdevice dev,
                                          cu::CUdevice_attribute attr) const {
  int v = 0;
  cu::CUresult r = cuDeviceGetAttribute(&v, attr, dev);
  return checked(*this, r, fmt::format("cuDeviceGetAttribute({})", int(attr)),
                 v);
}

Expected<int64_t> CudaDriver::deviceTotalMemory(cu::CUdevice dev) const {
  size_t total = 0;
  cu::CUresult r = cuDeviceTotalMem_v2(&total, dev);
  return checked(*this, r, "cuDeviceTotalMem", int64_t(total));
}

Expected<cu::CUcontext>
CudaDriver::retainPrimaryContext(cu::CUdevice dev) const {
  cu::CUcontext ctx = nullptr;
  cu::CUresult r = cuDevicePrimaryCtxRetain(&ctx, dev);
  return checked(*this, r, "cuDevicePrimaryCtxRetain", ctx);
}

Error CudaDriver::releasePrimaryContext(cu::CUdevice dev) const {
  return check(cuDevicePrimaryCtxRelease_v2(dev), "cuDevicePrimaryCtxRelease");
}

Error CudaDriver::setCurrentContext(cu::CUcontext ctx) const {
  return check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
}

Expected<cu::CUcontext> CudaDriver::currentContext() const {
  cu::CUcontext ctx = nullptr;
  cu::CUresult r = cuCtxGetCurrent(&ctx);
  return checked(*this, r, "cuCtxGetCurrent", ctx);
}

Expected<cu::CUdevice> CudaDriver::currentDevice() const {
  cu::CUdevice dev = 0;
  cu::CUresult r = cuCtxGetDevice(&dev);
  return checked(*this, r, "cuCtxGetDevice", dev);
}

Error CudaDriver::synchronizeContext() const {
  return check(cuCtxSynchronize(), "cuCtxSynchronize");
}

Error CudaDriver::synchronizeStream(cu::CUstream stream) const {
  return check(cuStreamSynchronize(stream), "cuStreamSynchronize");
}

/// Log buffers for the JIT; longer logs are cut.
static constexpr unsigned kJitLogBytes = 1 << 16;

static std::string logText(const std::vector<char> &buf) {
  // The buffer was zeroed and is one byte longer than the driver was told.
  StringRef s(buf.data(), strnlen(buf.data(), buf.size()));
  return s.rtrim("\n\r\t ").str();
}

Expected<cu::CUmodule> CudaDriver::loadModule(const char *image,
                                              std::string &infoLog) const {
  std::vector<char> errorBuf(kJitLogBytes + 1, 0), infoBuf(kJitLogBytes + 1, 0);
  cu::CUjit_option options[] = {
      cu::CU_JIT_ERROR_LOG_BUFFER, cu::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
      cu::CU_JIT_INFO_LOG_BUFFER, cu::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
      cu::CU_JIT_LOG_VERBOSE};
  void *values[] = {
      errorBuf.data(), reinterpret_cast<void *>(uintptr_t(kJitLogBytes)),
      infoBuf.data(), reinterpret_cast<void *>(uintptr_t(kJitLogBytes)),
      reinterpret_cast<void *>(uintptr_t(1))};
  static_assert(sizeof(options) / sizeof(options[0]) ==
                sizeof(values) / sizeof(values[0]));
  cu::CUmodule mod = nullptr;
  cu::CUresult r = cuModuleLoadDataEx(
      &mod, image, unsigned(sizeof(options) / sizeof(options[0])), options,
      values);
  infoLog = logText(infoBuf);
  if (r == cu::CUDA_SUCCESS)
    return mod;
  std::string message = "cuModuleLoadDataEx failed: " + describe(r);
  std::string err = logText(errorBuf);
  if (!err.empty())
    message += "\nJIT error log:\n" + err;
  else if (!infoLog.empty())
    message += "\nJIT info log:\n" + infoLog;
  return runtimeError(message, r);
}

Error CudaDriver::unloadModule(cu::CUmodule mod) const {
  return check(cuModuleUnload(mod), "cuModuleUnload");
}

Expected<cu::CUfunction> CudaDriver::moduleFunction(cu::CUmodule mod,
                                                    const char *name) const {
  cu::CUfunction fn = nullptr;
  cu::CUresult r = cuModuleGetFunction(&fn, mod, name);
  return checked(*this, r, "cuModuleGetFunction", fn);
}

Expected<int>
CudaDriver::functionAttribute(cu::CUfunction fn,
                              cu::CUfunction_attribute attr) const {
  int v = 0;
  cu::CUresult r = cuFuncGetAttribute(&v, attr, fn);
  return checked(*this, r, fmt::format("cuFuncGetAttribute({})", int(attr)), v);
}

Error CudaDriver::setMaxDynamicShared(cu::CUfunction fn, int bytes) const {
  return check(
      cuFuncSetAttribute(
          fn, cu::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes),
      "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
}

CudaDriver::ParamSizes CudaDriver::parameterSizes(cu::CUfunction fn,
                                                  unsigned max) const {
  ParamSizes p;
  if (!cuFuncGetParamInfo)
    return p;
  for (size_t i = 0; i < max; ++i) {
    size_t offset = 0, size = 0;
    cu::CUresult r = cuFuncGetParamInfo(fn, i, &offset, &size);
    if (r == cu::CUDA_ERROR_INVALID_VALUE)
      break;
    if (r != cu::CUDA_SUCCESS)
      return p;
    p.sizes.push_back(size);
  }
  p.complete = true;
  return p;
}

Expected<int> CudaDriver::maxActiveBlocksPerSM(cu::CUfunction fn, int threads,
                                               size_t dynamicShared) const {
  int blocks = 0;
  cu::CUresult r = cuOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks, fn, threads, dynamicShared);
  return checked(*this, r, "cuOccupancyMaxActiveBlocksPerMultiprocessor",
                 blocks);
}

Expected<int64_t> CudaDriver::freeMemory() const {
  size_t freeBytes = 0, totalBytes = 0;
  cu::CUresult r = cuMemGetInfo_v2(&freeBytes, &totalBytes);
  return checked(*this, r, "cuMemGetInfo", int64_t(freeBytes));
}

Expected<cu::CUdeviceptr> CudaDriver::memAlloc(size_t bytes) const {
  cu::CUdeviceptr p = 0;
  cu::CUresult r = cuMemAlloc_v2(&p, bytes);
  return checked(*this, r, "cuMemAlloc", p);
}

Error CudaDriver::memFree(cu::CUdeviceptr ptr) const {
  return check(cuMemFree_v2(ptr), "cuMemFree");
}

Error CudaDriver::copyHostToDevice(cu::CUdeviceptr dst, const void *src,
                                   size_t bytes) const {
  return check(cuMemcpyHtoD_v2(dst, src, bytes), "cuMemcpyHtoD");
}

Error CudaDriver::copyDeviceToHost(void *dst, cu::CUdeviceptr src,
                                   size_t bytes) const {
  return check(cuMemcpyDtoH_v2(dst, src, bytes), "cuMemcpyDtoH");
}

Error CudaDriver::copyDeviceToDevice(cu::CUdeviceptr dst, cu::CUdeviceptr src,
                                     size_t bytes) const {
  return check(cuMemcpyDtoD_v2(dst, src, bytes), "cuMemcpyDtoD");
}

Error CudaDriver::memsetD8(cu::CUdeviceptr dst, uint8_t value,
                           size_t bytes) const {
  return check(cuMemsetD8_v2(dst, value, bytes), "cuMemsetD8");
}

Error CudaDriver::encodeTensorMap(cu::CUtensorMap &map, const TensorMapShape &t,
                                  cu::CUdeviceptr address) const {
  if (!cuTensorMapEncodeTiled)
    return runtimeError(fmt::format(
        "the CUDA driver ({}) has no cuTensorMapEncodeTiled; kernels that "
        "take tensor maps need a driver for CUDA 12.0 or newer",
        path));
  if (t.dims.empty() || t.dims.size() > 5 || t.box.size() != t.dims.size() ||
      t.strides.size() + 1 != t.dims.size())
    return runtimeError("cuTensorMapEncodeTiled: malformed tensor map shape");
  std::array<unsigned, 5> elementStrides = {1, 1, 1, 1, 1};
  return check(cuTensorMapEncodeTiled(
                   &map, t.dtype, unsigned(t.dims.size()),
                   reinterpret_cast<void *>(uintptr_t(address)), t.dims.data(),
                   t.strides.data(), t.box.data(), elementStrides.data(),
                   cu::CU_TENSOR_MAP_INTERLEAVE_NONE, t.swizzle, t.l2Promotion,
                   cu::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
               "cuTensorMapEncodeTiled");
}

Error CudaDriver::replaceTensorMapAddress(cu::CUtensorMap &map,
                                          cu::CUdeviceptr address) const {
  if (!cuTensorMapReplaceAddress)
    return runtimeError(fmt::format(
        "the CUDA driver ({}) has no cuTensorMapReplaceAddress", path));
  cu::CUresult r = cuTensorMapReplaceAddress(
      &map, reinterpret_cast<void *>(uintptr_t(address)));
  if (r == cu::CUDA_SUCCESS) // on the launch path: no Twine or string
    return Error::success();
  return check(r, "cuTensorMapReplaceAddress");
}

Error CudaDriver::launchKernel(cu::CUfunction fn, const LaunchConfig &c,
                               cu::CUstream stream, void **params) const {
  cu::CUresult r;
  if (c.gridDependency && cuLaunchKernelEx) {
    cu::CUlaunchAttribute attr{};
    attr.id = cu::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    cu::CUlaunchConfig config{
        c.grid[0],  c.grid[1],       c.grid[2], c.block[0], c.block[1],
        c.block[2], c.dynamicShared, stream,    &attr,      1};
    r = cuLaunchKernelEx(&config, fn, params, nullptr);
    if (r == cu::CUDA_SUCCESS)
      return Error::success();
    return check(r, "cuLaunchKernelEx");
  }
  r = cuLaunchKernel(fn, c.grid[0], c.grid[1], c.grid[2], c.block[0],
                     c.block[1], c.block[2], c.dynamicShared, stream, params,
                     nullptr);
  if (r == cu::CUDA_SUCCESS) // the hot path: no Twine or string
    return Error::success();
  return check(r, "cuLaunchKernel");
}

} // namespace mtc
