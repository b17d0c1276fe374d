// kiln/test/test_interp_cast.cpp — the interpreter's casts, copies and ternary prims.
//
// convert_element_type across every dtype pair, the edge cases of each conversion (NaN and
// out-of-range floats to integers, wrap-around between integers, round-to-nearest-even into
// f16/bf16 checked on the bits), clone and copy_into through strided views, where and clamp.
// Expected values are written by hand.
#include "base/error.h"
#include "ir/attr.h"
#include "runtime/interpreter/interp_kernels.h"
#include "test_support/check.h"
#include "test_support/interp.h"
#include "test_support/make.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace {

using namespace kiln;
using namespace kiln::test;
using ir::OpKind;

constexpr ScalarType kAllDtypes[] = {kBool, kUInt8, kInt8, kInt16, kInt32, kInt64, kHalf, kBFloat16, kFloat, kDouble};

Tensor convert(const Tensor& a, ScalarType to) { return run(OpKind::convert_element_type, {a}, {to}); }

Tensor mk_any(ScalarType t, const std::vector<double>& v) {
  return dispatch_dtype(t, [&](auto tag) { return mk<decltype(tag)>(v); });
}

template <typename T> std::vector<uint16_t> bits(const Tensor& t) {
  std::vector<uint16_t> out;
  for (T x : values<T>(t)) out.push_back(x.bits);
  return out;
}

// ---- convert_element_type -----------------------------------------------------------------

TEST(InterpCast, EveryDtypePairSmallValues) {
  for (ScalarType from : kAllDtypes) {
    Tensor a = mk_any(from, {0, 1, 5});
    const bool src_bool = from == kBool;
    for (ScalarType to : kAllDtypes) {
      SCOPED_TRACE(std::string(dtype_name(from)) + " -> " + std::string(dtype_name(to)));
      const bool dst_bool = to == kBool;
      expect_exact(convert(a, to), to, {0, 1, (src_bool || dst_bool) ? 1.0 : 5.0});
    }
  }
}

TEST(InterpCast, EveryDtypePairNegativeValue) {
  for (ScalarType from : kAllDtypes) {
    if (from == kBool || from == kUInt8) continue;
    Tensor a = mk_any(from, {-3});
    for (ScalarType to : kAllDtypes) {
      SCOPED_TRACE(std::string(dtype_name(from)) + " -> " + std::string(dtype_name(to)));
      const double want = to == kBool ? 1.0 : to == kUInt8 ? 253.0 : -3.0;  // -3 mod 256 = 253
      expect_exact(convert(a, to), to, {want});
    }
  }
}

TEST(InterpCast, FloatToBool) {
  expect_exact(convert(mk<float>({0, -0.0, kNaN, 0.5, -kInf, 1e-45}), kBool), kBool, {0, 0, 1, 1, 1, 1});
  expect_exact(convert(mk<Half>({-0.0, 0.0001}), kBool), kBool, {0, 1});
}

TEST(InterpCast, FloatToIntegerTruncates) {
  expect_exact(convert(mk<float>({2.9, -2.9, 0.5, -0.5, -0.0}), kInt32), kInt32, {2, -2, 0, 0, 0});
  expect_exact(convert(mk<double>({1e9, -1e9}), kInt32), kInt32, {1e9, -1e9});
  expect_exact(convert(mk<BFloat16>({-7.5}), kInt16), kInt16, {-7});
}

