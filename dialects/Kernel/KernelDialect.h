//===- KernelDialect.h - mtc kernel dialect ---------------------*- C++ -*-===//
#ifndef MTC_DIALECTS_KERNEL_KERNELDIALECT_H
#define MTC_DIALECTS_KERNEL_KERNELDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Dialect.h"

#include "dialects/Kernel/KernelDialect.h.inc"

#endif // MTC_DIALECTS_KERNEL_KERNELDIALECT_H
