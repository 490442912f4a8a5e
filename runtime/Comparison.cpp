//===- Comparison.cpp - Outputs against the fp64 reference ----------------===//
//
// compare() and Comparison (declared in Interpreter.h): how far an output of
// the GPU is from the reference interpreter's result.
//
//===----------------------------------------------------------------------===//
#include "runtime/Interpreter.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mtc {

double ulpOf(DType t, double m) {
  // Significand bits (with the implicit one) and the smallest normal
  // exponent of each float type.
  int p, emin;
  switch (t) {
  case DType::BF16:
    p = 8, emin = -126;
    break;
  case DType::F16:
    p = 11, emin = -14;
    break;
  case DType::F32:
    p = 24, emin = -126;
    break;
  case DType::I8:
  case DType::I4:
    return 1;
  }
  int e = emin;
  if (m > 0 && std::isfinite(m))
    e = std::max(emin, std::ilogb(m));
  return std::ldexp(1.0, e - (p - 1));
}

double ulpFloor(DType t) {
  switch (t) {
  case DType::BF16:
    return 0x1p-16;
  case DType::F16:
    return 0x1p-13;
  default:
    return 1;
  }
}

bool Comparison::passed(double ulps) const {
  return nonFinite == 0 && maxUlps <= ulps;
}

Comparison compare(const HostTensor &out, const RefTensor &ref) {
  Comparison c;
  int64_t n = out.numElements();
  double inf = std::numeric_limits<double>::infinity();
  if (llvm::ArrayRef<int64_t>(out.shape) !=
          llvm::ArrayRef<int64_t>(ref.shape) ||
      ref.data.size() != size_t(n) ||
      out.data.size() != size_t(tensorBytes(out.dtype, n))) {
    c.maxAbsErr = c.maxRelErr = c.l2RelErr = c.maxUlps = inf;
    return c;
  }
  for (double r : ref.data)
    if (std::isfinite(r))
      c.maxAbsRef = std::max(c.maxAbsRef, std::fabs(r));
  double floor = c.maxAbsRef * ulpFloor(out.dtype);
  double sumSqErr = 0, sumSqRef = 0;
  int64_t worstFinite = -1, firstBad = -1;
  for (int64_t i = 0; i < n; ++i) {
    double o = out.get(i), r = ref.data[size_t(i)];
    if (!std::isfinite(r) || !std::isfinite(o)) {
      bool same = std::isnan(r) ? std::isnan(o) : o == r;
      if (!same && c.nonFinite++ == 0)
        firstBad = i;
      continue;
    }
    double err = std::fabs(o - r);
    double ulps = err / ulpOf(out.dtype, std::max(std::fabs(r), floor));
    size_t bucket = 0;
    while (bucket < kUlpBuckets.size() && ulps > kUlpBuckets[bucket])
      ++bucket;
    ++c.ulpHistogram[bucket];
    if (worstFinite < 0 || err > c.maxAbsErr) {
      c.maxAbsErr = err;
      worstFinite = i;
    }
    sumSqErr += err * err;
    sumSqRef += r * r;
  }
  c.maxRelErr =
      c.maxAbsErr / std::max(c.maxAbsRef, std::numeric_limits<double>::min());
  c.maxUlps = c.maxAbsErr / ulpOf(out.dtype, c.maxAbsRef);
  if (sumSqRef > 0)
    c.l2RelErr = std::sqrt(sumSqErr) / std::sqrt(sumSqRef);
  else
    c.l2RelErr = sumSqErr > 0 ? inf : 0;
  c.worstIndex = firstBad >= 0 ? firstBad : worstFinite;
  return c;
}

} // namespace mtc
