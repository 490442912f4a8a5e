//===- GpuTarget.cpp - The GPU that schedules are sized for ---------------===//
//
// See GpuTarget.h. The named targets' facts are the vendors' specifications
// (SXM parts; what cuDeviceGetAttribute reports for the multiprocessors, the
// L2 and the opted-in shared memory per block).
//
//===----------------------------------------------------------------------===//
#include "compiler/GpuTarget.h"
#include "compiler/Compiler.h"
#include "compiler/Ptx.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mtc;
using llvm::StringRef;

namespace {
struct Named {
  const char *name, *arch;
  int64_t sms, l2MiB, smemKiB;
  /// Peak memory bandwidth as the driver reports it: memory clock (MHz) and
  /// bus width (bits).
  int64_t memMHz, busBits;
};
} // namespace

static constexpr Named kNamed[] = {
    {"a100", "sm_80", 108, 40, 163, 1593, 5120},
    {"h100", "sm_90a", 132, 50, 227, 2619, 5120},
    {"h200", "sm_90a", 132, 50, 227, 3201, 6144},
    {"l40s", "sm_89", 142, 96, 99, 9001, 384},
    {"rtx4090", "sm_89", 128, 72, 99, 10501, 384},
};

static GpuTarget fromNamed(const Named &n) {
  GpuTarget t;
  t.name = n.name;
  t.arch = n.arch;
  t.facts.numSMs = n.sms;
  t.facts.l2Bytes = n.l2MiB << 20;
  t.facts.maxSharedPerBlock = n.smemKiB * 1024;
  t.facts.memBandwidth = 2 * n.memMHz * 1000000 * n.busBits / 8;
  t.facts.wgmma = archHasWgmma(t.arch);
  return t;
}

ScheduleTarget GpuTarget::forArch(StringRef compiledArch) const {
  ScheduleTarget s = facts;
  s.wgmma = archHasWgmma(compiledArch);
  return s;
}

std::string GpuTarget::describe() const {
  auto size = [](int64_t bytes) {
    if (bytes % (1 << 20) == 0)
      return llvm::formatv("{0} MiB", bytes >> 20).str();
    if (bytes % 1024 == 0)
      return llvm::formatv("{0} KiB", bytes / 1024).str();
    return llvm::formatv("{0} bytes", bytes).str();
  };
  std::string bandwidth =
      facts.memBandwidth > 0
          ? llvm::formatv("{0} GB/s", facts.memBandwidth / 1000000000).str()
          : std::string("bandwidth unknown");
  return llvm::formatv(
             "{0} ({1} SMs, {2} L2, {3} shared memory per block, {4})", name,
             facts.numSMs, size(facts.l2Bytes), size(facts.maxSharedPerBlock),
             bandwidth)
      .str();
}

std::string mtc::knownTargetNames() {
  std::string out;
  for (const Named &n : kNamed)
    out += (out.empty() ? "" : ", ") + std::string(n.name);
  return out;
}

llvm::Expected<GpuTarget> mtc::parseTarget(StringRef spec,
                                           StringRef archIfCustom) {
  for (const Named &n : kNamed)
    if (spec == n.name)
      return fromNamed(n);
  auto bad = [&](const llvm::Twine &why) {
    return llvm::make_error<InputError>(
        ("--target '" + spec + "': " + why).str());
  };
  if (!spec.contains('='))
    return bad("not a known GPU (" + knownTargetNames() +
               ", gpu, or sms=N,l2=BYTES,smem=BYTES[,bw=GB/s])");
  GpuTarget t;
  t.name = "custom";
  t.arch = archIfCustom.str();
  int64_t bwGBs = 0;
  int64_t *fields[] = {&t.facts.numSMs, &t.facts.l2Bytes,
                       &t.facts.maxSharedPerBlock, &bwGBs};
  const char *keys[] = {"sms", "l2", "smem", "bw"};
  bool seen[4] = {false, false, false, false};
  llvm::SmallVector<StringRef> parts;
  spec.split(parts, ',');
  for (StringRef part : parts) {
    auto [key, value] = part.split('=');
    const char *const *k = llvm::find(keys, key);
    if (k == std::end(keys))
      return bad("unknown key '" + key + "' (sms, l2, smem, bw)");
    size_t i = k - std::begin(keys);
    bool positive = i == 0 || i == 3;
    int64_t v;
    // At most 10^7 GB/s, so that bytes/s fit an int64_t.
    if (value.getAsInteger(10, v) || v < (positive ? 1 : 0) ||
        (i == 3 && v > 10000000))
      return bad(llvm::Twine(key) + " expects " +
                 (i == 0   ? "a positive count"
                  : i == 3 ? "GB/s from 1 to 10000000"
                           : "a number of bytes") +
                 ", got '" + value + "'");
    *fields[i] = v;
    seen[i] = true;
  }
  for (size_t i = 0; i < 3; ++i)
    if (!seen[i])
      return bad(llvm::Twine("missing ") + keys[i] + "=");
  t.facts.memBandwidth = bwGBs * 1000000000; // 0 without bw=: unknown

  t.facts.wgmma = archHasWgmma(t.arch);
  return t;
}

GpuTarget mtc::defaultTargetFor(StringRef arch) {
  StringRef name = arch == "sm_80" ? "a100" : arch == "sm_89" ? "l40s" : "h100";
  for (const Named &n : kNamed)
    if (name == n.name)
      return fromNamed(n);
  llvm_unreachable("the named targets include a100, h100 and l40s");
}

llvm::Expected<std::string> mtc::archForComputeCapability(int major,
                                                          int minor) {
  if (major == 9 && minor == 0)
    return std::string("sm_90a");
  if (major >= 9)
    return std::string("sm_90");
  if (major == 8)
    return std::string(minor == 9 ? "sm_89" : "sm_80");
  return llvm::createStringError(
      llvm::formatv("the GPU's compute capability is {0}.{1}; mtc needs 8.0 "
                    "or newer ({2})",
                    major, minor, supportedArchs())
          .str());
}
