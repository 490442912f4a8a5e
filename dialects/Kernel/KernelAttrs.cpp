//===- KernelAttrs.cpp - #kernel.schedule ---------------------------------===//
//
// The kernel dialect's attribute: its generated storage and its syntax,
// written against kScheduleFields (Schedule.h) like the text form
// (ScheduleFormat.cpp).
//
//===----------------------------------------------------------------------===//
#include "dialects/Kernel/KernelOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mtc::kernel;

#define GET_ATTRDEF_CLASSES
#include "dialects/Kernel/KernelAttrs.cpp.inc"

void KernelDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Kernel/KernelAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// #kernel.schedule
//===----------------------------------------------------------------------===//

void ScheduleAttr::print(AsmPrinter &printer) const {
  ScheduleParams s = getParams();
  printer << "<kind = " << stringifyScheduleKind(s.kind);
  for (const ScheduleField &f : kScheduleFields)
    if (f.shownAtDefault || s.*f.member != f.defaultValue)
      printer << ", " << f.name << " = " << s.*f.member;
  printer << ">";
}

/// Parses the kind's keyword (the error messages are ODS's for an enum).
static FailureOr<ScheduleKind> parseKind(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  std::string word;
  if (failed(parser.parseKeywordOrString(&word)))
    return failure();
  if (std::optional<ScheduleKind> kind = symbolizeScheduleKind(word))
    return *kind;
  InFlightDiagnostic d = parser.emitError(loc)
                         << "expected ::mtc::kernel::ScheduleKind to be one "
                            "of: ";
  for (uint32_t i = 0; i <= getMaxEnumValForScheduleKind(); ++i)
    d << (i ? ", " : "") << stringifyScheduleKind(ScheduleKind(i));
  return failure();
}

/// `<` then `name = value` pairs in any order, `>`; what a struct(params)
/// format over the kind and the fields would accept, with the same errors.
Attribute ScheduleAttr::parse(AsmParser &parser, Type) {
  ScheduleParams s;
  bool seenKind = false;
  std::array<bool, kNumScheduleFields> seen = {};
  auto fail = [&](const Twine &message) {
    parser.emitError(parser.getCurrentLocation(), message);
    return Attribute();
  };
  auto typeError = [&](StringRef name, StringRef type) {
    return fail("failed to parse Kernel_ScheduleAttr parameter '" + name +
                "' which is to be a `" + type + "`");
  };
  if (parser.parseLess())
    return {};
  do {
    StringRef key;
    if (parser.parseKeyword(&key))
      return fail("expected a parameter name in struct");
    if (parser.parseEqual())
      return {};
    if (key == "kind" && !seenKind) {
      seenKind = true;
      FailureOr<ScheduleKind> kind = parseKind(parser);
      if (failed(kind))
        return typeError("kind", "::mtc::kernel::ScheduleKind");
      s.kind = *kind;
      continue;
    }
    const ScheduleField *f = llvm::find_if(
        kScheduleFields, [&](const ScheduleField &f) { return f.name == key; });
    size_t i = f - std::begin(kScheduleFields);
    if (i == kNumScheduleFields || seen[i])
      return fail("duplicate or unknown struct parameter name: " + key);
    seen[i] = true;
    FailureOr<int64_t> value = FieldParser<int64_t>::parse(parser);
    if (failed(value))
      return typeError(f->name, "int64_t");
    s.*f->member = *value;
  } while (succeeded(parser.parseOptionalComma()));
  if (!seenKind)
    return fail("struct is missing required parameter: kind");
  for (auto [i, f] : llvm::enumerate(kScheduleFields))
    if (f.shownAtDefault && !seen[i])
      return fail("struct is missing required parameter: " + f.name);
  if (parser.parseGreater())
    return {};
  return get(parser.getContext(), s);
}
