//===- FrontendOps.cpp - The ops a graph file may name --------------------===//
#include "compiler/FrontendOps.h"

#include "dialects/Graph/GraphOps.h"

using namespace mlir;
using namespace mtc;
using namespace mtc::graphfile;

namespace {
constexpr OpInfo kOps[] = {
    {"convert", OpKind::Convert, 2, "convert(t, dtype)"},
    {"linear", OpKind::Linear, 2, "linear(x, w)"},
    {"matmul", OpKind::Matmul, 2, "matmul(a, b)"},
    {"transpose", OpKind::Transpose, 1, "transpose(t)"},
    {"repeat", OpKind::Repeat, 2, "repeat(t, group)"},
    {"rope", OpKind::Rope, 3, "rope(x, table, cols)"},
    {"add", OpKind::Add, 2, "add(a, b)"},
    {"sub", OpKind::Sub, 2, "sub(a, b)"},
    {"mul", OpKind::Mul, 2, "mul(a, b)"},
    {"relu", OpKind::Relu, 1, "relu(t)"},
    {"silu", OpKind::Silu, 1, "silu(t)"},
    {"rsqrt", OpKind::Rsqrt, 1, "rsqrt(t)"},
    {"sum", OpKind::Sum, 1, "sum(t)"},
    {"mean", OpKind::Mean, 1, "mean(t)"},
};
} // namespace

ArrayRef<OpInfo> mtc::graphfile::graphOps() { return kOps; }

const OpInfo *mtc::graphfile::lookupOp(llvm::StringRef name) {
  for (const OpInfo &op : kOps)
    if (op.name == name)
      return &op;
  return nullptr;
}

bool mtc::graphfile::isBinary(OpKind k) {
  return k == OpKind::Add || k == OpKind::Sub || k == OpKind::Mul;
}

Value mtc::graphfile::createGraphOp(OpBuilder &builder, Location loc,
                                    const OpInfo &op, ArrayRef<Value> operands,
                                    RankedTensorType expected,
                                    const NodeAST &node) {
  switch (op.kind) {
  case OpKind::Convert:
    return graph::ConvertOp::create(builder, loc, expected, operands[0]);
  case OpKind::Linear:
    return graph::LinearOp::create(builder, loc, operands[0], operands[1]);
  case OpKind::Matmul:
    return graph::MatmulOp::create(builder, loc, operands[0], operands[1]);
  case OpKind::Transpose:
    return graph::TransposeOp::create(builder, loc, operands[0]);
  case OpKind::Repeat:
    return graph::RepeatOp::create(builder, loc, expected, operands[0],
                                   node.ints[1]);
  case OpKind::Rope:
    return graph::RopeOp::create(builder, loc, expected, operands[0],
                                 operands[1], node.ints[2]);
  case OpKind::Add:
    return graph::AddOp::create(builder, loc, operands[0], operands[1]);
  case OpKind::Sub:
    return graph::SubOp::create(builder, loc, operands[0], operands[1]);
  case OpKind::Mul:
    return graph::MulOp::create(builder, loc, operands[0], operands[1]);
  case OpKind::Relu:
    return graph::ReluOp::create(builder, loc, operands[0]);
  case OpKind::Silu:
    return graph::SiluOp::create(builder, loc, operands[0]);
  case OpKind::Rsqrt:
    return graph::RsqrtOp::create(builder, loc, operands[0]);
  case OpKind::Sum:
    return graph::SumOp::create(builder, loc, operands[0]);
  case OpKind::Mean:
    return graph::MeanOp::create(builder, loc, operands[0]);
  }
  llvm_unreachable("unknown graph-file op");
}
