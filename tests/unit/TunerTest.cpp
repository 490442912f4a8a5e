//===- TunerTest.cpp - The coordinate-descent search and the cache
//---------===//
#include "compiler/Tuner.h"
#include "compiler/TuneCache.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <thread>

using namespace mtc;
using namespace mtc::kernel;

namespace {

ScheduleParams sched(llvm::StringRef text) {
  std::string err;
  auto s = ScheduleParams::parse(text, err);
  EXPECT_TRUE(s) << err;
  return *s;
}

double lg(int64_t v) { return std::log2(double(v)); }

/// A separable bowl with its minimum at `opt`.
double bowl(const ScheduleParams &s, const ScheduleParams &opt) {
  auto d = [](int64_t a, int64_t b) { return std::pow(lg(a) - lg(b), 2); };
  return 10 + d(s.warps, opt.warps) + d(s.rows, opt.rows) +
         d(s.unroll, opt.unroll) + d(s.kwarps, opt.kwarps) + d(s.vec, opt.vec) +
         d(s.mtile, opt.mtile) + d(s.splitk, opt.splitk);
}

TEST(Tuner, FindsTheMinimumOfASeparableBowl) {
  ScheduleParams opt = sched("simt w8 r4 kw2 v16 u8 mt2 sk4");
  ScheduleParams start = sched("simt w1 r1 kw1 v4 u1 mt1 sk1");
  TuneOptions o;
  o.m = 16;
  // Legal as for simt, which takes one stage (the axis is mma's).
  auto r = coordinateDescent(
      start,
      [](const ScheduleParams &s) {
        return s.stages == 1 ? std::string() : "stages";
      },
      [&](const ScheduleParams &s) -> llvm::Expected<double> {
        return bowl(s, opt);
      },
      o);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->best, opt) << r->best.str();
  EXPECT_DOUBLE_EQ(r->bestMicros, 10);
  EXPECT_EQ(r->start, start);
  EXPECT_LT(r->measured, 150u); // within the default budget
}

TEST(Tuner, SkipsIllegalAndFailingSchedulesWithoutCrashing) {
  ScheduleParams opt = sched("simt w16 r1 kw1 v16 u2 mt1 sk1");
  std::vector<std::string> measured;
  auto r = coordinateDescent(
      sched("simt w2 r1 kw1 v16 u2 mt1 sk1"),
      [](const ScheduleParams &s) {
        return s.warps > 8 ? std::string("too many warps") : std::string();
      },
      [&](const ScheduleParams &s) -> llvm::Expected<double> {
        EXPECT_LE(s.warps, 8) << "an illegal schedule was measured";
        measured.push_back(s.str());
        if (s.unroll == 4)
          return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                         "spills (64 bytes)");
        return bowl(s, opt);
      },
      {});
  ASSERT_TRUE(bool(r));
  EXPECT_EQ(r->best.warps, 8); // as close as legality allows
  bool sawIllegal = false, sawSpill = false;
  for (const Probe &p : r->path) {
    sawIllegal |= p.skipped.rfind("illegal: too many warps", 0) == 0;
    sawSpill |= p.skipped == "spills (64 bytes)";
  }
  EXPECT_TRUE(sawIllegal);
  EXPECT_TRUE(sawSpill);
}

TEST(Tuner, StopsWhenAPassBringsNothing) {
  unsigned calls = 0;
  auto r = coordinateDescent(
      sched("simt w4 r2 kw1 v16 u4 mt1 sk1"),
      [](const ScheduleParams &) { return std::string(); },
      [&](const ScheduleParams &) -> llvm::Expected<double> {
        ++calls;
        return 5.0; // flat: nothing beats the start
      },
      {});
  ASSERT_TRUE(bool(r));
  EXPECT_EQ(r->best, r->start);
  // One sweep (two neighbours per coordinate) and one pairwise pass, each
  // candidate measured once.
  EXPECT_EQ(calls, r->measured);
  EXPECT_LE(calls, 1u + 2 * 7 + 4 * 21);
}

TEST(Tuner, IgnoresChangesWithinTheNoiseThreshold) {
  ScheduleParams start = sched("simt w4 r2 kw1 v16 u4 mt1 sk1");
  auto r = coordinateDescent(
      start, [](const ScheduleParams &) { return std::string(); },
      [&](const ScheduleParams &s) -> llvm::Expected<double> {
        return s == start ? 10.0 : 9.95; // 0.5% better: noise
      },
      {});
  ASSERT_TRUE(bool(r));
  EXPECT_EQ(r->best, start);
}

