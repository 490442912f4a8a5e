//===- GraphRunner.h - Compiled graphs on seeded random inputs --*- C++ -*-===//
//
// What `mtc run` and `mtc bench` do with a compiled graph on the GPU: seeded
// random inputs (a seed names the same tensors on every run), zero-padded to
// the compiled shapes when a graph runs at a smaller value of its bucketed
// symbol, outputs cut back to the graph's own shapes, and the comparison of
// every output with the fp64 reference interpreter.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_RUNTIME_GRAPHRUNNER_H
#define MTC_RUNTIME_GRAPHRUNNER_H

#include "runtime/Executor.h"
#include "runtime/Interpreter.h"

#include <optional>
#include <string>
#include <vector>

namespace mtc {

/// The seed of input `index` of a run seeded with `seed`.
uint64_t inputSeed(uint64_t seed, unsigned index);

/// One seeded random tensor per input of `manifest`, in order, with the
/// input's dtype and name (fillRandom with inputSeed(seed, i)); its shape is
/// `shapes[i]`, or the manifest's when `shapes` is empty.
std::vector<HostTensor> randomInputs(const Manifest &manifest, uint64_t seed,
                                     llvm::ArrayRef<Shape> shapes = {});

/// `t` with `shape`: `t` itself if it has it, else zero-padded or cut along
/// every dimension (see resized()).
HostTensor fitToShape(HostTensor t, llvm::ArrayRef<int64_t> shape);

/// Sets `inputs`, one per input of `exec`'s manifest in order, each
/// zero-padded (or cut) to the manifest's shape.
llvm::Error setInputs(Executor &exec, llvm::ArrayRef<HostTensor> inputs);

/// Every output of `exec`'s manifest in order, cut back (or padded) to
/// `shapes[i]`; as compiled when `shapes` is empty.
llvm::Expected<std::vector<HostTensor>>
getOutputs(Executor &exec, llvm::ArrayRef<Shape> shapes = {});

/// The shapes of `graph`'s arguments and of its results.
std::vector<Shape> argumentShapes(graph::FuncOp graph);
std::vector<Shape> resultShapes(graph::FuncOp graph);

/// The tensors of one run, at the graph's shapes.
struct GraphRun {
  std::vector<HostTensor> inputs, outputs;
};

/// One run as `mtc run` does it: seeded random inputs of `inputShapes` (one
/// per manifest input; empty: as compiled) zero-padded to the compiled
/// shapes, outputs and intermediates poisoned, every kernel run, and the
/// outputs cut back to `outputShapes` (empty: as compiled).
llvm::Expected<GraphRun> runOnRandomInputs(Executor &exec, uint64_t seed,
                                           llvm::ArrayRef<Shape> inputShapes,
                                           llvm::ArrayRef<Shape> outputShapes);

/// How one output compares with the reference.
struct OutputCheck {
  std::string name;
  Comparison comparison;
  double tolerance = 0; ///< in ulps of the output's scale
  bool passed = false;
};

/// `run --check`'s default tolerance for an output of type `t`, in ulps of
/// its scale (Comparison): what the kernels honestly allow, measured on the
/// GPU matrix (bench/results/2026-12-02-check): 2 for bf16 and f16, 32 for
/// f32. `splitK`: a kernel of the graph splits its sums over blocks or warps
/// and adds the partial sums in another order (f32: 64; 16-bit outputs
/// measured at most 1 there, and keep 2).
double defaultCheckUlps(DType t, bool splitK);

/// Whether a kernel of `m` splits K over blocks or warps.
bool splitsK(const Manifest &m);

/// Runs the fp64 reference of `graph` on `run.inputs` and compares output i
/// (called `m.outputs[i]`) with its reference result, within `ulps` ulps of
/// its scale, or defaultCheckUlps where `ulps` is empty. Errors are the
/// reference interpreter's.
llvm::Expected<std::vector<OutputCheck>>
checkOutputs(graph::FuncOp graph, const GraphRun &run, const Manifest &m,
             std::optional<double> ulps = std::nullopt);

} // namespace mtc

#endif // MTC_RUNTIME_GRAPHRUNNER_H