TEST(InterpCast, FloatToIntegerGoesThroughInt64OrInt32AsPyTorch) {
  // PyTorch 2.15 on x86 (measured): uint8 and int64 through int64, int32, int16 and int8
  // through int32, then wrapped: -1 -> 255, 256 -> 0, 300 -> 44, -129 -> 127 (uint8);
  // 200 -> -56 and -129.5 -> -129 -> 127 (int8); 70000 -> 4464 (int16).
  expect_exact(convert(mk<float>({-1, 255.9, 256, 300, -129}), kUInt8), kUInt8, {255, 255, 0, 44, 127});
  expect_exact(convert(mk<float>({200, -129.5, 127.9}), kInt8), kInt8, {-56, 127, 127});
  expect_exact(convert(mk<double>({70000}), kInt16), kInt16, {4464});  // 70000 - 65536
  // Outside int32's range the 32-bit route gives INT32_MIN, whose low bits are zero; the
  // 64-bit route keeps the value's own low bits (2^32 + 5 -> 5 in uint8).
  expect_exact(convert(mk<double>({3e9, 70000, -3e9}), kInt32), kInt32, {-2147483648.0, 70000, -2147483648.0});
  expect_exact(convert(mk<double>({3e9, 4294967301.0}), kInt16), kInt16, {0, 0});
  expect_exact(convert(mk<double>({4294967301.0}), kInt8), kInt8, {0});
  expect_exact(convert(mk<double>({4294967301.0, 3e9}), kUInt8), kUInt8, {5, 0});
  // Outside int64's range, infinities and NaN become INT64_MIN (x86's "integer indefinite").
  Tensor odd = mk<double>({kNaN, kInf, -kInf, 1e20, -1e20, 9223372036854775808.0, -9223372036854775808.0,
                           9223372036854774784.0});
  EXPECT_EQ(values<int64_t>(convert(odd, kInt64)),
            (std::vector<int64_t>{INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN,
                                  9223372036854774784}));
  // NaN and infinities: INT32_MIN in int32, 0 in the narrower types.
  for (ScalarType from : {kFloat, kDouble, kHalf, kBFloat16}) {
    const Tensor odd2 = mk<double>({kNaN, kInf, -kInf}).to(from);
    expect_exact(convert(odd2, kInt32), kInt32, {-2147483648.0, -2147483648.0, -2147483648.0});
    for (ScalarType to : {kInt16, kInt8, kUInt8}) expect_exact(convert(odd2, to), to, {0, 0, 0});
  }
}

TEST(InterpCast, IntegerToIntegerWraps) {
  Tensor a = make<int64_t>({300, -1, 128, 65537});
  expect_exact(convert(a, kInt8), kInt8, {44, -1, -128, 1});
  expect_exact(convert(a, kUInt8), kUInt8, {44, 255, 128, 1});
  expect_exact(convert(a, kInt16), kInt16, {300, -1, 128, 1});
  expect_exact(convert(a, kInt32), kInt32, {300, -1, 128, 65537});
  expect_exact(convert(a, kBool), kBool, {1, 1, 1, 1});
  expect_exact(convert(mk<int32_t>({-129, 2147483647}), kInt8), kInt8, {127, -1});
  expect_exact(convert(mk<uint8_t>({255}), kInt8), kInt8, {-1});
  EXPECT_EQ(values<int64_t>(convert(mk<int8_t>({-1, -128}), kInt64)), (std::vector<int64_t>{-1, -128}));
  EXPECT_EQ(values<int64_t>(convert(mk<uint8_t>({255}), kInt64)), std::vector<int64_t>{255});
}

TEST(InterpCast, ToHalfRoundsToNearestEven) {
  // 65504 is the largest f16; 65520 is halfway to 2^16 and rounds (to even) to inf.
  // 2^-24 is the smallest subnormal; 2^-25 ties to 0 (even), 3*2^-25 ties to 2*2^-24.
  // 1 + 2^-11 ties to 1; 1 + 3*2^-11 ties to 1 + 2^-9.
  Tensor a = mk<float>({65504, 65519.98828125, 65520, 5.9604644775390625e-08, 2.98023223876953125e-08,
                        8.9406967163085938e-08, -2.98023223876953125e-08, 1.00048828125, 1.00146484375, kNaN, -kInf,
                        5.5, 1e-8});
  EXPECT_EQ(bits<Half>(convert(a, kHalf)), (std::vector<uint16_t>{0x7BFF, 0x7BFF, 0x7C00, 0x0001, 0x0000, 0x0002, 0x8000,
                                                                   0x3C00, 0x3C02, 0x7E00, 0xFC00, 0x4580, 0x0000}));
  // Integers go through float: 2049 ties to 2048; 65520 overflows.
  EXPECT_EQ(bits<Half>(convert(mk<int32_t>({2049, 2051, 65504, 65520, -1}), kHalf)),
            (std::vector<uint16_t>{0x6800, 0x6802, 0x7BFF, 0x7C00, 0xBC00}));
  // A double goes through float, as c10::Half(float) does: 1 + 2^-11 + 2^-40 first rounds to
  // the float 1 + 2^-11, a tie that then goes to 1.0 (rounding once would give 1 + 2^-10).
  EXPECT_EQ(bits<Half>(convert(mk<double>({1.00048828125 + 9.094947017729282e-13}), kHalf)), std::vector<uint16_t>{0x3C00});
}

