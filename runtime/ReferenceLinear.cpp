//===- ReferenceLinear.cpp - The fp64 reference's blocked product ---------===//
//
// linearKernel (ReferenceKernels.h): out[R, N] = x[R, K] * w[N, K]^T in
// double, blocked for the caches and spread over threads, with every sum in
// increasing k order so that results do not depend on the thread count.
//
//===----------------------------------------------------------------------===//
#include "runtime/ReferenceKernels.h"

namespace mtc {
namespace ref {

// Blocking of out[R, N] = x[R, K] * w[N, K]^T. A task computes a block of
// kMC rows by kNB columns; it decodes its kNB rows of w once into panels of
// kNR columns ([k][kNR] each) and sweeps K in slices of kKC, keeping a
// kMR x kNR tile of sums in registers. The task grid does not depend on the
// thread count, and every sum runs over k in increasing order, so the results
// are the same for every thread count.
constexpr int64_t kMR = 4, kNR = 4, kNB = 64, kMC = 64, kKC = 256;

/// Two doubles; GCC and Clang lower arithmetic on it to SIMD instructions.
typedef double Double2 __attribute__((vector_size(16)));

/// c[i][j] += sum over k < kLen of x[i][k] * w[k][j] (k increasing) for the
/// full kMR x kNR tile.
static inline void tileFull(const double *x, int64_t ldx, const double *w,
                            int64_t kLen, double *c, int64_t ldc) {
  constexpr int64_t kV = kNR / 2;
  Double2 acc[kMR][kV];
  for (int64_t i = 0; i < kMR; ++i)
    for (int64_t j = 0; j < kV; ++j)
      std::memcpy(&acc[i][j], c + i * ldc + 2 * j, sizeof(Double2));
  for (int64_t k = 0; k < kLen; ++k) {
    Double2 wk[kV];
    std::memcpy(wk, w + k * kNR, sizeof(wk));
    for (int64_t i = 0; i < kMR; ++i) {
      double xv = x[i * ldx + k];
      Double2 xb = {xv, xv};
      for (int64_t j = 0; j < kV; ++j)
        acc[i][j] += xb * wk[j];
    }
  }
  for (int64_t i = 0; i < kMR; ++i)
    for (int64_t j = 0; j < kV; ++j)
      std::memcpy(c + i * ldc + 2 * j, &acc[i][j], sizeof(Double2));
}

/// The same for an mr x nr corner tile.
static inline void tilePartial(const double *x, int64_t ldx, const double *w,
                               int64_t kLen, double *c, int64_t ldc, int64_t mr,
                               int64_t nr) {
  for (int64_t i = 0; i < mr; ++i)
    for (int64_t j = 0; j < nr; ++j) {
      double acc = c[i * ldc + j];
      for (int64_t k = 0; k < kLen; ++k)
        acc += x[i * ldx + k] * w[k * kNR + j];
      c[i * ldc + j] = acc;
    }
}

/// One task: rows [m0, m0 + mm) and columns [n0, n0 + nn) of `out`.
/// `panels` holds K * kNB doubles.
static void linearBlock(const double *x, int64_t K, const TensorView &w,
                        int64_t sN, int64_t sK, int64_t n0, int64_t nn,
                        int64_t m0, int64_t mm, double *out, int64_t N,
                        double *panels) {
  int64_t numPanels = (nn + kNR - 1) / kNR;
  withReader(w, [&](const auto &read) {
    for (int64_t p = 0; p < numPanels; ++p) {
      double *panel = panels + p * K * kNR;
      for (int64_t j = 0; j < kNR; ++j) {
        int64_t n = p * kNR + j;
        if (n >= nn) {
          for (int64_t k = 0; k < K; ++k)
            panel[k * kNR + j] = 0;
          continue;
        }
        int64_t base = (n0 + n) * sN;
        for (int64_t k = 0; k < K; ++k)
          panel[k * kNR + j] = read(base + k * sK);
      }
    }
  });
  for (int64_t k0 = 0; k0 < K; k0 += kKC) {
    int64_t kLen = std::min(kKC, K - k0);
    for (int64_t p = 0; p < numPanels; ++p) {
      const double *wp = panels + p * K * kNR + k0 * kNR;
      int64_t nr = std::min(kNR, nn - p * kNR);
      for (int64_t m = m0; m < m0 + mm; m += kMR) {
        int64_t mr = std::min(kMR, m0 + mm - m);
        const double *xp = x + m * K + k0;
        double *c = out + m * N + n0 + p * kNR;
        if (mr == kMR && nr == kNR)
          tileFull(xp, K, wp, kLen, c, N);
        else
          tilePartial(xp, K, wp, kLen, c, N, mr, nr);
      }
    }
  }
}

std::vector<double> linearKernel(const double *x, int64_t R, int64_t K,
                                 const TensorView &w, int64_t N, int64_t sN,
                                 int64_t sK, unsigned threads) {
  std::vector<double> out(size_t(R * N), 0.0);
  int64_t nBlocks = (N + kNB - 1) / kNB, mBlocks = (R + kMC - 1) / kMC;
  int64_t tasks = nBlocks * mBlocks;
  std::vector<std::vector<double>> panels(workerCount(tasks, threads));
  parallelFor(tasks, threads, [&](int64_t t, unsigned worker) {
    // Consecutive tasks share their rows of w (kept warm in the shared cache).
    int64_t nb = t / mBlocks, mb = t % mBlocks;
    std::vector<double> &buf = panels[worker];
    if (buf.empty())
      buf.resize(size_t(K * kNB));
    linearBlock(x, K, w, sN, sK, nb * kNB, std::min(kNB, N - nb * kNB),
                mb * kMC, std::min(kMC, R - mb * kMC), out.data(), N,
                buf.data());
  });
  return out;
}

} // namespace ref
} // namespace mtc
