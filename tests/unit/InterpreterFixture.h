//===- InterpreterFixture.h - Interpreter tests' set-up ---------*- C++ -*-===//
//
// What InterpreterTest.cpp, InterpreterElementwiseTest.cpp and
// InterpreterCompareTest.cpp share: tensors from values or a seed, the fixture
// that parses and runs a graph.func, and a check of a result's shape and
// values.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_TESTS_UNIT_INTERPRETERFIXTURE_H
#define MTC_TESTS_UNIT_INTERPRETERFIXTURE_H

#include "runtime/Interpreter.h"

#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace mtc::interpretertest {

inline const double kNaN = std::numeric_limits<double>::quiet_NaN();
inline const double kInf = std::numeric_limits<double>::infinity();

inline HostTensor tensor(DType t, llvm::ArrayRef<int64_t> shape,
                         llvm::ArrayRef<double> values) {
  HostTensor h(t, shape);
  EXPECT_EQ(int64_t(values.size()), h.numElements());
  for (size_t i = 0; i < values.size(); ++i)
    h.set(int64_t(i), values[i]);
  return h;
}

inline HostTensor randomTensor(DType t, llvm::ArrayRef<int64_t> shape,
                               uint64_t seed) {
  HostTensor h(t, shape);
  fillRandom(h, seed);
  return h;
}

class InterpreterTest : public ::testing::Test {
protected:
  InterpreterTest() {
    ctx.loadDialect<graph::GraphDialect>();
    ctx.allowUnregisteredDialects();
  }

  /// Parses a module holding one graph.func and returns the func.
  graph::FuncOp parse(llvm::StringRef text) {
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &ctx);
    if (!module)
      return nullptr;
    auto funcs = module->getOps<graph::FuncOp>();
    return funcs.empty() ? nullptr : *funcs.begin();
  }

  /// Parses and runs `text`; fails the test on any error.
  std::vector<RefTensor> run(llvm::StringRef text,
                             llvm::ArrayRef<HostTensor> inputs,
                             unsigned threads = 0) {
    graph::FuncOp func = parse(text);
    EXPECT_TRUE(func) << "cannot parse:\n" << text.str();
    if (!func)
      return {};
    llvm::Expected<std::vector<RefTensor>> out =
        interpretGraph(func, inputs, threads);
    if (!out) {
      ADD_FAILURE() << llvm::toString(out.takeError());
      return {};
    }
    return std::move(*out);
  }

  /// Runs `text` expecting an error, and returns its message.
  std::string runError(llvm::StringRef text,
                       llvm::ArrayRef<HostTensor> inputs) {
    graph::FuncOp func = parse(text);
    EXPECT_TRUE(func) << "cannot parse:\n" << text.str();
    if (!func)
      return "";
    llvm::Expected<std::vector<RefTensor>> out = interpretGraph(func, inputs);
    if (out) {
      ADD_FAILURE() << "expected an error";
      return "";
    }
    return llvm::toString(out.takeError());
  }

  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

inline void expectTensor(const RefTensor &t, llvm::ArrayRef<int64_t> shape,
                         llvm::ArrayRef<double> values) {
  EXPECT_EQ(llvm::ArrayRef<int64_t>(t.shape), shape);
  ASSERT_EQ(t.data.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i]))
      EXPECT_TRUE(std::isnan(t.data[i])) << "element " << i;
    else
      EXPECT_EQ(t.data[i], values[i]) << "element " << i;
  }
}

} // namespace mtc::interpretertest

#endif // MTC_TESTS_UNIT_INTERPRETERFIXTURE_H
