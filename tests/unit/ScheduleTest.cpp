//===- ScheduleTest.cpp - The schedule field table and its users ----------===//
//
// kScheduleFields drives the text form, #kernel.schedule, the manifest and
// the tuner's axes; these tests hold them to it for every field of every
// kind.
//
//===----------------------------------------------------------------------===//
#include "compiler/Compiler.h"
#include "compiler/Frontend.h"
#include "compiler/Tuner.h"
#include "dialects/Kernel/KernelOps.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <set>

using namespace mlir;
using namespace mtc;
using namespace mtc::kernel;

namespace {

constexpr ScheduleKind kKinds[] = {ScheduleKind::simt, ScheduleKind::mma,
                                   ScheduleKind::tiled,
                                   ScheduleKind::elementwise};

struct Context {
  MLIRContext ctx;
  Context() {
    DialectRegistry registry;
    registerCompilerDialects(registry);
    ctx.appendDialectRegistry(registry);
    ctx.loadAllAvailableDialects();
  }
};

/// Schedules of `kind` that exercise every field: all at their defaults,
/// each field alone away from its default, and all of them away at once
/// (with values no two fields share).
std::vector<ScheduleParams> schedulesOf(ScheduleKind kind) {
  std::vector<ScheduleParams> all;
  ScheduleParams base;
  base.kind = kind;
  all.push_back(base);
  ScheduleParams every = base;
  for (auto [i, f] : llvm::enumerate(kScheduleFields)) {
    ScheduleParams one = base;
    one.*f.member = f.defaultValue + 2 + int64_t(i);
    all.push_back(one);
    every.*f.member = 100 + int64_t(i);
  }
  all.push_back(every);
  return all;
}

TEST(ScheduleFields, TableIsConsistent) {
  llvm::StringSet<> names, letters;
  std::vector<int64_t ScheduleParams::*> members;
  std::set<int> orders;
  for (const ScheduleField &f : kScheduleFields) {
    EXPECT_TRUE(names.insert(f.name).second) << f.name.str();
    EXPECT_NE(f.name, "kind");
    EXPECT_TRUE(letters.insert(f.letters).second) << f.letters.str();
    EXPECT_FALSE(f.letters.empty());
    EXPECT_TRUE(llvm::all_of(f.letters, llvm::isAlpha)) << f.letters.str();
    EXPECT_FALSE(llvm::is_contained(members, f.member)) << f.name.str();
    members.push_back(f.member);
    EXPECT_TRUE(orders.insert(f.tune.order).second) << f.name.str();
    EXPECT_EQ(ScheduleParams().*f.member, f.defaultValue) << f.name.str();
  }
  EXPECT_EQ(ScheduleParams().kind, ScheduleKind::simt);
}

TEST(ScheduleFields, DefaultsAreShortAndFull) {
  EXPECT_EQ(ScheduleParams().str(), "simt w4 r1 kw1 v16 u1 mt1 sk1");
  std::string err;
  std::optional<ScheduleParams> s = ScheduleParams::parse("tiled", err);
  ASSERT_TRUE(s) << err;
  ScheduleParams expected;
  expected.kind = ScheduleKind::tiled;
  EXPECT_EQ(*s, expected);
}

/// text -> ScheduleParams -> #kernel.schedule (printed and parsed again) ->
/// the op's attribute -> manifest (as JSON text and back) -> text.
TEST(ScheduleFields, EveryFieldOfEveryKindRoundTrips) {
  Context c;
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(R"(
graph lin(x: bf16[16, 256], w: i8[512, 256]) -> bf16[16, 512] {
  wf = convert(w, bf16)
  y = linear(x, wf)
  return y
}
graph act(x: f32[256]) -> f32[256] {
  y = relu(x)
  return y
}
)",
                                                             "t.graph"),
                        llvm::SMLoc());
  OwningOpRef<ModuleOp> graphs = parseGraphSource(sm, &c.ctx);
  ASSERT_TRUE(graphs);
  for (ScheduleKind kind : kKinds) {
    StringRef graphName = kind == ScheduleKind::elementwise ? "act" : "lin";
    auto kernels = buildKernels(graphs->lookupSymbol<graph::FuncOp>(graphName),
                                CompileOptions());
    ASSERT_TRUE(bool(kernels)) << llvm::toString(kernels.takeError());
    graph::FuncOp f = *(*kernels)->getOps<graph::FuncOp>().begin();
    Operation *op = &f.getBody().front().front();
    ASSERT_TRUE((isa<ContractOp, ElementwiseOp>(op)));
    for (const ScheduleParams &s : schedulesOf(kind)) {
      std::string text = s.str();
      SCOPED_TRACE(text);
      std::string err;
      std::optional<ScheduleParams> parsed = ScheduleParams::parse(text, err);
      ASSERT_TRUE(parsed) << err;
      EXPECT_EQ(*parsed, s);

      ScheduleAttr attr = ScheduleAttr::get(&c.ctx, *parsed);
      std::string attrText;
      llvm::raw_string_ostream(attrText) << attr;
      auto reparsed =
          dyn_cast_or_null<ScheduleAttr>(parseAttribute(attrText, &c.ctx));
      ASSERT_TRUE(reparsed) << attrText;
      EXPECT_EQ(reparsed, attr) << attrText;
      EXPECT_EQ(reparsed.getParams(), s) << attrText;
      op->setAttr("schedule", reparsed);

      Manifest m = buildManifest(f, CompileOptions());
      std::string json = llvm::formatv("{0}", m.toJSON()).str();
      llvm::Expected<llvm::json::Value> v = llvm::json::parse(json);
      ASSERT_TRUE(bool(v)) << llvm::toString(v.takeError());
      llvm::Expected<Manifest> back = Manifest::fromJSON(*v);
      ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
      const KernelInfo &k = back->kernels.at(0);
      EXPECT_EQ(k.schedule, text);
      EXPECT_EQ(k.scheduleFields.size(), 1 + kNumScheduleFields);
      ScheduleParams fromManifest;
      std::optional<StringRef> kindName = k.scheduleFields.getString("kind");
      ASSERT_TRUE(kindName);
      fromManifest.kind = *symbolizeScheduleKind(*kindName);
      for (const ScheduleField &field : kScheduleFields) {
        std::optional<int64_t> value = k.scheduleFields.getInteger(field.name);
        ASSERT_TRUE(value) << "schedule_fields lacks " << field.name.str();
        fromManifest.*field.member = *value;
      }
      EXPECT_EQ(fromManifest.str(), text);
    }
  }
}

