//===- FakeCuda.cpp - A fake libcuda for the runtime's unit tests ---------===//
//
// Exports the driver entry points mtc resolves, with the same names and
// signatures, so RuntimeTest can point MTC_CUDA_LIBRARY here and run the
// runtime without a GPU. "Device memory" is host memory; kernels do nothing
// except those named *copy, which copy parameter 0 into parameter 1 (up to
// the end of either's allocation). Each executed kernel takes one simulated
// microsecond between events (but see warps_time). Graph capture records
// launches, graph replay executes them.
//
// FAKE_CUDA_MODE steers failures (read on every call):
//   ok (default)   everything works
//   no_device      cuInit fails with CUDA_ERROR_NO_DEVICE
//   zero_devices   cuInit works, cuDeviceGetCount gives 0
//   oom            allocations of 1 GiB or more fail; 1.2 GiB is "free"
//   bad_ptx        cuModuleLoadDataEx fails with a JIT error log
//   launch_fail    cuLaunchKernel fails with CUDA_ERROR_LAUNCH_FAILED
//   fault          launching the kernel named by FAKE_CUDA_FAULT_KERNEL
//                  makes later synchronisations fail (sticky, like a fault)
//   small_gpu      the device is a compute capability 8.9 part with 16
//                  multiprocessors, 4 MiB of L2, 99 KiB of shared memory
//                  per block and 288 GB/s (9001 MHz, 128 bits; the H200's
//                  otherwise)
//   old_gpu        the device has compute capability 7.5
//   scribble       kernels (but mtc's own mtc_*) write one byte value,
//                  derived from their grid and block, over the first 64
//                  bytes of every buffer they are given: two schedules of
//                  one kernel with different launch geometry compute
//                  different "outputs" (the tuner's output check); blocks
//                  of 256 threads write 0xFF (NaN)
//   warps_time     a kernel takes as many simulated microseconds as its
//                  blocks have warps (1 otherwise): the tuner's best is not
//                  its start
// FAKE_CUDA_REPORT=1 prints, at exit, how many modules the process loaded.
//
// The fake also checks what the real driver would reject or what would be
// undefined there (parameters that are not device pointers, synchronous
// calls during stream capture, frees of unknown pointers) and exports
// fakeCuda* functions that let the tests inspect what happened.
//
// This file holds the driver's state, devices, contexts, memory and
// launches; FakeInspect.cpp the functions that tell the tests what
// happened, FakeModules.cpp loads modules,
// FakeStreams.cpp runs streams, events, capture and graphs, FakeErrors.cpp
// names errors and FakeTensorMap.cpp encodes tensor maps (FakeState.h holds
// what they share).
//
//===----------------------------------------------------------------------===//
#include "FakeState.h"
#include "FakeTensorMap.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace mtc::cu;
using namespace fake;

namespace {

constexpr int64_t kGiB = int64_t(1) << 30;

CUctx_st theContext, otherContext;
/// The context current on this thread, and those pushed over it.
thread_local CUcontext currentContext = nullptr;
thread_local std::vector<CUcontext> contextStack;

} // namespace

std::string fake::mode() {
  const char *m = std::getenv("FAKE_CUDA_MODE");
  return m ? m : "ok";
}

State fake::state;

namespace {
/// FAKE_CUDA_REPORT=1: at exit, what the process did to the driver, on
/// stderr (for lit tests of the command-line tool, which cannot call the
/// inspection functions). Defined after `state`, so destroyed before it.
struct ExitReport {
  ~ExitReport() {
    const char *r = std::getenv("FAKE_CUDA_REPORT");
    if (r && std::string(r) == "1")
      std::fprintf(stderr, "fake cuda: %ld modules loaded\n",
                   state.modulesLoaded);
  }
} exitReport;
} // namespace

/// The allocation holding [p, p + n), if any.
bool fake::inAllocation(CUdeviceptr p, size_t n) {
  auto it = state.allocations.upper_bound(p);
  if (it == state.allocations.begin())
    return false;
  --it;
  return p >= it->first && p + n <= it->first + it->second;
}

namespace {

/// Bytes from `p` to the end of the allocation holding it.
size_t remaining(CUdeviceptr p) {
  auto it = state.allocations.upper_bound(p);
  if (it == state.allocations.begin())
    return 0;
  --it;
  return p < it->first + it->second ? it->first + it->second - p : 0;
}

} // namespace

