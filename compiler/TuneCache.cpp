//===- TuneCache.cpp - Tuned schedules on disk
//------------------------------===//
#include "compiler/TuneCache.h"

#include "compiler/Compiler.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"

using namespace llvm;

namespace mtc {

static constexpr const char *kFormat = "mtc-tune-1";

static json::Object keyFields(const TuneKey &k) {
  return json::Object{{"kernel_ir", k.kernelIR},
                      {"gpu", k.gpu},
                      {"compute_capability", k.computeCapability},
                      {"driver", k.driver},
                      {"arch", k.arch},
                      {"options", k.options},
                      {"mtc_version", k.mtcVersion}};
}

std::string TuneKey::fingerprint() const {
  SHA256 sha;
  for (const std::string *f : {&kernelIR, &gpu, &computeCapability, &driver,
                               &arch, &options, &mtcVersion}) {
    sha.update(*f);
    sha.update(StringRef("\0", 1));
  }
  std::array<uint8_t, 32> digest = sha.final();
  return toHex(digest, /*LowerCase=*/true);
}

std::string TuneCache::defaultDir() {
  if (std::optional<std::string> d = sys::Process::GetEnv("MTC_CACHE_DIR"))
    if (!d->empty())
      return *d;
  SmallString<256> path;
  if (std::optional<std::string> x = sys::Process::GetEnv("XDG_CACHE_HOME");
      x && !x->empty()) {
    path = *x;
  } else if (!sys::path::home_directory(path)) {
    return ".mtc-cache";
  } else {
    sys::path::append(path, ".cache");
  }
  sys::path::append(path, "mtc");
  return path.str().str();
}

TuneCache::TuneCache(std::string dir)
    : folder(dir.empty() ? defaultDir() : std::move(dir)) {}

std::string TuneCache::pathFor(const TuneKey &key) const {
  SmallString<256> p(folder);
  sys::path::append(p, key.fingerprint() + ".json");
  return p.str().str();
}

std::optional<TuneEntry>
TuneCache::lookup(const TuneKey &key,
                  std::vector<std::string> &warnings) const {
  std::string path = pathFor(key);
  if (!sys::fs::exists(path))
    return std::nullopt;
  auto ignore = [&](const Twine &why) -> std::optional<TuneEntry> {
    warnings.push_back(("ignoring tuning cache entry " + path + ": " + why +
                        "; it will be rewritten")
                           .str());
    return std::nullopt;
  };
  ErrorOr<std::unique_ptr<MemoryBuffer>> buf = MemoryBuffer::getFile(path);
  if (!buf)
    return ignore("cannot read it (" + buf.getError().message() + ")");
  Expected<json::Value> v = json::parse((*buf)->getBuffer());
  if (!v)
    return ignore("not valid JSON (" + toString(v.takeError()) + ")");
  const json::Object *o = v->getAsObject();
  if (!o || o->getString("format") != std::optional<StringRef>(kFormat))
    return ignore("not an mtc tuning record");
  const json::Object *storedKey = o->getObject("key");
  if (!storedKey ||
      json::Value(json::Object(*storedKey)) != json::Value(keyFields(key)))
    return ignore("it was made for another kernel, GPU, driver or mtc "
                  "version (foreign entry)");
  std::optional<StringRef> sched = o->getString("schedule");
  std::optional<double> us = o->getNumber("us");
  if (!sched || !us || !(*us > 0))
    return ignore("missing schedule or time");
  std::string err;
  std::optional<kernel::ScheduleParams> s =
      kernel::ScheduleParams::parse(*sched, err);
  if (!s)
    return ignore("bad schedule (" + err + ")");
  TuneEntry e;
  e.schedule = *s;
  e.micros = *us;
  e.heuristicMicros = o->getNumber("heuristic_us").value_or(0);
  e.probes = unsigned(o->getInteger("probes").value_or(0));
  e.tuneSeconds = o->getNumber("tune_seconds").value_or(0);
  return e;
}

Error TuneCache::store(const TuneKey &key, const TuneEntry &entry) const {
  if (std::error_code ec = sys::fs::create_directories(folder))
    return createStringError(ec,
                             "cannot create the tuning cache folder '%s': "
                             "%s",
                             folder.c_str(), ec.message().c_str());
  json::Object o{{"format", kFormat},
                 {"key", keyFields(key)},
                 {"schedule", entry.schedule.str()},
                 {"us", entry.micros},
                 {"heuristic_us", entry.heuristicMicros},
                 {"probes", int64_t(entry.probes)},
                 {"tune_seconds", entry.tuneSeconds}};
  std::string text;
  raw_string_ostream os(text);
  os << formatv("{0:2}", json::Value(std::move(o))) << "\n";
  return writeFileAtomically(pathFor(key), text);
}

} // namespace mtc