TEST(Tuner, RespectsTheProbeBudget) {
  TuneOptions o;
  o.maxProbes = 7;
  auto r = coordinateDescent(
      sched("simt w1 r1 kw1 v4 u1 mt1 sk1"),
      [](const ScheduleParams &) { return std::string(); },
      [&](const ScheduleParams &s) -> llvm::Expected<double> {
        return bowl(s, sched("simt w32 r16 kw1 v16 u16 mt1 sk1"));
      },
      o);
  ASSERT_TRUE(bool(r));
  EXPECT_EQ(r->path.size(), 7u);
}

/// The time budget: on a clock that advances 1 s per measurement, a 5 s
/// budget lets the start and four more probes run, keeps the best of them
/// and says it stopped on time; without a budget the search runs on.
TEST(Tuner, RespectsTheTimeBudget) {
  double t = 0;
  TuneOptions o;
  o.clock = [&] { return t; };
  auto search = [&](double budget) {
    t = 0;
    o.budgetSeconds = budget;
    return coordinateDescent(
        sched("simt w1 r1 kw1 v4 u1 mt1 sk1"),
        [](const ScheduleParams &) { return std::string(); },
        [&](const ScheduleParams &s) -> llvm::Expected<double> {
          t += 1;
          return bowl(s, sched("simt w32 r16 kw1 v16 u16 mt1 sk1"));
        },
        o);
  };
  auto r = search(5);
  ASSERT_TRUE(bool(r));
  EXPECT_EQ(r->measured, 5u);
  EXPECT_TRUE(r->outOfTime);
  EXPECT_LT(r->bestMicros, r->startMicros);
  // A budget smaller than the time before the first probe still measures
  // the start (here every reading of the clock takes a second).
  TuneOptions slow;
  double c = 0;
  slow.clock = [&] { return c += 1; };
  slow.budgetSeconds = 0.5;
  auto first = coordinateDescent(
      sched("simt w1 r1 kw1 v4 u1 mt1 sk1"),
      [](const ScheduleParams &) { return std::string(); },
      [](const ScheduleParams &) -> llvm::Expected<double> { return 1.0; },
      slow);
  ASSERT_TRUE(bool(first)) << llvm::toString(first.takeError());
  EXPECT_EQ(first->measured, 1u);
  EXPECT_TRUE(first->outOfTime);
  auto unlimited = search(0);
  ASSERT_TRUE(bool(unlimited));
  EXPECT_FALSE(unlimited->outOfTime);
  EXPECT_GT(unlimited->measured, 20u);
}

/// A search on a fake clock `t` whose every probe takes 2 s.
static llvm::Expected<TuneResult> searchTwoSecondProbes(TuneOptions o,
                                                        double &t) {
  t = 0;
  o.clock = [&] { return t; };
  return coordinateDescent(
      sched("simt w1 r1 kw1 v4 u1 mt1 sk1"),
      [](const ScheduleParams &) { return std::string(); },
      [&](const ScheduleParams &s) -> llvm::Expected<double> {
        t += 2;
        return bowl(s, sched("simt w32 r16 kw1 v16 u16 mt1 sk1"));
      },
      o);
}

/// No probe starts that would end past the budget at the pace of the ones
/// before: with 2 s probes, a 5 s budget runs the start and one more and
/// stops at 4 s, not at 6.
TEST(Tuner, StopsBeforeAProbeWouldOverrunTheBudget) {
  double t;
  TuneOptions o;
  o.budgetSeconds = 5;
  auto r = searchTwoSecondProbes(o, t);
  ASSERT_TRUE(bool(r));
  EXPECT_EQ(r->measured, 2u);
  EXPECT_TRUE(r->outOfTime);
  EXPECT_LE(t, 5);
}

/// The reserve: with 2 s probes, a 10 s budget and room for two more
/// measurements, the search stops at 6 s, so two more 2 s measurements
/// (the caller's final ones) still end within the budget.
TEST(Tuner, LeavesTheReserveOfTheBudget) {
  double t;
  TuneOptions o;
  o.budgetSeconds = 10;
  o.reserveProbes = 2;
  auto r = searchTwoSecondProbes(o, t);
  ASSERT_TRUE(bool(r));
  EXPECT_EQ(r->measured, 3u);
  EXPECT_TRUE(r->outOfTime);
  EXPECT_LE(t + 2 * 2, 10);
}