TEST(ScheduleFields, AttributeSyntax) {
  Context c;
  auto parse = [&](StringRef text) -> std::pair<Attribute, std::string> {
    std::string diag;
    ScopedDiagnosticHandler handler(&c.ctx, [&](Diagnostic &d) {
      diag += d.str() + "\n";
      return success();
    });
    return {parseAttribute(text, &c.ctx), diag};
  };
  // Any order, explicit defaults; printed back in table order without them.
  auto [a, diag] = parse("#kernel.schedule<stages = 1, splitk = 2, mtile = "
                         "1, unroll = 1, vec = 8, kwarps = 1, rows = 2, "
                         "warps = 8, regs = 0, kind = mma>");
  ASSERT_TRUE(a) << diag;
  std::string printed;
  llvm::raw_string_ostream(printed) << a;
  EXPECT_EQ(printed, "#kernel.schedule<kind = mma, warps = 8, rows = 2, "
                     "kwarps = 1, vec = 8, unroll = 1, mtile = 1, "
                     "splitk = 2>");
  EXPECT_EQ(cast<ScheduleAttr>(a).getParams().str(),
            "mma w8 r2 kw1 v8 u1 mt1 sk2");
  // Fields shown at their default are required; the others are not.
  auto [missing, why] =
      parse("#kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, "
            "vec = 16, unroll = 1, mtile = 1>");
  EXPECT_FALSE(missing);
  EXPECT_NE(why.find("struct is missing required parameter: splitk"),
            std::string::npos)
      << why;
  auto [twice, twiceWhy] =
      parse("#kernel.schedule<kind = simt, warps = 4, warps = 8>");
  EXPECT_FALSE(twice);
  EXPECT_NE(twiceWhy.find("duplicate or unknown struct parameter name: warps"),
            std::string::npos)
      << twiceWhy;
  auto [badKind, badKindWhy] = parse("#kernel.schedule<kind = simd>");
  EXPECT_FALSE(badKind);
  EXPECT_NE(badKindWhy.find("one of: simt, mma, elementwise, tiled"),
            std::string::npos)
      << badKindWhy;
}

/// With a flat cost, the search visits each axis of the start's kind and
/// nothing else: the table's ranges are the tuner's coordinates (and the
/// fields deriveScheduleFields ties to them: wgmma's warps follow rows).
TEST(ScheduleFields, TunerMovesTheKindsFields) {
  std::vector<ScheduleKind> kinds(std::begin(kKinds), std::end(kKinds));
  kinds.push_back(ScheduleKind::wgmma);
  kinds.push_back(ScheduleKind::reduce);
  for (ScheduleKind kind : kinds) {
    ScheduleParams start;
    start.kind = kind;
    if (kind == ScheduleKind::tiled || kind == ScheduleKind::wgmma) {
      start.mtile = 16;
      start.stages = 4;
    }
    if (kind == ScheduleKind::reduce)
      start.vec = 8; // a reduction loads at most 16 bytes: vec <= 8
    deriveScheduleFields(start);
    std::set<std::string> moved;
    TuneOptions o;
    o.widePass = false;
    o.m = 16;
    auto r = coordinateDescent(
        start, [](const ScheduleParams &) { return std::string(); },
        [&](const ScheduleParams &s) -> llvm::Expected<double> {
          for (const ScheduleField &f : kScheduleFields)
            if (s.*f.member != start.*f.member)
              moved.insert(f.name.str());
          return 1.0;
        },
        o);
    ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
    std::set<std::string> expected;
    for (const ScheduleField &f : kScheduleFields)
      if (!f.tune.forKind(kind).empty())
        expected.insert(f.name.str());
    if (kind == ScheduleKind::wgmma)
      expected.insert("warps");
    EXPECT_EQ(moved, expected) << stringifyScheduleKind(kind).str();
  }
}

} // namespace
