//===- ReferenceKernels.cpp - Views and threads of the fp64 reference -----===//
//
// See ReferenceKernels.h. The blocked linear kernel is in ReferenceLinear.cpp.
//
//===----------------------------------------------------------------------===//
#include "runtime/ReferenceKernels.h"

#include <atomic>
#include <thread>

using llvm::ArrayRef;

namespace mtc {
namespace ref {

//===----------------------------------------------------------------------===//
// Tensor views
//===----------------------------------------------------------------------===//

Strides rowMajorStrides(ArrayRef<int64_t> shape) {
  Strides s(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    s[d] = stride;
    stride *= shape[d];
  }
  return s;
}

int64_t product(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

TensorView viewOf(const HostTensor &t) {
  TensorView v;
  v.dtype = t.dtype;
  v.shape = t.shape;
  v.strides = rowMajorStrides(t.shape);
  v.encoded = &t;
  return v;
}

TensorView viewOf(DType dtype, ArrayRef<int64_t> shape,
                  std::vector<double> data) {
  TensorView v;
  v.dtype = dtype;
  v.shape.assign(shape.begin(), shape.end());
  v.strides = rowMajorStrides(shape);
  v.doubles = std::make_shared<const std::vector<double>>(std::move(data));
  return v;
}

Strides broadcastStrides(const TensorView &t, ArrayRef<int64_t> shape) {
  Strides s(shape.size(), 0);
  size_t lead = shape.size() - t.shape.size();
  for (size_t d = 0; d < t.shape.size(); ++d)
    s[lead + d] = t.shape[d] == 1 ? 0 : t.strides[d];
  return s;
}

/// Writes the row-major elements [begin, end) of the index space `shape`,
/// read through `strides`, to `dst`.
template <typename Reader>
static void gatherRange(const Reader &read, ArrayRef<int64_t> shape,
                        ArrayRef<int64_t> strides, int64_t begin, int64_t end,
                        double *dst) {
  size_t last = shape.size() - 1;
  Strides idx(shape.size());
  int64_t offset = 0, rest = begin;
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = rest % shape[d];
    rest /= shape[d];
    offset += idx[d] * strides[d];
  }
  for (int64_t i = begin; i < end;) {
    int64_t run = std::min(shape[last] - idx[last], end - i);
    int64_t o = offset;
    for (int64_t j = 0; j < run; ++j, o += strides[last])
      *dst++ = read(o);
    i += run;
    idx[last] += run;
    offset += run * strides[last];
    for (size_t d = last; d > 0 && idx[d] == shape[d]; --d) {
      offset += strides[d - 1] - idx[d] * strides[d];
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}

void gather(const TensorView &t, ArrayRef<int64_t> shape, int64_t begin,
            int64_t end, double *dst) {
  Strides strides = broadcastStrides(t, shape);
  withReader(t, [&](const auto &read) {
    gatherRange(read, shape, strides, begin, end, dst);
  });
}

//===----------------------------------------------------------------------===//
// Threads and materializing
//===----------------------------------------------------------------------===//

unsigned workerCount(int64_t numTasks, unsigned threads) {
  return unsigned(std::max<int64_t>(1, std::min<int64_t>(threads, numTasks)));
}

void parallelFor(int64_t numTasks, unsigned threads,
                 llvm::function_ref<void(int64_t, unsigned)> fn) {
  unsigned workers = workerCount(numTasks, threads);
  if (workers == 1) {
    for (int64_t t = 0; t < numTasks; ++t)
      fn(t, 0);
    return;
  }
  std::atomic<int64_t> next{0};
  auto work = [&](unsigned worker) {
    for (int64_t t; (t = next.fetch_add(1)) < numTasks;)
      fn(t, worker);
  };
  std::vector<std::thread> pool;
  for (unsigned w = 1; w < workers; ++w)
    pool.emplace_back(work, w);
  work(0);
  for (std::thread &t : pool)
    t.join();
}

std::vector<double> materialize(const TensorView &t, unsigned threads) {
  return materializeChunks(product(t.shape), threads,
                           [&](int64_t begin, int64_t end, double *dst) {
                             gather(t, t.shape, begin, end, dst);
                           });
}

} // namespace ref
} // namespace mtc
