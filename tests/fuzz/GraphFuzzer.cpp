//===- GraphFuzzer.cpp - libFuzzer target: graph files to PTX -------------===//
//
// Feeds arbitrary bytes to mtc as a graph file ("fuzz.graph") and compiles
// every graph that parses through the whole pipeline: fusion, scheduling,
// NVVM lowering, the LLVM dialect, LLVM O3 and NVPTX PTX emission. The
// property checked is the one of the issue "no input crashes mtc":
//
//   - parsing never crashes, whatever the bytes (diagnostics are expected and
//     swallowed; nothing is asserted about them);
//   - a graph that parsed and verified always compiles: once the front end
//     accepted a graph, compileGraph has no user error left to report, so any
//     error from it is an mtc bug and aborts, which libFuzzer records as a
//     crash.
//
// Comment lines `#!schedule K=SCHEDULE` are what `--schedule K=SCHEDULE` is
// to `mtc compile`: they reach the emitters' paths that no heuristic schedule
// takes (split K, warps splitting K, narrow vectors, mma tiles, the wgmma
// kind, which compiles for sm_90a). A schedule that does not fit its kernel
// is the one error allowed then (InputError).
//
// Byte-level mutations mostly break the lexer, so a custom mutator also
// mutates whole tokens: dimension literals become interesting sizes, op and
// dtype names other ops and dtypes, value names other names of the file.
//
// Built only with -DMTC_FUZZ=ON (clang); see tests/fuzz/CMakeLists.txt and
// tests/fuzz/run-fuzzer.sh.
//
//===----------------------------------------------------------------------===//
#include "compiler/Compiler.h"
#include "compiler/Frontend.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace mlir;
using namespace mtc;

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

namespace {

/// Work limit for the compile half (parsing and verification run on every
/// input): at most this many graph nodes are compiled per input, counting all
/// graphs of the file; graphs beyond the budget are parsed and verified only.
/// The fuzzer must run many inputs a second to be useful, and compile time
/// grows with the number of nodes, since every node can become a kernel that
/// goes through MLIR lowering, LLVM O3 and the NVPTX backend (about 15 ms a
/// kernel here). A few dozen nodes cover every fusion pattern; more repeat
/// them slowly and would trip libFuzzer's per-input timeout. Tensor sizes are
/// not limited: compile time does not depend on them, and huge shapes are
/// where launch geometry and schedule legality can go wrong.
constexpr size_t kMaxCompiledNodes = 64;

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

/// The `#!schedule K=SCHEDULE` lines of `text`; lines that do not parse are
/// ignored (the command line rejects them before compiling).
std::map<unsigned, kernel::ScheduleParams> schedulesOf(llvm::StringRef text) {
  std::map<unsigned, kernel::ScheduleParams> schedules;
  constexpr llvm::StringLiteral kPrefix = "#!schedule ";
  for (size_t at = text.find(kPrefix); at != llvm::StringRef::npos;
       at = text.find(kPrefix, at + 1)) {
    llvm::StringRef line =
        text.substr(at + kPrefix.size()).take_until([](char c) {
          return c == '\n';
        });
    auto [index, schedule] = line.split('=');
    unsigned k;
    std::string err;
    if (index.trim().getAsInteger(10, k))
      continue;
    if (std::optional<kernel::ScheduleParams> s =
            kernel::ScheduleParams::parse(schedule, err))
      schedules[k] = *s;
  }
  return schedules;
}

/// The number of nodes of `func` (its ops but the return).
size_t numNodes(graph::FuncOp func) {
  return func.getBody().front().getOperations().size() - 1;
}

//===----------------------------------------------------------------------===//
// Token-level mutations
//===----------------------------------------------------------------------===//

/// Sizes around the limits of shapes, schedules and launch geometry.
constexpr const char *kInterestingDims[] = {"1",
                                            "2",
                                            "3",
                                            "4",
                                            "7",
                                            "8",
                                            "15",
                                            "16",
                                            "17",
                                            "31",
                                            "32",
                                            "33",
                                            "63",
                                            "64",
                                            "65",
                                            "127",
                                            "128",
                                            "129",
                                            "255",
                                            "256",
                                            "511",
                                            "512",
                                            "1024",
                                            "4095",
                                            "4096",
                                            "4097",
                                            "65535",
                                            "65536",
                                            "131072",
                                            "1048576",
                                            "2147483647",
                                            "2147483648",
                                            "4294967295",
                                            "4294967296",
                                            "17179869184",
                                            "549755813888",
                                            "1099511627775",
                                            "1099511627776",
                                            "1099511627777",
                                            "9223372036854775807",
                                            "0"};
constexpr const char *kOps[] = {"convert",   "linear", "matmul",
                                "transpose", "add",    "sub",
                                "mul",       "relu",   "silu"};
constexpr const char *kDTypes[] = {"i8", "f16", "bf16", "f32"};

struct Tok {
  size_t begin, end;
  bool number;
};

std::vector<Tok> tokenize(const std::string &text) {
  std::vector<Tok> toks;
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (llvm::isDigit(c) || llvm::isAlpha(c) || c == '_') {
      size_t j = i + 1;
      while (j < text.size() && (llvm::isAlnum(text[j]) || text[j] == '_'))
        ++j;
      toks.push_back({i, j, static_cast<bool>(llvm::isDigit(c))});
      i = j;
    } else if (c == '#' && text.compare(i, 2, "#!") != 0) {
      // Skip comments, but not `#!schedule` lines.
      while (i < text.size() && text[i] != '\n')
        ++i;
    } else {
      ++i;
    }
  }
  return toks;
}

