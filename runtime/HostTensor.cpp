//===- HostTensor.cpp - Tensors in host memory
//-----------------------------===//
#include "runtime/HostTensor.h"

#include <cmath>
#include <cstring>

namespace mtc {

static uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

static float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t floatToBF16(float f) {
  uint32_t u = bitsOf(f);
  if (std::isnan(f))
    return uint16_t((u >> 16) | 0x40); // quiet NaN, sign kept
  u += 0x7FFF + ((u >> 16) & 1);       // round to nearest even
  return uint16_t(u >> 16);
}

float bf16ToFloat(uint16_t h) { return floatOf(uint32_t(h) << 16); }

uint16_t floatToHalf(float f) {
  uint32_t u = bitsOf(f);
  uint32_t sign = (u >> 16) & 0x8000;
  uint32_t absu = u & 0x7FFFFFFF;
  if (absu > 0x7F800000)
    return uint16_t(sign | 0x7E00); // NaN
  if (absu >= 0x477FF000)           // rounds to >= 65520: infinity
    return uint16_t(sign | 0x7C00);
  if (absu < 0x38800000) { // subnormal half (or zero)
    // value = absu as float; half subnormal unit is 2^-24.
    float a = floatOf(absu);
    float scaled = a * 16777216.0f; // exact: a * 2^24
    // round to nearest even integer
    float r = std::nearbyint(scaled);
    return uint16_t(sign | uint32_t(r));
  }
  uint32_t exp = ((absu >> 23) - 127 + 15) << 10;
  uint32_t mant = (absu >> 13) & 0x3FF;
  uint32_t rest = absu & 0x1FFF;
  uint32_t h = exp | mant;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
    ++h; // may carry into the exponent, which is right
  return uint16_t(sign | h);
}

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1F;
  uint32_t mant = h & 0x3FF;
  if (exp == 0) {
    float v = float(mant) / 16777216.0f; // mant * 2^-24
    return sign ? -v : v;
  }
  if (exp == 31)
    return floatOf(sign | 0x7F800000 | (mant << 13));
  return floatOf(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

double roundTo(DType t, double v) {
  switch (t) {
  case DType::F32:
    return double(float(v));
  case DType::BF16:
    return bf16ToFloat(floatToBF16(float(v)));
  case DType::F16:
    return halfToFloat(floatToHalf(float(v)));
  case DType::I8:
    if (std::isnan(v))
      return 0;
    return std::trunc(std::fmin(127.0, std::fmax(-128.0, v)));
  case DType::I4:
    if (std::isnan(v))
      return 0;
    return std::trunc(std::fmin(7.0, std::fmax(-8.0, v)));
  }
  return v;
}

HostTensor::HostTensor(DType dtype, llvm::ArrayRef<int64_t> shape)
    : dtype(dtype), shape(shape.begin(), shape.end()) {
  data.assign(size_t(tensorBytes(dtype, numElements())), 0);
}

int64_t HostTensor::numElements() const {
  return mtc::numElements(shape).value_or(0);
}

double HostTensor::get(int64_t i) const {
  if (dtype == DType::I4) {
    unsigned nibble = (data[size_t(i >> 1)] >> ((i & 1) * 4)) & 0xF;
    return double(int(nibble ^ 8u) - 8);
  }
  const uint8_t *p = data.data() + size_t(i) * dtypeBytes(dtype);
  switch (dtype) {
  case DType::I4:
    break;
  case DType::I8:
    return double(int8_t(*p));
  case DType::F16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return halfToFloat(h);
  }
  case DType::BF16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return bf16ToFloat(h);
  }
  case DType::F32: {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  }
  return 0;
}

void HostTensor::set(int64_t i, double v) {
  if (dtype == DType::I4) {
    unsigned nibble = unsigned(int(roundTo(DType::I4, v))) & 0xF;
    unsigned shift = (i & 1) * 4;
    uint8_t &byte = data[size_t(i >> 1)];
    byte = uint8_t((byte & ~(0xF << shift)) | (nibble << shift));
    return;
  }
  uint8_t *p = data.data() + size_t(i) * dtypeBytes(dtype);
  switch (dtype) {
  case DType::I4:
    return;
  case DType::I8:
    *p = uint8_t(int8_t(roundTo(DType::I8, v)));
    return;
  case DType::F16: {
    uint16_t h = floatToHalf(float(v));
    std::memcpy(p, &h, 2);
    return;
  }
  case DType::BF16: {
    uint16_t h = floatToBF16(float(v));
    std::memcpy(p, &h, 2);
    return;
  }
  case DType::F32: {
    float f = float(v);
    std::memcpy(p, &f, 4);
    return;
  }
  }
}

static bool looksLikeScale(llvm::StringRef name) {
  std::string lower = name.lower();
  llvm::StringRef n(lower);
  return n == "s" || n.contains("scale");
}

static bool looksLikeZero(llvm::StringRef name) {
  return llvm::StringRef(name.lower()).contains("zero");
}

HostTensor resized(const HostTensor &t, llvm::ArrayRef<int64_t> shape) {
  HostTensor out(t.dtype, shape);
  size_t rank = shape.size();
  if (rank != t.shape.size() || out.numElements() == 0 || t.numElements() == 0)
    return out;
  // Copy the overlapping box row by row (the last dimension is contiguous;
  // i4 rows are even, so they start on a byte and copy as bytes).
  Shape common(rank);
  for (size_t i = 0; i < rank; ++i)
    common[i] = std::min(shape[i], t.shape[i]);
  int64_t rowElems = common[rank - 1];
  auto bytes = [&](int64_t elems) {
    return size_t(tensorBytes(t.dtype, elems));
  };
  Shape idx(rank, 0);
  while (true) {
    int64_t src = 0, dst = 0;
    for (size_t i = 0; i < rank; ++i) {
      src = src * t.shape[i] + idx[i];
      dst = dst * shape[i] + idx[i];
    }
    std::memcpy(out.data.data() + bytes(dst), t.data.data() + bytes(src),
                bytes(rowElems));
    int d = int(rank) - 2;
    for (; d >= 0; --d) {
      if (++idx[d] < common[d])
        break;
      idx[d] = 0;
    }
    if (d < 0)
      break;
  }
  return out;
}

namespace {
/// splitmix64: fast, and good enough for test data.
struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1).
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
};
} // namespace

void fillRandom(HostTensor &t, uint64_t seed, llvm::StringRef name) {
  Rng rng{seed * 0x2545F4914F6CDD1Dull + 1};
  int64_t n = t.numElements();
  if (isInteger(t.dtype)) {
    // Eight uniform bytes per draw (sixteen i4).
    int64_t bytes = int64_t(t.data.size());
    for (int64_t i = 0; i < bytes; i += 8) {
      uint64_t r = rng.next();
      for (int64_t j = i; j < std::min(bytes, i + 8); ++j, r >>= 8)
        t.data[size_t(j)] = uint8_t(r);
    }
    return;
  }
  if (looksLikeScale(name)) {
    for (int64_t i = 0; i < n; ++i)
      t.set(i, (0.5 + rng.uniform()) / 64.0);
    return;
  }
  if (looksLikeZero(name)) {
    for (int64_t i = 0; i < n; ++i)
      t.set(i, (rng.uniform() - 0.5) / 8.0);
    return;
  }
  // Approximately N(0, 1): the sum of four uniforms, centred and scaled
  // (variance 4/12 -> 1).
  for (int64_t i = 0; i < n; ++i) {
    double s = rng.uniform() + rng.uniform() + rng.uniform() + rng.uniform();
    t.set(i, (s - 2.0) * 1.7320508075688772);
  }
}

} // namespace mtc
