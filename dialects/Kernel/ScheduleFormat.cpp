//===- ScheduleFormat.cpp - Schedules as text and as attributes -----------===//
//
// Everything that walks kScheduleFields but the attribute (KernelAttrs.cpp):
// the text form ("tiled w2 r2 kw1 v32 u1 mt64 sk1 st4"), equality, hashing
// and the tuner's ranges.
//
//===----------------------------------------------------------------------===//
#include "dialects/Kernel/Schedule.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/raw_ostream.h"

using namespace mtc;
using llvm::SmallString;
using llvm::SmallVector;
using llvm::StringRef;
using namespace mtc::kernel;

//===----------------------------------------------------------------------===//
// Plain data
//===----------------------------------------------------------------------===//

bool ScheduleParams::operator==(const ScheduleParams &o) const {
  if (kind != o.kind)
    return false;
  for (const ScheduleField &f : kScheduleFields)
    if (this->*f.member != o.*f.member)
      return false;
  return true;
}

llvm::hash_code mtc::kernel::hash_value(const ScheduleParams &s) {
  llvm::hash_code h = llvm::hash_value(static_cast<uint32_t>(s.kind));
  for (const ScheduleField &f : kScheduleFields)
    h = llvm::hash_combine(h, s.*f.member);
  return h;
}

std::vector<int64_t> TuneRange::values() const {
  if (count)
    return std::vector<int64_t>(list.begin(), list.begin() + count);
  std::vector<int64_t> v;
  for (int64_t x = lo; lo > 0 && x <= hi; x *= 2)
    v.push_back(x);
  return v;
}

//===----------------------------------------------------------------------===//
// Text
//===----------------------------------------------------------------------===//

std::string ScheduleParams::str() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << stringifyScheduleKind(kind);
  for (const ScheduleField &f : kScheduleFields)
    if (f.shownAtDefault || this->*f.member != f.defaultValue)
      os << " " << f.letters << this->*f.member;
  return s;
}

/// The field whose letters begin `text`, the longest if several do ("rg"
/// rather than "r" for "rg128").
static const ScheduleField *fieldOfText(StringRef text) {
  const ScheduleField *best = nullptr;
  for (const ScheduleField &f : kScheduleFields)
    if (text.starts_with(f.letters) &&
        (!best || f.letters.size() > best->letters.size()))
      best = &f;
  return best;
}

std::optional<ScheduleParams> ScheduleParams::parse(StringRef text,
                                                    std::string &err) {
  ScheduleParams s;
  SmallVector<StringRef> words;
  SmallString<64> normalized(text);
  for (char &c : normalized)
    if (c == ',' || c == ':')
      c = ' ';
  StringRef(normalized).split(words, ' ', -1, /*KeepEmpty=*/false);
  if (words.empty()) {
    err = "empty schedule";
    return std::nullopt;
  }
  std::optional<ScheduleKind> kind = symbolizeScheduleKind(words[0]);
  if (!kind) {
    err = "unknown schedule kind '" + words[0].str() + "' (";
    for (uint32_t i = 0; i <= getMaxEnumValForScheduleKind(); ++i)
      err += (i ? ", " : "") + stringifyScheduleKind(ScheduleKind(i)).str();
    err += ")";
    return std::nullopt;
  }
  s.kind = *kind;
  for (StringRef w : llvm::drop_begin(words)) {
    const ScheduleField *f = fieldOfText(w);
    if (!f) {
      std::string letters;
      for (const ScheduleField &g : kScheduleFields)
        letters += (letters.empty() ? "" : ", ") + g.letters.str();
      err = "unknown schedule field '" + w.str() + "' (" + letters +
            " followed by a number)";
      return std::nullopt;
    }
    int64_t v;
    if (w.drop_front(f->letters.size()).getAsInteger(10, v) || v <= 0) {
      err = "bad schedule field '" + w.str() + "'";
      return std::nullopt;
    }
    s.*f->member = v;
  }
  return s;
}
