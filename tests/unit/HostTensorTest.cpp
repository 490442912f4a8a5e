//===- HostTensorTest.cpp - Tests of host tensors and conversions ---------===//
#include "runtime/HostTensor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace mtc;

namespace {

float floatOfBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

//===----------------------------------------------------------------------===//
// bf16
//===----------------------------------------------------------------------===//

TEST(BF16, RoundsToNearestEven) {
  // bf16 keeps 7 mantissa bits: around 1.0 its ulp is 2^-7.
  EXPECT_EQ(floatToBF16(1.0f), 0x3F80);
  EXPECT_EQ(floatToBF16(1.0f + 0x1p-8f), 0x3F80);     // tie, to even (down)
  EXPECT_EQ(floatToBF16(1.0f + 3 * 0x1p-8f), 0x3F82); // tie, to even (up)
  EXPECT_EQ(floatToBF16(1.0f + 0x1p-8f + 0x1p-20f), 0x3F81); // above the tie
  EXPECT_EQ(floatToBF16(1.0f + 0x1p-8f - 0x1p-20f), 0x3F80); // below the tie
  EXPECT_EQ(floatToBF16(-(1.0f + 0x1p-8f)), 0xBF80);
  EXPECT_EQ(floatToBF16(-(1.0f + 3 * 0x1p-8f)), 0xBF82);
  EXPECT_EQ(floatToBF16(-0.0f), 0x8000);
  // Rounding up carries into the exponent.
  EXPECT_EQ(bf16ToFloat(floatToBF16(2.0f - 0x1p-9f)), 2.0f);
}

TEST(BF16, SpecialValues) {
  EXPECT_EQ(floatToBF16(kInf), 0x7F80);
  EXPECT_EQ(floatToBF16(-kInf), 0xFF80);
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBF16(kNaN))));
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBF16(-kNaN))));
  // A NaN whose payload sits only in the low 16 bits must stay a NaN.
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBF16(floatOfBits(0x7F800001)))));
  // The largest float rounds past the largest bf16: infinity.
  EXPECT_EQ(floatToBF16(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(bf16ToFloat(0x7F7F), 0x1.FEp127f);
  EXPECT_EQ(bf16ToFloat(0x3F80), 1.0f);
  EXPECT_EQ(bf16ToFloat(0xC040), -3.0f);
}

//===----------------------------------------------------------------------===//
// f16
//===----------------------------------------------------------------------===//

TEST(F16, RoundsToNearestEven) {
  // f16 keeps 10 mantissa bits: around 1.0 its ulp is 2^-10.
  EXPECT_EQ(floatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f), 0x3C00);     // tie, to even (down)
  EXPECT_EQ(floatToHalf(1.0f + 3 * 0x1p-11f), 0x3C02); // tie, to even (up)
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f + 0x1p-20f), 0x3C01);
  EXPECT_EQ(floatToHalf(-(1.0f + 3 * 0x1p-11f)), 0xBC02);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(2.0f - 0x1p-12f), 0x4000); // carries into the exponent
  EXPECT_EQ(halfToFloat(0x3C00), 1.0f);
  EXPECT_EQ(halfToFloat(0xC200), -3.0f);
}

TEST(F16, OverflowAndSpecialValues) {
  EXPECT_EQ(floatToHalf(65504.0f), 0x7BFF); // the largest half
  EXPECT_EQ(floatToHalf(65519.0f), 0x7BFF); // below the tie with 65536
  EXPECT_EQ(floatToHalf(65520.0f), 0x7C00); // the tie rounds to even: Inf
  EXPECT_EQ(floatToHalf(1e6f), 0x7C00);
  EXPECT_EQ(floatToHalf(-1e6f), 0xFC00);
  EXPECT_EQ(floatToHalf(kInf), 0x7C00);
  EXPECT_EQ(floatToHalf(-kInf), 0xFC00);
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(kNaN))));
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(floatOfBits(0x7F800001)))));
  EXPECT_EQ(halfToFloat(0x7C00), kInf);
  EXPECT_EQ(halfToFloat(0xFC00), -kInf);
  EXPECT_TRUE(std::isnan(halfToFloat(0x7C01)));
}

