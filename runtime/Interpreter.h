//===- Interpreter.h - fp64 reference interpreter of graphs -----*- C++ -*-===//
//
// Runs a graph.func on the CPU in double precision; `mtc run --check` compares
// every output of the compiled graph with this interpreter's result.
//
// Every op computes exactly in double except graph.convert, which rounds to
// its target type with roundTo (HostTensor.h). linear and matmul sum their
// products in double, in increasing k order, each output by one thread, so
// results do not depend on the number of threads.
//
// Inputs are never expanded to double: a value is a strided view of either an
// input HostTensor (decoded element by element) or a materialized double
// buffer. Inputs, lossless converts of inputs (i8 -> float, f16/bf16 -> f32,
// same type) and transposes are views; every other op materializes.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_RUNTIME_INTERPRETER_H
#define MTC_RUNTIME_INTERPRETER_H

#include "dialects/Graph/GraphOps.h"
#include "runtime/HostTensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace mtc {

/// A reference result: row-major doubles.
struct RefTensor {
  Shape shape;
  std::vector<double> data;
};

/// Runs `func` on the CPU in double precision. Only graph.convert rounds (to
/// its target type, via roundTo); every other op computes exactly in double.
/// `inputs` must match the func's arguments in number, shape and element type.
/// `threads` = 0 uses every hardware thread. Fails on any op that is not a
/// graph op ("reference interpreter: unsupported op 'kernel.x'").
llvm::Expected<std::vector<RefTensor>>
interpretGraph(graph::FuncOp func, llvm::ArrayRef<HostTensor> inputs,
               unsigned threads = 0);

/// How far an output is from its reference.
struct Comparison {
  double maxAbsErr = 0; ///< max |out - ref| over elements with finite ref.
  double maxAbsRef = 0; ///< max |ref| over finite ref elements.
  /// maxAbsErr / max(maxAbsRef, smallest normal double).
  double maxRelErr = 0;
  double l2RelErr = 0; ///< ||out - ref||_2 / ||ref||_2 (finite ref elements).
  /// Elements whose special values disagree: NaN/Inf outputs where the
  /// reference is finite (e.g. poison left unwritten), and reference NaN/Inf
  /// that the output does not reproduce.
  int64_t nonFinite = 0;
  /// The first element counted in nonFinite if any, else the element with
  /// the largest absolute error; -1 when there is none.
  int64_t worstIndex = -1;

  /// nonFinite == 0 && maxRelErr <= tol.
  bool passed(double tol) const;
};

/// Compares `out` with `ref` element by element. A shape mismatch gives
/// infinite errors (and so fails every tolerance).
Comparison compare(const HostTensor &out, const RefTensor &ref);

} // namespace mtc

#endif // MTC_RUNTIME_INTERPRETER_H
