// kiln/test/test_interp_unary.cpp — the interpreter's unary pointwise prims against known values.
//
// Expected values are written by hand (or are textbook constants, quoted to 16-17 digits);
// exact results are compared exactly, sign of zero included, and NaN matches NaN only. The
// transcendental functions are compared with a tolerance of a few ulp of the dtype.
#include "base/error.h"
#include "ir/attr.h"
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

// 2^-52 and 2^-23: one ulp relative at 1. glibc's double functions are accurate to a few
// ulp, float ones are computed in float; four ulp bounds both.
constexpr double kF64Tol = 4 * 2.220446049250313e-16;
constexpr double kF32Tol = 4 * 1.1920928955078125e-07;

using ir::OpKind;

TEST(InterpUnary, AbsAndNegFloats) {
  Tensor a = mk<float>({-1.5, 0.0, -0.0, kInf, -kInf, kNaN});
  expect_exact(run(OpKind::abs, {a}), kFloat, {1.5, 0.0, 0.0, kInf, kInf, kNaN});
  expect_exact(run(OpKind::neg, {a}), kFloat, {1.5, -0.0, 0.0, -kInf, kInf, kNaN});
  expect_exact(run(OpKind::abs, {mk<Half>({-2.5, 3})}), kHalf, {2.5, 3});
  expect_exact(run(OpKind::neg, {mk<BFloat16>({-2.5, 0})}), kBFloat16, {2.5, -0.0});
  expect_exact(run(OpKind::neg, {mk<double>({0.0})}), kDouble, {-0.0});
}

TEST(InterpUnary, AbsAndNegIntegersWrap) {
  expect_exact(run(OpKind::abs, {mk<int8_t>({-128, -1, 0, 127})}), kInt8, {-128, 1, 0, 127});
  expect_exact(run(OpKind::neg, {mk<int8_t>({-128, -1, 0, 127})}), kInt8, {-128, 1, 0, -127});
  expect_exact(run(OpKind::neg, {mk<int16_t>({-32768, 5})}), kInt16, {-32768, -5});
  expect_exact(run(OpKind::neg, {mk<int32_t>({INT32_MIN, 7})}), kInt32, {INT32_MIN, -7});
  expect_exact(run(OpKind::abs, {mk<uint8_t>({0, 255})}), kUInt8, {0, 255});
  expect_exact(run(OpKind::neg, {mk<uint8_t>({1, 0, 255})}), kUInt8, {255, 0, 1});
  Tensor big = make<int64_t>({INT64_MIN, -5, INT64_MAX});
  EXPECT_EQ(values<int64_t>(run(OpKind::abs, {big})), (std::vector<int64_t>{INT64_MIN, 5, INT64_MAX}));
  EXPECT_EQ(values<int64_t>(run(OpKind::neg, {big})), (std::vector<int64_t>{INT64_MIN, 5, -INT64_MAX}));
}

TEST(InterpUnary, ExpAndLog) {
  Tensor a = mk<double>({0, 1, -kInf, kInf, kNaN});
  expect_close(run(OpKind::exp, {a}), {1, 2.718281828459045, 0, kInf, kNaN}, kF64Tol);
  expect_exact(run(OpKind::exp2, {mk<double>({10, -1, -kInf})}), kDouble, {1024, 0.5, 0});
  expect_close(run(OpKind::expm1, {mk<double>({1e-10, 0, -kInf})}), {1.00000000005e-10, 0, -1}, kF64Tol);
  expect_exact(run(OpKind::log, {mk<double>({1, 0, -1, kInf})}), kDouble, {0, -kInf, kNaN, kInf});
  expect_close(run(OpKind::log, {mk<double>({2.718281828459045})}), {1}, kF64Tol);
  expect_exact(run(OpKind::log2, {mk<double>({8, 0.25, 0})}), kDouble, {3, -2, -kInf});
  expect_close(run(OpKind::log10, {mk<double>({1000, 1e-3})}), {3, -3}, kF64Tol);
  expect_close(run(OpKind::log1p, {mk<double>({1e-10, -1, -2})}), {9.9999999995e-11, -kInf, kNaN}, kF64Tol);
  // float: the nearest float to e is 2.7182817459106445.
  expect_close(run(OpKind::exp, {mk<float>({1})}), {2.7182817459106445}, kF32Tol);
}