TEST(Tuner, IllegalSchedulesDoNotUseTheBudget) {
  TuneOptions o;
  o.maxProbes = 7;
  unsigned measured = 0;
  auto r = coordinateDescent(
      sched("simt w1 r1 kw1 v4 u1 mt1 sk1"),
      [](const ScheduleParams &s) {
        return s.regs ? std::string("no register caps") : std::string();
      },
      [&](const ScheduleParams &s) -> llvm::Expected<double> {
        ++measured;
        return bowl(s, sched("simt w32 r16 kw1 v16 u16 mt1 sk1"));
      },
      o);
  ASSERT_TRUE(bool(r));
  EXPECT_EQ(measured, 7u);
  EXPECT_GT(r->path.size(), 7u);
  for (const Probe &p : r->path)
    EXPECT_EQ(p.micros.has_value(), p.schedule.regs == 0);
}

TEST(Tuner, WidePassFindsMovesThatNeedTwoCoordinates) {
  // Moving warps or rows alone costs more; moving both together wins.
  ScheduleParams start = sched("simt w4 r2 kw1 v16 u4 mt1 sk1");
  auto cost = [&](const ScheduleParams &s) -> double {
    if (s.warps == 8 && s.rows == 4 && s.unroll == 4)
      return 5;
    double c = 10;
    if (s.warps != 4)
      c += 1;
    if (s.rows != 2)
      c += 1;
    if (s.unroll != 4 || s.vec != 16 || s.kwarps != 1 || s.mtile != 1 ||
        s.splitk != 1)
      c += 1;
    return c;
  };
  TuneOptions narrow;
  narrow.widePass = false;
  auto legal = [](const ScheduleParams &) { return std::string(); };
  auto measure = [&](const ScheduleParams &s) -> llvm::Expected<double> {
    return cost(s);
  };
  auto r1 = coordinateDescent(start, legal, measure, narrow);
  ASSERT_TRUE(bool(r1));
  EXPECT_EQ(r1->best, start);
  auto r2 = coordinateDescent(start, legal, measure, {});
  ASSERT_TRUE(bool(r2));
  EXPECT_EQ(r2->best, sched("simt w8 r4 kw1 v16 u4 mt1 sk1"));
}