TEST(F16, Subnormals) {
  EXPECT_EQ(floatToHalf(0x1p-14f), 0x0400);        // smallest normal
  EXPECT_EQ(floatToHalf(0x1p-24f), 0x0001);        // smallest subnormal
  EXPECT_EQ(floatToHalf(1023 * 0x1p-24f), 0x03FF); // largest subnormal
  EXPECT_EQ(floatToHalf(0x1p-25f), 0x0000);        // tie, to even (zero)
  EXPECT_EQ(floatToHalf(-0x1p-25f), 0x8000);
  EXPECT_EQ(floatToHalf(3 * 0x1p-25f), 0x0002); // tie, to even (up)
  EXPECT_EQ(floatToHalf(0x1p-25f + 0x1p-35f), 0x0001);
  EXPECT_EQ(floatToHalf(1023.5f * 0x1p-24f), 0x0400); // rounds up to normal
  EXPECT_EQ(floatToHalf(1e-10f), 0x0000);
  EXPECT_EQ(halfToFloat(0x0001), 0x1p-24f);
  EXPECT_EQ(halfToFloat(0x03FF), 1023 * 0x1p-24f);
  EXPECT_EQ(halfToFloat(0x8001), -0x1p-24f);
  EXPECT_EQ(halfToFloat(0x0400), 0x1p-14f);
}

TEST(F16, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = halfToFloat(uint16_t(h));
    if (std::isnan(f))
      continue;
    EXPECT_EQ(floatToHalf(f), h) << "half 0x" << std::hex << h;
  }
}

TEST(BF16, EveryBF16RoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = bf16ToFloat(uint16_t(h));
    if (std::isnan(f))
      continue;
    EXPECT_EQ(floatToBF16(f), h) << "bf16 0x" << std::hex << h;
  }
}

//===----------------------------------------------------------------------===//
// roundTo
//===----------------------------------------------------------------------===//

TEST(RoundTo, I8TruncatesAndSaturates) {
  EXPECT_EQ(roundTo(DType::I8, 3.7), 3);
  EXPECT_EQ(roundTo(DType::I8, -3.7), -3);
  EXPECT_EQ(roundTo(DType::I8, 0.5), 0);
  EXPECT_EQ(roundTo(DType::I8, -0.5), 0);
  EXPECT_EQ(roundTo(DType::I8, 127.9), 127);
  EXPECT_EQ(roundTo(DType::I8, -128.9), -128);
  EXPECT_EQ(roundTo(DType::I8, 200), 127);
  EXPECT_EQ(roundTo(DType::I8, -200), -128);
  EXPECT_EQ(roundTo(DType::I8, 1e300), 127);
  EXPECT_EQ(roundTo(DType::I8, std::numeric_limits<double>::infinity()), 127);
  EXPECT_EQ(roundTo(DType::I8, -std::numeric_limits<double>::infinity()), -128);
  EXPECT_EQ(roundTo(DType::I8, std::nan("")), 0);
}

TEST(RoundTo, I4TruncatesAndSaturates) {
  EXPECT_EQ(roundTo(DType::I4, 3.7), 3);
  EXPECT_EQ(roundTo(DType::I4, -3.7), -3);
  EXPECT_EQ(roundTo(DType::I4, -0.5), 0);
  EXPECT_EQ(roundTo(DType::I4, 7.9), 7);
  EXPECT_EQ(roundTo(DType::I4, -8.9), -8);
  EXPECT_EQ(roundTo(DType::I4, 8), 7);
  EXPECT_EQ(roundTo(DType::I4, -9), -8);
  EXPECT_EQ(roundTo(DType::I4, 1e300), 7);
  EXPECT_EQ(roundTo(DType::I4, -std::numeric_limits<double>::infinity()), -8);
  EXPECT_EQ(roundTo(DType::I4, std::nan("")), 0);
}

