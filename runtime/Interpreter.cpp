//===- Interpreter.cpp - fp64 reference interpreter of graphs -------------===//
//
// See Interpreter.h. A value of the graph is a TensorView (ReferenceKernels.h):
// a shape and element strides over either an input's encoded elements or a
// materialized buffer of doubles. Elementwise ops gather their operands chunk
// by chunk through the strides (which also express broadcasting and
// transposes); linear and matmul share one blocked, multi-threaded kernel
// (ReferenceLinear.cpp). compare() is in Comparison.cpp.
//
//===----------------------------------------------------------------------===//
#include "runtime/Interpreter.h"
#include "runtime/ReferenceKernels.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <string>
#include <thread>

using llvm::ArrayRef;
using llvm::dyn_cast;
using llvm::isa;
using llvm::isa_and_nonnull;
using mlir::Operation;
using mlir::RankedTensorType;

namespace mtc {
using namespace ref;
namespace {

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

// Every op's result is rounded to its element type, as the graph defines
// (roundTo: floats to nearest even through f32, integers saturate).

template <typename Fn>
TensorView mapUnary(const TensorView &a, DType dtype, unsigned threads, Fn fn) {
  return viewOf(dtype, a.shape,
                materializeChunks(product(a.shape), threads,
                                  [&](int64_t begin, int64_t end, double *dst) {
                                    gather(a, a.shape, begin, end, dst);
                                    for (int64_t i = 0; i < end - begin; ++i)
                                      dst[i] = roundTo(dtype, fn(dst[i]));
                                  }));
}

template <typename Fn>
TensorView mapBinary(const TensorView &a, const TensorView &b, DType dtype,
                     ArrayRef<int64_t> shape, unsigned threads, Fn fn) {
  return viewOf(
      dtype, shape,
      materializeChunks(product(shape), threads,
                        [&](int64_t begin, int64_t end, double *dst) {
                          std::vector<double> rhs(size_t(end - begin));
                          gather(a, shape, begin, end, dst);
                          gather(b, shape, begin, end, rhs.data());
                          for (int64_t i = 0; i < end - begin; ++i)
                            dst[i] = roundTo(dtype, fn(dst[i], rhs[size_t(i)]));
                        }));
}

/// `sums` (a contraction's exact sums) rounded to `dtype`.
std::vector<double> rounded(DType dtype, std::vector<double> sums) {
  for (double &v : sums)
    v = roundTo(dtype, v);
  return sums;
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
  llvm::Expected<TensorView> rowReduction(Operation &op, const TensorView &t,
                                          bool mean, DType dtype,
                                          ArrayRef<int64_t> shape);

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
  return viewOf(
      dtype, shape,
      rounded(dtype, linearKernel(xr->data(), product(x.shape) / K, K, w, N,
                                  w.strides[0], w.strides[1], threads)));
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
  return viewOf(
      dtype, shape,
      rounded(dtype, linearKernel(ar->data(), product(a.shape) / K, K, b, N,
                                  b.strides[1], b.strides[0], threads)));
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

llvm::Expected<TensorView> Interpreter::rowReduction(Operation &op,
                                                     const TensorView &t,
                                                     bool mean, DType dtype,
                                                     ArrayRef<int64_t> shape) {
  Shape computed;
  std::string err;
  bool ok = rowReductionShape(t.shape, computed, err);
  if (llvm::Error e = checkShape(op, ok, err, computed, shape))
    return std::move(e);
  // Each row's sum in double, in increasing k, one row per task.
  auto rowsOfT = rows(t);
  int64_t K = t.shape.back(), R = product(t.shape) / K;
  std::vector<double> out(static_cast<size_t>(R));
  parallelFor(R, threads, [&](int64_t r, unsigned) {
    double acc = 0;
    const double *row = rowsOfT->data() + r * K;
    for (int64_t k = 0; k < K; ++k)
      acc += row[k];
    out[size_t(r)] = roundTo(dtype, mean ? acc / double(K) : acc);
  });
  return viewOf(dtype, shape, std::move(out));
}

TensorView Interpreter::convert(const TensorView &t, DType to) {
  // Decoding an input already gives values of `to` when the conversion is
  // lossless: keep the view.
  if (t.encoded && isExactConversion(t.encoded->dtype, to)) {
    TensorView v = t;
    v.dtype = to;
    return v;
  }
  return mapUnary(t, to, threads, [](double v) { return v; });
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
      .Case([&](graph::RepeatOp rep) -> llvm::Expected<TensorView> {
        Shape computed;
        std::string err;
        int64_t group = int64_t(rep.getGroup());
        bool ok = repeatShape(args[0]->shape, group, computed, err);
        if (llvm::Error e = checkShape(op, ok, err, computed, shape))
          return std::move(e);
        // result[..., j] = t[..., j / group], from t's row-major doubles.
        std::vector<double> src = materialize(*args[0], threads);
        int64_t cols = shape.back();
        return viewOf(
            dtype, shape,
            materializeChunks(product(shape), threads,
                              [&](int64_t begin, int64_t end, double *dst) {
                                for (int64_t i = begin; i < end; ++i)
                                  dst[i - begin] =
                                      src[size_t(i / cols * (cols / group) +
                                                 i % cols / group)];
                              }));
      })
      .Case([&](graph::RopeOp rope) -> llvm::Expected<TensorView> {
        Shape computed;
        std::string err;
        int64_t cols = int64_t(rope.getCols());
        bool ok = ropeShape(args[0]->shape, args[0]->dtype, args[1]->shape,
                            args[1]->dtype, cols, computed, err);
        if (llvm::Error e = checkShape(op, ok, err, computed, shape))
          return std::move(e);
        // Pair i of each head of D columns, rotated by row r's (cos, sin)
        // = (table[r, 2i], table[r, 2i + 1]); exact, rounded once.
        std::vector<double> x = materialize(*args[0], threads);
        std::vector<double> t = materialize(*args[1], threads);
        int64_t n = shape[1], d = args[1]->shape[1];
        bool perRow = args[1]->shape[0] != 1;
        return viewOf(dtype, shape,
                      materializeChunks(
                          product(shape), threads,
                          [&](int64_t begin, int64_t end, double *dst) {
                            for (int64_t i = begin; i < end; ++i) {
                              int64_t m = i / n, j = i % n;
                              if (j >= cols) {
                                dst[i - begin] = x[size_t(i)];
                                continue;
                              }
                              size_t row = size_t(perRow ? m * d : 0);
                              size_t pair = size_t(j % d - j % 2);
                              double c = t[row + pair], s = t[row + pair + 1];
                              double p = x[size_t(i ^ 1)];
                              double v = j % 2 ? x[size_t(i)] * c + p * s
                                               : x[size_t(i)] * c - p * s;
                              dst[i - begin] = roundTo(dtype, v);
                            }
                          }));
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
      .Case([&](graph::RsqrtOp) -> llvm::Expected<TensorView> {
        if (args[0]->shape != shape)
          return error(describe(&op) + ": changes the shape");
        return mapUnary(*args[0], dtype, threads,
                        [](double v) { return 1.0 / std::sqrt(v); });
      })
      .Case<graph::SumOp, graph::MeanOp>(
          [&](auto red) -> llvm::Expected<TensorView> {
            return rowReduction(op, *args[0], isa<graph::MeanOp>(op), dtype,
                                shape);
          })
      .Case([&](graph::ConstantOp c) -> llvm::Expected<TensorView> {
        return viewOf(dtype, shape,
                      {roundTo(dtype, c.getValue().convertToDouble())});
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
    if (in.data.size() != size_t(tensorBytes(dtype, product(shape))))
      return error(what + " holds " + std::to_string(in.data.size()) +
                   " bytes, not " +
                   std::to_string(tensorBytes(dtype, product(shape))));
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

} // namespace mtc
