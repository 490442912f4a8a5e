//===- FakeTensorMap.h - Tensor maps in the fake libcuda --------*- C++ -*-===//
//
// What FakeCuda.cpp and FakeTensorMap.cpp share: the fake's own layout of a
// CUtensorMap (the real one is opaque), so that a launch can check that a
// tensor-map parameter was encoded by cuTensorMapEncodeTiled and addresses
// an allocation, and the allocation check itself.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_TESTS_UNIT_FAKETENSORMAP_H
#define MTC_TESTS_UNIT_FAKETENSORMAP_H

#include "runtime/CudaDriver.h"

#include <cstdint>

namespace fake {

/// How the fake fills the 128 bytes of a CUtensorMap.
struct TensorMapLayout {
  static constexpr uint64_t kMagic = 0x70614d726f736e54; // "TnsorMap"
  uint64_t magic;
  uint64_t address;
  uint32_t rank, elementBytes;
  uint64_t dims[5];
  uint64_t strides[4];
};
static_assert(sizeof(TensorMapLayout) <= sizeof(mtc::cu::CUtensorMap));

/// Whether [p, p + n) lies in one allocation (FakeCuda.cpp).
bool inAllocation(mtc::cu::CUdeviceptr p, size_t n);

/// The global address of an encoded tensor map whose whole view lies in
/// an allocation, or 0 (not encoded by the fake, or out of bounds).
mtc::cu::CUdeviceptr tensorMapAddress(const void *map);

} // namespace fake

#endif // MTC_TESTS_UNIT_FAKETENSORMAP_H
