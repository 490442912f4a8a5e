//===- HostTensor.h - Tensors in host memory --------------------*- C++ -*-===//
//
// Inputs, outputs and reference results on the host, stored in their element
// type's binary form (so they can be copied to the device as they are), with
// conversions to and from double for the reference interpreter and checks.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_RUNTIME_HOSTTENSOR_H
#define MTC_RUNTIME_HOSTTENSOR_H

#include "dialects/Common/DType.h"

#include <cstdint>
#include <vector>

namespace mtc {

/// Round-to-nearest-even conversions between f32 and the 16-bit formats.
uint16_t floatToBF16(float f);
float bf16ToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float halfToFloat(uint16_t h);

/// `v` rounded to `t` as mtc's convert defines it: floats round to nearest
/// even (through f32); i8 and i4 truncate toward zero and saturate, NaN
/// gives 0.
double roundTo(DType t, double v);

struct HostTensor {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<uint8_t> data;

  HostTensor() = default;
  /// Zero-filled.
  HostTensor(DType dtype, llvm::ArrayRef<int64_t> shape);

  int64_t numElements() const;
  size_t bytes() const { return data.size(); }

  /// Element `i` (row-major flat index) as a double.
  double get(int64_t i) const;
  /// Stores `v` rounded to the element type (see roundTo).
  void set(int64_t i, double v);
};

/// A tensor of `shape` holding `t`'s elements where their indices fit
/// (zeros elsewhere): pads or cuts along any dimension.
HostTensor resized(const HostTensor &t, llvm::ArrayRef<int64_t> shape);

/// Seeded random contents: floats approximately N(0, 1) (a scaled sum of four
/// uniforms) rounded to the type, i8 uniform in [-128, 127], i4 in [-8, 7].
/// Inputs named like scales ("scale", "scales", "*_scale") get positive
/// values in [0.5, 1.5) / 64 so outputs stay in a sane range, and those
/// named like zero points ("zeros", "*_zero") values in [-1, 1) / 16, so
/// that a group-wise dequantized weight (q * scale + zero) is led by q.
void fillRandom(HostTensor &t, uint64_t seed, llvm::StringRef name = "");

} // namespace mtc

#endif // MTC_RUNTIME_HOSTTENSOR_H
