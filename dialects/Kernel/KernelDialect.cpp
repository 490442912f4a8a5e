//===- KernelDialect.cpp - mtc kernel dialect -----------------------------===//
//
// The dialect itself: it registers the ops (ContractOp.cpp, KernelOps.cpp)
// and the attribute (KernelAttrs.cpp), and so sits above them.
//
//===----------------------------------------------------------------------===//
#include "dialects/Kernel/KernelDialect.h"
#include "dialects/Kernel/KernelOps.h"

using namespace mlir;
using namespace mtc::kernel;

#include "dialects/Kernel/KernelDialect.cpp.inc"

void KernelDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Kernel/ContractOp.cpp.inc"
      ,
#define GET_OP_LIST
#include "dialects/Kernel/KernelOps.cpp.inc"
      >();
  registerAttributes();
}
