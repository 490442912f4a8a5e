//===- Wgmma.h - The wgmma contraction kind's emitter -----------*- C++ -*-===//
//
// Wgmma.cpp has the kernel (and its description); WgmmaPtx.cpp the inline
// PTX it is built from.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_PASSES_EMIT_WGMMA_H
#define MTC_PASSES_EMIT_WGMMA_H

#include "passes/emit/Contract.h"

namespace mtc::emit {

class WgmmaEmitter : public TensorCoreEmitter {
public:
  using TensorCoreEmitter::TensorCoreEmitter;

private:
  unsigned tensorMapParams() const override { return 2; }
  void assignPiece(mlir::Value bz) override { piece = bz; }
  void emitBody() override;

  /// Inline PTX with side effects and no results.
  void ptx(llvm::StringRef text, llvm::StringRef constraints,
           mlir::ValueRange operands = {});
  /// `regs` (i32 for the first `ints`, f32 after) through an empty asm with
  /// side effects: the compiler cannot move their definitions after, nor
  /// their uses before, the side-effecting asm around it.
  llvm::SmallVector<mlir::Value> pin(llvm::ArrayRef<mlir::Value> regs,
                                     size_t ints);
  /// A consumer thread's 16 halfwords of an int8 weight tile, by one asm
  /// of 16 ld.shared.u16 from the four 32-bit shared addresses `addrs` (one
  /// per k-step) and immediate offsets (+8, +512, +520): its k's 2 t +
  /// {0, 1} and + 8 of rows g and g + 8.
  llvm::SmallVector<mlir::Value> loadSharedHalves(mlir::ValueRange addrs);
  /// A consumer thread's 16 words of an int4 weight tile, by one asm of
  /// four ld.shared.v4: the 16-byte halves at `half0` and `half1` (32-bit
  /// shared addresses) of row g, then of row g + 8, 256 bytes on.
  llvm::SmallVector<mlir::Value> loadSharedRowsI4(mlir::Value half0,
                                                  mlir::Value half1);
  /// The 32-bit shared-window address of `ptr` (addrspace 3).
  mlir::Value sharedAddress(mlir::Value ptr);
  /// Waits until phase `parity` (i32, 0 or 1) of the mbarrier at shared
  /// address `bar` has completed.
  void waitParity(mlir::Value bar, mlir::Value parity);
  /// Every thread of every block of the cluster arrives, then waits for
  /// the others (release, then acquire: their shared-memory writes and
  /// mbarrier operations before it are visible after it).
  void clusterSync();
  /// acc += A B for one k16 step: A from the four registers `a`, B from the
  /// shared-memory descriptor `desc` (i64).
  void wgmma(llvm::ArrayRef<mlir::Value> a, mlir::Value desc,
             llvm::MutableArrayRef<mlir::Value> acc, bool f16);
  /// After the K loop, the kwarps warpgroups that took turns add their
  /// sums: warpgroup (q, r)'s `acc` (q > 0) through the ring at `ringAddr`
  /// into those of (0, r). `consumersMeet` is the named barrier of all the
  /// consumer threads.
  void addTurns(llvm::MutableArrayRef<mlir::Value> acc, mlir::Value q,
                mlir::Value r, mlir::Value ringAddr,
                llvm::StringRef consumersMeet);
};

} // namespace mtc::emit

#endif // MTC_PASSES_EMIT_WGMMA_H