TEST(RoundTo, FloatsRoundThroughF32) {
  EXPECT_EQ(roundTo(DType::F32, 1.0 + 0x1p-30), 1.0);
  EXPECT_EQ(roundTo(DType::F32, 1.0 + 0x1p-23), 1.0 + 0x1p-23);
  EXPECT_EQ(roundTo(DType::F32, 1.0 + 0x1p-24), 1.0); // tie, to even
  EXPECT_EQ(roundTo(DType::BF16, 1.0 + 3 * 0x1p-8), 1.0 + 0x1p-6);
  EXPECT_EQ(roundTo(DType::F16, 1.0 + 3 * 0x1p-11), 1.0 + 0x1p-9);
  // Just above a bf16 tie in double, but the tie itself in f32: the
  // documented double rounding through f32 resolves it to even.
  EXPECT_EQ(roundTo(DType::BF16, 1.0 + 0x1p-8 + 0x1p-30), 1.0);
  EXPECT_EQ(roundTo(DType::F16, 1e6), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(roundTo(DType::BF16, std::nan(""))));
  EXPECT_EQ(roundTo(DType::F32, 1e300),
            std::numeric_limits<double>::infinity());
}

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

TEST(HostTensor, ZeroFilledWithTheRightSize) {
  HostTensor t(DType::BF16, {3, 5});
  EXPECT_EQ(t.numElements(), 15);
  EXPECT_EQ(t.bytes(), 30u);
  for (int64_t i = 0; i < 15; ++i)
    EXPECT_EQ(t.get(i), 0.0);
  EXPECT_EQ(HostTensor(DType::F32, {2, 2}).bytes(), 16u);
  EXPECT_EQ(HostTensor(DType::I8, {7}).bytes(), 7u);
}

TEST(HostTensor, GetSetRoundTrip) {
  const double values[] = {0.0, 1.0, -2.5, 0.125, 96.0, -65504.0};
  for (DType t : {DType::F32, DType::F16, DType::BF16}) {
    HostTensor h(t, {6});
    for (int64_t i = 0; i < 6; ++i)
      h.set(i, values[i]);
    for (int64_t i = 0; i < 6; ++i)
      EXPECT_EQ(h.get(i), roundTo(t, values[i])) << dtypeName(t).str();
  }
  // Exactly representable values come back unchanged.
  HostTensor f32(DType::F32, {1});
  f32.set(0, 0.1f);
  EXPECT_EQ(f32.get(0), double(0.1f));
  // Stores round to the element type.
  HostTensor bf(DType::BF16, {2});
  bf.set(0, 1.0 + 0x1p-8);
  bf.set(1, 1.0 + 3 * 0x1p-8);
  EXPECT_EQ(bf.get(0), 1.0);
  EXPECT_EQ(bf.get(1), 1.0 + 0x1p-6);
  HostTensor h(DType::F16, {2});
  h.set(0, 0x1p-24);
  h.set(1, 70000.0);
  EXPECT_EQ(h.get(0), 0x1p-24);
  EXPECT_EQ(h.get(1), std::numeric_limits<double>::infinity());
  HostTensor i8(DType::I8, {5});
  const double in[] = {3.9, -3.9, 300, -300, std::nan("")};
  const double out[] = {3, -3, 127, -128, 0};
  for (int64_t i = 0; i < 5; ++i)
    i8.set(i, in[i]);
  for (int64_t i = 0; i < 5; ++i)
    EXPECT_EQ(i8.get(i), out[i]);
  EXPECT_EQ(i8.data[3], 0x80);
}

