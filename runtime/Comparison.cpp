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

bool Comparison::passed(double tol) const {
  return nonFinite == 0 && maxRelErr <= tol;
}

Comparison compare(const HostTensor &out, const RefTensor &ref) {
  Comparison c;
  int64_t n = out.numElements();
  if (llvm::ArrayRef<int64_t>(out.shape) !=
          llvm::ArrayRef<int64_t>(ref.shape) ||
      ref.data.size() != size_t(n) ||
      out.data.size() != size_t(tensorBytes(out.dtype, n))) {
    double inf = std::numeric_limits<double>::infinity();
    c.maxAbsErr = c.maxRelErr = c.l2RelErr = inf;
    return c;
  }
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
    if (worstFinite < 0 || err > c.maxAbsErr) {
      c.maxAbsErr = err;
      worstFinite = i;
    }
    c.maxAbsRef = std::max(c.maxAbsRef, std::fabs(r));
    sumSqErr += err * err;
    sumSqRef += r * r;
  }
  c.maxRelErr =
      c.maxAbsErr / std::max(c.maxAbsRef, std::numeric_limits<double>::min());
  if (sumSqRef > 0)
    c.l2RelErr = std::sqrt(sumSqErr) / std::sqrt(sumSqRef);
  else
    c.l2RelErr = sumSqErr > 0 ? std::numeric_limits<double>::infinity() : 0;
  c.worstIndex = firstBad >= 0 ? firstBad : worstFinite;
  return c;
}

} // namespace mtc