template <typename T, size_t N>
const char *pick(std::minstd_rand &rng, T (&items)[N]) {
  return items[rng() % N];
}

/// Replaces one token of `text`: a number (or all copies of it) by an
/// interesting size, an op or dtype name by another, any other name by a name
/// used in the file; or inserts a statement or duplicates a line. Returns
/// false if nothing changed.
bool mutateTokens(std::string &text, std::minstd_rand &rng) {
  std::vector<Tok> toks = tokenize(text);
  if (toks.empty())
    return false;
  if (rng() % 8 == 0) {
    // A new statement on the names of the file, before a `return`: a dead
    // node, or a live one once another mutation returns or uses it.
    size_t at = text.find("return");
    for (unsigned skip = rng() % 4; skip && at != std::string::npos; --skip)
      at = text.find("return", at + 1);
    if (at == std::string::npos)
      at = toks[rng() % toks.size()].begin;
    auto name = [&] {
      const Tok &n = toks[rng() % toks.size()];
      return text.substr(n.begin, n.end - n.begin);
    };
    const char *op = pick(rng, kOps);
    std::string stmt =
        "v" + std::to_string(rng() % 100) + " = " + op + "(" + name();
    if (rng() % 4)
      stmt += ", " + (rng() % 2 ? name() : std::string(pick(rng, kDTypes)));
    text.insert(at, stmt + ")\n  ");
    return true;
  }
  if (rng() % 8 == 0) {
    // Duplicate a line: a statement used twice, a second parameter, ...
    size_t at = toks[rng() % toks.size()].begin;
    size_t lineBegin = text.rfind('\n', at);
    lineBegin = lineBegin == std::string::npos ? 0 : lineBegin + 1;
    size_t lineEnd = text.find('\n', at);
    lineEnd = lineEnd == std::string::npos ? text.size() : lineEnd + 1;
    std::string line = text.substr(lineBegin, lineEnd - lineBegin);
    if (line.empty() || line.back() != '\n')
      line += '\n';
    text.insert(lineEnd, line);
    return true;
  }
  const Tok &t = toks[rng() % toks.size()];
  llvm::StringRef word(text.data() + t.begin, t.end - t.begin);
  std::string replacement;
  if (t.number) {
    replacement = pick(rng, kInterestingDims);
  } else if (llvm::is_contained(kOps, word)) {
    replacement = pick(rng, kOps);
  } else if (llvm::is_contained(kDTypes, word)) {
    replacement = pick(rng, kDTypes);
  } else {
    const Tok &other = toks[rng() % toks.size()];
    replacement = text.substr(other.begin, other.end - other.begin);
  }
  if (replacement == word)
    return false;
  if (t.number && rng() % 2) {
    // Every occurrence of the literal: a dimension changes consistently in
    // the parameters, the results and other graphs, so the file still
    // verifies (declared results must match the computed types exactly).
    std::string old = word.str(), out;
    size_t from = 0;
    for (const Tok &u : toks) {
      if (!u.number || text.compare(u.begin, u.end - u.begin, old) != 0)
        continue;
      out.append(text, from, u.begin - from);
      out += replacement;
      from = u.end;
    }
    out.append(text, from, std::string::npos);
    text = std::move(out);
    return true;
  }
  text.replace(t.begin, t.end - t.begin, replacement);
  return true;
}

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

