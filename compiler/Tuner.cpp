//===- Tuner.cpp - Coordinate descent over kernel schedules
//-----------------===//
#include "compiler/Tuner.h"

#include <algorithm>
#include <chrono>
#include <set>

using namespace mtc::kernel;

namespace mtc {
namespace {

/// One axis of the search: a schedule field and the values it may take, in
/// order.
struct Coordinate {
  int64_t ScheduleParams::*field;
  std::vector<int64_t> values;
};

/// The axes for schedules of `start`'s kind: the fields of kScheduleFields
/// whose range for that kind is not empty, in their tuner order.
std::vector<Coordinate> coordinatesFor(const ScheduleParams &start,
                                       const TuneOptions &o) {
  std::vector<const ScheduleField *> fields;
  for (const ScheduleField &f : kScheduleFields)
    fields.push_back(&f);
  llvm::sort(fields, [](const ScheduleField *a, const ScheduleField *b) {
    return a->tune.order < b->tune.order;
  });
  std::vector<Coordinate> cs;
  for (const ScheduleField *f : fields) {
    const TuneRange &range = f->tune.forKind(start.kind);
    if (range.empty())
      continue;
    std::vector<int64_t> values = range.values();
    if (f->tune.plusM) {
      // M itself (tiled, wgmma: rounded up to 8; otherwise only within the
      // range) and wherever the start is.
      if (start.kind == ScheduleKind::tiled ||
          start.kind == ScheduleKind::wgmma)
        values.push_back((o.m + 7) / 8 * 8);
      else if (o.m <= range.hi)
        values.push_back(o.m);
      values.push_back(start.*f->member);
      std::sort(values.begin(), values.end());
      values.erase(std::unique(values.begin(), values.end()), values.end());
    }
    cs.push_back({f->member, std::move(values)});
  }
  return cs;
}

/// `s` with coordinate `c` moved `steps` places along its values (none if
/// that leaves the range or the current value is not on the axis).
std::optional<ScheduleParams> moved(const ScheduleParams &s,
                                    const Coordinate &c, int steps) {
  auto it = std::find(c.values.begin(), c.values.end(), s.*c.field);
  if (it == c.values.end())
    return std::nullopt;
  int64_t pos = (it - c.values.begin()) + steps;
  if (pos < 0 || pos >= int64_t(c.values.size()))
    return std::nullopt;
  ScheduleParams r = s;
  r.*c.field = c.values[pos];
  deriveScheduleFields(r);
  return r;
}

class Search {
public:
  Search(llvm::function_ref<std::string(const ScheduleParams &)> legal,
         llvm::function_ref<llvm::Expected<double>(const ScheduleParams &)>
             measure,
         const TuneOptions &options)
      : legal(legal), measure(measure), options(options), started(now()) {}

  llvm::function_ref<std::string(const ScheduleParams &)> legal;
  llvm::function_ref<llvm::Expected<double>(const ScheduleParams &)> measure;
  const TuneOptions &options;
  TuneResult result;
  std::set<std::string> seen;

  /// Schedules compiled (measured or failed); illegal ones cost nothing.
  unsigned attempted = 0;
  double started;
  /// Seconds the slowest measurement so far took.
  double longestProbe = 0;

