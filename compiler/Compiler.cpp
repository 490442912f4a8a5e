//===- Compiler.cpp - Graphs to PTX and manifests
//---------------------------===//
#include "compiler/Compiler.h"

#include "compiler/Ptx.h"
#include "compiler/PtxCache.h"
#include "compiler/Targets.h"
#include "compiler/Version.h"
#include "dialects/Kernel/KernelOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mtc::kernel;

namespace mtc {

void registerCompilerDialects(DialectRegistry &registry) {
  registry.insert<graph::GraphDialect, KernelDialect, arith::ArithDialect,
                  math::MathDialect, scf::SCFDialect, cf::ControlFlowDialect,
                  LLVM::LLVMDialect, NVVM::NVVMDialect>();
  registerTranslations(registry);
}

static graph::FuncOp onlyFunc(ModuleOp module) {
  return *module.getOps<graph::FuncOp>().begin();
}

static SmallVector<Operation *> kernelOps(graph::FuncOp f) {
  SmallVector<Operation *> ops;
  for (Operation &op : f.getBody().front().without_terminator())
    if (isKernelOp(&op))
      ops.push_back(&op);
  return ops;
}

char InputError::ID = 0;

static llvm::Error internalError(const Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "internal error: " + what);
}

llvm::Expected<OwningOpRef<ModuleOp>>
buildKernels(graph::FuncOp func, const CompileOptions &options) {
  MLIRContext *ctx = func.getContext();
  OwningOpRef<ModuleOp> module = ModuleOp::create(func.getLoc());
  module->push_back(func.clone());
  PassManager fusion(ctx);
  buildFusionPipeline(fusion, options.explainFusion);
  if (failed(fusion.run(*module)))
    return internalError("fusion failed for graph '" + func.getSymName() + "'");
  SmallVector<Operation *> ops = kernelOps(onlyFunc(*module));
  for (auto &[index, schedule] : options.schedules) {
    std::string name = kernelName(func.getSymName(), index);
    if (index >= ops.size())
      return llvm::make_error<InputError>(
          "--schedule for " + name + ": graph '" + func.getSymName().str() +
          "' has " + std::to_string(ops.size()) +
          (ops.size() == 1 ? " kernel" : " kernels"));
    std::string err = checkSchedule(ops[index], schedule);
    if (!err.empty())
      return llvm::make_error<InputError>("schedule '" + schedule.str() +
                                          "' cannot be used for " + name +
                                          ": " + err);
    // wgmma and TMA exist only on sm_90a; the error points at the nodes
    // the kernel computes.
    if (schedule.kind == ScheduleKind::wgmma && !archHasWgmma(options.arch)) {
      mlir::emitError(ops[index]->getLoc())
          << "schedule '" << schedule.str() << "' cannot be used for " << name
          << ": the wgmma kind needs --arch sm_90a (Hopper's wgmma and TMA), "
             "and this compile targets "
          << options.arch;
      return llvm::make_error<ReportedError>();
    }
    ops[index]->setAttr("schedule", ScheduleAttr::get(ctx, schedule));
  }
  PassManager schedules(ctx);
  PipelineOptions pipeline;
  pipeline.target = options.target;
  pipeline.target.wgmma = archHasWgmma(options.arch);
  pipeline.explainSchedules = options.explainSchedule;
  buildSchedulePipeline(schedules, pipeline);
  if (failed(schedules.run(*module)))
    return internalError("scheduling failed for graph '" + func.getSymName() +
                         "'");
  return module;
}

//===----------------------------------------------------------------------===//
// Manifest
//===----------------------------------------------------------------------===//

static std::string uniqueName(llvm::StringSet<> &used, StringRef base) {
  std::string name = base.str();
  for (int i = 1; used.contains(name); ++i)
    name = (base + "_" + Twine(i)).str();
  used.insert(name);
  return name;
}

static int64_t bytesOf(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  return tensorBytes(*dtypeOf(t.getElementType()),
                     numElements(t.getShape()).value_or(0));
}

static llvm::json::Object scheduleFields(const ScheduleParams &s) {
  llvm::json::Object o{{"kind", stringifyScheduleKind(s.kind)}};
  for (const ScheduleField &f : kScheduleFields)
    o[f.name] = s.*f.member;
  return o;
}