/// Set while compileGraph runs, so that a failure can show the diagnostics
/// that explain it; parse errors are not recorded (they are expected, and
/// formatting them would slow every input down).
bool compiling = false;
std::string compileDiagnostics;

} // namespace

/// Sanitizer defaults baked into the fuzzer, so that running it by hand (to
/// reproduce or minimize a finding) behaves like the ctest. ASAN_OPTIONS in
/// the environment still overrides them.
///
/// allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons its slabs and
/// unpoisons each allocation with __asan_(un)poison_memory_region, but only in
/// code compiled with ASan. MLIR's static libraries are not instrumented, and
/// the linker merges the inline functions of both kinds of objects, so a slab
/// poisoned by an instrumented copy gets its allocations handed out by an
/// uninstrumented one: a false use-after-poison on the first dialect loaded.
/// Heap, stack and global redzones are unaffected.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

/// Half of the mutations are libFuzzer's own (bytes, the dictionary,
/// crossover), half replace a token (mutateTokens).
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  std::minstd_rand rng(seed);
  if (rng() % 2)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::string text(reinterpret_cast<const char *>(data), size);
  if (!mutateTokens(text, rng) || text.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, text.data(), text.size());
  return text.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MLIRContext &ctx = context();
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz.graph"), llvm::SMLoc());

  // User errors are expected: swallow them. Their text is not checked here
  // (the lit tests do that); only that producing them does not crash.
  ScopedDiagnosticHandler handler(&ctx, [](Diagnostic &diag) {
    if (compiling)
      compileDiagnostics += diag.str() + "\n";
    return success();
  });

  FrontendOptions options;
  for (const std::string &name : symbolicDims(sm))
    if (std::optional<int64_t> value = bindingFor(name))
      options.bindings[name] = *value;

  OwningOpRef<ModuleOp> module = parseGraphSource(sm, &ctx, options);
  if (!module)
    return 0;

  std::map<unsigned, kernel::ScheduleParams> schedules = schedulesOf(text);
  size_t budget = kMaxCompiledNodes;
  for (graph::FuncOp func : module->getOps<graph::FuncOp>()) {
    size_t nodes = numNodes(func);
    if (nodes > budget)
      continue;
    budget -= nodes;
    CompileOptions compile;
    compile.sourceName = "fuzz.graph";
    compile.schedules = schedules;
    // A wgmma schedule compiles for the GPUs that have wgmma.
    for (const auto &[index, s] : schedules)
      if (s.kind == kernel::ScheduleKind::wgmma)
        compile.arch = "sm_90a";
    compiling = true;
    compileDiagnostics.clear();
    llvm::Expected<CompiledGraph> compiled = compileGraph(func, compile);
    compiling = false;
    if (!compiled) {
      // A `#!schedule` that does not fit is the user's error. Apart from
      // that, the graph was verified: every error left is mtc's own.
      llvm::Error err =
          llvm::handleErrors(compiled.takeError(), [](const InputError &) {});
      if (!err)
        continue;
      llvm::errs() << "GraphFuzzer: compileGraph failed for verified graph '"
                   << func.getSymName()
                   << "': " << llvm::toString(std::move(err)) << "\n"
                   << compileDiagnostics;
      std::abort();
    }
  }
  return 0;
}
