//===- Interpreter.cpp - fp64 reference interpreter of graphs -------------===//
//
// See Interpreter.h. A value of the graph is a TensorView: a shape and element
// strides over either an input's encoded elements or a materialized buffer of
// doubles. Elementwise ops gather their operands chunk by chunk through the
// strides (which also express broadcasting and transposes); linear and matmul
// share one blocked, multi-threaded kernel.
//
//===----------------------------------------------------------------------===//
#include "runtime/Interpreter.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <thread>

using llvm::ArrayRef;
using llvm::dyn_cast;
using llvm::isa;
using llvm::isa_and_nonnull;
using mlir::Operation;
using mlir::RankedTensorType;

namespace mtc {
namespace {

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

/// The strides that read `t` as if broadcast to `shape` (numpy rules; the
/// shapes are known to be compatible).
Strides broadcastStrides(const TensorView &t, ArrayRef<int64_t> shape) {
  Strides s(shape.size(), 0);
  size_t lead = shape.size() - t.shape.size();
  for (size_t d = 0; d < t.shape.size(); ++d)
    s[lead + d] = t.shape[d] == 1 ? 0 : t.strides[d];
  return s;
}

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

/// Writes the row-major elements [begin, end) of the index space `shape`,
/// read through `strides`, to `dst`.
template <typename Reader>
void gatherRange(const Reader &read, ArrayRef<int64_t> shape,
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

/// Row-major elements [begin, end) of `t` broadcast to `shape`.
void gather(const TensorView &t, ArrayRef<int64_t> shape, int64_t begin,
            int64_t end, double *dst) {
  Strides strides = broadcastStrides(t, shape);
  withReader(t, [&](const auto &read) {
    gatherRange(read, shape, strides, begin, end, dst);
  });
}

//===----------------------------------------------------------------------===//
// Threads
//===----------------------------------------------------------------------===//

/// Number of threads that run `numTasks` tasks.
unsigned workerCount(int64_t numTasks, unsigned threads) {
  return unsigned(std::max<int64_t>(1, std::min<int64_t>(threads, numTasks)));
}

/// Runs fn(task, worker) for every task in [0, numTasks) on
/// workerCount(numTasks, threads) threads; each task runs on one thread.
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

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

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
std::vector<double> materialize(const TensorView &t, unsigned threads) {
  return materializeChunks(product(t.shape), threads,
                           [&](int64_t begin, int64_t end, double *dst) {
                             gather(t, t.shape, begin, end, dst);
                           });
}

template <typename Fn>
TensorView mapUnary(const TensorView &a, DType dtype, unsigned threads, Fn fn) {
  return viewOf(dtype, a.shape,
                materializeChunks(product(a.shape), threads,
                                  [&](int64_t begin, int64_t end, double *dst) {
                                    gather(a, a.shape, begin, end, dst);
                                    for (int64_t i = 0; i < end - begin; ++i)
                                      dst[i] = fn(dst[i]);
                                  }));
}

template <typename Fn>
TensorView mapBinary(const TensorView &a, const TensorView &b, DType dtype,
                     ArrayRef<int64_t> shape, unsigned threads, Fn fn) {
  return viewOf(dtype, shape,
                materializeChunks(product(shape), threads,
                                  [&](int64_t begin, int64_t end, double *dst) {
                                    std::vector<double> rhs(
                                        size_t(end - begin));
                                    gather(a, shape, begin, end, dst);
                                    gather(b, shape, begin, end, rhs.data());
                                    for (int64_t i = 0; i < end - begin; ++i)
                                      dst[i] = fn(dst[i], rhs[size_t(i)]);
                                  }));
}

//===----------------------------------------------------------------------===//
// linear / matmul
//===----------------------------------------------------------------------===//

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
inline void tileFull(const double *x, int64_t ldx, const double *w,
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
inline void tilePartial(const double *x, int64_t ldx, const double *w,
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
void linearBlock(const double *x, int64_t K, const TensorView &w, int64_t sN,
                 int64_t sK, int64_t n0, int64_t nn, int64_t m0, int64_t mm,
                 double *out, int64_t N, double *panels) {
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

/// out[r][n] = sum over k of x[r][k] * w(n, k), where x is R x K row-major
/// and w(n, k) is element n * sN + k * sK of `w`'s storage.
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

//===----------------------------------------------------------------------===//
// The interpreter
//===----------------------------------------------------------------------===//

llvm::Error error(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "reference interpreter: " + msg);
}

std::string describe(Operation *op) {
  std::string s = "'" + op->getName().getStringRef().str() + "'";
  llvm::StringRef name = nameFromLoc(op->getLoc());
  if (!name.empty())
    s += " ('" + name.str() + "')";
  return s;
}

class Interpreter {
public:
  explicit Interpreter(unsigned threads) : threads(threads) {}

  llvm::Expected<std::vector<RefTensor>> run(graph::FuncOp func,
                                             ArrayRef<HostTensor> inputs);

private:
  llvm::Expected<TensorView> eval(Operation &op, DType dtype,
                                  ArrayRef<int64_t> shape);
  llvm::Expected<TensorView> linear(Operation &op, const TensorView &x,
                                    const TensorView &w, DType dtype,
                                    ArrayRef<int64_t> shape);
  llvm::Expected<TensorView> matmul(Operation &op, const TensorView &a,
                                    const TensorView &b, DType dtype,
                                    ArrayRef<int64_t> shape);
  llvm::Expected<TensorView> binary(Operation &op, const TensorView &a,
                                    const TensorView &b, DType dtype,
                                    ArrayRef<int64_t> shape);
  TensorView convert(const TensorView &t, DType to);

  /// x as R x K row-major doubles (no copy if it already is).
  std::shared_ptr<const std::vector<double>> rows(const TensorView &x);

  unsigned threads;
  llvm::DenseMap<mlir::Value, TensorView> env;
};

/// Checks that an op's result shape is what the shape rules give.
llvm::Error checkShape(Operation &op, bool ok, const std::string &err,
                       ArrayRef<int64_t> computed, ArrayRef<int64_t> shape) {
  if (!ok)
    return error(describe(&op) + ": " + err);
  if (computed != shape)
    return error(describe(&op) + ": result shape " + formatShape(shape) +
                 " disagrees with the operands (expected " +
                 formatShape(computed) + ")");
  return llvm::Error::success();
}

std::shared_ptr<const std::vector<double>>
Interpreter::rows(const TensorView &x) {
  if (x.doubles && x.strides == rowMajorStrides(x.shape))
    return x.doubles;
  return std::make_shared<const std::vector<double>>(materialize(x, threads));
}

llvm::Expected<TensorView> Interpreter::linear(Operation &op,
                                               const TensorView &x,
                                               const TensorView &w, DType dtype,
                                               ArrayRef<int64_t> shape) {
  Shape computed;
  std::string err;
  bool ok = linearShape(x.shape, w.shape, computed, err);
  if (llvm::Error e = checkShape(op, ok, err, computed, shape))
    return std::move(e);
  int64_t K = x.shape.back(), N = w.shape[0];
  auto xr = rows(x);
  return viewOf(dtype, shape,
                linearKernel(xr->data(), product(x.shape) / K, K, w, N,
                             w.strides[0], w.strides[1], threads));
}

llvm::Expected<TensorView> Interpreter::matmul(Operation &op,
                                               const TensorView &a,
                                               const TensorView &b, DType dtype,
                                               ArrayRef<int64_t> shape) {
  Shape computed;
  std::string err;
  bool ok = matmulShape(a.shape, b.shape, computed, err);
  if (llvm::Error e = checkShape(op, ok, err, computed, shape))
    return std::move(e);
  // a @ b is linear(a, b^T): w(n, k) = b(k, n).
  int64_t K = a.shape.back(), N = b.shape[1];
  auto ar = rows(a);
  return viewOf(dtype, shape,
                linearKernel(ar->data(), product(a.shape) / K, K, b, N,
                             b.strides[1], b.strides[0], threads));
}

llvm::Expected<TensorView> Interpreter::binary(Operation &op,
                                               const TensorView &a,
                                               const TensorView &b, DType dtype,
                                               ArrayRef<int64_t> shape) {
  Shape computed;
  std::string err;
  bool ok = broadcastShapes(a.shape, b.shape, computed, err);
  if (llvm::Error e = checkShape(op, ok, err, computed, shape))
    return std::move(e);
  if (isa<graph::AddOp>(op))
    return mapBinary(a, b, dtype, shape, threads,
                     [](double x, double y) { return x + y; });
  if (isa<graph::SubOp>(op))
    return mapBinary(a, b, dtype, shape, threads,
                     [](double x, double y) { return x - y; });
  return mapBinary(a, b, dtype, shape, threads,
                   [](double x, double y) { return x * y; });
}

TensorView Interpreter::convert(const TensorView &t, DType to) {
  // Decoding an input already gives values of `to` when the conversion is
  // lossless: keep the view.
  if (t.encoded && isExactConversion(t.encoded->dtype, to)) {
    TensorView v = t;
    v.dtype = to;
    return v;
  }
  return mapUnary(t, to, threads, [to](double v) { return roundTo(to, v); });
}

llvm::Expected<TensorView> Interpreter::eval(Operation &op, DType dtype,
                                             ArrayRef<int64_t> shape) {
  llvm::SmallVector<const TensorView *, 2> args;
  for (mlir::Value v : op.getOperands()) {
    auto it = env.find(v);
    if (it == env.end())
      return error(describe(&op) + ": operand has no value");
    args.push_back(&it->second);
  }
  return llvm::TypeSwitch<Operation *, llvm::Expected<TensorView>>(&op)
      .Case([&](graph::ConvertOp) -> llvm::Expected<TensorView> {
        if (args[0]->shape != shape)
          return error(describe(&op) + ": changes the shape");
        return convert(*args[0], dtype);
      })
      .Case([&](graph::LinearOp) {
        return linear(op, *args[0], *args[1], dtype, shape);
      })
      .Case([&](graph::MatmulOp) {
        return matmul(op, *args[0], *args[1], dtype, shape);
      })
      .Case([&](graph::TransposeOp) -> llvm::Expected<TensorView> {
        Shape computed;
        std::string err;
        bool ok = transposeShape(args[0]->shape, computed, err);
        if (llvm::Error e = checkShape(op, ok, err, computed, shape))
          return std::move(e);
        TensorView v = *args[0];
        size_t r = v.shape.size();
        std::swap(v.shape[r - 1], v.shape[r - 2]);
        std::swap(v.strides[r - 1], v.strides[r - 2]);
        v.dtype = dtype;
        return v;
      })
      .Case<graph::AddOp, graph::SubOp, graph::MulOp>(
          [&](auto) { return binary(op, *args[0], *args[1], dtype, shape); })
      .Case([&](graph::ReluOp) -> llvm::Expected<TensorView> {
        if (args[0]->shape != shape)
          return error(describe(&op) + ": changes the shape");
        // NaN < 0 is false: NaN stays NaN.
        return mapUnary(*args[0], dtype, threads,
                        [](double v) { return v < 0 ? 0.0 : v; });
      })
      .Case([&](graph::SiluOp) -> llvm::Expected<TensorView> {
        if (args[0]->shape != shape)
          return error(describe(&op) + ": changes the shape");
        return mapUnary(*args[0], dtype, threads,
                        [](double v) { return v / (1.0 + std::exp(-v)); });
      })
      .Default([&](Operation *) -> llvm::Expected<TensorView> {
        return error("unsupported op '" + op.getName().getStringRef() + "'");
      });
}

/// The shape and element type of a tensor type mtc supports.
bool tensorInfo(mlir::Type type, DType &dtype, Shape &shape) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() || tensor.getRank() < 1)
    return false;
  std::optional<DType> d = dtypeOf(tensor.getElementType());
  if (!d)
    return false;
  dtype = *d;
  shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  return numElements(shape).has_value();
}

llvm::Expected<std::vector<RefTensor>>
Interpreter::run(graph::FuncOp func, ArrayRef<HostTensor> inputs) {
  std::string graphName = "graph '@" + func.getSymName().str() + "'";
  if (func.getBody().empty())
    return error(graphName + " has no body");
  mlir::Block &body = func.getBody().front();
  ArrayRef<mlir::Type> argTypes = func.getArgumentTypes();
  if (inputs.size() != argTypes.size() ||
      body.getNumArguments() != argTypes.size())
    return error(graphName + " takes " + std::to_string(argTypes.size()) +
                 " inputs, got " + std::to_string(inputs.size()));
  for (auto [i, type] : llvm::enumerate(argTypes)) {
    DType dtype;
    Shape shape;
    std::string what =
        "input #" + std::to_string(i) + " ('" + func.getInputName(i) + "')";
    if (!tensorInfo(type, dtype, shape))
      return error(what + " has an unsupported type");
    const HostTensor &in = inputs[i];
    if (in.dtype != dtype || in.shape != shape)
      return error(what + " is " + dtypeName(in.dtype) + formatShape(in.shape) +
                   " but " + graphName + " expects " + dtypeName(dtype) +
                   formatShape(shape));
    if (in.data.size() != size_t(product(shape)) * dtypeBytes(dtype))
      return error(what + " holds " + std::to_string(in.data.size()) +
                   " bytes, not " +
                   std::to_string(product(shape) * dtypeBytes(dtype)));
    env[body.getArgument(unsigned(i))] = viewOf(in);
  }

  Operation *ret = func.getReturn();
  if (!ret || !isa<graph::ReturnOp>(ret))
    return error(graphName + " does not end in graph.return");
  // Values are dropped after their last use so that large intermediates do
  // not pile up.
  llvm::DenseMap<mlir::Value, Operation *> lastUse;
  for (Operation &op : body)
    for (mlir::Value v : op.getOperands())
      lastUse[v] = &op;

  for (Operation &op : body) {
    if (&op == ret)
      break;
    if (!isa_and_nonnull<graph::GraphDialect>(op.getDialect()))
      return error("unsupported op '" + op.getName().getStringRef() + "'");
    DType dtype;
    Shape shape;
    if (op.getNumResults() != 1 ||
        !tensorInfo(op.getResult(0).getType(), dtype, shape))
      return error(describe(&op) + " must have one supported tensor result");
    llvm::Expected<TensorView> result = eval(op, dtype, shape);
    if (!result)
      return result.takeError();
    for (mlir::Value v : op.getOperands())
      if (lastUse.lookup(v) == &op)
        env.erase(v);
    if (!op.getResult(0).use_empty())
      env[op.getResult(0)] = std::move(*result);
  }

  std::vector<RefTensor> outputs;
  for (mlir::Value v : ret->getOperands()) {
    auto it = env.find(v);
    if (it == env.end())
      return error(graphName + ": an output has no value");
    RefTensor r;
    r.shape = it->second.shape;
    r.data = materialize(it->second, threads);
    outputs.push_back(std::move(r));
  }
  return outputs;
}

} // namespace

llvm::Expected<std::vector<RefTensor>>
interpretGraph(graph::FuncOp func, ArrayRef<HostTensor> inputs,
               unsigned threads) {
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  return Interpreter(threads).run(func, inputs);
}

//===----------------------------------------------------------------------===//
// Comparison
//===----------------------------------------------------------------------===//

bool Comparison::passed(double tol) const {
  return nonFinite == 0 && maxRelErr <= tol;
}

Comparison compare(const HostTensor &out, const RefTensor &ref) {
  Comparison c;
  int64_t n = out.numElements();
  if (ArrayRef<int64_t>(out.shape) != ArrayRef<int64_t>(ref.shape) ||
      ref.data.size() != size_t(n) ||
      out.data.size() != size_t(n) * dtypeBytes(out.dtype)) {
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