CUresult fake::execute(const Launch &l) {
  ++state.executed;
  state.clock += mode() == "warps_time"
                     ? std::max(1u, l.block[0] * l.block[1] * l.block[2] / 32)
                     : 1;
  state.last = l;
  if (!l.args.empty())
    state.firstArgs.insert(l.args[0]);
  const std::string &name = l.fn->name;
  if (mode() == "fault") {
    const char *bad = std::getenv("FAKE_CUDA_FAULT_KERNEL");
    if (bad && name == bad)
      state.sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
  }
  if (mode() == "scribble" && name.rfind("mtc_", 0) != 0) {
    uint32_t h = 2166136261u; // FNV-1a over the geometry
    for (unsigned d :
         {l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2]})
      h = (h ^ d) * 16777619u;
    // 0x38 to 0x3F: finite in every float type, bytes or pairs of them.
    bool nan = l.block[0] * l.block[1] * l.block[2] == 256;
    uint8_t v = nan ? 0xFF : uint8_t(0x38 + (h >> 29));
    for (CUdeviceptr a : l.args)
      std::memset(reinterpret_cast<void *>(a), v,
                  std::min<size_t>(64, remaining(a)));
  }
  if (name.size() >= 4 && name.compare(name.size() - 4, 4, "copy") == 0 &&
      l.args.size() >= 2) {
    size_t n = std::min(remaining(l.args[0]), remaining(l.args[1]));
    const uint8_t *src = reinterpret_cast<const uint8_t *>(l.args[0]);
    auto seen = state.copySources.find(name);
    if (seen == state.copySources.end())
      state.copySources[name].assign(src, src + n);
    else if (seen->second.size() != n ||
             std::memcmp(seen->second.data(), src, n) != 0)
      ++state.copyMismatches;
    std::memmove(reinterpret_cast<void *>(l.args[1]),
                 reinterpret_cast<const void *>(l.args[0]), n);
  }
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Initialisation, devices, contexts (errors: FakeErrors.cpp)
//===----------------------------------------------------------------------===//

