//===- Ptx.h - LLVM dialect to LLVM IR to PTX -------------------*- C++ -*-===//
//
// Translation of the LLVM-dialect module to LLVM IR, LLVM's O3 pipeline with
// the NVPTX target machine's own passes, and PTX emission through the NVPTX
// backend, as Triton's llvm.cc does it.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_COMPILER_PTX_H
#define MTC_COMPILER_PTX_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mtc {

/// Architectures mtc emits PTX for (sm_90a: sm_90 with wgmma and TMA).
inline constexpr const char *kArchs[] = {"sm_80", "sm_89", "sm_90", "sm_90a"};
bool isSupportedArch(llvm::StringRef arch);
/// Whether `arch` has Hopper's wgmma and TMA (the wgmma kind).
inline bool archHasWgmma(llvm::StringRef arch) { return arch == "sm_90a"; }
/// Hopper's programmatic dependent launch (griddepcontrol, PTX 7.8): each
/// kernel may be launched while the previous one in its stream finishes,
/// and waits for it before touching memory.
inline bool archHasGridDependency(llvm::StringRef arch) {
  return arch.starts_with("sm_90");
}
/// "sm_80, sm_89, sm_90, sm_90a".
std::string supportedArchs();

struct PtxResult {
  std::string llvmIR; // optimized LLVM IR, as fed to the backend
  std::string ptx;
};

/// Registers the translations mtc uses (builtin, LLVM, NVVM) in `registry`.
void registerTranslations(mlir::DialectRegistry &registry);

/// `module` must hold only LLVM/NVVM dialect ops (after mtc-lower-to-llvm).
llvm::Expected<PtxResult> emitPtx(mlir::ModuleOp module, llvm::StringRef arch);

} // namespace mtc

#endif // MTC_COMPILER_PTX_H
