//===- Frontend.cpp - Graph files to the graph dialect --------------------===//
//
// Checks the syntax trees of GraphParser against the op rules of ShapeRules.h
// and builds one graph.func per graph. Every user error is found here, before
// an op is built, and reported at the offending token; the dialect verifier
// that runs at the end is only a safety net.
//
//===----------------------------------------------------------------------===//
#include "compiler/Frontend.h"
#include "compiler/FrontendOps.h"
#include "compiler/GraphParser.h"

#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::graphfile;

namespace {

bool isNumber(const Token &t) {
  return t.is(TokKind::Integer) || t.is(TokKind::Float);
}

/// "bf16[1, 4096]", the way graph files write types.
std::string formatType(RankedTensorType type) {
  std::optional<DType> dtype = dtypeOf(type.getElementType());
  return (dtype ? dtypeName(*dtype).str() : std::string("?")) +
         formatShape(type.getShape());
}

/// A value in scope: the SSA value and where its name was defined.
struct Binding {
  Value value;
  SrcLoc loc;
};

/// Checks a parsed file and builds its module, reporting the first error.
class GraphBuilder {
public:
  GraphBuilder(MLIRContext *ctx, StringAttr file,
               const FrontendOptions &options)
      : ctx(ctx), file(file), options(options), builder(ctx) {}

  OwningOpRef<ModuleOp> build(const FileAST &ast);

private:
  Location fileLoc(SrcLoc loc) {
    return FileLineColLoc::get(file, loc.line, loc.col);
  }
  Location nameLoc(const Token &name, SrcLoc at) {
    return NameLoc::get(StringAttr::get(ctx, name.text), fileLoc(at));
  }
  InFlightDiagnostic error(SrcLoc loc) { return emitError(fileLoc(loc)); }

  LogicalResult resolveType(const TypeAST &type, RankedTensorType &out);
  LogicalResult buildGraph(const GraphAST &graph);
  LogicalResult buildNode(const NodeAST &node);
  LogicalResult buildReturn(const GraphAST &graph, graph::FuncOp func);
  LogicalResult lookup(const Token &name, Value &out);
  /// Notes on `diag`, for each of `node`'s operands that a repeat made,
  /// how its columns came about: a group-wise scale whose group size does
  /// not divide the other operand's K, or with the wrong number of groups.
  void noteRepeats(InFlightDiagnostic &diag, const NodeAST &node,
                   ArrayRef<Value> operands);
  /// Fails, at the argument, unless argument `i` of `node` (repeat's group
  /// size, rope's cols: `what`) is an integer literal.
  LogicalResult integerLiteral(const OpInfo &op, const NodeAST &node,
                               unsigned i, StringRef what);

  MLIRContext *ctx;
  StringAttr file;
  const FrontendOptions &options;
  OpBuilder builder;
  /// Graph names defined so far, with where.
  llvm::StringMap<SrcLoc> graphs;
  /// The current graph's values.
  llvm::StringMap<Binding> scope;
};

} // namespace

LogicalResult GraphBuilder::resolveType(const TypeAST &type,
                                        RankedTensorType &out) {
  Shape shape;
  for (const DimAST &dim : type.dims) {
    if (!dim.isSymbolic()) {
      shape.push_back(dim.value);
      continue;
    }
    std::string name = quote(dim.tok.text);
    auto it = options.bindings.find(dim.tok.text);
    if (it == options.bindings.end())
      return error(dim.tok.loc)
             << "symbolic dimension '" << name << "' has no value; pass --bind "
             << name << "=<n>";
    if (it->second <= 0)
      return error(dim.tok.loc)
             << "symbolic dimension '" << name << "' is bound to " << it->second
             << "; dimensions must be positive";
    shape.push_back(it->second);
  }
  std::string err;
  if (!checkTensorType(type.dtype, shape, err))
    return error(type.start.loc) << err;
  out = RankedTensorType::get(shape, toMlirType(ctx, type.dtype));
  return success();
}

LogicalResult GraphBuilder::lookup(const Token &name, Value &out) {
  auto it = scope.find(name.text);
  if (it == scope.end())
    return error(name.loc) << "undefined name '" << quote(name.text) << "'";
  out = it->second.value;
  return success();
}