Manifest buildManifest(graph::FuncOp f, const CompileOptions &options) {
  Manifest m;
  m.mtcVersion = MTC_VERSION;
  m.graph = f.getSymName().str();
  m.source = options.sourceName;
  m.arch = options.arch;
  m.gridDependency = archHasGridDependency(options.arch);
  m.ptxFile =
      (options.outputName.empty() ? m.graph : options.outputName) + ".ptx";
  m.bindings = options.bindings;

  llvm::DenseMap<Value, std::string> bufferOf;
  llvm::StringSet<> used;
  Block &body = f.getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    auto t = cast<RankedTensorType>(arg.getType());
    BufferInfo b;
    b.name = uniqueName(used, f.getInputName(arg.getArgNumber()));
    b.role = BufferInfo::Role::Input;
    b.dtype = *dtypeOf(t.getElementType());
    b.shape.assign(t.getShape().begin(), t.getShape().end());
    bufferOf[arg] = b.name;
    m.buffers.push_back(std::move(b));
  }
  Operation *ret = f.getReturn();
  llvm::SmallPtrSet<Value, 8> returned(ret->operand_begin(),
                                       ret->operand_end());

  for (auto [i, op] : llvm::enumerate(kernelOps(f))) {
    auto schedule = op->getAttrOfType<ScheduleAttr>("schedule").getParams();
    LaunchConfig launch = launchConfig(op, schedule);
    Value result = op->getResult(0);
    auto nodes = op->getAttrOfType<ArrayAttr>("nodes");
    KernelInfo k;
    k.name = kernelName(m.graph, i);
    k.kind = isa<ContractOp>(op) ? "contract"
             : isa<ReduceOp>(op) ? "reduce"
                                 : "elementwise";
    for (Attribute n : nodes)
      k.nodes.push_back(cast<StringAttr>(n).getValue().str());

    BufferInfo out;
    out.name = uniqueName(used, k.nodes.empty() ? k.name : k.nodes.back());
    out.role = returned.contains(result) ? BufferInfo::Role::Output
                                         : BufferInfo::Role::Intermediate;
    auto t = cast<RankedTensorType>(result.getType());
    out.dtype = *dtypeOf(t.getElementType());
    out.shape.assign(t.getShape().begin(), t.getShape().end());
    bufferOf[result] = out.name;

    llvm::SmallPtrSet<Value, 4> distinct;
    for (Value in : op->getOperands()) {
      k.params.push_back(bufferOf.lookup(in));
      if (distinct.insert(in).second)
        k.minBytes += bytesOf(in);
    }
    k.minBytes += bytesOf(result);
    k.params.push_back(out.name);
    m.buffers.push_back(std::move(out));
    if (launch.workspaceBytes) {
      BufferInfo ws;
      ws.name = uniqueName(used, k.name + "_workspace");
      ws.role = BufferInfo::Role::Workspace;
      ws.dtype = DType::I8;
      ws.shape = {launch.workspaceBytes};
      k.params.push_back(ws.name);
      m.buffers.push_back(std::move(ws));
    }
    for (const LaunchConfig::TmaOperand &t : launch.tmaOperands) {
      // Operand [rows, K] (its leading dims flattened into rows), seen as
      // {K, rows} with rows of K elements; an i4 operand's map moves bytes,
      // {K / 2, rows}.
      auto type = cast<RankedTensorType>(op->getOperand(t.operand).getType());
      DType dtype = *dtypeOf(type.getElementType());
      int64_t kDim = type.getShape().back();
      int64_t rows = type.getNumElements() / kDim;
      int64_t rowBytes = tensorBytes(dtype, kDim);
      TensorMapInfo map;
      map.param = t.operand;
      map.dims = {dtype == DType::I4 ? rowBytes : kDim, rows};
      map.strides = {rowBytes};
      map.box = {t.boxK, t.boxRows};
      std::optional<TensorMapInfo::Swizzle> swizzle =
          TensorMapInfo::swizzleOfBytes(t.swizzleBytes);
      assert(swizzle && "launch geometry asks for a swizzle TMA lacks");
      map.swizzle = *swizzle;
      map.l2Promotion = TensorMapInfo::L2Promotion::B256;
      k.tensorMaps.push_back(std::move(map));
    }
    k.grid = launch.grid;
    k.block = launch.block;
    k.sharedBytes = launch.sharedBytes();
    k.dynamicSharedBytes = launch.dynamicSharedBytes;
    k.schedule = schedule.str();
    k.scheduleFields = scheduleFields(schedule);
    if (auto c = dyn_cast<ContractOp>(op)) {
      ContractShape shape = contractShape(c);
      k.flops = 2.0 * double(shape.m) * double(shape.n) * double(shape.k);
    } else if (auto r = dyn_cast<ReduceOp>(op)) {
      // One term and one addition per element of the iteration space (and
      // with apply, an element computed per element again).
      k.flops = (r.hasApply() ? 3.0 : 2.0) * double(r.getNumRows()) *
                double(r.getExtent());
    } else {
      k.flops = double(numElementsOf(result.getType()));
    }
    if (auto it = options.tunedMicros.find(i); it != options.tunedMicros.end())
      k.tunedMicros = it->second;
    m.kernels.push_back(std::move(k));
  }
  for (Value v : ret->getOperands())
    m.outputs.push_back(bufferOf.lookup(v));
  return m;
}

