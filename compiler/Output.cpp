//===- Output.cpp - Writing what mtc compile produces ---------------------===//
//
// See Output.h.
//
//===----------------------------------------------------------------------===//
#include "compiler/Output.h"

#include "compiler/Version.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <map>

using namespace llvm;

namespace mtc {

std::string joinPath(StringRef dir, StringRef name) {
  SmallString<256> p(dir);
  sys::path::append(p, name);
  return p.str().str();
}

Error writeAllOrNothing(ArrayRef<OutputFile> files) {
  for (auto [i, f] : enumerate(files)) {
    if (Error e = writeFileAtomically(f.path, f.contents)) {
      // All or nothing: take back what this call already wrote.
      for (size_t j = 0; j < i; ++j)
        sys::fs::remove(files[j].path);
      return e;
    }
  }
  return Error::success();
}

/// `v` as indented JSON and a newline.
static std::string jsonText(const json::Value &v) {
  return formatv("{0:2}", v).str() + "\n";
}

std::vector<OutputFile> compileOutputs(ArrayRef<CompiledGraph> compiled,
                                       ArrayRef<int64_t> buckets,
                                       const OutputLayout &layout) {
  std::vector<OutputFile> files;
  auto add = [&](StringRef dir, const std::string &name, std::string text) {
    files.push_back({joinPath(dir, name), std::move(text)});
  };
  for (const CompiledGraph &c : compiled) {
    std::string json = jsonText(c.manifest.toJSON());
    add(layout.outDir, c.name + ".ptx", c.ptx);
    add(layout.outDir, c.name + ".json", json);
    if (layout.dumpDir.empty())
      continue;
    for (const Stage &s : c.stages)
      add(layout.dumpDir, c.name + "." + s.suffix, s.text);
    add(layout.dumpDir, c.name + ".json", json);
  }
  if (layout.bucketSymbol.empty())
    return files;
  // With buckets, <graph>.json maps a runtime value to its bucket.
  std::map<std::string, DispatchManifest> dispatch;
  for (auto [c, bucket] : zip(compiled, buckets)) {
    DispatchManifest &d = dispatch[c.manifest.graph];
    d.mtcVersion = MTC_VERSION;
    d.graph = c.manifest.graph;
    d.source = layout.source;
    d.symbol = layout.bucketSymbol;
    d.buckets.push_back({bucket, c.name + ".json"});
  }
  for (auto &[graph, d] : dispatch)
    add(layout.outDir, graph + ".json", jsonText(d.toJSON()));
  return files;
}

/// Creates `dir` and its parents.
static Error createFolder(StringRef dir) {
  if (std::error_code ec = sys::fs::create_directories(dir))
    return createStringError(ec,
                             "cannot create '" + dir + "': " + ec.message());
  return Error::success();
}

Error writeCompileOutputs(ArrayRef<CompiledGraph> compiled,
                          ArrayRef<int64_t> buckets,
                          const OutputLayout &layout) {
  if (Error e = createFolder(layout.outDir))
    return e;
  if (!layout.dumpDir.empty())
    if (Error e = createFolder(layout.dumpDir))
      return e;
  return writeAllOrNothing(compileOutputs(compiled, buckets, layout));
}

} // namespace mtc
