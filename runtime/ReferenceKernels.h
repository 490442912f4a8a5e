//===- ReferenceKernels.h - Below the fp64 reference's ops ----*- C++ -*-===//
//
// The pieces of the reference interpreter (Interpreter.cpp) below the ops: a
// value of the graph is a TensorView, a shape and element strides over either
// an input's encoded elements or a materialized buffer of doubles; element
// readers decode the storage; gather() copies a range of a view (broadcast
// to a shape) into doubles; parallelFor() spreads tasks over threads; and
// linearKernel() is the blocked, multi-threaded product that linear and
// matmul share.
//
// Internal to the interpreter: nothing outside runtime/ includes this.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_RUNTIME_REFERENCEKERNELS_H
#define MTC_RUNTIME_REFERENCEKERNELS_H

#include "runtime/HostTensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

namespace mtc {
namespace ref {

//===----------------------------------------------------------------------===//
// Tensor views
//===----------------------------------------------------------------------===//

using Strides = llvm::SmallVector<int64_t, 4>;

/// A value of the graph: element (i_0, ..., i_r-1) of `shape` is element
/// sum(i_d * strides[d]) of the storage, which is either an input's encoded
/// elements (`encoded`, not owned) or materialized doubles (`doubles`).
struct TensorView {
  DType dtype = DType::F32; ///< The value's element type in the graph.
  Shape shape;
  Strides strides;
  const HostTensor *encoded = nullptr;
  std::shared_ptr<const std::vector<double>> doubles;
};

Strides rowMajorStrides(llvm::ArrayRef<int64_t> shape);
int64_t product(llvm::ArrayRef<int64_t> shape);

/// A view of input `t`'s encoded elements (`t` must outlive it).
TensorView viewOf(const HostTensor &t);
/// A row-major view of `data`.
TensorView viewOf(DType dtype, llvm::ArrayRef<int64_t> shape,
                  std::vector<double> data);

/// The strides that read `t` as if broadcast to `shape` (numpy rules; the
/// shapes are known to be compatible).
Strides broadcastStrides(const TensorView &t, llvm::ArrayRef<int64_t> shape);

//===----------------------------------------------------------------------===//
// Element readers: the same decoding as HostTensor::get, with the switch on
// the element type hoisted out of the loops.
//===----------------------------------------------------------------------===//

struct DoubleReader {
  const double *p;
  double operator()(int64_t i) const { return p[i]; }
};
struct I8Reader {
  const uint8_t *p;
  double operator()(int64_t i) const { return double(int8_t(p[i])); }
};
struct I4Reader {
  const uint8_t *p;
  double operator()(int64_t i) const {
    unsigned nibble = (p[i >> 1] >> ((i & 1) * 4)) & 0xF;
    return double(int(nibble ^ 8u) - 8); // two's complement
  }
};
struct F16Reader {
  const uint8_t *p;
  double operator()(int64_t i) const {
    uint16_t h;
    std::memcpy(&h, p + 2 * i, 2);
    return halfToFloat(h);
  }
};
struct BF16Reader {
  const uint8_t *p;
  double operator()(int64_t i) const {
    uint16_t h;
    std::memcpy(&h, p + 2 * i, 2);
    return bf16ToFloat(h);
  }
};
struct F32Reader {
  const uint8_t *p;
  double operator()(int64_t i) const {
    float f;
    std::memcpy(&f, p + 4 * i, 4);
    return f;
  }
};

/// Calls `fn` with the reader of `t`'s storage.
template <typename Fn> void withReader(const TensorView &t, Fn &&fn) {
  if (t.doubles) {
    fn(DoubleReader{t.doubles->data()});
    return;
  }
  const uint8_t *p = t.encoded->data.data();
  switch (t.encoded->dtype) {
  case DType::I4:
    fn(I4Reader{p});
    return;
  case DType::I8:
    fn(I8Reader{p});
    return;
  case DType::F16:
    fn(F16Reader{p});
    return;
  case DType::BF16:
    fn(BF16Reader{p});
    return;
  case DType::F32:
    fn(F32Reader{p});
    return;
  }
}

/// Row-major elements [begin, end) of `t` broadcast to `shape`, to `dst`.
void gather(const TensorView &t, llvm::ArrayRef<int64_t> shape, int64_t begin,
            int64_t end, double *dst);

//===----------------------------------------------------------------------===//
// Threads and materializing
//===----------------------------------------------------------------------===//

/// Number of threads that run `numTasks` tasks.
unsigned workerCount(int64_t numTasks, unsigned threads);

/// Runs fn(task, worker) for every task in [0, numTasks) on
/// workerCount(numTasks, threads) threads; each task runs on one thread.
void parallelFor(int64_t numTasks, unsigned threads,
                 llvm::function_ref<void(int64_t, unsigned)> fn);

/// Elements per task when materializing.
constexpr int64_t kChunk = 1 << 14;

/// Materializes `n` elements: fn(begin, end, dst) fills elements [begin, end)
/// of the result; chunks run in parallel.
template <typename Fn>
std::vector<double> materializeChunks(int64_t n, unsigned threads, Fn fn) {
  std::vector<double> out(static_cast<size_t>(n));
  int64_t tasks = (n + kChunk - 1) / kChunk;
  parallelFor(tasks, threads, [&](int64_t t, unsigned) {
    int64_t begin = t * kChunk, end = std::min(n, begin + kChunk);
    fn(begin, end, out.data() + begin);
  });
  return out;
}

/// The elements of `t`, row-major.
std::vector<double> materialize(const TensorView &t, unsigned threads);

//===----------------------------------------------------------------------===//
// linear / matmul
//===----------------------------------------------------------------------===//

/// out[r][n] = sum over k of x[r][k] * w(n, k), where x is R x K row-major
/// and w(n, k) is element n * sN + k * sK of `w`'s storage. Every sum runs
/// over k in increasing order, so the result does not depend on `threads`.
std::vector<double> linearKernel(const double *x, int64_t R, int64_t K,
                                 const TensorView &w, int64_t N, int64_t sN,
                                 int64_t sK, unsigned threads);

} // namespace ref
} // namespace mtc

#endif // MTC_RUNTIME_REFERENCEKERNELS_H
