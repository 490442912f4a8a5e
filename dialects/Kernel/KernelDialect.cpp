//===- KernelDialect.cpp - mtc kernel dialect
//------------------------------===//
#include "dialects/Kernel/KernelDialect.h"
#include "dialects/Kernel/KernelOps.h"
#include "dialects/Kernel/Schedule.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mtc::kernel;

#include "dialects/Kernel/KernelDialect.cpp.inc"
#include "dialects/Kernel/KernelEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Kernel/KernelAttrs.cpp.inc"

void KernelDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Kernel/KernelOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Kernel/KernelAttrs.cpp.inc"
      >();
}
