//===- TensorMap.cpp - Kernel parameters that are TMA descriptors ---------===//
//
// See TensorMap.h. The rules checked here are those CUDA documents for
// cuTensorMapEncodeTiled without interleave; the driver checks them again
// when the runtime encodes the map.
//
//===----------------------------------------------------------------------===//
#include "runtime/TensorMap.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

using namespace llvm;

namespace mtc {

StringRef swizzleName(TensorMapInfo::Swizzle s) {
  switch (s) {
  case TensorMapInfo::Swizzle::None:
    return "none";
  case TensorMapInfo::Swizzle::B32:
    return "32B";
  case TensorMapInfo::Swizzle::B64:
    return "64B";
  case TensorMapInfo::Swizzle::B128:
    return "128B";
  }
  return "?";
}

StringRef l2PromotionName(TensorMapInfo::L2Promotion p) {
  switch (p) {
  case TensorMapInfo::L2Promotion::None:
    return "none";
  case TensorMapInfo::L2Promotion::B64:
    return "64B";
  case TensorMapInfo::L2Promotion::B128:
    return "128B";
  case TensorMapInfo::L2Promotion::B256:
    return "256B";
  }
  return "?";
}

/// The bytes a swizzle pattern spans (0: none).
static int64_t swizzleSpan(TensorMapInfo::Swizzle s) {
  switch (s) {
  case TensorMapInfo::Swizzle::None:
    return 0;
  case TensorMapInfo::Swizzle::B32:
    return 32;
  case TensorMapInfo::Swizzle::B64:
    return 64;
  case TensorMapInfo::Swizzle::B128:
    return 128;
  }
  return 0;
}

int64_t TensorMapInfo::extentBytes(unsigned elementBytes) const {
  if (dims.empty())
    return 0;
  int64_t end = dims[0] * int64_t(elementBytes);
  for (size_t i = 1; i < dims.size() && i - 1 < strides.size(); ++i)
    end += (dims[i] - 1) * strides[i - 1];
  return end;
}

std::string TensorMapInfo::invalidReason(unsigned elementBytes) const {
  size_t rank = dims.size();
  if (rank < 1 || rank > kMaxRank)
    return fmt::format("{} dimensions (1 to {} allowed)", rank, kMaxRank);
  if (box.size() != rank)
    return fmt::format("{} box sides for {} dimensions", box.size(), rank);
  if (strides.size() + 1 != rank)
    return fmt::format("{} strides for {} dimensions (one per dimension "
                       "after the first)",
                       strides.size(), rank);
  for (size_t i = 0; i < rank; ++i) {
    if (dims[i] < 1 || dims[i] > (int64_t(1) << 32))
      return fmt::format("dims[{}] = {} is not in [1, 2^32]", i, dims[i]);
    if (box[i] < 1 || box[i] > kMaxBox)
      return fmt::format("box[{}] = {} is not in [1, {}]", i, box[i], kMaxBox);
  }
  for (size_t i = 0; i < strides.size(); ++i)
    if (strides[i] < 16 || strides[i] % 16 || strides[i] >= (int64_t(1) << 40))
      return fmt::format("strides[{}] = {} bytes is not a positive multiple "
                         "of 16 below 2^40",
                         i, strides[i]);
  int64_t inner = box[0] * int64_t(elementBytes);
  if (inner % 16)
    return fmt::format("the box's inner side is {} bytes, not a multiple of "
                       "16",
                       inner);
  if (int64_t span = swizzleSpan(swizzle); span && inner > span)
    return fmt::format("the box's inner side is {} bytes, more than the {} "
                       "swizzle spans",
                       inner, swizzleName(swizzle).str());
  return "";
}

std::string TensorMapInfo::str() const {
  return fmt::format("dims [{}], box [{}], swizzle {}", fmt::join(dims, ", "),
                     fmt::join(box, ", "), swizzleName(swizzle).str());
}

static json::Array toArray(const std::vector<int64_t> &v) {
  json::Array a;
  for (int64_t x : v)
    a.push_back(x);
  return a;
}

json::Value TensorMapInfo::toJSON() const {
  return json::Object{{"param", int64_t(param)},
                      {"dims", toArray(dims)},
                      {"strides", toArray(strides)},
                      {"box", toArray(box)},
                      {"swizzle", swizzleName(swizzle)},
                      {"l2_promotion", l2PromotionName(l2Promotion)}};
}

Expected<TensorMapInfo> TensorMapInfo::fromJSON(const json::Value &v) {
  auto bad = [](const Twine &what) {
    return createStringError(inconvertibleErrorCode(), what);
  };
  const json::Object *o = v.getAsObject();
  if (!o)
    return bad("a tensor_maps entry is not an object");
  TensorMapInfo t;
  std::optional<int64_t> param = o->getInteger("param");
  if (!param || *param < 0)
    return bad("a tensor_maps entry has no parameter index");
  t.param = unsigned(*param);
  auto ints = [&](StringRef key, std::vector<int64_t> &out) {
    const json::Array *a = o->getArray(key);
    if (!a)
      return false;
    for (const json::Value &x : *a) {
      std::optional<int64_t> i = x.getAsInteger();
      if (!i)
        return false;
      out.push_back(*i);
    }
    return true;
  };
  for (auto [key, out] :
       {std::pair{"dims", &t.dims}, {"strides", &t.strides}, {"box", &t.box}})
    if (!ints(key, *out))
      return bad(Twine("the tensor map of parameter ") + Twine(t.param) +
                 " has no integer list '" + key + "'");
  std::optional<StringRef> sw = o->getString("swizzle");
  std::optional<StringRef> l2 = o->getString("l2_promotion");
  bool found = false;
  for (Swizzle s : {Swizzle::None, Swizzle::B32, Swizzle::B64, Swizzle::B128})
    if (sw && *sw == swizzleName(s))
      t.swizzle = s, found = true;
  if (!found)
    return bad(Twine("the tensor map of parameter ") + Twine(t.param) +
               " has no swizzle (none, 32B, 64B or 128B)");
  found = false;
  for (L2Promotion p : {L2Promotion::None, L2Promotion::B64, L2Promotion::B128,
                        L2Promotion::B256})
    if (l2 && *l2 == l2PromotionName(p))
      t.l2Promotion = p, found = true;
  if (!found)
    return bad(Twine("the tensor map of parameter ") + Twine(t.param) +
               " has no l2_promotion (none, 64B, 128B or 256B)");
  return t;
}

} // namespace mtc
