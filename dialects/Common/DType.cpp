//===- DType.cpp - Element types and tensor limits ------------------------===//
//
// See DType.h: the part that needs no MLIR.
//
//===----------------------------------------------------------------------===//
#include "dialects/Common/DType.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>

using namespace llvm;

namespace mtc {

std::optional<DType> parseDType(StringRef name) {
  return StringSwitch<std::optional<DType>>(name)
      .Case("i4", DType::I4)
      .Case("i8", DType::I8)
      .Case("f16", DType::F16)
      .Case("bf16", DType::BF16)
      .Case("f32", DType::F32)
      .Default(std::nullopt);
}

StringRef dtypeName(DType t) {
  switch (t) {
  case DType::I4:
    return "i4";
  case DType::I8:
    return "i8";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F32:
    return "f32";
  }
  return "?";
}

StringRef dtypeNames() { return "i4, i8, f16, bf16, f32"; }

unsigned dtypeBits(DType t) {
  switch (t) {
  case DType::I4:
    return 4;
  case DType::I8:
    return 8;
  case DType::F16:
  case DType::BF16:
    return 16;
  case DType::F32:
    return 32;
  }
  return 0;
}

unsigned dtypeBytes(DType t) {
  assert(t != DType::I4 && "i4 elements are half a byte: use tensorBytes");
  return dtypeBits(t) / 8;
}

int64_t tensorBytes(DType t, int64_t elements) {
  return (elements * dtypeBits(t) + 7) / 8;
}

std::optional<int64_t> numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d <= 0 || d > kMaxElements)
      return std::nullopt;
    // n <= 2^40 and d <= 2^40, so the product fits in 128 bits; check it
    // against the limit before multiplying in 64 bits.
    if (n > kMaxElements / d)
      return std::nullopt;
    n *= d;
  }
  return n;
}

std::string formatShape(ArrayRef<int64_t> shape) {
  std::string s;
  raw_string_ostream os(s);
  os << "[";
  interleaveComma(shape, os);
  os << "]";
  return s;
}

bool checkShape(ArrayRef<int64_t> shape, std::string &err) {
  for (int64_t d : shape) {
    if (d <= 0) {
      err = "dimensions must be positive, got " + formatShape(shape);
      return false;
    }
  }
  if (!numElements(shape)) {
    err = "tensor of shape " + formatShape(shape) +
          " is too large (more than 2^40 elements)";
    return false;
  }
  return true;
}

bool checkTensorType(DType t, ArrayRef<int64_t> shape, std::string &err) {
  if (!checkShape(shape, err))
    return false;
  if (t == DType::I4 && !shape.empty() && shape.back() % 2) {
    err = "i4 tensors pack two elements a byte along the last dimension, "
          "which must be even; got " +
          formatShape(shape);
    return false;
  }
  return true;
}

} // namespace mtc
