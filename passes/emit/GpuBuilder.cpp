//===- GpuBuilder.cpp - Building GPU kernels in the LLVM dialect
//-----------===//
#include "passes/emit/GpuBuilder.h"

using namespace mlir;

namespace mtc {

GpuBuilder::GpuBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {
  MLIRContext *ctx = b.getContext();
  i1 = b.getI1Type();
  i8 = b.getI8Type();
  i16 = b.getI16Type();
  i32 = b.getI32Type();
  i64 = b.getI64Type();
  f32 = b.getF32Type();
  globalPtr = LLVM::LLVMPointerType::get(ctx, 1);
  sharedPtr = LLVM::LLVMPointerType::get(ctx, 3);
}

Value GpuBuilder::c32(int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
}
Value GpuBuilder::c64(int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
}
Value GpuBuilder::cf32(double v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

Value GpuBuilder::add(Value x, Value y) {
  return arith::AddIOp::create(b, loc, x, y);
}
Value GpuBuilder::sub(Value x, Value y) {
  return arith::SubIOp::create(b, loc, x, y);
}
Value GpuBuilder::mul(Value x, Value y) {
  return arith::MulIOp::create(b, loc, x, y);
}
Value GpuBuilder::udiv(Value x, Value y) {
  return arith::DivUIOp::create(b, loc, x, y);
}
Value GpuBuilder::urem(Value x, Value y) {
  return arith::RemUIOp::create(b, loc, x, y);
}
Value GpuBuilder::shl(Value x, Value y) {
  return arith::ShLIOp::create(b, loc, x, y);
}
Value GpuBuilder::lshr(Value x, Value y) {
  return arith::ShRUIOp::create(b, loc, x, y);
}
Value GpuBuilder::band(Value x, Value y) {
  return arith::AndIOp::create(b, loc, x, y);
}
Value GpuBuilder::bor(Value x, Value y) {
  return arith::OrIOp::create(b, loc, x, y);
}
Value GpuBuilder::bxor(Value x, Value y) {
  return arith::XOrIOp::create(b, loc, x, y);
}
Value GpuBuilder::umin(Value x, Value y) {
  return arith::MinUIOp::create(b, loc, x, y);
}
Value GpuBuilder::cmp(arith::CmpIPredicate p, Value x, Value y) {
  return arith::CmpIOp::create(b, loc, p, x, y);
}
Value GpuBuilder::andi(Value x, Value y) {
  return arith::AndIOp::create(b, loc, x, y);
}
Value GpuBuilder::select(Value c, Value x, Value y) {
  return arith::SelectOp::create(b, loc, c, x, y);
}
Value GpuBuilder::zext64(Value v) {
  if (v.getType() == i64)
    return v;
  return arith::ExtUIOp::create(b, loc, i64, v);
}
Value GpuBuilder::trunc(Type t, Value v) {
  if (v.getType() == t)
    return v;
  return arith::TruncIOp::create(b, loc, t, v);
}
Value GpuBuilder::bitcast(Type t, Value v) {
  if (v.getType() == t)
    return v;
  return arith::BitcastOp::create(b, loc, t, v);
}

Value GpuBuilder::fma(Value x, Value y, Value z) {
  return LLVM::FMAOp::create(b, loc, x, y, z);
}
Value GpuBuilder::fadd(Value x, Value y) {
  return arith::AddFOp::create(b, loc, x, y);
}
Value GpuBuilder::fsub(Value x, Value y) {
  return arith::SubFOp::create(b, loc, x, y);
}

Value GpuBuilder::tidX() { return NVVM::ThreadIdXOp::create(b, loc, i32); }
Value GpuBuilder::ctaidX() { return NVVM::BlockIdXOp::create(b, loc, i32); }
Value GpuBuilder::ctaidZ() { return NVVM::BlockIdZOp::create(b, loc, i32); }

Value GpuBuilder::gep(Value ptr, Value byteOffset) {
  return LLVM::GEPOp::create(b, loc, ptr.getType(), i8, ptr,
                             ValueRange{byteOffset},
                             LLVM::GEPNoWrapFlags::inbounds);
}

Value GpuBuilder::load(Type t, Value ptr, unsigned align, bool invariant) {
  return LLVM::LoadOp::create(b, loc, t, ptr, align, /*isVolatile=*/false,
                              /*isNonTemporal=*/false, invariant);
}

void GpuBuilder::store(Value v, Value ptr, unsigned align) {
  LLVM::StoreOp::create(b, loc, v, ptr, align);
}

Value GpuBuilder::prmt(Value lo, Value hi, uint32_t selector) {
  return NVVM::PermuteOp::create(b, loc, i32, lo, hi, c32(int32_t(selector)),
                                 NVVM::PermuteMode::DEFAULT);
}

SmallVector<Value> GpuBuilder::inlinePtx(TypeRange results, StringRef text,
                                         StringRef constraints,
                                         ValueRange operands,
                                         bool sideEffects) {
  // Several outputs come back as one struct.
  Type type;
  if (results.size() == 1)
    type = results.front();
  else if (!results.empty())
    type = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                            SmallVector<Type>(results));
  auto op = LLVM::InlineAsmOp::create(
      b, loc, type ? TypeRange(type) : TypeRange(), operands, text, constraints,
      sideEffects, /*is_align_stack=*/false, LLVM::TailCallKind::None,
      LLVM::AsmDialectAttr(), ArrayAttr());
  SmallVector<Value> out;
  if (results.size() == 1)
    out.push_back(op.getResult(0));
  else
    for (size_t i = 0; i < results.size(); ++i)
      out.push_back(LLVM::ExtractValueOp::create(b, loc, op.getResult(0), i));
  return out;
}

Value GpuBuilder::shflXor(Value v, int laneMask) {
  return NVVM::ShflOp::create(b, loc, v.getType(), c32(-1), v, c32(laneMask),
                              c32(0x1f), NVVM::ShflKind::bfly, UnitAttr());
}

void GpuBuilder::barrier() { NVVM::Barrier0Op::create(b, loc); }

void GpuBuilder::fenceGpu() {
  NVVM::MembarOp::create(b, loc, NVVM::MemScopeKind::GPU);
}

SmallVector<Value> GpuBuilder::forLoop(Value lb, Value ub, Value step,
                                       ValueRange init, LoopBody body) {
  auto loop = scf::ForOp::create(
      b, loc, lb, ub, step, init,
      [&](OpBuilder &nested, Location, Value iv, ValueRange iters) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nested.getInsertionBlock(),
                            nested.getInsertionPoint());
        SmallVector<Value> next = body(iv, iters);
        scf::YieldOp::create(b, loc, next);
      });
  return SmallVector<Value>(loop.getResults());
}

SmallVector<Value> GpuBuilder::ifElse(Value cond, TypeRange types, Branch then,
                                      Branch otherwise) {
  auto op = scf::IfOp::create(b, loc, types, cond, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&op.getThenRegion().front());
    SmallVector<Value> r = then();
    if (op.getThenRegion().front().empty() ||
        !op.getThenRegion().front().back().hasTrait<OpTrait::IsTerminator>())
      scf::YieldOp::create(b, loc, r);
    b.setInsertionPointToStart(&op.getElseRegion().front());
    SmallVector<Value> e = otherwise();
    if (op.getElseRegion().front().empty() ||
        !op.getElseRegion().front().back().hasTrait<OpTrait::IsTerminator>())
      scf::YieldOp::create(b, loc, e);
  }
  return SmallVector<Value>(op.getResults());
}

void GpuBuilder::ifThen(Value cond, llvm::function_ref<void()> then) {
  auto op = scf::IfOp::create(b, loc, TypeRange{}, cond,
                              /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op.getThenRegion().front().getTerminator());
  then();
}

} // namespace mtc