void GraphBuilder::noteRepeats(InFlightDiagnostic &diag, const NodeAST &node,
                               ArrayRef<Value> operands) {
  for (auto [i, v] : llvm::enumerate(operands)) {
    auto rep = v.getDefiningOp<graph::RepeatOp>();
    if (!rep || operands.size() != 2)
      continue;
    auto in = cast<RankedTensorType>(rep.getInput().getType());
    int64_t group = int64_t(rep.getGroup()), groups = in.getShape().back();
    int64_t cols = groups * group;
    int64_t other =
        cast<RankedTensorType>(operands[1 - i].getType()).getShape().back();
    if (other == cols || other == 1)
      continue;
    Diagnostic &note = diag.attachNote(rep.getLoc());
    note << "'" << node.args[i].text << "' repeats " << formatType(in)
         << " in groups of " << group << ": " << cols << " columns; ";
    if (other % group)
      note << "the group size " << group << " does not divide " << other;
    else
      note << other << " columns take " << other / group << " groups of "
           << group << ", not " << groups;
  }
}

OwningOpRef<ModuleOp> GraphBuilder::build(const FileAST &ast) {
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc(SrcLoc()));
  builder.setInsertionPointToEnd(module->getBody());
  for (const GraphAST &graph : ast.graphs) {
    if (failed(buildGraph(graph)))
      return nullptr;
    builder.setInsertionPointToEnd(module->getBody());
  }
  if (failed(verify(*module))) {
    emitError(fileLoc(SrcLoc()))
        << "internal error: the IR built from this file does not verify; "
           "please report this";
    return nullptr;
  }
  return module;
}

LogicalResult GraphBuilder::buildGraph(const GraphAST &graph) {
  auto [prev, inserted] = graphs.try_emplace(graph.name.text, graph.name.loc);
  if (!inserted) {
    InFlightDiagnostic diag = error(graph.name.loc)
                              << "duplicate graph name '"
                              << quote(graph.name.text) << "'";
    diag.attachNote(fileLoc(prev->second)) << "previous definition is here";
    return diag;
  }

  SmallVector<Type> inputs, results;
  for (const ParamAST &param : graph.params) {
    RankedTensorType type;
    if (failed(resolveType(param.type, type)))
      return failure();
    inputs.push_back(type);
  }
  for (const TypeAST &result : graph.results) {
    RankedTensorType type;
    if (failed(resolveType(result, type)))
      return failure();
    if (result.dtype == DType::I4)
      return error(result.start.loc)
             << "graph results cannot be i4; i4 is a storage type for "
                "weights (graph inputs, converted before use)";
    results.push_back(type);
  }

  auto func =
      graph::FuncOp::create(builder, fileLoc(graph.name.loc), graph.name.text,
                            builder.getFunctionType(inputs, results));
  Block *entry = new Block();
  func.getBody().push_back(entry);
  // A fresh map: clear() would cost as much as the largest graph so far.
  scope = llvm::StringMap<Binding>();
  for (auto [param, type] : llvm::zip_equal(graph.params, inputs)) {
    Value arg = entry->addArgument(type, nameLoc(param.name, param.name.loc));
    auto [it, fresh] =
        scope.try_emplace(param.name.text, Binding{arg, param.name.loc});
    if (!fresh) {
      InFlightDiagnostic diag = error(param.name.loc)
                                << "redefinition of '" << quote(param.name.text)
                                << "'";
      diag.attachNote(fileLoc(it->second.loc)) << "previous definition is here";
      return diag;
    }
  }

  builder.setInsertionPointToEnd(entry);
  for (const NodeAST &node : graph.nodes)
    if (failed(buildNode(node)))
      return failure();
  return buildReturn(graph, func);
}

LogicalResult GraphBuilder::integerLiteral(const OpInfo &op,
                                           const NodeAST &node, unsigned i,
                                           StringRef what) {
  const Token &arg = node.args[i];
  if (arg.is(TokKind::Integer))
    return success();
  return error(arg.loc) << op.name << ": " << what
                        << " must be an integer literal, got '"
                        << quote(arg.text) << "' (" << op.signature << ")";
}