TEST(HostTensor, I4PacksTwoElementsPerByte) {
  // Element 2 j in the low nibble of byte j, 2 j + 1 in the high one, two's
  // complement; an odd count rounds up to whole bytes.
  HostTensor t(DType::I4, {2, 4});
  EXPECT_EQ(t.numElements(), 8);
  EXPECT_EQ(t.bytes(), 4u);
  EXPECT_EQ(HostTensor(DType::I4, {3}).bytes(), 2u);
  const double values[] = {1, -2, 7, -8, 0, -1, 5, 3};
  for (int64_t i = 0; i < 8; ++i)
    t.set(i, values[i]);
  EXPECT_EQ(t.data[0], 0xE1); // -2 = 0xE high, 1 low
  EXPECT_EQ(t.data[1], 0x87); // -8 high, 7 low
  EXPECT_EQ(t.data[2], 0xF0); // -1 high, 0 low
  EXPECT_EQ(t.data[3], 0x35);
  for (int64_t i = 0; i < 8; ++i)
    EXPECT_EQ(t.get(i), values[i]) << "element " << i;
}

TEST(HostTensor, I4GetReadsEveryNibble) {
  HostTensor t(DType::I4, {2});
  for (unsigned byte = 0; byte < 256; ++byte) {
    t.data[0] = uint8_t(byte);
    int lo = int(byte & 0xF), hi = int(byte >> 4);
    EXPECT_EQ(t.get(0), lo < 8 ? lo : lo - 16) << byte;
    EXPECT_EQ(t.get(1), hi < 8 ? hi : hi - 16) << byte;
  }
}

TEST(HostTensor, I4SetRoundsAndKeepsTheOtherNibble) {
  HostTensor t(DType::I4, {6});
  std::fill(t.data.begin(), t.data.end(), 0xFF); // every element -1
  const double in[] = {3.9, -3.9, 100, -100, std::nan(""), -8};
  const double out[] = {3, -3, 7, -8, 0, -8};
  for (int64_t i = 0; i < 6; ++i) {
    t.set(i, in[i]);
    for (int64_t j = i + 1; j < 6; ++j)
      EXPECT_EQ(t.get(j), -1) << "element " << j << " after setting " << i;
  }
  for (int64_t i = 0; i < 6; ++i)
    EXPECT_EQ(t.get(i), out[i]) << "element " << i;
  EXPECT_EQ(t.data[1], 0x87);
}

TEST(HostTensor, ResizedI4CopiesWholeRows) {
  // Rows of an i4 tensor have an even length, so they start on a byte.
  HostTensor t(DType::I4, {2, 4});
  for (int64_t i = 0; i < 8; ++i)
    t.set(i, double(i) - 4); // -4 .. 3
  HostTensor big = resized(t, {3, 6});
  EXPECT_EQ(big.bytes(), 9u);
  const double bigValues[] = {-4, -3, -2, -1, 0, 0, 0, 1, 2,
                              3,  0,  0,  0,  0, 0, 0, 0, 0};
  for (int64_t i = 0; i < 18; ++i)
    EXPECT_EQ(big.get(i), bigValues[i]) << "element " << i;
  HostTensor small = resized(t, {1, 2});
  EXPECT_EQ(small.bytes(), 1u);
  EXPECT_EQ(small.get(0), -4);
  EXPECT_EQ(small.get(1), -3);
  HostTensor back = resized(big, {2, 4});
  EXPECT_EQ(back.data, t.data);
}

TEST(HostTensor, LittleEndianLayout) {
  HostTensor bf(DType::BF16, {1});
  bf.set(0, 1.0);
  EXPECT_EQ(bf.data[0], 0x80);
  EXPECT_EQ(bf.data[1], 0x3F);
  HostTensor f(DType::F32, {1});
  f.set(0, 1.0);
  EXPECT_EQ(f.data[3], 0x3F);
  EXPECT_EQ(f.data[2], 0x80);
}

