//===- Diagnostics.cpp - Located diagnostics for graph files
//---------------===//
#include "compiler/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace mtc {

static constexpr unsigned kMaxPlainLine = 160, kExcerpt = 120;

static bool isPlain(char c) {
  unsigned char u = c;
  return (u >= 0x20 && u < 0x7f) || u == '\t';
}

std::string clipLine(llvm::StringRef line, unsigned col, unsigned width,
                     unsigned &caretCol) {
  size_t at = col ? std::min<size_t>(col - 1, line.size()) : 0;
  size_t begin = at > width / 2 ? at - width / 2 : 0;
  size_t end = std::min(line.size(), begin + width);
  std::string out;
  if (begin > 0)
    out += "...";
  caretCol = 0;
  for (size_t i = begin; i < end; ++i) {
    if (i == at)
      caretCol = out.size() + 1;
    char c = line[i];
    if (isPlain(c)) {
      out += c;
    } else {
      out += "\\x";
      out += llvm::hexdigit((unsigned char)c >> 4, /*LowerCase=*/true);
      out += llvm::hexdigit((unsigned char)c & 15, /*LowerCase=*/true);
    }
  }
  if (!caretCol)
    caretCol = out.size() + 1;
  if (end < line.size())
    out += "...";
  return out;
}

static std::optional<FileLineColLoc> fileLoc(Location loc) {
  if (auto f = dyn_cast<FileLineColLoc>(loc))
    return f;
  if (auto n = dyn_cast<NameLoc>(loc))
    return fileLoc(n.getChildLoc());
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location l : fused.getLocations())
      if (auto f = fileLoc(l))
        return f;
  return std::nullopt;
}

ClippingDiagnosticHandler::ClippingDiagnosticHandler(llvm::SourceMgr &sm,
                                                     MLIRContext *ctx,
                                                     llvm::raw_ostream &os)
    : sm(sm), os(os), plain(sm, ctx, os), ctx(ctx) {
  // Registered after `plain`, so this handler sees diagnostics first.
  id = ctx->getDiagEngine().registerHandler([this](Diagnostic &diag) {
    emit(diag.getLocation(), diag.str(), diag.getSeverity());
    for (Diagnostic &note : diag.getNotes())
      emit(note.getLocation(), note.str(), note.getSeverity());
    return success();
  });
}

ClippingDiagnosticHandler::~ClippingDiagnosticHandler() {
  ctx->getDiagEngine().eraseHandler(id);
}

void ClippingDiagnosticHandler::emit(Location loc, const llvm::Twine &message,
                                     DiagnosticSeverity severity) {
  std::optional<FileLineColLoc> f = fileLoc(loc);
  unsigned buffer = 0;
  if (f)
    for (unsigned i = 1; i <= sm.getNumBuffers(); ++i)
      if (sm.getMemoryBuffer(i)->getBufferIdentifier() ==
          f->getFilename().getValue())
        buffer = i;
  llvm::StringRef line;
  if (buffer) {
    llvm::SMLoc start = sm.FindLocForLineAndColumn(buffer, f->getLine(), 1);
    if (start.isValid()) {
      llvm::StringRef rest(start.getPointer(),
                           sm.getMemoryBuffer(buffer)->getBufferEnd() -
                               start.getPointer());
      line = rest.take_until([](char c) { return c == '\n' || c == '\r'; });
    }
  }
  bool clip = line.size() > kMaxPlainLine || !llvm::all_of(line, isPlain);
  if (!clip) {
    plain.emitDiagnostic(loc, message, severity);
    return;
  }
  plain.emitDiagnostic(loc, message, severity, /*displaySourceLine=*/false);
  unsigned caret = 0;
  std::string excerpt = clipLine(line, f->getColumn(), kExcerpt, caret);
  os << excerpt << "\n" << std::string(caret ? caret - 1 : 0, ' ') << "^\n";
}

} // namespace mtc