TEST(InterpUnary, RootsAndReciprocals) {
  expect_exact(run(OpKind::sqrt, {mk<float>({4, 2.25, 0, -0.0, -1, kInf})}), kFloat, {2, 1.5, 0, -0.0, kNaN, kInf});
  expect_exact(run(OpKind::rsqrt, {mk<double>({4, 0, -0.0, kInf, -4})}), kDouble, {0.5, kInf, -kInf, 0, kNaN});
  expect_exact(run(OpKind::reciprocal, {mk<float>({4, -0.0, 0, -kInf})}), kFloat, {0.25, -kInf, kInf, -0.0});
}

TEST(InterpUnary, Trigonometric) {
  const double pi = 3.141592653589793;
  expect_close(run(OpKind::sin, {mk<double>({0, pi / 2, -pi / 6})}), {0, 1, -0.5}, kF64Tol);
  expect_exact(run(OpKind::sin, {mk<double>({-0.0, kInf})}), kDouble, {-0.0, kNaN});
  expect_close(run(OpKind::cos, {mk<double>({0, pi, pi / 3})}), {1, -1, 0.5}, kF64Tol);
  expect_close(run(OpKind::tan, {mk<double>({0, pi / 4})}), {0, 1}, kF64Tol);
  expect_close(run(OpKind::asin, {mk<double>({1, -0.5, 0})}), {pi / 2, -pi / 6, 0}, kF64Tol);
  expect_exact(run(OpKind::asin, {mk<double>({2})}), kDouble, {kNaN});
  expect_close(run(OpKind::acos, {mk<double>({1, -1, 0.5})}), {0, pi, pi / 3}, kF64Tol);
  expect_close(run(OpKind::atan, {mk<double>({1, kInf, -kInf})}), {pi / 4, pi / 2, -pi / 2}, kF64Tol);
  expect_close(run(OpKind::sin, {mk<float>({1.5707963267948966})}), {1}, kF32Tol);
}

TEST(InterpUnary, Hyperbolic) {
  expect_exact(run(OpKind::sinh, {mk<double>({0, -0.0, kInf, -kInf})}), kDouble, {0, -0.0, kInf, -kInf});
  expect_close(run(OpKind::sinh, {mk<double>({1})}), {1.1752011936438014}, kF64Tol);
  expect_exact(run(OpKind::cosh, {mk<double>({0, -kInf})}), kDouble, {1, kInf});
  expect_close(run(OpKind::tanh, {mk<double>({0.5, kInf, -kInf})}), {0.46211715726000974, 1, -1}, kF64Tol);
  expect_close(run(OpKind::asinh, {mk<double>({1, 0})}), {0.881373587019543, 0}, kF64Tol);
  expect_exact(run(OpKind::acosh, {mk<double>({1, 0.5, kInf})}), kDouble, {0, kNaN, kInf});
  expect_close(run(OpKind::atanh, {mk<double>({0.5, 1, -1, 2})}), {0.5493061443340549, kInf, -kInf, kNaN}, kF64Tol);
}

TEST(InterpUnary, ErrorFunctions) {
  expect_close(run(OpKind::erf, {mk<double>({0, 1, -1, kInf, -kInf})}),
               {0, 0.8427007929497149, -0.8427007929497149, 1, -1}, kF64Tol);
  expect_close(run(OpKind::erfc, {mk<double>({0, 1, kInf, -kInf})}), {1, 0.15729920705028513, 0, 2}, kF64Tol);
}

