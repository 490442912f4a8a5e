//===- TensorMap.h - Kernel parameters that are TMA descriptors -*- C++ -*-===//
//
// A kernel may take some of its buffers as tensor maps (CUtensorMap, the
// 128-byte descriptors of Hopper's Tensor Memory Accelerator) instead of
// pointers. The manifest describes each one in the kernel's "tensor_maps":
//
//   {"param": 0, "dims": [8192, 4096], "strides": [8192], "box": [64, 128],
//    "swizzle": "none" | "32B" | "64B" | "128B",
//    "l2_promotion": "none" | "64B" | "128B" | "256B"}
//
// is parameter 0's buffer (elements of the buffer's dtype) seen as a tensor
// of dims[0] x dims[1] elements, innermost first, whose rows are strides[0]
// bytes apart, copied in boxes of 64 x 128 elements (cuTensorMapEncodeTiled's
// arguments; element strides 1, no interleave, out-of-range elements read as
// zero). The runtime checks the description against CUDA's rules and the
// buffer's size when it reads the manifest, encodes it once when it loads
// the kernel, and points a copy of it at the buffer's address at every
// launch (cuTensorMapReplaceAddress: host work only, nothing allocated).
//
//===----------------------------------------------------------------------===//
#ifndef MTC_RUNTIME_TENSORMAP_H
#define MTC_RUNTIME_TENSORMAP_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mtc {

/// A tiled view of a kernel parameter's buffer, with the buffer's element
/// type; out-of-range elements of a box read as zero.
struct TensorMapInfo {
  /// Both name a number of bytes (the driver's order): a swizzle's span, an
  /// L2 promotion's size; the manifest writes "none" or "<bytes>B".
  enum class Swizzle { None, B32, B64, B128 };
  enum class L2Promotion { None, B64, B128, B256 };
  static constexpr int64_t kSwizzleBytes[] = {0, 32, 64, 128};
  static constexpr int64_t kL2PromotionBytes[] = {0, 64, 128, 256};
  /// The swizzle spanning `bytes` (0: none), if there is one.
  static std::optional<Swizzle> swizzleOfBytes(int64_t bytes);
  /// The most dimensions, and the largest box side, CUDA allows.
  static constexpr size_t kMaxRank = 5;
  static constexpr int64_t kMaxBox = 256;

  unsigned param = 0; // index into the kernel's parameters
  /// Elements per dimension, innermost first (a row-major [R, C] matrix is
  /// {C, R}); the byte strides of dimensions 1 and up; the box one copy
  /// moves, in elements per dimension.
  std::vector<int64_t> dims, strides, box;
  Swizzle swizzle = Swizzle::None;
  L2Promotion l2Promotion = L2Promotion::None;

  /// Bytes from the buffer's start to the end of the view.
  int64_t extentBytes(unsigned elementBytes) const;
  /// Why this is not a valid tiled tensor map of `elementBytes`-byte
  /// elements under CUDA's rules for cuTensorMapEncodeTiled, or "".
  std::string invalidReason(unsigned elementBytes) const;
  /// "dims [8192, 4096], box [64, 128], swizzle 128B".
  std::string str() const;

  llvm::json::Value toJSON() const;
  /// Reads a "tensor_maps" entry; the message says what is wrong.
  static llvm::Expected<TensorMapInfo> fromJSON(const llvm::json::Value &v);
};

} // namespace mtc

#endif // MTC_RUNTIME_TENSORMAP_H
