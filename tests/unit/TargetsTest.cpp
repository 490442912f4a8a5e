//===- TargetsTest.cpp - --bind flags and the targets of a graph file -----===//
#include "compiler/Targets.h"
#include "compiler/Compiler.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace mtc;
using namespace llvm;

namespace {

/// The bindings of `flags`, which must parse.
Bindings bindings(std::vector<std::string> flags) {
  Expected<Bindings> b = parseBindings(flags);
  if (!b) {
    ADD_FAILURE() << toString(b.takeError());
    return {};
  }
  return std::move(*b);
}

/// The message of the InputError that `flags` give.
std::string bindError(std::vector<std::string> flags) {
  Expected<Bindings> b = parseBindings(flags);
  if (b)
    return "<no error>";
  Error e = b.takeError();
  EXPECT_TRUE(e.isA<InputError>());
  return toString(std::move(e));
}

TEST(ParseBindings, FixedValues) {
  Bindings b = bindings({"M=4", "N=8"});
  EXPECT_EQ(b.bucketSymbol, "");
  EXPECT_EQ(b.fixed.lookup("M"), 4);
  EXPECT_EQ(b.fixed.lookup("N"), 8);
  EXPECT_EQ(b.at(0),
            (std::vector<std::pair<std::string, int64_t>>{{"M", 4}, {"N", 8}}));
  // The same value twice is still one value.
  EXPECT_EQ(bindings({"M=4", "M=4"}).fixed.lookup("M"), 4);
  EXPECT_EQ(bindings({}).fixed.size(), 0u);
}

TEST(ParseBindings, BucketsSortedWithoutRepeats) {
  // cl::CommaSeparated splits "M=8,1,4" into "M=8", "1", "4": values after a
  // comma belong to the name before them.
  Bindings b = bindings({"M=8", "1", "4", "N=2", "M=4"});
  EXPECT_EQ(b.bucketSymbol, "M");
  EXPECT_EQ(b.bucketValues, (std::vector<int64_t>{1, 4, 8}));
  EXPECT_EQ(b.fixed.lookup("N"), 2);
  EXPECT_FALSE(b.fixed.count("M"));
  FrontendOptions fo = b.frontendFor(4);
  EXPECT_EQ(fo.bindings.lookup("M"), 4);
  EXPECT_EQ(fo.bindings.lookup("N"), 2);
  EXPECT_EQ(b.at(8),
            (std::vector<std::pair<std::string, int64_t>>{{"M", 8}, {"N", 2}}));
}

TEST(ParseBindings, Errors) {
  EXPECT_EQ(bindError({"4"}), "--bind expects NAME=N[,N...], got '4'");
  EXPECT_EQ(bindError({"=4"}), "--bind expects NAME=N[,N...], got '=4'");
  EXPECT_EQ(bindError({"M=x"}), "--bind expects NAME=N[,N...], got 'M=x'");
  EXPECT_EQ(bindError({"M=1", "two"}),
            "--bind expects NAME=N[,N...], got 'two'");
  EXPECT_EQ(bindError({"M=0"}), "--bind M=0: dimensions must be positive");
  EXPECT_EQ(bindError({"M=1", "-2"}),
            "--bind M=-2: dimensions must be positive");
  EXPECT_EQ(bindError({"M=1", "2", "N=1", "2"}),
            "--bind: only one symbol may take several values (M and N)");
}

/// A graph file in a fresh folder.
class TargetSetTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(sys::fs::createUniqueDirectory("mtc-targets-test", dir));
  }
  void TearDown() override { sys::fs::remove_directories(dir); }

  std::string write(StringRef name, StringRef text) {
    SmallString<128> p(dir);
    sys::path::append(p, name);
    std::error_code ec;
    raw_fd_ostream os(p, ec);
    EXPECT_FALSE(ec) << ec.message();
    os << text;
    return p.str().str();
  }

  SmallString<128> dir;
  std::string diagnostics;
  raw_string_ostream diag{diagnostics};
};

const char *kTwoGraphs =
    R"(graph g(x: bf16[M, 64], w: bf16[32, 64]) -> bf16[M, 32] {
  y = linear(x, w)
  return y
}
graph h(x: f32[M, 8]) -> f32[M, 8] {
  y = relu(x)
  return y
}
)";

TEST_F(TargetSetTest, OneTargetPerGraphAndBucket) {
  TargetSet set(diag);
  ASSERT_FALSE(bool(set.read(write("two.graph", kTwoGraphs))));
  ASSERT_FALSE(bool(set.parse(bindings({"M=4", "1"}), {})));
  ASSERT_EQ(set.targets().size(), 4u);
  std::vector<std::string> names;
  for (TargetSet::Target &t : set.targets())
    names.push_back(t.name + "@" + std::to_string(t.bucket));
  EXPECT_EQ(names,
            (std::vector<std::string>{"g.M1@1", "h.M1@1", "g.M4@4", "h.M4@4"}));
  auto type = cast<mlir::RankedTensorType>(
      set.targets()[2].graph.getFunctionType().getInput(0));
  EXPECT_EQ(type.getShape()[0], 4);
  // Parsed again at a value between the buckets (mtc run --batch).
  mlir::OwningOpRef<mlir::ModuleOp> at3 = set.parseAt(3);
  ASSERT_TRUE(at3);
  auto g3 = at3->lookupSymbol<graph::FuncOp>("g");
  ASSERT_TRUE(g3);
  EXPECT_EQ(cast<mlir::RankedTensorType>(g3.getFunctionType().getInput(0))
                .getShape()[0],
            3);
  EXPECT_EQ(diagnostics, "");
}

TEST_F(TargetSetTest, OnlyTheNamedGraphs) {
  TargetSet set(diag);
  std::string path = write("two.graph", kTwoGraphs);
  ASSERT_FALSE(bool(set.read(path)));
  ASSERT_FALSE(bool(set.parse(bindings({"M=2"}), {"h"})));
  ASSERT_EQ(set.targets().size(), 1u);
  EXPECT_EQ(set.targets()[0].name, "h");
  EXPECT_EQ(set.targets()[0].bucket, 0);

  TargetSet missing(diag);
  ASSERT_FALSE(bool(missing.read(path)));
  Error e = missing.parse(bindings({"M=2"}), {"h", "nope"});
  ASSERT_TRUE(e.isA<InputError>());
  EXPECT_EQ(toString(std::move(e)), "no graph named 'nope' in " + path);
}

TEST_F(TargetSetTest, UnreadableFile) {
  TargetSet set(diag);
  std::string path = (dir + "/missing.graph").str();
  Error e = set.read(path);
  ASSERT_TRUE(e.isA<InputError>());
  EXPECT_EQ(toString(std::move(e)),
            "cannot read '" + path + "': No such file or directory");
}

TEST_F(TargetSetTest, ErrorsAreReportedOnce) {
  // The located diagnostic is printed; the error only says so.
  TargetSet set(diag);
  ASSERT_FALSE(bool(set.read(write("bad.graph", kTwoGraphs))));
  Error e = set.parse(bindings({}), {});
  ASSERT_TRUE(e.isA<ReportedError>());
  consumeError(std::move(e));
  diag.flush();
  EXPECT_NE(diagnostics.find("bad.graph:1:"), std::string::npos) << diagnostics;
  EXPECT_NE(diagnostics.find("symbolic dimension 'M' has no value"),
            std::string::npos)
      << diagnostics;
}

} // namespace
