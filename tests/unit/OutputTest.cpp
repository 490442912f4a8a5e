//===- OutputTest.cpp - All-or-nothing writing of mtc compile's files -----===//
#include "compiler/Output.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace mtc;
using namespace llvm;

namespace {

/// A fresh folder, removed with its contents at the end of the test.
class Folder : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(sys::fs::createUniqueDirectory("mtc-output-test", dir));
  }
  void TearDown() override { sys::fs::remove_directories(dir); }

  std::string path(StringRef a, StringRef b = "") const {
    SmallString<256> p(dir);
    sys::path::append(p, a);
    if (!b.empty())
      sys::path::append(p, b);
    return p.str().str();
  }
  /// Every regular file below the folder, relative to it, sorted.
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    std::error_code ec;
    for (sys::fs::recursive_directory_iterator it(dir, ec), end;
         it != end && !ec; it.increment(ec))
      if (it->type() == sys::fs::file_type::regular_file)
        out.push_back(it->path().substr(dir.size() + 1));
    std::sort(out.begin(), out.end());
    return out;
  }
  std::string contents(StringRef p) const {
    auto buf = MemoryBuffer::getFile(p);
    return buf ? (*buf)->getBuffer().str() : "<missing>";
  }

  SmallString<128> dir;
};

using WriteAllOrNothing = Folder;

TEST_F(WriteAllOrNothing, WritesEveryFile) {
  std::vector<OutputFile> out = {
      {path("a.ptx"), "ptx"}, {path("a.json"), "{}\n"}, {path("b.ptx"), ""}};
  ASSERT_FALSE(bool(writeAllOrNothing(out)));
  EXPECT_EQ(files(), std::vector<std::string>({"a.json", "a.ptx", "b.ptx"}));
  EXPECT_EQ(contents(path("a.ptx")), "ptx");
  EXPECT_EQ(contents(path("a.json")), "{}\n");
  EXPECT_EQ(contents(path("b.ptx")), "");
}

TEST_F(WriteAllOrNothing, TakesBackWhatItWroteWhenTheNthFileFails) {
  // File n (counting from 0) cannot be written for every n: a folder stands
  // where it should go. The n files before it are removed again, nothing
  // after it is written, and no temporary file is left.
  for (size_t n = 0; n < 4; ++n) {
    std::vector<OutputFile> out;
    for (size_t i = 0; i < 4; ++i)
      out.push_back({path("f" + std::to_string(i)), "x"});
    ASSERT_FALSE(sys::fs::create_directory(out[n].path));
    Error e = writeAllOrNothing(out);
    ASSERT_TRUE(bool(e)) << "file " << n;
    EXPECT_EQ(toString(std::move(e)),
              "cannot write '" + out[n].path + "': Is a directory");
    EXPECT_EQ(files(), std::vector<std::string>()) << "file " << n;
    ASSERT_FALSE(sys::fs::remove(out[n].path));
  }
}

TEST_F(WriteAllOrNothing, LeavesFilesOfOtherRunsAlone) {
  // Only what this call wrote is taken back.
  ASSERT_FALSE(bool(writeAllOrNothing({{path("old.ptx"), "old"}})));
  std::vector<OutputFile> out = {{path("new.ptx"), "new"},
                                 {path("missing", "new.json"), "{}"}};
  Error e = writeAllOrNothing(out);
  ASSERT_TRUE(bool(e));
  EXPECT_NE(toString(std::move(e)).find("cannot write '" + out[1].path + "'"),
            std::string::npos);
  EXPECT_EQ(files(), std::vector<std::string>({"old.ptx"}));
  EXPECT_EQ(contents(path("old.ptx")), "old");
}

/// A compiled graph with a recognisable PTX, manifest and two stages.
CompiledGraph compiled(StringRef graph, StringRef name) {
  CompiledGraph c;
  c.name = name.str();
  c.ptx = "// ptx of " + name.str() + "\n";
  c.manifest.mtcVersion = "test";
  c.manifest.graph = graph.str();
  c.manifest.arch = "sm_90";
  c.manifest.ptxFile = name.str() + ".ptx";
  c.stages = {{"1-graph.mlir", "graph of " + name.str()}, {"6.ptx", c.ptx}};
  return c;
}

using CompileOutputs = Folder;