//===----------------------------------------------------------------------===//
// Stages and dumps
//===----------------------------------------------------------------------===//

static std::string printModule(ModuleOp module, bool keep = true) {
  if (!keep)
    return "";
  std::string s;
  llvm::raw_string_ostream os(s);
  module->print(os);
  return s;
}

/// What each kernel of `m` computes, by the graph's lines: "wf
/// (file.graph:3), y (file.graph:4)". Built once per compilation for every
/// dump header and the PTX annotations (one walk of the graph, not one per
/// kernel and stage: graphs of many kernels made that quadratic).
static std::vector<std::string> kernelSources(graph::FuncOp original,
                                              const Manifest &m) {
  llvm::StringMap<std::string> where;
  original.walk([&](Operation *op) {
    StringRef name = nameFromLoc(op->getLoc());
    if (name.empty())
      return;
    if (auto named = dyn_cast<NameLoc>(op->getLoc()))
      if (auto file = dyn_cast<FileLineColLoc>(named.getChildLoc()))
        where[name] =
            (llvm::sys::path::filename(file.getFilename().getValue()) + ":" +
             Twine(file.getLine()))
                .str();
  });
  std::vector<std::string> sources;
  for (const KernelInfo &k : m.kernels) {
    std::string s;
    for (auto [i, n] : llvm::enumerate(k.nodes)) {
      if (i)
        s += ", ";
      s += n;
      if (auto it = where.find(n); it != where.end())
        s += " (" + it->second + ")";
    }
    sources.push_back(std::move(s));
  }
  return sources;
}

/// One comment line per kernel: what it computes and how it runs.
static std::string kernelSummary(const Manifest &m,
                                 ArrayRef<std::string> sources,
                                 StringRef comment) {
  std::string s;
  llvm::raw_string_ostream os(s);
  for (auto [k, source] : llvm::zip_equal(m.kernels, sources)) {
    os << comment << " kernel " << k.name << " (" << k.kind << "): " << source
       << "\n";
    os << comment << "   schedule " << k.schedule << ", grid [" << k.grid[0]
       << ", " << k.grid[1] << ", " << k.grid[2] << "], block [" << k.block[0]
       << ", " << k.block[1] << ", " << k.block[2] << "], shared "
       << k.sharedBytes << " B";
    if (k.tunedMicros)
      os << ", tuned: " << llvm::format("%.2f", *k.tunedMicros) << " us";
    os << "\n";
  }
  return s;
}

static std::string header(const Manifest &m, ArrayRef<std::string> sources,
                          StringRef comment, StringRef stage) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << comment << " mtc " << MTC_VERSION << ": graph " << m.graph;
  if (!m.source.empty())
    os << " from " << m.source;
  os << ", " << m.arch << "\n" << comment << " stage: " << stage << "\n";
  os << kernelSummary(m, sources, comment);
  return s;
}

/// Puts each kernel's summary right above its .entry in the PTX.
static std::string annotatePtx(StringRef ptx, const Manifest &m,
                               ArrayRef<std::string> sources) {
  llvm::StringMap<unsigned> kernelIndex;
  for (auto [i, k] : llvm::enumerate(m.kernels))
    kernelIndex.try_emplace(k.name, i);
  std::string out;
  llvm::raw_string_ostream os(out);
  SmallVector<StringRef> lines;
  ptx.split(lines, '\n');
  for (StringRef line : lines) {
    // ".entry <name>(": the name runs to the parenthesis.
    constexpr llvm::StringLiteral entry = ".entry ";
    if (size_t at = line.find(entry); at != StringRef::npos) {
      StringRef rest = line.substr(at + entry.size());
      size_t paren = rest.find('(');
      auto it = paren == StringRef::npos
                    ? kernelIndex.end()
                    : kernelIndex.find(rest.take_front(paren));
      if (it != kernelIndex.end()) {
        const KernelInfo &k = m.kernels[it->second];
        os << "// mtc kernel " << k.name << ": " << sources[it->second] << "\n";
        os << "//   " << k.kind << ", schedule " << k.schedule << "\n";
      }
    }
    os << line << "\n";
  }
  return out;
}

