//===- KernelEnums.cpp - The kernel dialect's enums -----------------------===//
#include "dialects/Kernel/KernelEnums.h"

#include "dialects/Kernel/KernelEnums.cpp.inc"