TEST(InterpCast, ToBFloat16RoundsToNearestEven) {
  // 1 + 2^-8 ties to 1; 1 + 3*2^-8 ties to 1 + 2^-6; 3.4e38 rounds past bf16's max to inf.
  Tensor a = mk<float>({1.00390625, 1.01171875, 3.4e38, -0.0, kNaN, 1.001953125});
  std::vector<uint16_t> got = bits<BFloat16>(convert(a, kBFloat16));
  EXPECT_EQ(got[0], 0x3F80);
  EXPECT_EQ(got[1], 0x3F82);
  EXPECT_EQ(got[2], 0x7F80);
  EXPECT_EQ(got[3], 0x8000);
  EXPECT_EQ(got[4] & 0x7F80, 0x7F80);  // NaN: all exponent bits set...
  EXPECT_NE(got[4] & 0x007F, 0);       // ... and a nonzero mantissa
  EXPECT_EQ(got[5], 0x3F80);
  // 257 ties to 256, 259 ties to 260.
  EXPECT_EQ(bits<BFloat16>(convert(make<int64_t>({257, 259}), kBFloat16)), (std::vector<uint16_t>{0x4380, 0x4382}));
}

TEST(InterpCast, FromHalfAndBetweenFloatsIsExactOrRounded) {
  Tensor h = make<Half>({Half::from_bits(0x0001), Half::from_bits(0x7BFF), Half::from_bits(0xFC00), Half::from_bits(0x8000),
                         Half::from_bits(0x7E00)});
  expect_exact(convert(h, kFloat), kFloat, {5.9604644775390625e-08, 65504, -kInf, -0.0, kNaN});
  expect_exact(convert(h, kDouble), kDouble, {5.9604644775390625e-08, 65504, -kInf, -0.0, kNaN});
  // f16 -> bf16: 65504 = 1.999 * 2^15 needs 11 bits; bf16 has 8 and rounds it up to 2^16.
  expect_exact(convert(h, kBFloat16), kBFloat16, {5.9604644775390625e-08, 65536, -kInf, -0.0, kNaN});
  expect_exact(convert(mk<double>({1e40, -1e40, 1.0000000009313226, 0.1}), kFloat), kFloat,
               {kInf, -kInf, 1, 0.10000000149011612});
  expect_exact(convert(mk<float>({0.1}), kDouble), kDouble, {0.10000000149011612});
  expect_exact(convert(mk<bool>({1, 0}), kFloat), kFloat, {1, 0});
}

// ---- clone and copy_into ------------------------------------------------------------------

TEST(InterpCast, CloneMakesAContiguousIndependentCopy) {
  Tensor base = mk<int8_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor t = strided(base, {3, 2}, {1, 3}, 0);  // the transpose: [[1, 4], [2, 5], [3, 6]]
  Tensor c = rt::interpret_op(OpKind::clone, {t}, ir::AttrList()).at(0);
  EXPECT_EQ(c.dtype(), kInt8);
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.sizes().vec(), (std::vector<int64_t>{3, 2}));
  static_cast<int8_t*>(base.data_ptr())[0] = 100;
  expect_exact(c, kInt8, {1, 4, 2, 5, 3, 6});
  Tensor f = rt::interpret_op(OpKind::clone, {mk<float>({-0.0, kNaN})}, ir::AttrList()).at(0);
  expect_exact(f, kFloat, {-0.0, kNaN});
}

TEST(InterpCast, ConvertReadsStridedInput) {
  Tensor base = mk<double>({0.5, 1.5, 2.5, 3.5, 4.5, 5.5});
  expect_exact(convert(strided(base, {3}, {2}, 1), kInt32), kInt32, {1, 3, 5});
  expect_exact(convert(strided(base, {2, 2}, {0, 1}, 4), kFloat), kFloat, {4.5, 5.5, 4.5, 5.5});
}