LogicalResult GraphBuilder::buildNode(const NodeAST &node) {
  if (auto it = scope.find(node.name.text); it != scope.end()) {
    InFlightDiagnostic diag = error(node.name.loc)
                              << "redefinition of '" << quote(node.name.text)
                              << "'";
    diag.attachNote(fileLoc(it->second.loc)) << "previous definition is here";
    return diag;
  }

  const OpInfo *op = lookupOp(node.op.text);
  if (!op) {
    InFlightDiagnostic diag = error(node.op.loc)
                              << "unknown op '" << quote(node.op.text)
                              << "'; expected one of ";
    llvm::interleaveComma(graphOps(), diag,
                          [&](const OpInfo &info) { diag << info.name; });
    return diag;
  }
  if (node.args.size() != op->arity)
    return error(node.op.loc)
           << op->name << " takes " << op->arity << " argument"
           << (op->arity == 1 ? "" : "s") << ", " << op->signature << ", got "
           << node.args.size();

  // Operands; convert's second argument is a dtype, repeat's an integer.
  // One operand of add, sub and mul may be a number: a graph.constant of
  // the other operand's element type.
  unsigned numValues = op->numValues();
  ArrayRef<Token> valueArgs = ArrayRef(node.args).take_front(numValues);
  std::optional<unsigned> literal;
  for (auto [i, arg] : llvm::enumerate(valueArgs)) {
    if (!isNumber(arg))
      continue;
    if (!isBinary(op->kind))
      return error(arg.loc)
             << op->name << ": expected a value name, got the "
             << (arg.is(TokKind::Integer) ? "integer" : "number") << " '"
             << quote(arg.text) << "' (" << op->signature << ")";
    if (literal)
      return error(arg.loc) << op->name << ": at most one argument may be a "
                            << "number; the other must be a value name";
    literal = unsigned(i);
  }
  SmallVector<Value, 2> operands;
  SmallVector<RankedTensorType, 2> types;
  SmallVector<DType, 2> dtypes;
  for (auto [i, arg] : llvm::enumerate(valueArgs)) {
    Value v;
    if (literal == i) {
      // Its type is the other operand's; built below, once that is known.
      operands.push_back(Value());
      types.push_back(RankedTensorType());
      dtypes.push_back(DType::F32);
      continue;
    }
    if (failed(lookup(arg, v)))
      return failure();
    auto type = cast<RankedTensorType>(v.getType());
    operands.push_back(v);
    types.push_back(type);
    dtypes.push_back(*dtypeOf(type.getElementType()));
  }
  if (literal) {
    unsigned other = 1 - *literal;
    const Token &arg = valueArgs[*literal];
    std::string err;
    if (!checkFloatType(op->name, dtypes[other], err))
      return error(arg.loc) << err << "; a number takes the type of the "
                            << "other operand";
    auto type = RankedTensorType::get({1}, types[other].getElementType());
    std::string name = (node.name.text + "_" + std::to_string(*literal)).str();
    operands[*literal] = graph::ConstantOp::create(
        builder, NameLoc::get(StringAttr::get(ctx, name), fileLoc(arg.loc)),
        type, builder.getF64FloatAttr(node.numbers[*literal]));
    types[*literal] = type;
    dtypes[*literal] = dtypes[other];
  }

  // The result's shape and dtype, by the rules the verifiers use too.
  std::string err;
  Shape shape;
  DType dtype = dtypes[0];
  bool ok = true;
  switch (op->kind) {
  case OpKind::Convert: {
    const Token &target = node.args[1];
    std::optional<DType> to = parseDType(target.text);
    if (!to)
      return error(target.loc) << "unknown dtype '" << quote(target.text)
                               << "'; expected one of " << dtypeNames();
    if (!checkI4Use(op->name, dtypes[0], to, err))
      return error(target.loc) << err;
    dtype = *to;
    shape.assign(types[0].getShape().begin(), types[0].getShape().end());
    break;
  }
  case OpKind::Repeat: {
    if (failed(integerLiteral(*op, node, 1, "the group size")))
      return failure();
    if (!repeatShape(types[0].getShape(), node.ints[1], shape, err))
      return error(node.args[1].loc) << err;
    break;
  }
  case OpKind::Rope: {
    if (failed(integerLiteral(*op, node, 2, "cols")))
      return failure();
    ok = ropeShape(types[0].getShape(), dtypes[0], types[1].getShape(),
                   dtypes[1], node.ints[2], shape, err);
    dtype = DType::F32;
    break;
  }
  case OpKind::Linear:
    ok = checkSameFloatTypes(op->name, dtypes[0], dtypes[1], err) &&
         linearShape(types[0].getShape(), types[1].getShape(), shape, err);
    break;
  case OpKind::Matmul:
    ok = checkSameFloatTypes(op->name, dtypes[0], dtypes[1], err) &&
         matmulShape(types[0].getShape(), types[1].getShape(), shape, err);
    break;
  case OpKind::Transpose:
    ok = transposeShape(types[0].getShape(), shape, err);
    break;
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
    ok = checkSameFloatTypes(op->name, dtypes[0], dtypes[1], err);
    if (ok && !broadcastShapes(types[0].getShape(), types[1].getShape(), shape,
                               err)) {
      InFlightDiagnostic diag = error(node.op.loc)
                                << (op->name + ": " + err).str();
      noteRepeats(diag, node, operands);
      return diag;
    }
    break;
  case OpKind::Relu:
  case OpKind::Silu:
  case OpKind::Rsqrt:
    ok = checkFloatType(op->name, dtypes[0], err);
    shape.assign(types[0].getShape().begin(), types[0].getShape().end());
    break;
  case OpKind::Sum:
  case OpKind::Mean:
    ok = checkFloatType(op->name, dtypes[0], err) &&
         rowReductionShape(types[0].getShape(), shape, err);
    break;
  }
  // i4 is a storage type: only convert may read it.
  if (op->kind != OpKind::Convert)
    for (DType d : dtypes)
      if (ok && !checkI4Use(op->name, d, std::nullopt, err))
        ok = false;
  if (ok && !checkShape(shape, err)) {
    err = (op->name + ": result " + err).str();
    ok = false;
  }
  if (!ok)
    return error(node.op.loc) << err;
  auto expected = RankedTensorType::get(shape, toMlirType(ctx, dtype));

  Location loc = nameLoc(node.name, node.op.loc);
  Value result = createGraphOp(builder, loc, *op, operands, expected, node);
  if (result.getType() != expected)
    return error(node.op.loc)
           << "internal error: graph." << op->name << " inferred type "
           << result.getType() << " but the front end computed " << expected
           << "; please report this";
  scope.try_emplace(node.name.text, Binding{result, node.name.loc});
  return success();
}