FAKE_API CUresult cuInit(unsigned flags) {
  if (flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (mode() == "no_device")
    return CUDA_ERROR_NO_DEVICE;
  state.sticky = CUDA_SUCCESS; // a fresh "process" for each test
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuDriverGetVersion(int *v) {
  *v = 13000;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuDeviceGetCount(int *count) {
  *count = mode() == "zero_devices" ? 0 : 1;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuDeviceGet(CUdevice *dev, int ordinal) {
  if (ordinal != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  *dev = 0;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuDeviceGetName(char *name, int len, CUdevice dev) {
  if (dev != 0 || len <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  std::snprintf(name, size_t(len), "%s", "Fake NVIDIA H200");
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a,
                                       CUdevice dev) {
  if (dev != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  switch (a) {
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *v = 1024;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
    *v = 1024;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
    *v = 64;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
    *v = 2147483647;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
    *v = 65535;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
    *v = 48 * 1024;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *v = (mode() == "small_gpu" ? 99 : 227) * 1024;
    break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *v = mode() == "small_gpu" ? 16 : 132;
    break;
  case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: // kHz
    *v = mode() == "small_gpu" ? 9001000 : 3201000;
    break;
  case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
    *v = mode() == "small_gpu" ? 128 : 6144;
    break;
  case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
    *v = (mode() == "small_gpu" ? 4 : 50) * 1024 * 1024;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
    *v = 2048;
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *v = mode() == "small_gpu" ? 8 : mode() == "old_gpu" ? 7 : 9;
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *v = mode() == "small_gpu" ? 9 : mode() == "old_gpu" ? 5 : 0;
    break;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

static int64_t totalMemory() { return mode() == "oom" ? 2 * kGiB : 140 * kGiB; }

FAKE_API CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev) {
  if (dev != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  *bytes = size_t(totalMemory());
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev) {
  if (dev != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  ++state.contextRefs;
  *ctx = &theContext;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  if (dev != 0 || state.contextRefs == 0)
    return CUDA_ERROR_INVALID_VALUE;
  --state.contextRefs;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxSetCurrent(CUcontext ctx) {
  if (ctx != &theContext && ctx != &otherContext && ctx)
    return CUDA_ERROR_INVALID_VALUE;
  currentContext = ctx;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxGetCurrent(CUcontext *ctx) {
  *ctx = currentContext;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxGetDevice(CUdevice *dev) {
  if (!currentContext)
    return CUDA_ERROR_INVALID_CONTEXT;
  *dev = 0;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
  if (ctx != &theContext && ctx != &otherContext)
    return CUDA_ERROR_INVALID_VALUE;
  contextStack.push_back(currentContext);
  currentContext = ctx;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxPopCurrent_v2(CUcontext *ctx) {
  if (contextStack.empty())
    return CUDA_ERROR_INVALID_CONTEXT;
  if (ctx)
    *ctx = currentContext;
  currentContext = contextStack.back();
  contextStack.pop_back();
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxSynchronize() {
  if (!currentContext)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (anyCapturing())
    return captureViolation();
  return state.sticky;
}

/// Makes no context (0), the device's primary context (1) or another
/// context (2, as a framework's own might be) current on this thread.
FAKE_API void fakeCudaSetCurrentContext(int which) {
  currentContext = which == 1   ? &theContext
                   : which == 2 ? &otherContext
                                : nullptr;
  contextStack.clear();
}
/// Contexts pushed and not yet popped.
FAKE_API long fakeCudaPushedContexts() { return long(contextStack.size()); }

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

FAKE_API CUresult cuMemGetInfo_v2(size_t *freeBytes, size_t *totalBytes) {
  int64_t total = totalMemory();
  int64_t avail = mode() == "oom" ? int64_t(1.2 * double(kGiB)) : total;
  *freeBytes = size_t(std::max<int64_t>(0, avail - state.allocated));
  *totalBytes = size_t(total);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
  if (anyCapturing())
    return captureViolation();
  if (bytes == 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (mode() == "oom" && int64_t(bytes) >= kGiB)
    return CUDA_ERROR_OUT_OF_MEMORY;
  void *mem = std::malloc(bytes);
  if (!mem)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *p = CUdeviceptr(reinterpret_cast<uintptr_t>(mem));
  state.allocations[*p] = bytes;
  state.allocated += int64_t(bytes);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemFree_v2(CUdeviceptr p) {
  auto it = state.allocations.find(p);
  if (it == state.allocations.end())
    return CUDA_ERROR_INVALID_VALUE;
  state.allocated -= int64_t(it->second);
  state.allocations.erase(it);
  std::free(reinterpret_cast<void *>(p));
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) {
  if (anyCapturing())
    return captureViolation();
  if (!inAllocation(dst, n))
    return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(reinterpret_cast<void *>(dst), src, n);
  return state.sticky;
}

FAKE_API CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) {
  if (anyCapturing())
    return captureViolation();
  if (!inAllocation(src, n))
    return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(dst, reinterpret_cast<const void *>(src), n);
  return state.sticky;
}

FAKE_API CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  if (anyCapturing())
    return captureViolation();
  if (!inAllocation(dst, n) || !inAllocation(src, n))
    return CUDA_ERROR_INVALID_VALUE;
  std::memmove(reinterpret_cast<void *>(dst),
               reinterpret_cast<const void *>(src), n);
  return state.sticky;
}

FAKE_API CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char v, size_t n) {
  if (anyCapturing())
    return captureViolation();
  if (!inAllocation(dst, n))
    return CUDA_ERROR_INVALID_VALUE;
  std::memset(reinterpret_cast<void *>(dst), v, n);
  return state.sticky;
}

//===----------------------------------------------------------------------===//
// Launches (capture and graphs: FakeStreams.cpp)
//===----------------------------------------------------------------------===//

FAKE_API CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy,
                                 unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned shared, CUstream s,
                                 void **params, void **extra) {
  ++state.launchCalls;
  if (state.sticky)
    return state.sticky;
  if (mode() == "launch_fail")
    return CUDA_ERROR_LAUNCH_FAILED;
  if (!f || extra)
    return CUDA_ERROR_INVALID_VALUE;
  // Kernels run in the current context, which must be the module's.
  if (currentContext != &theContext)
    return CUDA_ERROR_INVALID_CONTEXT;
  // The legacy default stream may not depend on a capturing stream.
  if (!s && anyCapturing())
    return captureViolation();
  FakeFunction *fn = fakeFn(f);
  if (!gx || !gy || !gz || !bx || !by || !bz || uint64_t(bx) * by * bz > 1024)
    return CUDA_ERROR_INVALID_VALUE;
  if (shared > 48 * 1024 && int(shared) > fn->maxDynamicShared)
    return CUDA_ERROR_INVALID_VALUE;
  if (!fn->paramSizes.empty() && !params)
    return CUDA_ERROR_INVALID_VALUE;
  Launch l;
  l.fn = fn;
  l.grid[0] = gx, l.grid[1] = gy, l.grid[2] = gz;
  l.block[0] = bx, l.block[1] = by, l.block[2] = bz;
  l.shared = shared;
  for (size_t i = 0; i < fn->paramSizes.size(); ++i) {
    // A tensor map must come from cuTensorMapEncodeTiled and address an
    // allocation; a launch records its address.
    if (fn->paramSizes[i] == sizeof(CUtensorMap)) {
      CUdeviceptr a = fake::tensorMapAddress(params[i]);
      if (!a)
        return CUDA_ERROR_INVALID_VALUE;
      l.args.push_back(a);
      continue;
    }
    CUdeviceptr v = *static_cast<CUdeviceptr *>(params[i]);
    // mtc passes device pointers, except to its own mtc_* kernels.
    if (fn->name.rfind("mtc_", 0) != 0 && !inAllocation(v, 1))
      return CUDA_ERROR_INVALID_VALUE;
    l.args.push_back(v);
  }
  if (s && s->capturing) {
    s->graph->launches.push_back(l);
    return CUDA_SUCCESS;
  }
  return execute(l);
}

/// Programmatic stream serialization is the one attribute mtc sets; the
/// launch itself is cuLaunchKernel's.
FAKE_API CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f,
                                   void **params, void **extra) {
  if (!c || (c->numAttrs && !c->attrs))
    return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < c->numAttrs; ++i)
    if (c->attrs[i].id !=
            CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION ||
        c->attrs[i].value.programmaticStreamSerializationAllowed != 1)
      return CUDA_ERROR_INVALID_VALUE;
  CUresult r = cuLaunchKernel(f, c->gridDimX, c->gridDimY, c->gridDimZ,
                              c->blockDimX, c->blockDimY, c->blockDimZ,
                              c->sharedMemBytes, c->hStream, params, extra);
  if (r == CUDA_SUCCESS && c->numAttrs)
    ++state.programmaticLaunches;
  return r;
}