  double now() const {
    if (options.clock)
      return options.clock();
    return std::chrono::duration<double>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  bool exhausted() {
    if (attempted >= options.maxProbes ||
        result.path.size() >= 8 * size_t(options.maxProbes))
      return true;
    // The start is always measured, whatever the budget; after it, no
    // probe starts that would end past the budget, less the reserve, if it
    // took as long as the longest so far (a probe compiles and times a
    // kernel: about 0.2 to 1.5 s on an H200, and the last one used to run
    // over).
    if (options.budgetSeconds > 0 && !result.path.empty() &&
        now() - started + longestProbe * (1 + options.reserveProbes) >
            options.budgetSeconds)
      result.outOfTime = true;
    return result.outOfTime;
  }

  /// The other kinds' start schedules, tried after the sweeps: a kind
  /// change moves every field at once, so it is not a single-field step.
  bool tryOtherKinds() {
    if (!options.startForKind || result.best.kind == ScheduleKind::elementwise)
      return false;
    bool any = false;
    ScheduleKind here = result.best.kind;
    for (ScheduleKind other : {ScheduleKind::simt, ScheduleKind::mma,
                               ScheduleKind::tiled, ScheduleKind::wgmma}) {
      if (other == here)
        continue;
      std::optional<ScheduleParams> s = options.startForKind(other);
      if (s && tryCandidate(*s))
        any = true;
    }
    return any;
  }

  /// Measures `s` unless seen, illegal or out of budget; returns its time.
  std::optional<double> probe(const ScheduleParams &s) {
    if (exhausted() || !seen.insert(s.str()).second)
      return std::nullopt;
    Probe p;
    p.index = result.path.size() + 1;
    p.schedule = s;
    std::string why = legal(s);
    if (why.empty()) {
      ++attempted;
      double before = now();
      llvm::Expected<double> t = measure(s);
      longestProbe = std::max(longestProbe, now() - before);
      if (t) {
        p.micros = *t;
        ++result.measured;
      } else {
        p.skipped = llvm::toString(t.takeError());
      }
    } else {
      p.skipped = "illegal: " + why;
    }
    if (p.micros && (result.path.empty() ||
                     *p.micros < result.bestMicros * (1 - options.threshold))) {
      result.best = s;
      result.bestMicros = *p.micros;
    }
    p.best = result.best;
    p.bestMicros = result.bestMicros;
    result.path.push_back(p);
    if (options.onProbe)
      options.onProbe(p);
    return p.micros;
  }

  /// Tries `cand`; true if it became the best.
  bool tryCandidate(const ScheduleParams &cand) {
    ScheduleParams before = result.best;
    probe(cand);
    return result.best != before;
  }

  /// Sweeps over the coordinates until a pass improves nothing. A move that
  /// helps is repeated in the same direction while it keeps helping.
  bool sweeps(const std::vector<Coordinate> &coords) {
    bool any = false;
    for (bool improved = true; improved && !exhausted();) {
      improved = false;
      for (const Coordinate &c : coords)
        for (int dir : {1, -1}) {
          std::optional<ScheduleParams> cand = moved(result.best, c, dir);
          while (cand && tryCandidate(*cand)) {
            improved = any = true;
            cand = moved(result.best, c, dir);
          }
        }
    }
    return any;
  }

  /// Every pair of coordinates moved one step each, in all four directions.
  bool widePass(const std::vector<Coordinate> &coords) {
    ScheduleParams center = result.best;
    bool any = false;
    for (size_t i = 0; i < coords.size(); ++i)
      for (size_t j = i + 1; j < coords.size(); ++j)
        for (int di : {1, -1})
          for (int dj : {1, -1}) {
            std::optional<ScheduleParams> a = moved(center, coords[i], di);
            if (!a)
              continue;
            std::optional<ScheduleParams> b = moved(*a, coords[j], dj);
            if (b && tryCandidate(*b))
              any = true;
          }
    return any;
  }
};

} // namespace

llvm::Expected<TuneResult> coordinateDescent(
    const ScheduleParams &start,
    llvm::function_ref<std::string(const ScheduleParams &)> legal,
    llvm::function_ref<llvm::Expected<double>(const ScheduleParams &)> measure,
    const TuneOptions &options) {
  Search search(legal, measure, options);
  search.result.start = start;
  search.result.best = start;
  std::optional<double> t0 = search.probe(start);
  if (!t0)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the starting schedule " + start.str() +
            " cannot run: " + search.result.path.back().skipped);
  search.result.startMicros = *t0;
  search.result.bestMicros = *t0;
  search.result.path.back().bestMicros = *t0;
  // The axes follow the best schedule's kind.
  auto coords = [&] { return coordinatesFor(search.result.best, options); };
  search.sweeps(coords());
  if (search.tryOtherKinds())
    search.sweeps(coords());
  while (options.widePass && !search.exhausted() && search.widePass(coords()))
    search.sweeps(coords());
  return search.result;
}

} // namespace mtc
