//===- ManifestParts.h - Manifest pieces for the runtime tests -*- C++ -*-===//
//
// Buffers and kernels of hand-written manifests, shared by the tests that
// run manifests on the fake driver (RuntimeFixture.h, CApiFixture.h,
// GraphRunnerTest.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef MTC_TESTS_UNIT_MANIFESTPARTS_H
#define MTC_TESTS_UNIT_MANIFESTPARTS_H

#include "runtime/Manifest.h"

#include <string>
#include <vector>

namespace mtc::test {

inline BufferInfo buffer(llvm::StringRef name, BufferInfo::Role role, DType dt,
                         llvm::ArrayRef<int64_t> shape) {
  BufferInfo b;
  b.name = name.str();
  b.role = role;
  b.dtype = dt;
  b.shape.assign(shape.begin(), shape.end());
  return b;
}

/// An elementwise kernel on a 1-D grid.
inline KernelInfo kernel(llvm::StringRef name, std::vector<std::string> params,
                         int64_t gridX = 4, int64_t blockX = 128,
                         int64_t shared = 0) {
  KernelInfo k;
  k.name = name.str();
  k.kind = "elementwise";
  k.params = std::move(params);
  k.grid = {gridX, 1, 1};
  k.block = {blockX, 1, 1};
  k.sharedBytes = shared;
  return k;
}

} // namespace mtc::test

#endif // MTC_TESTS_UNIT_MANIFESTPARTS_H
