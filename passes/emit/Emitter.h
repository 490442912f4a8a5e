//===- Emitter.h - What every kernel emitter shares -------------*- C++ -*-===//
//
// The kernel emitters write one `llvm.func` GPU kernel per scheduled kernel
// op, from scf loops and branches, arith, llvm memory ops and nvvm
// intrinsics; mtc-lower-to-llvm then lowers scf/arith, and NVPTX does the
// rest. `Emitter` is the part that does not depend on the op: the kernel
// function and its shared memory, vector loads and the conversion of their
// elements to f32, and the scalar ops of kernel regions.
//
// passes/emit/ holds: GpuBuilder.{h,cpp} (the builder they all use), this
// file and Emitter.cpp, Contract.{h,cpp} (what every contraction kind
// shares), TensorCore.cpp (what the mma and tiled kinds share), one file per
// contraction schedule kind (Simt.cpp, Mma.cpp, Tiled.cpp, registered in
// ContractKinds.def), Elementwise.cpp, and KernelEmitter.cpp (emitKernel,
// the entry point of passes/KernelEmitter.h).
//
//===----------------------------------------------------------------------===//
#ifndef MTC_PASSES_EMIT_EMITTER_H
#define MTC_PASSES_EMIT_EMITTER_H

#include "passes/KernelEmitter.h"
#include "passes/emit/GpuBuilder.h"

#include "dialects/Kernel/KernelOps.h"

#include "mlir/IR/IRMapping.h"

#include <string>

namespace mtc::emit {

/// Bytes loaded by one access: whole 32-bit words, or one narrower integer.
struct Raw {
  llvm::SmallVector<mlir::Value> words; // i32 (bytes >= 4)
  mlir::Value narrow;                   // i8 / i16 (bytes < 4)
  unsigned bytes = 0;
};

/// Bytes of one element of integer or float type `t`.
unsigned bytesOf(mlir::Type t);
/// The element type of the ranked tensor `v`.
mlir::Type elementTypeOf(mlir::Value v);
/// Row-major strides of `shape`.
llvm::SmallVector<int64_t> stridesOf(llvm::ArrayRef<int64_t> shape);

/// One kernel under construction: `g` builds at the insertion point, inside
/// `func` once beginKernel has created it.
class Emitter {
public:
  Emitter(mlir::OpBuilder &b, mlir::Location loc, llvm::StringRef name,
          const EmitOptions &opts)
      : g(b, loc), name(name.str()), opts(opts) {}

  GpuBuilder g;
  std::string name;
  EmitOptions opts;
  mlir::LLVM::LLVMFuncOp func;
  /// f32 division as div.full.f32 (2 ulp, a few instructions) instead of
  /// IEEE division (a dozen, with a slow path): the kinds turn it on where
  /// their registers allow.
  bool fastDivide = false;

  //===--------------------------------------------------------------------===//
  // The kernel function and its shared memory
  //===--------------------------------------------------------------------===//

  /// Creates the kernel function and positions the builder in its body.
  /// Parameters are global pointers, the first `numReadOnly` read-only, but
  /// for the first `numTensorMaps`: TMA descriptors, 128 bytes by value
  /// (`.param .align 64 .b8 [128]`, grid constants: their address is what
  /// cp.async.bulk.tensor takes).
  void beginKernel(unsigned numParams, unsigned numReadOnly, int64_t threads,
                   int64_t maxRegs, unsigned numTensorMaps = 0);
  void endKernel();
  mlir::Value param(unsigned i) { return func.getArgument(i); }

  /// A shared-memory array of `count` elements of `type`, private to this
  /// kernel.
  mlir::Value sharedArray(llvm::StringRef suffix, mlir::Type type,
                          int64_t count);
  /// The kernel's dynamic shared memory (its size is given at launch).
  mlir::Value dynamicShared();
  mlir::Value sharedElem(mlir::Value base, mlir::Value index /*i32*/,
                         unsigned elemBytes);

  //===--------------------------------------------------------------------===//
  // Loads and element extraction
  //===--------------------------------------------------------------------===//

  /// Steps [begin, end) of a K loop, `unroll` at a time: a loop over groups
  /// of `unroll` steps (`step(first, unroll, iters)`), then single steps for
  /// the remainder.
  using Step = llvm::function_ref<llvm::SmallVector<mlir::Value>(
      mlir::Value first, int64_t n, mlir::ValueRange iters)>;
  llvm::SmallVector<mlir::Value> unrolledLoop(mlir::Value begin,
                                              mlir::Value end, int64_t unroll,
                                              mlir::ValueRange init, Step step);
  /// unrolledLoop software-pipelined over registers: the loads of the next
  /// group of `unroll` steps (`load(first, n)`, which returns the loaded
  /// values) are issued before the current group computes (`compute(first,
  /// n, loaded, iters)`, given what `load` returned for that group), so a
  /// warp keeps a group's loads in flight while it computes. The remainder's
  /// single steps load and compute in turn.
  using Load = llvm::function_ref<llvm::SmallVector<mlir::Value>(
      mlir::Value first, int64_t n)>;
  using Compute = llvm::function_ref<llvm::SmallVector<mlir::Value>(
      mlir::Value first, int64_t n, llvm::ArrayRef<mlir::Value> loaded,
      mlir::ValueRange iters)>;
  llvm::SmallVector<mlir::Value> pipelinedLoop(mlir::Value begin,
                                               mlir::Value end, int64_t unroll,
                                               mlir::ValueRange init, Load load,
                                               Compute compute);
  /// The single steps past the last whole group of `unroll` (both loops'
  /// remainder): steps begin + groups * unroll .. end - 1.
  llvm::SmallVector<mlir::Value>
  remainderSteps(mlir::Value begin, mlir::Value end, int64_t unroll,
                 mlir::Value groups, mlir::ValueRange acc, Step step);

