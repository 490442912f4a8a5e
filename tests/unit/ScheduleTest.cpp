//===- ScheduleTest.cpp - The schedule field table and its users ----------===//
//
// kScheduleFields drives the text form and #kernel.schedule; these tests
// hold them to it.
//
//===----------------------------------------------------------------------===//
#include "compiler/Compiler.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringSet.h"

#include <gtest/gtest.h>

#include <set>

using namespace mlir;
using namespace mtc;
using namespace mtc::kernel;

namespace {

struct Context {
  MLIRContext ctx;
  Context() {
    DialectRegistry registry;
    registerCompilerDialects(registry);
    ctx.appendDialectRegistry(registry);
    ctx.loadAllAvailableDialects();
  }
};

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
  EXPECT_EQ(ScheduleParams::of(cast<ScheduleAttr>(a)).str(),
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

} // namespace