TEST(Tuner, FailsIfTheStartCannotRun) {
  auto r = coordinateDescent(
      sched("simt w4 r2 kw1 v16 u4 mt1 sk1"),
      [](const ScheduleParams &) { return std::string(); },
      [](const ScheduleParams &) -> llvm::Expected<double> {
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "launch failed");
      },
      {});
  ASSERT_FALSE(bool(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("cannot run: launch failed"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// Cache
//===----------------------------------------------------------------------===//

struct TempDir {
  llvm::SmallString<128> path;
  TempDir() {
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("mtc-cache", path));
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string str() const { return path.str().str(); }
};

TuneKey key(std::string gpu = "NVIDIA H200") {
  return TuneKey{"kernel.contract ...", gpu,    "9.0", "13.0", "sm_90",
                 "fast-dequant",        "0.1.0"};
}

TuneEntry entry(llvm::StringRef s, double us) {
  TuneEntry e;
  e.schedule = sched(s);
  e.micros = us;
  e.heuristicMicros = us * 1.2;
  e.probes = 42;
  e.tuneSeconds = 3.5;
  return e;
}

void writeRaw(const std::string &path, llvm::StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  ASSERT_FALSE(ec);
  os << text;
}

int countFiles(const std::string &dir) {
  std::error_code ec;
  int n = 0;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    ++n;
  return n;
}

TEST(TuneCache, MissStoreHit) {
  TempDir dir;
  TuneCache cache(dir.str());
  std::vector<std::string> warnings;
  EXPECT_FALSE(cache.lookup(key(), warnings));
  ASSERT_FALSE(
      bool(cache.store(key(), entry("simt w8 r1 kw1 v16 u8 mt1 sk1", 15.9))));
  auto hit = cache.lookup(key(), warnings);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->schedule.str(), "simt w8 r1 kw1 v16 u8 mt1 sk1");
  EXPECT_DOUBLE_EQ(hit->micros, 15.9);
  EXPECT_EQ(hit->probes, 42u);
  EXPECT_TRUE(warnings.empty());
  // Another GPU, driver or kernel is another entry.
  EXPECT_FALSE(cache.lookup(key("NVIDIA H100"), warnings));
  TuneKey k = key();
  k.driver = "13.1";
  EXPECT_FALSE(cache.lookup(k, warnings));
  EXPECT_TRUE(warnings.empty());
  EXPECT_NE(key().fingerprint(), k.fingerprint());
}

TEST(TuneCache, CorruptTruncatedAndForeignEntriesAreIgnoredAndRewritten) {
  TempDir dir;
  TuneCache cache(dir.str());
  std::string path = cache.pathFor(key());
  std::vector<std::string> warnings;

  writeRaw(path, "\x7f"
                 "ELF garbage");
  EXPECT_FALSE(cache.lookup(key(), warnings));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("not valid JSON"), std::string::npos);

  ASSERT_FALSE(
      bool(cache.store(key(), entry("simt w4 r2 kw1 v16 u4 mt1 sk1", 18.0))));
  auto buf = llvm::MemoryBuffer::getFile(path);
  ASSERT_TRUE(bool(buf));
  std::string whole = (*buf)->getBuffer().str();
  writeRaw(path, whole.substr(0, whole.size() / 2)); // truncated
  warnings.clear();
  EXPECT_FALSE(cache.lookup(key(), warnings));
  EXPECT_EQ(warnings.size(), 1u);

  // A valid entry for another key, copied over this key's file.
  TuneCache other(dir.str());
  ASSERT_FALSE(bool(other.store(key("NVIDIA A100"),
                                entry("simt w4 r2 kw1 v16 u4 mt1 sk1", 9))));
  auto foreign = llvm::MemoryBuffer::getFile(other.pathFor(key("NVIDIA A100")));
  writeRaw(path, (*foreign)->getBuffer());
  warnings.clear();
  EXPECT_FALSE(cache.lookup(key(), warnings));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("foreign"), std::string::npos);

  // The next store rewrites it.
  ASSERT_FALSE(
      bool(cache.store(key(), entry("simt w8 r1 kw1 v16 u8 mt1 sk1", 16.0))));
  warnings.clear();
  EXPECT_TRUE(cache.lookup(key(), warnings));
  EXPECT_TRUE(warnings.empty());
}

TEST(TuneCache, UnwritableFolderIsAnError) {
  TempDir dir;
  llvm::SmallString<128> file(dir.path);
  llvm::sys::path::append(file, "a-file");
  writeRaw(file.str().str(), "x");
  llvm::SmallString<128> below(file);
  llvm::sys::path::append(below, "cache"); // a folder below a file
  TuneCache cache(below.str().str());
  llvm::Error e = cache.store(key(), entry("simt w4 r2 kw1 v16 u4 mt1 sk1", 1));
  ASSERT_TRUE(bool(e));
  EXPECT_NE(llvm::toString(std::move(e))
                .find("cannot create the tuning "
                      "cache folder"),
            std::string::npos);
}

TEST(TuneCache, ConcurrentWritersNeverExposeAPartialEntry) {
  TempDir dir;
  TuneCache cache(dir.str());
  const char *schedules[] = {"simt w4 r2 kw1 v16 u4 mt1 sk1",
                             "simt w8 r1 kw1 v16 u8 mt1 sk1"};
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0}, hits{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i)
        if (cache.store(key(), entry(schedules[t % 2], 10 + t)))
          ++bad;
    });
  std::thread reader([&] {
    while (!stop) {
      std::vector<std::string> warnings;
      auto e = cache.lookup(key(), warnings);
      if (!warnings.empty())
        ++bad;
      if (e) {
        ++hits;
        if (e->schedule.str() != schedules[0] &&
            e->schedule.str() != schedules[1])
          ++bad;
      }
    }
  });
  for (std::thread &t : threads)
    t.join();
  stop = true;
  reader.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(hits.load(), 0);
  EXPECT_EQ(countFiles(dir.str()), 1); // no temporary files left behind
}

TEST(TuneCache, DefaultFolderFollowsTheEnvironment) {
  setenv("MTC_CACHE_DIR", "/tmp/mtc-cache-test-dir", 1);
  EXPECT_EQ(TuneCache::defaultDir(), "/tmp/mtc-cache-test-dir");
  unsetenv("MTC_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  EXPECT_EQ(TuneCache::defaultDir(), "/tmp/xdg/mtc");
  unsetenv("XDG_CACHE_HOME");
}

} // namespace
