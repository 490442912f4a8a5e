//===- FakeModules.cpp - Modules and functions of the fake libcuda --------===//
//
// cuModuleLoadDataEx and the calls on its kernels: the fake reads each
// .entry and its .params from the PTX, fills the JIT logs as ptxas would,
// and answers the function attributes the runtime asks for.
//
//===----------------------------------------------------------------------===//
#include "FakeState.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace mtc::cu;
using namespace fake;

namespace {

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
  ++state.modulesLoaded;
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
