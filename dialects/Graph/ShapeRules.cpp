//===- ShapeRules.cpp - Shape and dtype rules of graph ops ----------------===//
//
// See ShapeRules.h.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/ShapeRules.h"

#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace mtc {

bool broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b, Shape &out,
                     std::string &err) {
  size_t rank = std::max(a.size(), b.size());
  out.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) {
      err = "shapes " + formatShape(a) + " and " + formatShape(b) +
            " cannot be broadcast together (dim " +
            std::to_string(rank - 1 - i) + ": " + std::to_string(da) + " vs " +
            std::to_string(db) + ")";
      return false;
    }
    out[rank - 1 - i] = da == 1 ? db : da;
  }
  return true;
}

/// M (all dimensions of `a` but the last, together) and N of a contraction
/// against kMaxContractDim; `b` is the operand `n` comes from.
static bool checkContractDims(StringRef op, StringRef aName,
                              ArrayRef<int64_t> a, StringRef bName,
                              ArrayRef<int64_t> b, int64_t n,
                              std::string &err) {
  auto tooLarge = [&](const char *what, StringRef name, ArrayRef<int64_t> shape,
                      const std::string &value) {
    err = op.str() + ": " + what + " = " + value + " (from " + name.str() +
          " " + formatShape(shape) +
          ") exceeds 2^31 - 1 = 2147483647, the largest M and N of a "
          "contraction";
    return false;
  };
  std::optional<int64_t> m = numElements(a.drop_back());
  if (!m)
    return tooLarge("M", aName, a, "more than 2^40");
  if (*m > kMaxContractDim)
    return tooLarge("M", aName, a, std::to_string(*m));
  if (n > kMaxContractDim)
    return tooLarge("N", bName, b, std::to_string(n));
  return true;
}

bool linearShape(ArrayRef<int64_t> x, ArrayRef<int64_t> w, Shape &out,
                 std::string &err) {
  if (x.empty()) {
    err = "linear: x must have at least one dimension";
    return false;
  }
  if (w.size() != 2) {
    err = "linear: w must be 2-D [N, K], got " + formatShape(w);
    return false;
  }
  if (x.back() != w[1]) {
    err = "linear: x " + formatShape(x) + " and w " + formatShape(w) +
          " disagree on K (" + std::to_string(x.back()) + " vs " +
          std::to_string(w[1]) + ")";
    return false;
  }
  if (!checkContractDims("linear", "x", x, "w", w, w[0], err))
    return false;
  out.assign(x.begin(), x.end() - 1);
  out.push_back(w[0]);
  return true;
}

bool matmulShape(ArrayRef<int64_t> a, ArrayRef<int64_t> b, Shape &out,
                 std::string &err) {
  if (a.size() < 2) {
    err = "matmul: a must have at least two dimensions [..., M, K], got " +
          formatShape(a);
    return false;
  }
  if (b.size() != 2) {
    err = "matmul: b must be 2-D [K, N], got " + formatShape(b);
    return false;
  }
  if (a.back() != b[0]) {
    err = "matmul: a " + formatShape(a) + " and b " + formatShape(b) +
          " disagree on K (" + std::to_string(a.back()) + " vs " +
          std::to_string(b[0]) + ")";
    return false;
  }
  if (!checkContractDims("matmul", "a", a, "b", b, b[1], err))
    return false;
  out.assign(a.begin(), a.end() - 1);
  out.push_back(b[1]);
  return true;
}

bool transposeShape(ArrayRef<int64_t> t, Shape &out, std::string &err) {
  if (t.size() < 2) {
    err = "transpose: needs at least two dimensions, got " + formatShape(t);
    return false;
  }
  out.assign(t.begin(), t.end());
  std::swap(out[out.size() - 1], out[out.size() - 2]);
  return true;
}

bool repeatShape(ArrayRef<int64_t> t, int64_t group, Shape &out,
                 std::string &err) {
  if (group <= 0) {
    err =
        "repeat: the group size must be positive, got " + std::to_string(group);
    return false;
  }
  out.assign(t.begin(), t.end());
  if (out.back() > kMaxElements / group) {
    err = "repeat: result tensor of " + formatShape(t) +
          " repeated in groups of " + std::to_string(group) +
          " is too large (more than 2^40 elements)";
    return false;
  }
  out.back() *= group;
  return true;
}

bool ropeShape(ArrayRef<int64_t> x, DType xType, ArrayRef<int64_t> table,
               DType tableType, int64_t cols, Shape &out, std::string &err) {
  if (xType != DType::F32) {
    err = "rope: x must be f32 (the rotation computes in f32; convert it "
          "first), got " +
          dtypeName(xType).str();
    return false;
  }
  if (!isFloat(tableType)) {
    err = "rope: the table must be floating point, got " +
          dtypeName(tableType).str() + "; insert a convert";
    return false;
  }
  if (x.size() != 2) {
    err = "rope: x must be [M, N], got " + formatShape(x);
    return false;
  }
  if (table.size() != 2 || table[1] % 2 ||
      (table[0] != 1 && table[0] != x[0])) {
    err = "rope: the table must be [1, D] or [" + std::to_string(x[0]) +
          ", D] (a row per row of x) with D even, got " + formatShape(table);
    return false;
  }
  if (cols <= 0 || cols % table[1] || cols > x[1]) {
    err = "rope: cols must be a positive multiple of the table's " +
          std::to_string(table[1]) + " columns, at most x's " +
          std::to_string(x[1]) + ", got " + std::to_string(cols);
    return false;
  }
  out.assign(x.begin(), x.end());
  return true;
}

bool rowReductionShape(ArrayRef<int64_t> t, Shape &out, std::string &err) {
  if (t.empty()) {
    err = "a row reduction needs a tensor of rank >= 1";
    return false;
  }
  out.assign(t.begin(), t.end());
  out.back() = 1;
  return true;
}

bool checkI4Use(StringRef op, DType operand, std::optional<DType> to,
                std::string &err) {
  if (to == DType::I4) {
    err = op.str() + ": cannot produce i4; i4 is a storage type for weights "
                     "(graph inputs, converted before use)";
    return false;
  }
  if (operand == DType::I4 && !to) {
    err = op.str() + ": i4 operands must be converted first (i4 is a "
                     "storage type); insert a convert";
    return false;
  }
  return true;
}

bool checkFloatType(StringRef op, DType a, std::string &err) {
  if (isFloat(a))
    return true;
  err = op.str() + ": operands must be floating point, got " +
        dtypeName(a).str() + "; insert a convert";
  return false;
}

bool checkSameFloatTypes(StringRef op, DType a, DType b, std::string &err) {
  if (a != b) {
    err = op.str() + ": element types differ (" + dtypeName(a).str() + " vs " +
          dtypeName(b).str() + "); insert a convert";
    return false;
  }
  return checkFloatType(op, a, err);
}

bool isExactConversion(DType from, DType to) {
  if (from == to)
    return true;
  switch (from) {
  case DType::I4:
    return to != DType::I4;
  case DType::I8:
    return isFloat(to);
  case DType::F16:
  case DType::BF16:
    return to == DType::F32;
  case DType::F32:
    return false;
  }
  return false;
}

} // namespace mtc