TEST(InterpUnary, ErfinvDouble) {
  // erfinv(0.5) = probit(0.75)/sqrt(2), erfinv(0.9) = probit(0.95)/sqrt(2), ... (mpmath at 40 digits
  // of the double inputs).
  Tensor y = mk<double>({0.5, 0.9, -0.9, 0.999, 0.1, 1e-10, 0, -0.0});
  expect_close(run(OpKind::erfinv, {y}),
               {0.4769362762044699, 1.1630871536766743, -1.1630871536766743, 2.3267537655135246, 0.08885599049425769,
                8.862269254527581e-11, 0, 0},
               kF64Tol);
  // Deep in the tail, where erf(x) - y would cancel: 1 - 1e-10 and 1 - 2^-40.
  expect_close(run(OpKind::erfinv, {mk<double>({0.9999999999, -0.999, 0.75, 0.9999999999990905})}),
               {4.572824958544925, -2.3267537655135246, 0.8134198475976185, 5.05125408524939}, kF64Tol);
  expect_exact(run(OpKind::erfinv, {mk<double>({1, -1, 1.5, -2, kNaN, -0.0})}), kDouble,
               {kInf, -kInf, kNaN, kNaN, kNaN, -0.0});
}

TEST(InterpUnary, ErfinvFloat) {
  // The float inputs are 0.5, -0.89999997615814209 and 0.99900001287460327 (mpmath, 40 digits).
  expect_close(run(OpKind::erfinv, {mk<float>({0.5, -0.9, 0.999})}),
               {0.4769362762044699, -1.1630870719457722, 2.3267563267961546}, kF32Tol);
  expect_exact(run(OpKind::erfinv, {mk<float>({1, -1, 1.5})}), kFloat, {kInf, -kInf, kNaN});
}

TEST(InterpUnary, Lgamma) {
  expect_close(run(OpKind::lgamma, {mk<double>({1, 2, 0.5, 10, -0.5})}),
               {0, 0, 0.5723649429247001, 12.801827480081469, 1.2655121234846454}, kF64Tol);
  expect_exact(run(OpKind::lgamma, {mk<double>({0, -1, kInf})}), kDouble, {kInf, kInf, kInf});
}

TEST(InterpUnary, Sigmoid) {
  // Far in either tail the result saturates without NaN.
  expect_exact(run(OpKind::sigmoid, {mk<double>({0, -kInf, kInf, -1000, 1000, kNaN})}), kDouble,
               {0.5, 0, 1, 0, 1, kNaN});
  expect_close(run(OpKind::sigmoid, {mk<double>({1, -1})}), {0.7310585786300049, 0.2689414213699951}, kF64Tol);
  expect_exact(run(OpKind::sigmoid, {mk<float>({0, -200, 200})}), kFloat, {0.5, 0, 1});
}

TEST(InterpUnary, RoundHalfToEven) {
  Tensor a = mk<float>({0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 3.7, -3.7, kNaN, -kInf});
  expect_exact(run(OpKind::round, {a}), kFloat, {0, 2, 2, -0.0, -2, -2, 0, 4, -4, kNaN, -kInf});
  expect_exact(run(OpKind::round, {mk<double>({2.5, 3.5, -0.0})}), kDouble, {2, 4, -0.0});
  expect_exact(run(OpKind::round, {mk<Half>({2.5, 3.5})}), kHalf, {2, 4});
  expect_exact(run(OpKind::round, {mk<BFloat16>({0.5, -1.5})}), kBFloat16, {0, -2});
}

TEST(InterpUnary, FloorCeilTruncFrac) {
  Tensor a = mk<float>({-1.5, 1.5, -0.5, 0.5, -0.0, kInf, kNaN});
  expect_exact(run(OpKind::floor, {a}), kFloat, {-2, 1, -1, 0, -0.0, kInf, kNaN});
  expect_exact(run(OpKind::ceil, {a}), kFloat, {-1, 2, -0.0, 1, -0.0, kInf, kNaN});
  expect_exact(run(OpKind::trunc, {a}), kFloat, {-1, 1, -0.0, 0, -0.0, kInf, kNaN});
  expect_exact(run(OpKind::frac, {mk<float>({1.75, -1.75, 2, kInf, kNaN})}), kFloat, {0.75, -0.75, 0, kNaN, kNaN});
  expect_exact(run(OpKind::floor, {mk<Half>({-1.25})}), kHalf, {-2});
  expect_exact(run(OpKind::ceil, {mk<BFloat16>({1.25})}), kBFloat16, {2});
}