llvm::Expected<CompiledGraph> compileGraph(graph::FuncOp func,
                                           const CompileOptions &options) {
  MLIRContext *ctx = func.getContext();
  CompiledGraph out;
  out.name =
      options.outputName.empty() ? func.getSymName().str() : options.outputName;
  std::string graphText;
  {
    OwningOpRef<ModuleOp> g = ModuleOp::create(func.getLoc());
    g->push_back(func.clone());
    graphText = printModule(*g, options.keepStages);
  }

  llvm::Expected<OwningOpRef<ModuleOp>> kernels = buildKernels(func, options);
  if (!kernels)
    return kernels.takeError();
  OwningOpRef<ModuleOp> module = std::move(*kernels);
  out.manifest = buildManifest(onlyFunc(*module), options);
  const Manifest &m = out.manifest;
  std::vector<std::string> sources = kernelSources(func, m);

  out.stages.push_back(
      {"1-graph.mlir",
       header(m, sources, "//", "graph (as parsed)") + graphText});
  out.stages.push_back(
      {"2-kernel.mlir",
       header(m, sources, "//",
              "kernel (canonicalize, mtc-fuse, mtc-assign-schedules)") +
           printModule(*module, options.keepStages)});

  // Kernels compiled before (same IR, schedules, target and mtc) skip the
  // lowering and LLVM altogether; their intermediate stages stay empty.
  std::string cachePath;
  if (!options.ptxCacheDir.empty() && !options.keepStages) {
    cachePath = ptxCachePath(options.ptxCacheDir, *module, options.arch,
                             options.fastDequant);
    if (std::optional<std::string> hit = loadCachedPtx(cachePath, m)) {
      out.ptx = header(m, sources, "//", "PTX (NVPTX backend)") +
                annotatePtx(*hit, m, sources);
      out.ptxFromCache = true;
      for (const char *suffix : {"3-nvvm.mlir", "4-llvm.mlir", "5-llvm.ll"})
        out.stages.push_back({suffix, ""});
      out.stages.push_back({"6.ptx", out.ptx});
      return out;
    }
  }

  PassManager nvvm(ctx);
  PipelineOptions pipeline;
  pipeline.fastDequant = options.fastDequant;
  pipeline.gridDependency = archHasGridDependency(options.arch);
  buildNVVMPipeline(nvvm, pipeline);
  if (failed(nvvm.run(*module)))
    return internalError("lowering to NVVM failed for graph '" + out.name +
                         "'");
  out.stages.push_back(
      {"3-nvvm.mlir",
       header(m, sources, "//", "gpu (mtc-lower-to-nvvm, canonicalize, cse)") +
           printModule(*module, options.keepStages)});

  PassManager llvmPm(ctx);
  buildLLVMPipeline(llvmPm);
  if (failed(llvmPm.run(*module)))
    return internalError("lowering to the LLVM dialect failed for graph '" +
                         out.name + "'");
  out.stages.push_back(
      {"4-llvm.mlir",
       header(m, sources, "//", "llvm dialect (mtc-lower-to-llvm)") +
           printModule(*module, options.keepStages)});

  llvm::Expected<PtxResult> ptx = emitPtx(*module, options.arch);
  if (!ptx)
    return internalError("PTX emission failed for graph '" + out.name +
                         "': " + llvm::toString(ptx.takeError()));
  if (!cachePath.empty())
    storeCachedPtx(cachePath, ptx->ptx);
  out.stages.push_back(
      {"5-llvm.ll", header(m, sources, ";", "LLVM IR after O3") + ptx->llvmIR});
  out.ptx = header(m, sources, "//", "PTX (NVPTX backend)") +
            annotatePtx(ptx->ptx, m, sources);
  out.stages.push_back({"6.ptx", out.ptx});
  return out;
}

llvm::Error writeFileAtomically(StringRef path, StringRef contents) {
  SmallString<256> tmp;
  int fd;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%", fd, tmp))
    return llvm::createStringError(ec, "cannot write '%s': %s",
                                   path.str().c_str(), ec.message().c_str());
  // Ctrl-C between here and the rename must not leave the temporary behind.
  llvm::sys::RemoveFileOnSignal(tmp);
  llvm::scope_exit forget([&] { llvm::sys::DontRemoveFileOnSignal(tmp); });
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << contents;
    os.close();
    if (os.has_error()) {
      std::error_code ec = os.error();
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      return llvm::createStringError(ec, "cannot write '%s': %s",
                                     path.str().c_str(), ec.message().c_str());
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    return llvm::createStringError(ec, "cannot write '%s': %s",
                                   path.str().c_str(), ec.message().c_str());
  }
  return llvm::Error::success();
}

} // namespace mtc
