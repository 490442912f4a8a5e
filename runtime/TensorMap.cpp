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

/// "none" or "<bytes>B".
static std::string bytesName(int64_t bytes) {
  return bytes ? std::to_string(bytes) + "B" : "none";
}

static std::string swizzleName(TensorMapInfo::Swizzle s) {
  return bytesName(TensorMapInfo::kSwizzleBytes[size_t(s)]);
}

std::optional<TensorMapInfo::Swizzle>
TensorMapInfo::swizzleOfBytes(int64_t bytes) {
  for (size_t i = 0; i < std::size(kSwizzleBytes); ++i)
    if (kSwizzleBytes[i] == bytes)
      return Swizzle(i);
  return std::nullopt;
}

/// The index of `name` among the names of `bytes`, and the message's list
/// of them ("none, 32B, 64B or 128B").
template <size_t N>
static std::optional<size_t> modeNamed(std::optional<StringRef> name,
                                       const int64_t (&bytes)[N],
                                       std::string &list) {
  std::optional<size_t> found;
  for (size_t i = 0; i < N; ++i) {
    list += (i == 0 ? "" : i + 1 < N ? ", " : " or ") + bytesName(bytes[i]);
    if (name && *name == bytesName(bytes[i]))
      found = i;
  }
  return found;
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
  if (int64_t span = kSwizzleBytes[size_t(swizzle)]; span && inner > span)
    return fmt::format("the box's inner side is {} bytes, more than the {} "
                       "swizzle spans",
                       inner, swizzleName(swizzle));
  return "";
}

std::string TensorMapInfo::str() const {
  return fmt::format("dims [{}], box [{}], swizzle {}", fmt::join(dims, ", "),
                     fmt::join(box, ", "), swizzleName(swizzle));
}

static json::Array toArray(const std::vector<int64_t> &v) {
  json::Array a;
  for (int64_t x : v)
    a.push_back(x);
  return a;
}

json::Value TensorMapInfo::toJSON() const {
  return json::Object{
      {"param", int64_t(param)},
      {"dims", toArray(dims)},
      {"strides", toArray(strides)},
      {"box", toArray(box)},
      {"swizzle", swizzleName(swizzle)},
      {"l2_promotion", bytesName(kL2PromotionBytes[size_t(l2Promotion)])}};
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
  std::string list;
  std::optional<size_t> sw =
      modeNamed(o->getString("swizzle"), kSwizzleBytes, list);
  if (!sw)
    return bad(Twine("the tensor map of parameter ") + Twine(t.param) +
               " has no swizzle (" + list + ")");
  t.swizzle = Swizzle(*sw);
  list.clear();
  std::optional<size_t> l2 =
      modeNamed(o->getString("l2_promotion"), kL2PromotionBytes, list);
  if (!l2)
    return bad(Twine("the tensor map of parameter ") + Twine(t.param) +
               " has no l2_promotion (" + list + ")");
  t.l2Promotion = L2Promotion(*l2);
  return t;
}

} // namespace mtc
