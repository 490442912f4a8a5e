//===- GraphRunner.cpp - Compiled graphs on seeded random inputs ----------===//
//
// See GraphRunner.h.
//
//===----------------------------------------------------------------------===//
#include "runtime/GraphRunner.h"

#include "llvm/ADT/STLExtras.h"

using namespace llvm;

namespace mtc {

uint64_t inputSeed(uint64_t seed, unsigned index) {
  return seed * 1000003 + index;
}

std::vector<HostTensor> randomInputs(const Manifest &manifest, uint64_t seed,
                                     ArrayRef<Shape> shapes) {
  std::vector<HostTensor> inputs;
  for (auto [i, b] : enumerate(manifest.inputs())) {
    HostTensor t(b->dtype, shapes.empty() ? ArrayRef<int64_t>(b->shape)
                                          : ArrayRef<int64_t>(shapes[i]));
    fillRandom(t, inputSeed(seed, unsigned(i)), b->name);
    inputs.push_back(std::move(t));
  }
  return inputs;
}

HostTensor fitToShape(HostTensor t, ArrayRef<int64_t> shape) {
  if (ArrayRef<int64_t>(t.shape) == shape)
    return t;
  return resized(t, shape);
}

Error setInputs(Executor &exec, ArrayRef<HostTensor> inputs) {
  for (auto [b, t] : zip(exec.manifest().inputs(), inputs)) {
    Error e = ArrayRef<int64_t>(t.shape) == ArrayRef<int64_t>(b->shape)
                  ? exec.setInput(b->name, t)
                  : exec.setInput(b->name, resized(t, b->shape));
    if (e)
      return e;
  }
  return Error::success();
}

Expected<std::vector<HostTensor>> getOutputs(Executor &exec,
                                             ArrayRef<Shape> shapes) {
  std::vector<HostTensor> outputs;
  for (auto [i, name] : enumerate(exec.manifest().outputs)) {
    Expected<HostTensor> out = exec.getOutput(name);
    if (!out)
      return out.takeError();
    outputs.push_back(shapes.empty() ? std::move(*out)
                                     : fitToShape(std::move(*out), shapes[i]));
  }
  return outputs;
}

/// The shapes of ranked tensor types.
static std::vector<Shape> shapesOf(mlir::TypeRange types) {
  std::vector<Shape> shapes;
  for (mlir::Type t : types) {
    ArrayRef<int64_t> s = cast<mlir::RankedTensorType>(t).getShape();
    shapes.emplace_back(s.begin(), s.end());
  }
  return shapes;
}

std::vector<Shape> argumentShapes(graph::FuncOp graph) {
  return shapesOf(graph.getFunctionType().getInputs());
}

std::vector<Shape> resultShapes(graph::FuncOp graph) {
  return shapesOf(graph.getFunctionType().getResults());
}

Expected<GraphRun> runOnRandomInputs(Executor &exec, uint64_t seed,
                                     ArrayRef<Shape> inputShapes,
                                     ArrayRef<Shape> outputShapes) {
  GraphRun run;
  run.inputs = randomInputs(exec.manifest(), seed, inputShapes);
  if (Error e = setInputs(exec, run.inputs))
    return std::move(e);
  if (Error e = exec.poison())
    return std::move(e);
  if (Error e = exec.run())
    return std::move(e);
  Expected<std::vector<HostTensor>> outputs = getOutputs(exec, outputShapes);
  if (!outputs)
    return outputs.takeError();
  run.outputs = std::move(*outputs);
  return run;
}

double defaultCheckUlps(DType t, bool splitK) {
  // 16-bit outputs: at most 2 ulps of the scale on the GPU matrix (1 where
  // K is split), an ulp of a contraction's sum carried through an epilogue
  // that rounds again. f32 outputs keep the f32 sums' own rounding, which
  // grows with sqrt(K): 1.5 ulps at K = 1000; split sums are added in
  // another order.
  if (t == DType::F32)
    return splitK ? 64 : 32;
  return 2;
}

bool splitsK(const Manifest &m) {
  for (const KernelInfo &k : m.kernels) {
    const llvm::json::Object &f = k.scheduleFields;
    for (llvm::StringRef key : {"splitk", "kwarps"})
      if (std::optional<int64_t> v = f.getInteger(key); v && *v > 1)
        return true;
  }
  return false;
}

Expected<std::vector<OutputCheck>> checkOutputs(graph::FuncOp graph,
                                                const GraphRun &run,
                                                const Manifest &m,
                                                std::optional<double> ulps) {
  Expected<std::vector<RefTensor>> ref = interpretGraph(graph, run.inputs);
  if (!ref)
    return ref.takeError();
  bool split = splitsK(m);
  std::vector<OutputCheck> checks;
  for (auto [name, out, r] : zip(m.outputs, run.outputs, *ref)) {
    OutputCheck c;
    c.name = name;
    c.comparison = compare(out, r);
    c.tolerance = ulps ? *ulps : defaultCheckUlps(out.dtype, split);
    c.passed = c.comparison.passed(c.tolerance);
    checks.push_back(std::move(c));
  }
  return checks;
}

} // namespace mtc
