//===- PtxCache.cpp - Compiled PTX on disk --------------------------------===//
//
// See PtxCache.h.
//
//===----------------------------------------------------------------------===//
#include "compiler/PtxCache.h"

#include "compiler/Compiler.h"
#include "compiler/Version.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace mtc {

std::string ptxCachePath(StringRef dir, mlir::ModuleOp kernels, StringRef arch,
                         bool fastDequant) {
  std::string ir;
  raw_string_ostream os(ir);
  kernels->print(os, mlir::OpPrintingFlags().enableDebugInfo(false));
  SHA256 sha;
  for (StringRef part :
       {StringRef("mtc-ptx-2"), StringRef(MTC_VERSION), StringRef(MTC_BUILD_ID),
        arch, StringRef(fastDequant ? "fast-dequant" : "cvt"), StringRef(ir)}) {
    sha.update(part);
    sha.update(StringRef("\0", 1));
  }
  SmallString<256> path(dir);
  sys::path::append(path, "ptx-" + toHex(sha.final(), true) + ".ptx");
  return std::string(path);
}

std::optional<std::string> loadCachedPtx(StringRef path, const Manifest &m) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buf = MemoryBuffer::getFile(path);
  if (!buf)
    return std::nullopt;
  StringRef ptx = (*buf)->getBuffer();
  if (!ptx.contains(".version"))
    return std::nullopt;
  for (const KernelInfo &k : m.kernels)
    if (!ptx.contains(".entry " + k.name + "("))
      return std::nullopt;
  return ptx.str();
}

void storeCachedPtx(StringRef path, StringRef ptx) {
  if (sys::fs::create_directories(sys::path::parent_path(path)))
    return;
  consumeError(writeFileAtomically(path, ptx));
}

} // namespace mtc
