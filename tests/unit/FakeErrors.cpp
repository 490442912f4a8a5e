//===- FakeErrors.cpp - Error names and texts of the fake libcuda ---------===//
//
// cuGetErrorName and cuGetErrorString for the CUresults the fake returns,
// with cuda.h's names and the real driver's texts.
//
//===----------------------------------------------------------------------===//
#include "FakeState.h"

using namespace mtc::cu;

namespace {

struct ErrorText {
  CUresult code;
  const char *name, *text;
};

const ErrorText kErrors[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
     "operation failed due to a previous error during capture"},
    {906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT",
     "operation would make the legacy stream depend on a capturing blocking "
     "stream"},
    {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

const ErrorText *find(CUresult error) {
  for (const ErrorText &e : kErrors)
    if (e.code == error)
      return &e;
  return nullptr;
}

} // namespace

FAKE_API CUresult cuGetErrorName(CUresult error, const char **str) {
  const ErrorText *e = find(error);
  *str = e ? e->name : nullptr;
  return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuGetErrorString(CUresult error, const char **str) {
  const ErrorText *e = find(error);
  *str = e ? e->text : nullptr;
  return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
