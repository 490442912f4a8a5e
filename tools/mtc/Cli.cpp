//===- Cli.cpp - What the mtc commands share ------------------------------===//
//
// See Cli.h.
//
//===----------------------------------------------------------------------===//
#include "Cli.h"

#include "llvm/ADT/StringExtras.h"

namespace mtc::cli {

int fail(int code, const llvm::Twine &msg) {
  llvm::outs().flush();
  llvm::errs() << "mtc: error: " << msg << "\n";
  return code;
}

/// Input errors are the user's (exit 1), reported ones too; everything else
/// is the environment's or mtc's (exit 2).
int failWith(llvm::Error err) {
  if (err.isA<ReportedError>()) {
    // Located diagnostics said it all.
    llvm::consumeError(std::move(err));
    return kUserError;
  }
  int code = err.isA<InputError>() ? kUserError : kInternalError;
  return fail(code, llvm::toString(std::move(err)));
}

std::string kernelList(const Manifest &m) {
  std::string s;
  for (const KernelInfo &k : m.kernels) {
    // Long fused chains are summarised: the first and last nodes.
    std::vector<std::string> shown = k.nodes;
    if (shown.size() > 8) {
      size_t more = shown.size() - 6;
      shown.erase(shown.begin() + 3, shown.end() - 3);
      shown.insert(shown.begin() + 3, fmt::format("... {} more ...", more));
    }
    s += fmt::format("\n  {} [{}]: {}", k.name, k.schedule,
                     llvm::join(shown, ", "));
  }
  return s;
}

} // namespace mtc::cli
