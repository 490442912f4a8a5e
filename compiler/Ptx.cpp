//===- Ptx.cpp - LLVM dialect to LLVM IR to PTX
//-----------------------------===//
#include "compiler/Ptx.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"

#include <mutex>

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

using namespace llvm;

namespace mtc {

bool isSupportedArch(StringRef arch) {
  return llvm::is_contained(kArchs, arch);
}

std::string supportedArchs() {
  return llvm::join(std::begin(kArchs), std::end(kArchs), ", ");
}

void registerTranslations(mlir::DialectRegistry &registry) {
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  mlir::registerNVVMDialectTranslation(registry);
}

static Error fail(const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), msg);
}

Expected<PtxResult> emitPtx(mlir::ModuleOp module, StringRef arch) {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  if (!isSupportedArch(arch))
    return fail("unsupported architecture '" + arch +
                "' (supported: " + supportedArchs() + ")");

  LLVMContext llvmCtx;
  std::unique_ptr<Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, llvmCtx, "mtc");
  if (!llvmModule)
    return fail("translation to LLVM IR failed");

  Triple triple("nvptx64-nvidia-cuda");
  std::string error;
  const Target *target = TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return fail("NVPTX target unavailable: " + error);
  TargetOptions options;
  std::unique_ptr<TargetMachine> tm(
      target->createTargetMachine(triple, arch, "+ptx80", options, Reloc::PIC_,
                                  std::nullopt, CodeGenOptLevel::Aggressive));
  if (!tm)
    return fail("cannot create the NVPTX target machine for " + arch);
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(tm->createDataLayout());

  {
    LoopAnalysisManager lam;
    FunctionAnalysisManager fam;
    CGSCCAnalysisManager cgam;
    ModuleAnalysisManager mam;
    PassBuilder pb(tm.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    ModulePassManager mpm =
        pb.buildPerModuleDefaultPipeline(OptimizationLevel::O3);
    mpm.run(*llvmModule, mam);
  }
  std::string verifyErrors;
  raw_string_ostream verifyOs(verifyErrors);
  if (verifyModule(*llvmModule, &verifyOs))
    return fail("LLVM IR verification failed: " + verifyErrors);

  PtxResult result;
  raw_string_ostream irOs(result.llvmIR);
  llvmModule->print(irOs, nullptr);

  SmallString<0> ptx;
  raw_svector_ostream ptxOs(ptx);
  legacy::PassManager codegen;
  if (tm->addPassesToEmitFile(codegen, ptxOs, nullptr,
                              CodeGenFileType::AssemblyFile))
    return fail("the NVPTX backend cannot emit assembly");
  codegen.run(*llvmModule);
  result.ptx = ptx.str().str();
  return result;
}

} // namespace mtc
