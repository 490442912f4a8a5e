//===- GraphFuzzer.cpp - libFuzzer target: graph files to PTX -------------===//
//
// Feeds arbitrary bytes to mtc as a graph file ("fuzz.graph") and compiles
// every graph that parses through the whole pipeline: fusion, scheduling,
// NVVM lowering, the LLVM dialect, LLVM O3 and NVPTX PTX emission. The
// property checked is the one of the issue "no input crashes mtc":
//
//   - parsing never crashes, whatever the bytes (diagnostics are expected and
//     swallowed; nothing is asserted about them);
//   - a graph that parsed and verified always compiles: compileGraph has no
//     user errors left to report once the front end accepted the graph (no
//     schedules are passed, so no InputError is possible), so any error from
//     it is an mtc bug and aborts, which libFuzzer records as a crash.
//
// Built only with -DMTC_FUZZ=ON (clang); see tests/fuzz/CMakeLists.txt and
// tests/fuzz/run-fuzzer.sh.
//
//===----------------------------------------------------------------------===//
#include "compiler/Compiler.h"
#include "compiler/Frontend.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>

using namespace mlir;
using namespace mtc;

namespace {

/// Work limits for the compile half (parsing and verification run on every
/// input). The fuzzer must run thousands of inputs a minute to be useful, and
/// compile time grows with the number of nodes: every node can become a
/// kernel, and each kernel goes through MLIR lowering, LLVM O3 and the NVPTX
/// backend. A few dozen nodes cover every fusion pattern; more only repeat
/// them slowly (and trip libFuzzer's per-input timeout).
constexpr size_t kMaxCompiledNodes = 64;
/// Tensors above 2^27 elements are still parsed and verified but not
/// compiled. Generated code does not depend much on sizes, but the
/// fuzzer's mutations of dimension literals would otherwise keep finding
/// "new" inputs that differ only in huge constants (launch geometry,
/// workspace sizes), which crowds the corpus without adding coverage; the
/// shape rules themselves (up to 2^40 elements) are exercised by parsing.
constexpr int64_t kMaxCompiledElements = int64_t(1) << 27;

/// The value bound to a symbolic dimension: names starting with an upper-case
/// letter (M, N, B: the usual batch symbols) get a small value derived from
/// the name, so that mutating the name changes the shape; every other
/// symbolic name stays unbound, which keeps the "no value" diagnostic in
/// reach of the fuzzer.
std::optional<int64_t> bindingFor(llvm::StringRef name) {
  if (name.empty() || !llvm::isUpper(name.front()))
    return std::nullopt;
  unsigned sum = 0;
  for (char c : name)
    sum += static_cast<unsigned char>(c);
  return 1 + sum % 16;
}

/// One context for the whole run: creating a context and loading the
/// dialects costs far more than compiling a small graph.
MLIRContext &context() {
  static MLIRContext *ctx = [] {
    DialectRegistry registry;
    registerCompilerDialects(registry);
    auto *c = new MLIRContext(registry, MLIRContext::Threading::DISABLED);
    c->loadAllAvailableDialects();
    return c;
  }();
  return *ctx;
}

/// Whether compiling `func` stays within the limits above.
bool withinLimits(graph::FuncOp func) {
  size_t nodes = 0;
  bool small = true;
  auto check = [&](Type t) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor || !tensor.hasStaticShape() ||
        tensor.getNumElements() > kMaxCompiledElements)
      small = false;
  };
  for (Type t : func.getFunctionType().getInputs())
    check(t);
  for (Type t : func.getFunctionType().getResults())
    check(t);
  func.walk([&](Operation *op) {
    if (op == func.getOperation())
      return;
    ++nodes;
    for (Type t : op->getResultTypes())
      check(t);
  });
  return small && nodes <= kMaxCompiledNodes;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MLIRContext &ctx = context();
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "fuzz.graph"),
      llvm::SMLoc());

  // User errors are expected: swallow them. Their text is not checked here
  // (the lit tests do that); only that producing them does not crash.
  ScopedDiagnosticHandler handler(&ctx, [](Diagnostic &) { return success(); });

  FrontendOptions options;
  for (const std::string &name : symbolicDims(sm))
    if (std::optional<int64_t> value = bindingFor(name))
      options.bindings[name] = *value;

  OwningOpRef<ModuleOp> module = parseGraphSource(sm, &ctx, options);
  if (!module)
    return 0;

  for (graph::FuncOp func : module->getOps<graph::FuncOp>()) {
    if (!withinLimits(func))
      continue;
    CompileOptions compile;
    compile.sourceName = "fuzz.graph";
    llvm::Expected<CompiledGraph> compiled = compileGraph(func, compile);
    if (!compiled) {
      // The graph was verified and no schedule was forced on it: every error
      // left is mtc's own.
      llvm::errs() << "GraphFuzzer: compileGraph failed for verified graph '"
                   << func.getSymName()
                   << "': " << llvm::toString(compiled.takeError()) << "\n";
      std::abort();
    }
  }
  return 0;
}
