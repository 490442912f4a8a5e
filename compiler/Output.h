//===- Output.h - Writing what mtc compile produces -------------*- C++ -*-===//
//
// `mtc compile` writes everything or nothing: every file goes through a
// temporary file and a rename (writeFileAtomically), and when one cannot be
// written the files written before it are removed again, so a failed run
// leaves no PTX without its manifest and no half of a set of buckets.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_COMPILER_OUTPUT_H
#define MTC_COMPILER_OUTPUT_H

#include "compiler/Compiler.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mtc {

/// A file to write.
struct OutputFile {
  std::string path;
  std::string contents;
};

/// Writes `files` in order, each atomically, all or nothing: when one cannot
/// be written, the files this call wrote before it are removed and its error
/// ("cannot write '<path>': <reason>") is returned.
llvm::Error writeAllOrNothing(llvm::ArrayRef<OutputFile> files);

/// Where `mtc compile` writes, and what its dispatch manifests record.
struct OutputLayout {
  std::string outDir;  ///< PTX and manifests.
  std::string dumpDir; ///< Every stage and the manifest too; empty: none.
  std::string source;  ///< The graph file.
  /// The symbol compiled at several values (buckets), or empty.
  std::string bucketSymbol;
};

/// The files `mtc compile` writes for `compiled`, graph i compiled at value
/// `buckets[i]` of `layout.bucketSymbol` (ignored without one):
/// <name>.ptx and <name>.json in outDir; with a dumpDir, every stage and the
/// manifest there; with buckets, a dispatch manifest <graph>.json in outDir
/// per graph, mapping a value to its bucket's manifest.
std::vector<OutputFile> compileOutputs(llvm::ArrayRef<CompiledGraph> compiled,
                                       llvm::ArrayRef<int64_t> buckets,
                                       const OutputLayout &layout);

/// Creates outDir (and dumpDir) and writes compileOutputs() all or nothing.
/// Every error is the environment's: "cannot create '<dir>': <reason>" or
/// writeAllOrNothing's.
llvm::Error writeCompileOutputs(llvm::ArrayRef<CompiledGraph> compiled,
                                llvm::ArrayRef<int64_t> buckets,
                                const OutputLayout &layout);

/// `name` in `dir`.
std::string joinPath(llvm::StringRef dir, llvm::StringRef name);

} // namespace mtc

#endif // MTC_COMPILER_OUTPUT_H