TEST(InterpCast, CopyIntoWritesThroughStridedView) {
  Tensor buf = mk<int32_t>({-1, -1, -1, -1, -1, -1});
  Tensor dst = strided(buf, {3}, {2}, 1);  // elements 1, 3, 5
  rt::interp::copy_into(dst, mk<float>({1.9, -2.9, 300}));
  expect_exact(buf, kInt32, {-1, 1, -1, -2, -1, 300});
  // A zero-stride (broadcast) source into a transposed 2x2 destination, bool -> bf16.
  Tensor out = mk<BFloat16>({0, 0, 0, 0}, {2, 2});
  Tensor src_buf = mk<bool>({1, 0});
  rt::interp::copy_into(strided(out, {2, 2}, {1, 2}, 0), strided(src_buf, {2, 2}, {1, 0}, 0));
  // dst[i][j] is out[j*2 + i] and takes src[i][j] = src_buf[i]: out = [[1, 0], [1, 0]].
  expect_exact(out, kBFloat16, {1, 0, 1, 0});
  EXPECT_THROW(rt::interp::copy_into(dst, mk<float>({1, 2})), Error);
}

// ---- where and clamp ----------------------------------------------------------------------

TEST(InterpTernary, Where) {
  expect_exact(run(OpKind::where, {mk<bool>({1, 0, 1, 0}), mk<float>({1, 2, kNaN, -0.0}), mk<float>({10, 20, 30, 40})}),
               kFloat, {1, 20, kNaN, 40});
  expect_exact(run(OpKind::where, {mk<bool>({0, 1}), mk<Half>({1, -0.0}), mk<Half>({65504, 2})}), kHalf, {65504, -0.0});
  EXPECT_EQ(values<int64_t>(
                run(OpKind::where, {mk<bool>({1, 0}), make<int64_t>({INT64_MIN, 0}), make<int64_t>({0, INT64_MAX})})),
            (std::vector<int64_t>{INT64_MIN, INT64_MAX}));
  expect_exact(run(OpKind::where, {mk<bool>({1, 0}), mk<bool>({0, 0}), mk<bool>({1, 1})}), kBool, {0, 1});
  // A condition broadcast along columns: [[T, T], [F, F]].
  Tensor cond_buf = mk<bool>({1, 0});
  Tensor cond = strided(cond_buf, {2, 2}, {1, 0}, 0);
  expect_exact(run(OpKind::where, {cond, mk<int16_t>({1, 2, 3, 4}, {2, 2}), mk<int16_t>({5, 6, 7, 8}, {2, 2})}), kInt16,
               {1, 2, 7, 8});
  EXPECT_THROW(run(OpKind::where, {mk<uint8_t>({1}), mk<float>({1}), mk<float>({2})}), Error);
  EXPECT_THROW(run(OpKind::where, {mk<bool>({1}), mk<float>({1}), mk<double>({2})}), Error);
}

TEST(InterpTernary, ClampPropagatesNaNFromValueAndBounds) {
  Tensor x = mk<float>({-5, 0.5, 5, kNaN, 1, 1, 3});
  Tensor lo = mk<float>({0, 0, 0, 0, kNaN, 2, 0});
  Tensor hi = mk<float>({1, 1, 1, 1, 1, 1, kNaN});
  // lo > hi (element 5) gives hi.
  expect_exact(run(OpKind::clamp, {x, lo, hi}), kFloat, {0, 0.5, 1, kNaN, kNaN, 1, kNaN});
  expect_exact(run(OpKind::clamp, {mk<double>({-kInf, kInf}), mk<double>({-1, -1}), mk<double>({1, 1})}), kDouble,
               {-1, 1});
  expect_exact(run(OpKind::clamp, {mk<Half>({-3, 2}), mk<Half>({-1, -1}), mk<Half>({1, 1})}), kHalf, {-1, 1});
}

TEST(InterpTernary, ClampIntegers) {
  expect_exact(run(OpKind::clamp, {mk<int32_t>({-5, 5, 3}), mk<int32_t>({0, 0, 4}), mk<int32_t>({3, 3, 2})}), kInt32,
               {0, 3, 2});
  expect_exact(run(OpKind::clamp, {mk<uint8_t>({200, 5}), mk<uint8_t>({10, 10}), mk<uint8_t>({100, 100})}), kUInt8,
               {100, 10});
  EXPECT_EQ(values<int64_t>(run(OpKind::clamp, {make<int64_t>({INT64_MIN, INT64_MAX}), make<int64_t>({-7, -7}),
                                                make<int64_t>({INT64_MAX, 7})})),
            (std::vector<int64_t>{-7, 7}));
  EXPECT_THROW(run(OpKind::clamp, {mk<bool>({1}), mk<bool>({0}), mk<bool>({1})}), Error);
}

}  // namespace