TEST(FillRandom, DeterministicPerSeed) {
  for (DType t : {DType::I4, DType::I8, DType::F16, DType::BF16, DType::F32}) {
    HostTensor a(t, {64, 33}), b(t, {64, 33}), c(t, {64, 33});
    fillRandom(a, 42, "x");
    fillRandom(b, 42, "x");
    fillRandom(c, 43, "x");
    EXPECT_EQ(a.data, b.data) << dtypeName(t).str();
    EXPECT_NE(a.data, c.data) << dtypeName(t).str();
  }
}

TEST(FillRandom, ValuesAreOfTheType) {
  HostTensor i8(DType::I8, {4096});
  fillRandom(i8, 1);
  int64_t neg = 0, pos = 0;
  for (int64_t i = 0; i < i8.numElements(); ++i) {
    double v = i8.get(i);
    EXPECT_GE(v, -128);
    EXPECT_LE(v, 127);
    neg += v < 0;
    pos += v > 0;
  }
  EXPECT_GT(neg, 1000);
  EXPECT_GT(pos, 1000);

  for (DType t : {DType::F16, DType::BF16, DType::F32}) {
    HostTensor h(t, {4096});
    fillRandom(h, 7, "x");
    int64_t negatives = 0;
    for (int64_t i = 0; i < h.numElements(); ++i) {
      double v = h.get(i);
      ASSERT_TRUE(std::isfinite(v));
      EXPECT_EQ(roundTo(t, v), v);
      EXPECT_LT(std::fabs(v), 8.0);
      negatives += v < 0;
    }
    EXPECT_GT(negatives, 1500) << dtypeName(t).str();
    EXPECT_LT(negatives, 2600) << dtypeName(t).str();
  }
}

TEST(FillRandom, I4TakesEveryValue) {
  HostTensor t(DType::I4, {64, 64});
  fillRandom(t, 5, "w");
  int64_t count[16] = {};
  for (int64_t i = 0; i < t.numElements(); ++i) {
    double v = t.get(i);
    ASSERT_GE(v, -8);
    ASSERT_LE(v, 7);
    ASSERT_EQ(v, std::trunc(v));
    ++count[int(v) + 8];
  }
  // 4096 elements, 256 of each value on average.
  for (int v = 0; v < 16; ++v)
    EXPECT_GT(count[v], 150) << "value " << v - 8;
}

TEST(FillRandom, ScalesArePositive) {
  for (const char *name : {"scale", "scales", "w_scale", "Scales", "s"}) {
    HostTensor h(DType::BF16, {1024});
    fillRandom(h, 3, name);
    for (int64_t i = 0; i < h.numElements(); ++i) {
      double v = h.get(i);
      EXPECT_GE(v, roundTo(DType::BF16, 0.5 / 64)) << name;
      EXPECT_LE(v, roundTo(DType::BF16, 1.5 / 64)) << name;
    }
  }
  // Other names get signed values.
  HostTensor h(DType::F32, {256});
  fillRandom(h, 3, "bias");
  bool anyNegative = false;
  for (int64_t i = 0; i < h.numElements(); ++i)
    anyNegative |= h.get(i) < 0;
  EXPECT_TRUE(anyNegative);
}

TEST(FillRandom, ZerosAreSmall) {
  // Zero points of a group-wise quantized weight: in [-1, 1) / 16, both
  // signs, so that q * scale + zero is led by q.
  for (const char *name : {"zeros", "zero", "w_zeros", "Zeros"}) {
    HostTensor h(DType::BF16, {1024});
    fillRandom(h, 4, name);
    int64_t negatives = 0, positives = 0;
    for (int64_t i = 0; i < h.numElements(); ++i) {
      double v = h.get(i);
      EXPECT_GE(v, -1.0 / 16) << name;
      EXPECT_LE(v, 1.0 / 16) << name;
      negatives += v < 0;
      positives += v > 0;
    }
    EXPECT_GT(negatives, 300) << name;
    EXPECT_GT(positives, 300) << name;
  }
}

} // namespace