  Raw loadRaw(mlir::Value ptr, unsigned bytes, bool invariant);
  /// loadRaw for a weight stream, whose every byte is read once: loads of 4
  /// bytes and more are L1::evict_first, so the stream leaves L1 to the
  /// activations and group scales that the warps re-read. On an H200 this
  /// took int4 at M = 16 from 22.7 to 19.4 us on 14336 x 4096 and 29.2 to
  /// 22.5 on 8192 x 8192, int4 at M = 1 1-3% less, and left int8 within
  /// noise; L1::no_allocate and an L2 256-byte prefetch did no better
  /// (bench/results/2026-12-05-stream).
  Raw loadStream(mlir::Value ptr, unsigned bytes);
  /// The index (i64 per dimension) of flat row-major index `idx` (i64) in
  /// `shape`.
  llvm::SmallVector<mlir::Value> unflatten(mlir::Value idx,
                                           llvm::ArrayRef<int64_t> shape);
  /// The element offset (i64), in a row-major tensor of `shape`, of the
  /// element that indexing map `map` reads at iteration index `dims` (i64;
  /// results d_i, d_i floordiv G or 0).
  mlir::Value mapOffset(mlir::AffineMap map, llvm::ArrayRef<int64_t> shape,
                        llvm::ArrayRef<mlir::Value> dims);
  /// Element `off` (i64) of a tensor of `t` elements at `base`, read-only;
  /// for i4, its byte's low or high nibble.
  mlir::Value loadElement(mlir::Value base, mlir::Type t, mlir::Value off);
  /// The 32-bit word holding byte `byteOff` of `r` (zero-extended if narrow).
  mlir::Value wordOf(const Raw &r, unsigned byteOff);
  /// Element `e` (of `eb` bytes) of `r` as an integer of eb * 8 bits.
  mlir::Value rawElement(const Raw &r, unsigned e, unsigned eb);
  /// Reinterprets raw element bits as `elemType`.
  mlir::Value asElement(mlir::Value raw, mlir::Type elemType) {
    return g.bitcast(elemType, raw);
  }

  static bool isChain(llvm::ArrayRef<mlir::Operation *> chain, mlir::Type from,
                      mlir::Type to, bool signedIntToFloat);
  /// All `count` elements of `r` (element type `elemType`) converted to f32
  /// by `chain`.
  llvm::SmallVector<mlir::Value>
  convertAll(const Raw &r, unsigned count, mlir::Type elemType,
             llvm::ArrayRef<mlir::Operation *> chain);

  //===--------------------------------------------------------------------===//
  // Scalar region ops
  //===--------------------------------------------------------------------===//

  mlir::Value toF32(mlir::Value v);
  mlir::Value fromF32(mlir::Value v, mlir::Type t);
  /// Emits `op` with operands from `m`; lowers the ops whose meaning in a
  /// kernel region differs from their plain LLVM lowering.
  mlir::Value emitScalarOp(mlir::Operation *op, mlir::IRMapping &m);
  mlir::Value emitChain(llvm::ArrayRef<mlir::Operation *> chain, mlir::Value v);
  /// Where a region reads its output element's position (kernel.column,
  /// kernel.partner): the column `n` (i32) and the block's arguments at
  /// the partner element (n xor 1 of the same row), argument by argument.
  struct Position {
    mlir::Value column;
    llvm::function_ref<mlir::Value(unsigned)> partnerArg;
  };
  /// The block's ops on `args`; its yielded value. A kernel.partner is the
  /// slice before it emitted again on the partner's arguments (each block
  /// op at most twice).
  mlir::Value emitBlock(mlir::Block &block, mlir::ValueRange args,
                        const Position *position = nullptr);

  /// Butterfly reduction: every lane ends with the warp's sum.
  mlir::Value warpSum(mlir::Value v);
};

/// Emits the elementwise kernel op `op` (Elementwise.cpp).
mlir::LogicalResult emitElementwise(mlir::OpBuilder &b,
                                    kernel::ElementwiseOp op,
                                    llvm::StringRef name,
                                    const EmitOptions &opts);

/// Emits the row reduction op `op` (Reduce.cpp).
mlir::LogicalResult emitReduce(mlir::OpBuilder &b, kernel::ReduceOp op,
                               llvm::StringRef name, const EmitOptions &opts);

} // namespace mtc::emit

#endif // MTC_PASSES_EMIT_EMITTER_H
