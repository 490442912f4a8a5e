//===- FakeCuda.cpp - A fake libcuda for the runtime's unit tests ---------===//
//
// Exports the driver entry points mtc resolves, with the same names and
// signatures, so RuntimeTest can point MTC_CUDA_LIBRARY here and run the
// runtime without a GPU. "Device memory" is host memory; kernels do nothing
// except those named *copy, which copy parameter 0 into parameter 1 (up to
// the end of either's allocation). Each
// executed kernel takes one simulated microsecond between events. Graph
// capture records launches, graph replay executes them.
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
//
// The fake also checks what the real driver would reject or what would be
// undefined there (parameters that are not device pointers, synchronous
// calls during stream capture, frees of unknown pointers) and exports
// fakeCuda* functions that let the tests inspect what happened.
//
//===----------------------------------------------------------------------===//
#include "FakeTensorMap.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace mtc::cu;

namespace {

struct FakeFunction {
  std::string name;
  std::vector<size_t> paramSizes; // bytes, as the PTX declares them
  int maxDynamicShared = 0;
};

struct Launch {
  FakeFunction *fn = nullptr;
  std::vector<CUdeviceptr> args;
  unsigned grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  unsigned shared = 0;
};

constexpr int64_t kGiB = int64_t(1) << 30;

std::string mode() {
  const char *m = std::getenv("FAKE_CUDA_MODE");
  return m ? m : "ok";
}

struct State {
  std::map<CUdeviceptr, size_t> allocations;
  int64_t allocated = 0;
  int contextRefs = 0;
  long liveModules = 0, liveStreams = 0, liveEvents = 0, liveGraphs = 0,
       liveExecs = 0;
  long executed = 0;    // kernels executed (launched or replayed)
  long launchCalls = 0; // cuLaunchKernel calls, captured or not
  CUresult sticky = CUDA_SUCCESS;
  Launch last;
  std::set<CUdeviceptr> firstArgs;
  /// What each *copy kernel first read, and how often it later read
  /// something else (rotated input copies must all hold the same data).
  std::map<std::string, std::vector<uint8_t>> copySources;
  long copyMismatches = 0;
} state;

/// The allocation holding [p, p + n), if any.
bool inAllocation(CUdeviceptr p, size_t n) {
  auto it = state.allocations.upper_bound(p);
  if (it == state.allocations.begin())
    return false;
  --it;
  return p >= it->first && p + n <= it->first + it->second;
}

} // namespace