TEST(InterpUnary, RoundingOpsReturnIntegersUnchanged) {
  for (OpKind op : {OpKind::floor, OpKind::ceil, OpKind::round, OpKind::trunc}) {
    expect_exact(run(op, {mk<int32_t>({-3, 7, 0})}), kInt32, {-3, 7, 0});
    expect_exact(run(op, {mk<uint8_t>({255})}), kUInt8, {255});
    EXPECT_EQ(values<int64_t>(run(op, {make<int64_t>({INT64_MIN})})), std::vector<int64_t>{INT64_MIN});
  }
}

TEST(InterpUnary, Sign) {
  // PyTorch: (0 < x) - (x < 0), so NaN gives 0 and -0.0 gives +0.0.
  expect_exact(run(OpKind::sign, {mk<float>({-2, 0, -0.0, 3, kNaN, -kInf, kInf})}), kFloat, {-1, 0, 0, 1, 0, -1, 1});
  expect_exact(run(OpKind::sign, {mk<int8_t>({-128, 0, 5})}), kInt8, {-1, 0, 1});
  expect_exact(run(OpKind::sign, {mk<uint8_t>({0, 200})}), kUInt8, {0, 1});
  expect_exact(run(OpKind::sign, {mk<bool>({1, 0})}), kBool, {1, 0});
  expect_exact(run(OpKind::sign, {mk<Half>({-0.5})}), kHalf, {-1});
}

TEST(InterpUnary, Signbit) {
  const double neg_nan = -std::numeric_limits<double>::quiet_NaN();
  expect_exact(run(OpKind::signbit, {mk<float>({-0.0, 0.0, -1, 1, -kInf, kNaN, neg_nan})}), kBool,
               {1, 0, 1, 0, 1, 0, 1});
  expect_exact(run(OpKind::signbit, {mk<int32_t>({-1, 0, 1})}), kBool, {1, 0, 0});
  expect_exact(run(OpKind::signbit, {mk<uint8_t>({255})}), kBool, {0});
  expect_exact(run(OpKind::signbit, {mk<Half>({-0.0, 2})}), kBool, {1, 0});
  expect_exact(run(OpKind::signbit, {mk<BFloat16>({-3})}), kBool, {1});
}

TEST(InterpUnary, Classification) {
  Tensor f = mk<float>({1, kInf, -kInf, kNaN, -0.0});
  expect_exact(run(OpKind::isnan, {f}), kBool, {0, 0, 0, 1, 0});
  expect_exact(run(OpKind::isinf, {f}), kBool, {0, 1, 1, 0, 0});
  expect_exact(run(OpKind::isfinite, {f}), kBool, {1, 0, 0, 0, 1});
  Tensor h = mk<Half>({kInf, kNaN, 65504});
  expect_exact(run(OpKind::isnan, {h}), kBool, {0, 1, 0});
  expect_exact(run(OpKind::isinf, {h}), kBool, {1, 0, 0});
  expect_exact(run(OpKind::isfinite, {h}), kBool, {0, 0, 1});
  // Integers and bools are never NaN or infinite.
  for (const Tensor& t : {mk<int32_t>({5, INT32_MIN}), mk<bool>({1, 0}), mk<uint8_t>({255, 0})}) {
    expect_exact(run(OpKind::isnan, {t}), kBool, {0, 0});
    expect_exact(run(OpKind::isinf, {t}), kBool, {0, 0});
    expect_exact(run(OpKind::isfinite, {t}), kBool, {1, 1});
  }
}

TEST(InterpUnary, BitwiseNot) {
  expect_exact(run(OpKind::bitwise_not, {mk<int8_t>({0, -1, 127, -128})}), kInt8, {-1, 0, -128, 127});
  expect_exact(run(OpKind::bitwise_not, {mk<uint8_t>({0, 0xF0})}), kUInt8, {255, 0x0F});
  expect_exact(run(OpKind::bitwise_not, {mk<int16_t>({0x00FF})}), kInt16, {-256});
  expect_exact(run(OpKind::bitwise_not, {mk<int32_t>({5})}), kInt32, {-6});
  EXPECT_EQ(values<int64_t>(run(OpKind::bitwise_not, {make<int64_t>({0, INT64_MAX})})),
            (std::vector<int64_t>{-1, INT64_MIN}));
  expect_exact(run(OpKind::bitwise_not, {mk<bool>({1, 0})}), kBool, {0, 1});
}