TEST_F(CompileOutputs, PtxAndManifests) {
  OutputLayout layout;
  layout.outDir = path("out");
  std::vector<CompiledGraph> c = {compiled("g", "g"), compiled("h", "h")};
  std::vector<OutputFile> out = compileOutputs(c, {0, 0}, layout);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].path, path("out", "g.ptx"));
  EXPECT_EQ(out[0].contents, "// ptx of g\n");
  EXPECT_EQ(out[1].path, path("out", "g.json"));
  Expected<json::Value> m = json::parse(out[1].contents);
  ASSERT_TRUE(bool(m)) << toString(m.takeError());
  EXPECT_EQ(m->getAsObject()->getString("graph"), "g");
  EXPECT_EQ(out[1].contents.back(), '\n');
  EXPECT_EQ(out[3].path, path("out", "h.json"));
}

TEST_F(CompileOutputs, DumpsEveryStage) {
  OutputLayout layout;
  layout.outDir = path("out");
  layout.dumpDir = path("dump");
  std::vector<OutputFile> out =
      compileOutputs({compiled("g", "g")}, {0}, layout);
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[2].path, path("dump", "g.1-graph.mlir"));
  EXPECT_EQ(out[2].contents, "graph of g");
  EXPECT_EQ(out[3].path, path("dump", "g.6.ptx"));
  EXPECT_EQ(out[4].path, path("dump", "g.json"));
  EXPECT_EQ(out[4].contents, out[1].contents);
}

TEST_F(CompileOutputs, BucketsGetADispatchManifest) {
  OutputLayout layout;
  layout.outDir = path("out");
  layout.source = "any.graph";
  layout.bucketSymbol = "M";
  std::vector<CompiledGraph> c = {compiled("g", "g.M1"), compiled("g", "g.M4")};
  std::vector<OutputFile> out = compileOutputs(c, {1, 4}, layout);
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[4].path, path("out", "g.json"));
  Expected<json::Value> v = json::parse(out[4].contents);
  ASSERT_TRUE(bool(v)) << toString(v.takeError());
  Expected<DispatchManifest> d = DispatchManifest::fromJSON(*v);
  ASSERT_TRUE(bool(d)) << toString(d.takeError());
  EXPECT_EQ(d->graph, "g");
  EXPECT_EQ(d->source, "any.graph");
  EXPECT_EQ(d->symbol, "M");
  ASSERT_EQ(d->buckets.size(), 2u);
  EXPECT_EQ(d->buckets[0].value, 1);
  EXPECT_EQ(d->buckets[0].manifest, "g.M1.json");
  EXPECT_EQ(d->buckets[1].value, 4);
  EXPECT_EQ(d->buckets[1].manifest, "g.M4.json");
}

TEST_F(CompileOutputs, WritesEverythingOrNothing) {
  OutputLayout layout;
  layout.outDir = path("out");
  layout.dumpDir = path("dump");
  std::vector<CompiledGraph> c = {compiled("g", "g")};
  ASSERT_FALSE(bool(writeCompileOutputs(c, {0}, layout)));
  EXPECT_EQ(files(), std::vector<std::string>({"dump/g.1-graph.mlir",
                                               "dump/g.6.ptx", "dump/g.json",
                                               "out/g.json", "out/g.ptx"}));
  // The last file cannot be written: every other one is taken back (the
  // folders stay).
  ASSERT_FALSE(sys::fs::remove_directories(path("out")));
  ASSERT_FALSE(sys::fs::remove_directories(path("dump")));
  ASSERT_FALSE(sys::fs::create_directories(path("dump", "g.json")));
  Error e = writeCompileOutputs(c, {0}, layout);
  ASSERT_TRUE(bool(e));
  EXPECT_EQ(toString(std::move(e)),
            "cannot write '" + path("dump", "g.json") + "': Is a directory");
  EXPECT_EQ(files(), std::vector<std::string>());
}

TEST_F(CompileOutputs, FolderThatCannotBeCreated) {
  ASSERT_FALSE(bool(writeAllOrNothing({{path("file"), ""}})));
  OutputLayout layout;
  layout.outDir = path("out");
  layout.dumpDir = path("file", "dump");
  Error e = writeCompileOutputs({compiled("g", "g")}, {0}, layout);
  ASSERT_TRUE(bool(e));
  EXPECT_EQ(toString(std::move(e)),
            "cannot create '" + layout.dumpDir + "': Not a directory");
  // The output folder was made, but nothing written.
  EXPECT_EQ(files(), std::vector<std::string>({"file"}));
}

} // namespace
