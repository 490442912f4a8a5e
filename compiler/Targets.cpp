//===- Targets.cpp - The graphs a command compiles ------------------------===//
//
// See Targets.h.
//
//===----------------------------------------------------------------------===//
#include "compiler/Targets.h"

#include "compiler/Compiler.h"
#include "compiler/Input.h"

#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <map>

using namespace llvm;

namespace mtc {

char ReportedError::ID = 0;

static Error inputError(const Twine &message) {
  return make_error<InputError>(message.str());
}

FrontendOptions Bindings::frontendFor(int64_t bucket) const {
  FrontendOptions fo;
  for (auto &e : fixed)
    fo.bindings[e.getKey()] = e.getValue();
  if (!bucketSymbol.empty())
    fo.bindings[bucketSymbol] = bucket;
  return fo;
}

std::vector<std::pair<std::string, int64_t>>
Bindings::at(int64_t bucket) const {
  std::vector<std::pair<std::string, int64_t>> out;
  for (auto &entry : frontendFor(bucket).bindings)
    out.push_back({entry.getKey().str(), entry.getValue()});
  std::sort(out.begin(), out.end());
  return out;
}

Expected<Bindings> parseBindings(ArrayRef<std::string> flags) {
  Bindings b;
  std::string current;
  std::map<std::string, std::vector<int64_t>> values;
  for (const std::string &flag : flags) {
    StringRef text = flag;
    auto malformed = [&] {
      return inputError("--bind expects NAME=N[,N...], got '" + flag + "'");
    };
    if (text.contains('=')) {
      auto [name, v] = text.split('=');
      current = name.str();
      text = v;
      if (name.empty())
        return malformed();
    } else if (current.empty()) {
      return malformed();
    }
    int64_t v;
    if (text.getAsInteger(10, v))
      return malformed();
    if (v <= 0)
      return inputError("--bind " + current + "=" + text +
                        ": dimensions must be positive");
    values[current].push_back(v);
  }
  for (auto &[name, vs] : values) {
    std::sort(vs.begin(), vs.end());
    vs.erase(std::unique(vs.begin(), vs.end()), vs.end());
    if (vs.size() == 1) {
      b.fixed[name] = vs[0];
      continue;
    }
    if (!b.bucketSymbol.empty())
      return inputError("--bind: only one symbol may take several values (" +
                        b.bucketSymbol + " and " + name + ")");
    b.bucketSymbol = name;
    b.bucketValues = vs;
  }
  return b;
}

TargetSet::TargetSet(raw_ostream &diagnostics)
    : ctx(mlir::MLIRContext::Threading::DISABLED) {
  mlir::DialectRegistry registry;
  registerCompilerDialects(registry);
  ctx.appendDialectRegistry(registry);
  ctx.loadAllAvailableDialects();
  handler = std::make_unique<ClippingDiagnosticHandler>(sm, &ctx, diagnostics);
}

TargetSet::~TargetSet() = default;

Error TargetSet::read(StringRef file) {
  path = file.str();
  auto buffer = MemoryBuffer::getFileOrSTDIN(file, /*IsText=*/false,
                                             /*RequiresNullTerminator=*/true);
  if (std::error_code ec = buffer.getError())
    return inputError("cannot read '" + file + "': " + ec.message());
  sm.AddNewSourceBuffer(std::move(*buffer), SMLoc());
  return Error::success();
}

mlir::OwningOpRef<mlir::ModuleOp> TargetSet::parseAt(int64_t value) {
  return loadGraphs(sm, &ctx, binds.frontendFor(value));
}

Error TargetSet::parse(Bindings bindings, ArrayRef<std::string> only) {
  binds = std::move(bindings);
  std::vector<int64_t> buckets =
      binds.bucketSymbol.empty() ? std::vector<int64_t>{0} : binds.bucketValues;
  for (int64_t bucket : buckets) {
    mlir::OwningOpRef<mlir::ModuleOp> module = parseAt(bucket);
    if (!module)
      return make_error<ReportedError>();
    for (auto g : module->getOps<graph::FuncOp>()) {
      if (!only.empty() && !is_contained(only, g.getSymName()))
        continue;
      std::string name = g.getSymName().str();
      if (bucket)
        name += "." + binds.bucketSymbol + std::to_string(bucket);
      list.push_back({g, name, bucket});
    }
    for (const std::string &n : only)
      if (!module->lookupSymbol(n))
        return inputError("no graph named '" + n + "' in " + path);
    modules.push_back(std::move(module));
  }
  return Error::success();
}

} // namespace mtc