TEST(InterpUnary, LogicalNot) {
  expect_exact(run(OpKind::logical_not, {mk<float>({0, -0.0, kNaN, 2, -kInf})}), kBool, {1, 1, 0, 0, 0});
  expect_exact(run(OpKind::logical_not, {mk<int32_t>({0, 3, -1})}), kBool, {1, 0, 0});
  expect_exact(run(OpKind::logical_not, {mk<bool>({1, 0})}), kBool, {0, 1});
  expect_exact(run(OpKind::logical_not, {mk<BFloat16>({0, 0.5})}), kBool, {1, 0});
}

TEST(InterpUnary, HalfComputesInFloatAndRoundsOnce) {
  // e = 2.71828...; the f16 and bf16 grids near it are 2^-9 and 2^-6 apart: both round to 2.71875.
  expect_exact(run(OpKind::exp, {mk<Half>({1})}), kHalf, {2.71875});
  expect_exact(run(OpKind::exp, {mk<BFloat16>({1})}), kBFloat16, {2.71875});
  // sqrt(2) = 1.41421356...: 1448/1024 in f16, 181/128 in bf16 — both 1.4140625.
  expect_exact(run(OpKind::sqrt, {mk<Half>({2})}), kHalf, {1.4140625});
  expect_exact(run(OpKind::sqrt, {mk<BFloat16>({2})}), kBFloat16, {1.4140625});
  // exp(11.1015625) (11.1 in f16) = 66274 overflows f16 (max 65504) to inf; bf16 has f32's
  // range: exp(11.125) = 67846.29 = 132.51 * 2^9 rounds to 133 * 2^9 = 68096.
  expect_exact(run(OpKind::exp, {mk<Half>({11.1})}), kHalf, {kInf});
  expect_exact(run(OpKind::exp, {mk<BFloat16>({11.125})}), kBFloat16, {68096});
}

TEST(InterpUnary, RejectsUnsupportedDtypes) {
  EXPECT_THROW(run(OpKind::exp, {mk<int32_t>({1})}), Error);
  EXPECT_THROW(run(OpKind::erfinv, {mk<bool>({1})}), Error);
  EXPECT_THROW(run(OpKind::bitwise_not, {mk<float>({1})}), Error);
  EXPECT_THROW(run(OpKind::abs, {mk<bool>({1})}), Error);
  try {
    run(OpKind::sqrt, {mk<int64_t>({4})});
    ADD_FAILURE() << "sqrt of int64 did not throw";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "[sqrt] does not support dtype int64");
  }
}

TEST(InterpUnary, StridedAndBroadcastInputs) {
  // A 2x3 transpose of a contiguous 3x2 buffer [[1, -2], [3, -4], [5, -6]].
  Tensor base = mk<float>({1, -2, 3, -4, 5, -6}, {3, 2});
  Tensor t = strided(base, {2, 3}, {1, 2});
  Tensor out = run(OpKind::abs, {t});
  EXPECT_TRUE(out.is_contiguous());
  expect_exact(out, kFloat, {1, 3, 5, 2, 4, 6});
  // Element 1 of the buffer (-2) broadcast to 2x3 with zero strides, with an offset.
  Tensor bcast = strided(base, {2, 3}, {0, 0}, 1);
  expect_exact(run(OpKind::neg, {bcast}), kFloat, {2, 2, 2, 2, 2, 2});
  // A scalar (rank 0) and an empty tensor.
  expect_exact(run(OpKind::exp2, {make<double>({3.0}, {})}), kDouble, {8});
  Tensor empty = run(OpKind::sqrt, {make<float>({}, {0, 3})});
  EXPECT_EQ(empty.numel(), 0);
  EXPECT_EQ(empty.dim(), 2);
}

}  // namespace