LogicalResult GraphBuilder::buildReturn(const GraphAST &graph,
                                        graph::FuncOp func) {
  SmallVector<Value> values;
  for (const Token &name : graph.returned) {
    Value v;
    if (failed(lookup(name, v)))
      return failure();
    values.push_back(v);
  }

  ArrayRef<Type> declared = func.getFunctionType().getResults();
  size_t want = declared.size(), got = values.size();
  if (got != want) {
    // Point at the first surplus value, or at `return` if values are missing.
    SrcLoc at = got > want ? graph.returned[want].loc : graph.returnTok.loc;
    return error(at) << "graph '" << quote(graph.name.text) << "' declares "
                     << want << " result" << (want == 1 ? "" : "s")
                     << " but returns " << got << " value"
                     << (got == 1 ? "" : "s");
  }
  for (size_t i = 0; i < got; ++i) {
    if (values[i].getType() == declared[i])
      continue;
    InFlightDiagnostic diag =
        error(graph.returned[i].loc)
        << "returned value '" << quote(graph.returned[i].text) << "' has type "
        << formatType(cast<RankedTensorType>(values[i].getType()))
        << " but result #" << i << " of graph '" << quote(graph.name.text)
        << "' is declared as "
        << formatType(cast<RankedTensorType>(declared[i]));
    diag.attachNote(fileLoc(graph.results[i].start.loc))
        << "result #" << i << " is declared here";
    return diag;
  }
  graph::ReturnOp::create(builder, fileLoc(graph.returnTok.loc), values);
  return success();
}

OwningOpRef<ModuleOp> mtc::parseGraphSource(llvm::SourceMgr &sm,
                                            MLIRContext *ctx,
                                            const FrontendOptions &options) {
  ctx->getOrLoadDialect<graph::GraphDialect>();
  if (sm.getNumBuffers() == 0) {
    emitError(UnknownLoc::get(ctx)) << "no graph source was given";
    return nullptr;
  }
  const llvm::MemoryBuffer *buffer = sm.getMemoryBuffer(sm.getMainFileID());
  StringAttr file = StringAttr::get(ctx, buffer->getBufferIdentifier());

  FileAST ast;
  ParseError parseError;
  if (!parseGraphFile(buffer->getBuffer(), ast, parseError)) {
    auto loc = [&](SrcLoc l) {
      return FileLineColLoc::get(file, l.line, l.col);
    };
    emitError(loc(parseError.loc)) << parseError.message;
    return nullptr;
  }
  return GraphBuilder(ctx, file, options).build(ast);
}

std::vector<std::string> mtc::symbolicDims(llvm::SourceMgr &sm) {
  std::vector<std::string> names;
  if (sm.getNumBuffers() == 0)
    return names;
  FileAST ast;
  ParseError error;
  if (!parseGraphFile(sm.getMemoryBuffer(sm.getMainFileID())->getBuffer(), ast,
                      error))
    return names;
  llvm::StringSet<> seen;
  auto visit = [&](const TypeAST &type) {
    for (const DimAST &dim : type.dims)
      if (dim.isSymbolic() && seen.insert(dim.tok.text).second)
        names.push_back(dim.tok.text.str());
  };
  for (const GraphAST &graph : ast.graphs) {
    for (const ParamAST &param : graph.params)
      visit(param.type);
    for (const TypeAST &result : graph.results)
      visit(result);
  }
  return names;
}
