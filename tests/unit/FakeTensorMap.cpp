//===- FakeTensorMap.cpp - Tensor maps in the fake libcuda ----------------===//
//
// cuTensorMapEncodeTiled and cuTensorMapReplaceAddress, checking what CUDA
// documents for tiled maps without interleave.
//
//===----------------------------------------------------------------------===//
#include "FakeTensorMap.h"
#include "FakeState.h"

#include <cstring>

using namespace mtc::cu;

namespace fake {

namespace {

unsigned elementBytes(CUtensorMapDataType t) {
  switch (t) {
  case CU_TENSOR_MAP_DATA_TYPE_UINT8:
    return 1;
  case CU_TENSOR_MAP_DATA_TYPE_UINT16:
  case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
  case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16:
    return 2;
  case CU_TENSOR_MAP_DATA_TYPE_UINT32:
  case CU_TENSOR_MAP_DATA_TYPE_INT32:
  case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    return 4;
  case CU_TENSOR_MAP_DATA_TYPE_UINT64:
  case CU_TENSOR_MAP_DATA_TYPE_INT64:
  case CU_TENSOR_MAP_DATA_TYPE_FLOAT64:
    return 8;
  }
  return 0;
}

} // namespace

CUdeviceptr tensorMapAddress(const void *map) {
  TensorMapLayout t;
  std::memcpy(&t, map, sizeof(t));
  if (t.magic != TensorMapLayout::kMagic || t.rank < 1 || t.rank > 5)
    return 0;
  uint64_t end = t.dims[0] * t.elementBytes;
  for (unsigned i = 1; i < t.rank; ++i)
    end += (t.dims[i] - 1) * t.strides[i - 1];
  return inAllocation(t.address, end) ? t.address : 0;
}

} // namespace fake

using fake::TensorMapLayout;

FAKE_API CUresult cuTensorMapEncodeTiled(
    CUtensorMap *map, CUtensorMapDataType type, unsigned rank, void *address,
    const unsigned long long *dims, const unsigned long long *strides,
    const unsigned *box, const unsigned *elementStrides,
    CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
    CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  unsigned eb = fake::elementBytes(type);
  uintptr_t addr = reinterpret_cast<uintptr_t>(address);
  if (!map || reinterpret_cast<uintptr_t>(map) % 64 || !eb || rank < 1 ||
      rank > 5 || addr % 16 || interleave != CU_TENSOR_MAP_INTERLEAVE_NONE ||
      swizzle > CU_TENSOR_MAP_SWIZZLE_128B ||
      l2 > CU_TENSOR_MAP_L2_PROMOTION_L2_256B ||
      oob != CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i < rank; ++i)
    if (!dims[i] || dims[i] > (1ull << 32) || !box[i] || box[i] > 256 ||
        !elementStrides[i] || elementStrides[i] > 8)
      return CUDA_ERROR_INVALID_VALUE;
  for (unsigned i = 0; i + 1 < rank; ++i)
    if (strides[i] % 16 || strides[i] >= (1ull << 40))
      return CUDA_ERROR_INVALID_VALUE;
  unsigned inner = box[0] * eb;
  static const unsigned span[] = {0, 32, 64, 128};
  if (inner % 16 || (swizzle && inner > span[swizzle]))
    return CUDA_ERROR_INVALID_VALUE;
  TensorMapLayout t{};
  t.magic = TensorMapLayout::kMagic;
  t.address = addr;
  t.rank = rank;
  t.elementBytes = eb;
  for (unsigned i = 0; i < rank; ++i)
    t.dims[i] = dims[i];
  for (unsigned i = 0; i + 1 < rank; ++i)
    t.strides[i] = strides[i];
  std::memset(map, 0, sizeof(*map));
  std::memcpy(map, &t, sizeof(t));
  return CUDA_SUCCESS;
}

FAKE_API CUresult cuTensorMapReplaceAddress(CUtensorMap *map, void *address) {
  TensorMapLayout t;
  if (!map || reinterpret_cast<uintptr_t>(map) % 64)
    return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(&t, map, sizeof(t));
  if (t.magic != TensorMapLayout::kMagic ||
      reinterpret_cast<uintptr_t>(address) % 16)
    return CUDA_ERROR_INVALID_VALUE;
  t.address = reinterpret_cast<uintptr_t>(address);
  std::memcpy(map, &t, sizeof(t));
  return CUDA_SUCCESS;
}