bool fake::inAllocation(CUdeviceptr p, size_t n) {
  return ::inAllocation(p, n);
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

struct CUctx_st {
  int unused;
};
struct CUmod_st {
  std::vector<FakeFunction *> functions;
};
struct CUstream_st {
  bool capturing = false;
  bool invalidated = false;
  CUgraph_st *graph = nullptr;
};
struct CUevent_st {
  long executedAt = 0;
  bool recorded = false;
};
struct CUgraph_st {
  std::vector<Launch> launches;
};
struct CUgraphExec_st {
  std::vector<Launch> launches;
};

namespace {

CUctx_st theContext, otherContext;
/// The context current on this thread, and those pushed over it.
thread_local CUcontext currentContext = nullptr;
thread_local std::vector<CUcontext> contextStack;
std::vector<CUstream_st *> streams;

bool anyCapturing() {
  for (CUstream_st *s : streams)
    if (s->capturing)
      return true;
  return false;
}

/// Synchronous calls during a capture invalidate it, as in the real driver.
CUresult captureViolation() {
  for (CUstream_st *s : streams)
    if (s->capturing)
      s->invalidated = true;
  return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
}

CUresult execute(const Launch &l) {
  ++state.executed;
  state.last = l;
  if (!l.args.empty())
    state.firstArgs.insert(l.args[0]);
  const std::string &name = l.fn->name;
  if (mode() == "fault") {
    const char *bad = std::getenv("FAKE_CUDA_FAULT_KERNEL");
    if (bad && name == bad)
      state.sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
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

/// The .entry names of `ptx` and how many .params each takes.
std::vector<FakeFunction *> parseEntries(const char *ptx) {
  std::vector<FakeFunction *> out;
  std::string s(ptx);
  size_t pos = 0;
  while ((pos = s.find(".entry", pos)) != std::string::npos) {
    pos += 6;
    while (pos < s.size() && std::isspace((unsigned char)s[pos]))
      ++pos;
    size_t start = pos;
    while (pos < s.size() && (std::isalnum((unsigned char)s[pos]) ||
                              s[pos] == '_' || s[pos] == '$'))
      ++pos;
    auto *f = new FakeFunction;
    f->name = s.substr(start, pos - start);
    size_t open = s.find('(', pos), body = s.find('{', pos);
    if (open != std::string::npos && open < body) {
      size_t close = s.find(')', open);
      // ".param .u64 name" or ".param .align 64 .b8 name[128]".
      for (size_t p = s.find(".param", open); p < close;
           p = s.find(".param", p + 6)) {
        size_t end = std::min(s.find_first_of(",)", p), close);
        size_t bracket = s.find('[', p);
        f->paramSizes.push_back(
            bracket < end ? std::strtoul(s.c_str() + bracket + 1, nullptr, 10)
            : s.compare(s.find('.', p + 6), 4, ".u32") == 0 ? 4
                                                            : 8);
      }
    }
    out.push_back(f);
  }
  return out;
}

void writeLog(unsigned numOptions, CUjit_option *options, void **values,
              CUjit_option bufferOption, CUjit_option sizeOption,
              const char *text) {
  char *buf = nullptr;
  size_t size = 0;
  int sizeIndex = -1;
  for (unsigned i = 0; i < numOptions; ++i) {
    if (options[i] == bufferOption)
      buf = static_cast<char *>(values[i]);
    if (options[i] == sizeOption) {
      size = size_t(reinterpret_cast<uintptr_t>(values[i]));
      sizeIndex = int(i);
    }
  }
  if (!buf || size == 0)
    return;
  int n = std::snprintf(buf, size, "%s", text);
  size_t filled = std::min(size, size_t(n) + 1);
  values[sizeIndex] = reinterpret_cast<void *>(uintptr_t(filled));
}

} // namespace

#define FAKE_API extern "C" __attribute__((visibility("default")))

//===----------------------------------------------------------------------===//
// Inspection
//===----------------------------------------------------------------------===//

FAKE_API long fakeCudaExecutedKernels() { return state.executed; }
FAKE_API long fakeCudaLaunchCalls() { return state.launchCalls; }
FAKE_API void fakeCudaLastLaunch(unsigned *grid, unsigned *block,
                                 unsigned *shared) {
  for (int i = 0; i < 3; ++i) {
    grid[i] = state.last.grid[i];
    block[i] = state.last.block[i];
  }
  *shared = state.last.shared;
}
FAKE_API long fakeCudaDistinctFirstArgs() {
  return long(state.firstArgs.size());
}
FAKE_API long fakeCudaCopyMismatches() { return state.copyMismatches; }
FAKE_API void fakeCudaResetStats() {
  state.copySources.clear();
  state.copyMismatches = 0;
  state.executed = 0;
  state.launchCalls = 0;
  state.firstArgs.clear();
  state.last = Launch();
}
/// Allocations, modules, streams, events, graphs and context references
/// still alive.
FAKE_API long fakeCudaLiveObjects() {
  return long(state.allocations.size()) + state.liveModules +
         state.liveStreams + state.liveEvents + state.liveGraphs +
         state.liveExecs + state.contextRefs;
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
    *v = 227 * 1024;
    break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *v = 132;
    break;
  case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
    *v = 50 * 1024 * 1024;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
    *v = 2048;
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *v = 9;
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *v = 0;
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
// Streams and events
//===----------------------------------------------------------------------===//

FAKE_API CUresult cuStreamCreate(CUstream *s, unsigned flags) {
  if (flags > 1)
    return CUDA_ERROR_INVALID_VALUE;
  *s = new CUstream_st;
  streams.push_back(*s);
  ++state.liveStreams;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamDestroy_v2(CUstream s) {
  for (size_t i = 0; i < streams.size(); ++i)
    if (streams[i] == s) {
      streams.erase(streams.begin() + long(i));
      delete s->graph;
      delete s;
      --state.liveStreams;
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_INVALID_HANDLE;
}

FAKE_API CUresult cuStreamSynchronize(CUstream s) {
  // The null stream is the legacy default stream, which waits for all.
  if (!s ? anyCapturing() : s->capturing)
    return captureViolation();
  return state.sticky;
}

FAKE_API CUresult cuEventCreate(CUevent *e, unsigned flags) {
  if (flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  *e = new CUevent_st;
  ++state.liveEvents;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuEventRecord(CUevent e, CUstream s) {
  if (!e || !s)
    return CUDA_ERROR_INVALID_HANDLE;
  if (s->capturing)
    return captureViolation();
  e->executedAt = state.executed;
  e->recorded = true;
  return state.sticky;
}

FAKE_API CUresult cuEventSynchronize(CUevent e) {
  if (!e)
    return CUDA_ERROR_INVALID_HANDLE;
  return state.sticky;
}

FAKE_API CUresult cuEventDestroy_v2(CUevent e) {
  if (!e)
    return CUDA_ERROR_INVALID_HANDLE;
  delete e;
  --state.liveEvents;
  return CUDA_SUCCESS;
}

/// One simulated microsecond per kernel executed between the events.
FAKE_API CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end) {
  if (!start || !end || !start->recorded || !end->recorded)
    return CUDA_ERROR_INVALID_HANDLE;
  *ms = float(end->executedAt - start->executedAt) * 0.001f;
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Modules and functions
//===----------------------------------------------------------------------===//

FAKE_API CUresult cuModuleLoadDataEx(CUmodule *mod, const void *image,
                                     unsigned numOptions, CUjit_option *options,
                                     void **values) {
  if (!mod || !image || (numOptions && (!options || !values)))
    return CUDA_ERROR_INVALID_VALUE;
  const char *ptx = static_cast<const char *>(image);
  if (mode() == "bad_ptx" || !std::strstr(ptx, ".version")) {
    writeLog(numOptions, options, values, CU_JIT_ERROR_LOG_BUFFER,
             CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
             "ptxas application ptx input, line 7; error   : Unknown symbol "
             "'%frob'\nptxas fatal   : Ptx assembly aborted due to errors\n");
    return CUDA_ERROR_INVALID_PTX;
  }
  auto *m = new CUmod_st;
  m->functions = parseEntries(ptx);
  std::string info;
  for (FakeFunction *f : m->functions)
    info += "ptxas info    : Compiling entry function '" + f->name +
            "' for 'sm_90'\nptxas info    : Used 32 registers, used 0 "
            "barriers\n";
  writeLog(numOptions, options, values, CU_JIT_INFO_LOG_BUFFER,
           CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, info.c_str());
  *mod = m;
  ++state.liveModules;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuModuleUnload(CUmodule mod) {
  if (!mod)
    return CUDA_ERROR_INVALID_HANDLE;
  for (FakeFunction *f : mod->functions)
    delete f;
  delete mod;
  --state.liveModules;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuModuleGetFunction(CUfunction *fn, CUmodule mod,
                                      const char *name) {
  if (!mod || !name)
    return CUDA_ERROR_INVALID_VALUE;
  for (FakeFunction *f : mod->functions)
    if (f->name == name) {
      *fn = reinterpret_cast<CUfunction>(f);
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_NOT_FOUND;
}

static FakeFunction *fakeFn(CUfunction f) {
  return reinterpret_cast<FakeFunction *>(f);
}

/// Kernels whose name contains "fat" use 128 registers and can launch at
/// most 256 threads per block.
FAKE_API CUresult cuFuncGetAttribute(int *v, CUfunction_attribute a,
                                     CUfunction f) {
  if (!f)
    return CUDA_ERROR_INVALID_HANDLE;
  bool fat = fakeFn(f)->name.find("fat") != std::string::npos;
  switch (a) {
  case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *v = fat ? 256 : 1024;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_NUM_REGS:
    *v = fat ? 128 : 32;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
  case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES:
  case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES:
    *v = 0;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
    *v = fakeFn(f)->maxDynamicShared;
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

FAKE_API CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a,
                                     int v) {
  if (!f)
    return CUDA_ERROR_INVALID_HANDLE;
  if (a != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES || v < 0 ||
      v > 227 * 1024)
    return CUDA_ERROR_INVALID_VALUE;
  fakeFn(f)->maxDynamicShared = v;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuFuncGetParamInfo(CUfunction f, size_t index, size_t *offset,
                                     size_t *size) {
  if (!f || !offset)
    return CUDA_ERROR_INVALID_VALUE;
  const std::vector<size_t> &sizes = fakeFn(f)->paramSizes;
  if (index >= sizes.size())
    return CUDA_ERROR_INVALID_VALUE;
  *offset = 0;
  for (size_t i = 0; i < index; ++i)
    *offset = (*offset + sizes[i] + 7) / 8 * 8;
  if (size)
    *size = sizes[index];
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n,
                                                              CUfunction f,
                                                              int blockSize,
                                                              size_t) {
  if (!f || blockSize <= 0 || blockSize > 1024)
    return CUDA_ERROR_INVALID_VALUE;
  *n = 2048 / blockSize;
  return CUDA_SUCCESS;
}

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
// Launches and graphs
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

FAKE_API CUresult cuStreamBeginCapture_v2(CUstream s,
                                          CUstreamCaptureMode captureMode) {
  if (!s || s->capturing || captureMode > CU_STREAM_CAPTURE_MODE_RELAXED)
    return CUDA_ERROR_INVALID_VALUE;
  s->capturing = true;
  s->invalidated = false;
  s->graph = new CUgraph_st;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuStreamEndCapture(CUstream s, CUgraph *graph) {
  if (!s || !s->capturing)
    return CUDA_ERROR_INVALID_VALUE;
  s->capturing = false;
  CUgraph_st *g = s->graph;
  s->graph = nullptr;
  if (s->invalidated) {
    delete g;
    *graph = nullptr;
    return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  }
  *graph = g;
  ++state.liveGraphs;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph g,
                                              unsigned long long flags) {
  if (!g || flags)
    return CUDA_ERROR_INVALID_VALUE;
  *exec = new CUgraphExec_st;
  (*exec)->launches = g->launches;
  ++state.liveExecs;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuGraphLaunch(CUgraphExec exec, CUstream s) {
  if (!exec || !s)
    return CUDA_ERROR_INVALID_HANDLE;
  if (s->capturing)
    return CUDA_ERROR_INVALID_VALUE;
  if (state.sticky)
    return state.sticky;
  for (const Launch &l : exec->launches)
    execute(l);
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuGraphExecDestroy(CUgraphExec exec) {
  if (!exec)
    return CUDA_ERROR_INVALID_HANDLE;
  delete exec;
  --state.liveExecs;
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuGraphDestroy(CUgraph g) {
  if (!g)
    return CUDA_ERROR_INVALID_HANDLE;
  delete g;
  --state.liveGraphs;
  return CUDA_SUCCESS;
}
