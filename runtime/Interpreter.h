//===- Interpreter.h - fp64 reference interpreter of graphs -----*- C++ -*-===//
//
// Runs a graph.func on the CPU in double precision; `mtc run --check` compares
// every output of the compiled graph with this interpreter's result.
//
// Every op computes in double and rounds its result to its element type with
// roundTo (HostTensor.h), as the graph dialect defines each node: linear and
// matmul round their sums, add, sub, mul and silu each result, convert to
// its target type (relu, transpose and repeat are exact). linear and matmul
// sum their products in double, in increasing k order, each output by one
// thread, so results do not depend on the number of threads. What a kernel
// may differ by is then the order of its f32 sums alone (Comparison).
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

#include <array>
#include <cstdint>
#include <vector>

namespace mtc {

/// A reference result: row-major doubles.
struct RefTensor {
  Shape shape;
  std::vector<double> data;
};

/// Runs `func` on the CPU in double precision, rounding every op's result to
/// its element type (roundTo).
/// `inputs` must match the func's arguments in number, shape and element type.
/// `threads` = 0 uses every hardware thread. Fails on any op that is not a
/// graph op ("reference interpreter: unsupported op 'kernel.x'").
llvm::Expected<std::vector<RefTensor>>
interpretGraph(graph::FuncOp func, llvm::ArrayRef<HostTensor> inputs,
               unsigned threads = 0);

/// How far an output is from its reference, in units in the last place (ulps)
/// of the output's element type. The reference rounds every node as the graph
/// does, so a kernel differs from it only where its f32 sums (in another
/// order, split over blocks) land on the other side of a rounding: an ulp of
/// an element here and there, where a wrong index or a lost block of the sum
/// gives many. The check counts ulps of the output's scale (max |ref|): an
/// epilogue that cancels (a bias, a residual) may turn an ulp of a large
/// partial result into many ulps of a small element, but never into more of
/// the scale. The histogram counts each element's error in ulps at its own
/// magnitude, never finer than at ulpFloor(t) times the scale (below it the
/// f32 sums' own rounding is a whole ulp).
struct Comparison {
  double maxAbsErr = 0; ///< max |out - ref| over elements with finite ref.
  double maxAbsRef = 0; ///< max |ref| over finite ref elements.
  /// maxAbsErr / max(maxAbsRef, smallest normal double).
  double maxRelErr = 0;
  double l2RelErr = 0; ///< ||out - ref||_2 / ||ref||_2 (finite ref elements).
  /// maxAbsErr in ulps of the output's type at maxAbsRef.
  double maxUlps = 0;
  /// Elements by their error in ulps of their own magnitude (see above): 0,
  /// (0, 1], (1, 2], (2, 4], (4, 16], over 16 (kUlpBuckets).
  std::array<int64_t, 6> ulpHistogram = {};
  /// Elements whose special values disagree: NaN/Inf outputs where the
  /// reference is finite (e.g. poison left unwritten), and reference NaN/Inf
  /// that the output does not reproduce.
  int64_t nonFinite = 0;
  /// The first element counted in nonFinite if any, else the element with
  /// the largest absolute error; -1 when there is none.
  int64_t worstIndex = -1;

  /// nonFinite == 0 && maxUlps <= ulps.
  bool passed(double ulps) const;
};

/// The upper bounds of Comparison::ulpHistogram's buckets (the last: none).
inline constexpr std::array<double, 5> kUlpBuckets = {0, 1, 2, 4, 16};

/// One ulp of `t` at magnitude `m`: the gap between the floats of `t` at m
/// (1 for the integer types).
double ulpOf(DType t, double m);

/// The fraction of the output's scale below which errors count in ulps of
/// that fraction: 2^(p - 24) for a float type of p significand bits (bf16
/// 2^-16, f16 2^-13, f32 1).
double ulpFloor(DType t);

/// Compares `out` with `ref` element by element. A shape mismatch gives
/// infinite errors (and so fails every tolerance).
Comparison compare(const HostTensor &out, const RefTensor &ref);

} // namespace mtc

#endif // MTC_RUNTIME_INTERPRETER_H
