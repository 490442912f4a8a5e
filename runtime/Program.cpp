//===- Program.cpp - A manifest's kernels, loaded and checked -------------===//
//
// See Program.h.
//
//===----------------------------------------------------------------------===//
#include "runtime/Program.h"

#include <fmt/format.h>

#include <array>
#include <cstdlib>

using namespace llvm;

namespace mtc {

/// Programmatic dependent launch, for manifests that allow it, only with
/// MTC_GRID_DEPENDENCY=1: with the kernels' trigger at their end it gained
/// 0.3-1.8 us on the Llama-3-8B feed-forward graph at M = 1-16 (H100, one
/// run each, about the run-to-run spread; bench/results/2026-12-05-fuse-rows),
/// so it is not the default yet.
static bool gridDependencyAllowed() {
  const char *env = std::getenv("MTC_GRID_DEPENDENCY");
  return env && StringRef(env) == "1";
}

static std::string formatDims(const std::array<int64_t, 3> &d) {
  return fmt::format("[{}, {}, {}]", d[0], d[1], d[2]);
}

/// Checks that PTX for `arch` ("sm_90", "sm_90a") can run on `dev`.
static Error checkArch(const Device &dev, StringRef arch) {
  StringRef s = arch;
  if (!s.consume_front("sm_"))
    return Error::success();
  bool specific = s.consume_back("a");
  s.consume_back("f");
  unsigned v = 0;
  if (s.getAsInteger(10, v))
    return Error::success();
  unsigned have = unsigned(dev.computeMajor() * 10 + dev.computeMinor());
  if (have < v || (specific && have != v))
    return runtimeError(fmt::format(
        "the PTX targets {} but {} is {} (compute capability {}.{})",
        arch.str(), dev.name(), dev.arch(), dev.computeMajor(),
        dev.computeMinor()));
  return Error::success();
}

int Program::findBuffer(StringRef name) const {
  auto it = bufferIndex.find(name);
  return it == bufferIndex.end() ? -1 : int(it->second);
}

Expected<std::unique_ptr<Program>>
Program::load(Device &device, const Manifest &manifest, StringRef ptx) {
  std::unique_ptr<Program> p(new Program(device, manifest));
  const Manifest &m = manifest;
  if (Error e = device.makeCurrent())
    return std::move(e);
  if (Error e = checkArch(device, m.arch))
    return std::move(e);

  for (unsigned i = 0; i < m.buffers.size(); ++i)
    if (!p->bufferIndex.try_emplace(m.buffers[i].name, i).second)
      return runtimeError(fmt::format(
          "malformed manifest: buffer '{}' appears twice", m.buffers[i].name));
  for (const std::string &o : m.outputs)
    if (p->findBuffer(o) < 0)
      return runtimeError(
          fmt::format("malformed manifest: output '{}' is not a buffer", o));

  Expected<std::unique_ptr<Module>> modOr = Module::load(device, ptx);
  if (!modOr)
    return modOr.takeError();
  p->module = std::move(*modOr);

  for (unsigned k = 0; k < m.kernels.size(); ++k) {
    const KernelInfo &info = m.kernels[k];
    Expected<Function> fnOr = p->module->getFunction(info.name);
    if (!fnOr)
      return fnOr.takeError();
    Kernel kernel;
    kernel.fn = std::move(*fnOr);
    for (const std::string &name : info.params) {
      int b = p->findBuffer(name);
      if (b < 0)
        return runtimeError(fmt::format(
            "malformed manifest: kernel '{}' uses unknown buffer '{}'",
            info.name, name));
      kernel.params.push_back(unsigned(b));
    }
    if (Error e = p->encodeTensorMaps(k, kernel))
      return std::move(e);
    if (Error e = p->checkKernel(k, kernel))
      return std::move(e);
    p->kernels.push_back(std::move(kernel));
  }
  return std::move(p);
}

Error Program::checkKernel(unsigned k, Kernel &kernel) const {
  const KernelInfo &info = man.kernels[k];
  const FunctionAttributes &a = kernel.fn.attributes;
  const CudaDriver &drv = dev.driver();
  std::string where = fmt::format("kernel '{}'", info.name);
  static const char *const axis[] = {"x", "y", "z"};

  if (kernel.params.size() > kMaxParams)
    return runtimeError(fmt::format("{} takes {} parameters; mtc launches at "
                                    "most {}",
                                    where, kernel.params.size(), kMaxParams));
  int64_t threads = 1;
  for (unsigned i = 0; i < 3; ++i) {
    if (info.grid[i] < 1 || info.block[i] < 1)
      return runtimeError(fmt::format("{} has an empty launch: grid {}, block "
                                      "{}",
                                      where, formatDims(info.grid),
                                      formatDims(info.block)));
    if (info.block[i] > dev.maxBlockDim(i))
      return runtimeError(fmt::format(
          "{}: block {} {} exceeds the device's limit {} in {}", where,
          formatDims(info.block), axis[i], dev.maxBlockDim(i), axis[i]));
    if (info.grid[i] > dev.maxGridDim(i))
      return runtimeError(
          fmt::format("{}: grid {} exceeds the device's limit {} in {}", where,
                      formatDims(info.grid), dev.maxGridDim(i), axis[i]));
    threads *= info.block[i];
  }
  if (threads > a.maxThreadsPerBlock)
    return runtimeError(fmt::format(
        "{} launches {} threads per block but can run at most {} (it uses {} "
        "registers per thread)",
        where, threads, a.maxThreadsPerBlock, a.registers));

  // The manifest says how much dynamic shared memory the launch passes;
  // with what the module declares statically it must fit the device, and
  // beyond the default it must be allowed first.
  int64_t dynamic = info.dynamicSharedBytes;
  if (dynamic < 0)
    return runtimeError(
        fmt::format("{} has negative dynamic shared memory", where));
  int64_t total = int64_t(a.staticSharedBytes) + dynamic;
  if (total > dev.maxSharedPerBlockOptin())
    return runtimeError(fmt::format(
        "{} needs {} bytes of shared memory per block but {} allows at most {}",
        where, total, dev.name(), dev.maxSharedPerBlockOptin()));
  if (total > dev.maxSharedPerBlock())
    if (Error e = drv.setMaxDynamicShared(kernel.fn.handle, int(dynamic)))
      return withContext(std::move(e), where);
  for (unsigned i = 0; i < 3; ++i) {
    kernel.launch.grid[i] = unsigned(info.grid[i]);
    kernel.launch.block[i] = unsigned(info.block[i]);
  }
  kernel.launch.dynamicShared = unsigned(dynamic);
  kernel.launch.gridDependency = man.gridDependency && gridDependencyAllowed();

  // Every parameter is a device pointer or a tensor map. Drivers for CUDA
  // 12.4+ can tell how many parameters the PTX entry takes and how large
  // they are; any answer other than "yes" or "no such parameter" skips the
  // rest of the check.
  size_t expected = kernel.params.size();
  std::vector<size_t> passed(expected, sizeof(cu::CUdeviceptr));
  for (const Kernel::Map &map : kernel.maps)
    passed[map.param] = sizeof(cu::CUtensorMap);
  CudaDriver::ParamSizes actual =
      drv.parameterSizes(kernel.fn.handle, kMaxParams + 1);
  for (size_t i = 0; i < actual.sizes.size() && i < expected; ++i)
    if (actual.sizes[i] != passed[i])
      return runtimeError(fmt::format(
          "parameter {} of {} is {} bytes in the PTX; mtc passes {}", i, where,
          actual.sizes[i],
          passed[i] == sizeof(cu::CUdeviceptr) ? "an 8-byte pointer"
                                               : "a 128-byte tensor map"));
  if (actual.complete && actual.sizes.size() != expected)
    return runtimeError(fmt::format(
        "{} takes {} parameters in the PTX but the manifest passes {}", where,
        actual.sizes.size(), expected));
  return Error::success();
}

/// The driver's tensor-map element type for `t`.
static cu::CUtensorMapDataType tensorMapType(DType t) {
  switch (t) {
  case DType::I4: // moved as bytes, two elements each
  case DType::I8:
    return cu::CU_TENSOR_MAP_DATA_TYPE_UINT8; // moved as bytes
  case DType::F16:
    return cu::CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  case DType::BF16:
    return cu::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  case DType::F32:
    return cu::CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  }
  return cu::CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

static_assert(int(TensorMapInfo::Swizzle::B128) ==
                      int(cu::CU_TENSOR_MAP_SWIZZLE_128B) &&
                  int(TensorMapInfo::L2Promotion::B256) ==
                      int(cu::CU_TENSOR_MAP_L2_PROMOTION_L2_256B),
              "TensorMapInfo's enums follow the driver's order");

/// Where tensor maps point between load and launch: aligned for every
/// element type and swizzle, and never dereferenced.
static constexpr cu::CUdeviceptr kPlaceholderAddress = 1 << 20;

Error Program::encodeTensorMaps(unsigned k, Kernel &kernel) const {
  const KernelInfo &info = man.kernels[k];
  if (info.tensorMaps.size() > kMaxTensorMaps)
    return runtimeError(
        fmt::format("kernel '{}' takes {} tensor maps; mtc launches at most {}",
                    info.name, info.tensorMaps.size(), kMaxTensorMaps));
  for (const TensorMapInfo &t : info.tensorMaps) {
    const BufferInfo &b = man.buffers[kernel.params[t.param]];
    CudaDriver::TensorMapShape shape;
    shape.dtype = tensorMapType(b.dtype);
    shape.dims.assign(t.dims.begin(), t.dims.end());
    shape.strides.assign(t.strides.begin(), t.strides.end());
    shape.box.assign(t.box.begin(), t.box.end());
    shape.swizzle = cu::CUtensorMapSwizzle(t.swizzle);
    shape.l2Promotion = cu::CUtensorMapL2promotion(t.l2Promotion);
    Kernel::Map map{t.param, {}};
    if (Error e = dev.driver().encodeTensorMap(map.encoded, shape,
                                               kPlaceholderAddress))
      return withContext(std::move(e),
                         fmt::format("kernel '{}': the tensor map of parameter "
                                     "{} ('{}', {}: {})",
                                     info.name, t.param, b.name,
                                     dtypeName(b.dtype).str(), t.str()));
    kernel.maps.push_back(map);
  }
  return Error::success();
}

Error Program::launch(unsigned k, ArrayRef<cu::CUdeviceptr> ptrs,
                      cu::CUstream stream) const {
  const Kernel &kernel = kernels[k];
  // The driver reads each parameter through a pointer to its value; both
  // live on the stack (load() bounds their number). Tensor maps are copies
  // of the encoded ones, pointed at this launch's buffers.
  std::array<cu::CUdeviceptr, kMaxParams> values;
  std::array<void *, kMaxParams> params;
  size_t n = kernel.params.size();
  for (size_t i = 0; i < n; ++i) {
    values[i] = ptrs[kernel.params[i]];
    params[i] = &values[i];
  }
  std::array<cu::CUtensorMap, kMaxTensorMaps> maps;
  for (size_t i = 0; i < kernel.maps.size(); ++i) {
    const Kernel::Map &map = kernel.maps[i];
    maps[i] = map.encoded;
    if (Error e =
            dev.driver().replaceTensorMapAddress(maps[i], values[map.param]))
      return withContext(
          std::move(e),
          fmt::format("kernel '{}': cannot point the tensor map of parameter "
                      "{} ('{}') at {:#x}",
                      man.kernels[k].name, map.param,
                      man.buffers[kernel.params[map.param]].name,
                      values[map.param]));
    params[map.param] = &maps[i];
  }
  Error e = dev.driver().launchKernel(kernel.fn.handle, kernel.launch, stream,
                                      n ? params.data() : nullptr);
  if (!e)
    return e;
  return withContext(std::move(e),
                     fmt::format("kernel '{}' failed", man.kernels[k].name));
}

} // namespace mtc
