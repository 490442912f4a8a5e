//===- KernelEnums.h - The kernel dialect's enums ---------------*- C++ -*-===//
//
// ScheduleKind, generated from KernelOps.td, for the code that needs it
// without the ops (the schedule as plain data, Schedule.h).
//
//===----------------------------------------------------------------------===//
#ifndef MTC_DIALECTS_KERNEL_KERNELENUMS_H
#define MTC_DIALECTS_KERNEL_KERNELENUMS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMapInfo.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>

#include "dialects/Kernel/KernelEnums.h.inc"

#endif // MTC_DIALECTS_KERNEL_KERNELENUMS_H
