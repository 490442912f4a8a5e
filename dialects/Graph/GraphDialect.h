//===- GraphDialect.h - mtc graph dialect -----------------------*- C++ -*-===//
#ifndef MTC_DIALECTS_GRAPH_GRAPHDIALECT_H
#define MTC_DIALECTS_GRAPH_GRAPHDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/Graph/GraphDialect.h.inc"

#endif // MTC_DIALECTS_GRAPH_GRAPHDIALECT_H
