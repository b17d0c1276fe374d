// kiln/test/test_tensor_ops.cpp — eager results of the user-facing ops, checked by hand.
//
// Pointwise ops with broadcasting ([3, 1] + [4] -> [3, 4]), scalars on either side,
// non-contiguous inputs (transposed, strided slices, expanded), alpha, rounding modes, the
// ternary ops; reductions and scans with dims, keepdim and dtypes; cat/stack/pad; gather,
// scatter and index_select; mm/bmm/matmul in all of torch.matmul's cases; to/clone; equal and
// allclose; in-place forms; and PyTorch's error messages. Every expected value was worked
// out by hand from PyTorch's documented semantics.
#include "base/error.h"
#include "frontend/ops_factory.h"
#include "frontend/ops.h"
#include "frontend/ops_view.h"
#include "test_support/check.h"
#include "test_support/make.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace kiln {
namespace {

using ::testing::HasSubstr;
using namespace test;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// values<bool> returns std::vector<bool>; compare through it.
Bools bools(const Tensor& t) { return values<bool>(t); }

// ---- binary arithmetic, broadcasting, scalars -------------------------------------------------------

TEST(Pointwise, BroadcastColumnAndRow) {
  Tensor a = make<float>({1, 2, 3}, {3, 1});
  Tensor b = make<float>({10, 20, 30, 40}, {4});
  Tensor c = a + b;
  EXPECT_EQ(sizes_of(c), (Ints{3, 4}));
  EXPECT_EQ(values<float>(c), (Floats{11, 21, 31, 41, 12, 22, 32, 42, 13, 23, 33, 43}));
  EXPECT_EQ(values<float>(b - a), (Floats{9, 19, 29, 39, 8, 18, 28, 38, 7, 17, 27, 37}));
}

TEST(Pointwise, BroadcastErrorNamesTheOp) {
  Tensor a = zeros({2, 3});
  Tensor b = zeros({4});
  EXPECT_THAT(error_of([&] { (void)mul(a, b); }), HasSubstr("[mul] The size of tensor a (3) must match the size of tensor b (4)"));
  EXPECT_THAT(error_of([&] { (void)where(zeros({2}, kBool), a, b); }), HasSubstr("[where]"));
}

TEST(Pointwise, ScalarsOnEitherSide) {
  Tensor x = make<float>({1, 2, 4});
  EXPECT_EQ(values<float>(x * 2), (Floats{2, 4, 8}));
  EXPECT_EQ(values<float>(2 * x), (Floats{2, 4, 8}));
  EXPECT_EQ(values<float>(x + 0.5), (Floats{1.5f, 2.5f, 4.5f}));
  EXPECT_EQ(values<float>(10 - x), (Floats{9, 8, 6}));
  EXPECT_EQ(values<float>(x - 1), (Floats{0, 1, 3}));
  EXPECT_EQ(values<float>(1 / x), (Floats{1, 0.5f, 0.25f}));
  EXPECT_EQ(values<float>(x / 2), (Floats{0.5f, 1, 2}));
  EXPECT_EQ(values<float>(pow(x, 2)), (Floats{1, 4, 16}));
  EXPECT_EQ(values<float>(pow(2, x)), (Floats{2, 4, 16}));
  EXPECT_EQ(values<float>(rsub(x, 1, 2)), (Floats{-1, -3, -7}));  // 1 - 2x
}

TEST(Pointwise, NonContiguousInputs) {
  Tensor m = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor mt = m.t();  // [3, 2]: 1 4 / 2 5 / 3 6
  ASSERT_FALSE(mt.is_contiguous());
  Tensor r = mt + make<float>({100, 200}, {2});
  EXPECT_EQ(values<float>(r), (Floats{101, 204, 102, 205, 103, 206}));
  Tensor every_other = make<int32_t>({0, 1, 2, 3, 4, 5, 6, 7}).slice(0, 1, 8, 2);  // 1 3 5 7
  EXPECT_EQ(values<int32_t>(every_other * every_other), (std::vector<int32_t>{1, 9, 25, 49}));
  Tensor expanded = make<float>({3}, {1}).expand({4});
  EXPECT_EQ(values<float>(expanded - mt.select(1, 0).narrow(0, 0, 3).sum() + 0), (Floats{-3, -3, -3, -3}));
}

TEST(Pointwise, AddSubAlpha) {
  Tensor a = make<int64_t>({1, 2, 3});
  Tensor b = make<int64_t>({10, 20, 30});
  EXPECT_EQ(values<int64_t>(add(a, b, 2)), (Longs{21, 42, 63}));
  EXPECT_EQ(values<int64_t>(sub(a, b, 2)), (Longs{-19, -38, -57}));
  EXPECT_EQ(values<int64_t>(a.add(5, 3)), (Longs{16, 17, 18}));
  EXPECT_EQ(values<float>(add(make<float>({1}), make<float>({2}), 0.5)), (Floats{2}));
  EXPECT_EQ(error_of([&] { (void)add(a, b, 2.5); }),
            "[add] For integral input tensors, argument alpha must not be a floating point number.");
  EXPECT_EQ(error_of([&] { (void)add(a, b, true); }), "[add] Boolean alpha only supported for Boolean results.");
}

TEST(Pointwise, BoolArithmeticErrors) {
  Tensor m = make<bool>({true, false});
  EXPECT_EQ(error_of([&] { (void)(-m); }),
            "[neg] Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
            "use the `~` or `logical_not()` operator instead.");
  EXPECT_EQ(error_of([&] { (void)(m - m); }),
            "[sub] Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
            "`logical_xor()` operator instead.");
  EXPECT_EQ(error_of([&] { (void)(make<float>({1, 2}) - m); }),
            "[sub] Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a "
            "mask, use the `~` or `logical_not()` operator instead.");
  EXPECT_THAT(error_of([&] { (void)(make<float>({1}) - true); }), HasSubstr("with a bool tensor is not supported"));
  // Bool + bool is logical or; bool * bool is logical and.
  EXPECT_EQ(bools(m + make<bool>({true, false})), (Bools{true, false}));
  EXPECT_EQ(bools(m * make<bool>({false, false})), (Bools{false, false}));
  EXPECT_EQ(error_of([&] { (void)abs(m); }), "[abs] abs is not supported for bool tensors");
}

TEST(Pointwise, DivisionModes) {
  Tensor a = make<int64_t>({-7, 7, -8});
  Tensor b = make<int64_t>({2, 2, 3});
  EXPECT_EQ(values<float>(a / b), (Floats{-3.5f, 3.5f, -8.f / 3.f}));
  EXPECT_EQ(values<int64_t>(div(a, b, "trunc")), (Longs{-3, 3, -2}));
  EXPECT_EQ(values<int64_t>(div(a, b, "floor")), (Longs{-4, 3, -3}));
  EXPECT_EQ(values<int64_t>(floor_divide(a, 2)), (Longs{-4, 3, -4}));
  EXPECT_EQ(values<float>(div(make<float>({-7.5f, 7.5f}), 2, "trunc")), (Floats{-3, 3}));
  EXPECT_EQ(values<float>(a.div(2.0, "floor")), (Floats{-4, 3, -4}));
  EXPECT_EQ(error_of([&] { (void)div(a, b, "round"); }),
            "[div] div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'");
  EXPECT_EQ(error_of([&] { (void)div(make<bool>({true}), true, "floor"); }), "[div] div is not supported for bool tensors");
}

TEST(Pointwise, RemainderFmodPow) {
  Tensor a = make<int32_t>({-7, 7, -7, 7});
  Tensor b = make<int32_t>({3, 3, -3, -3});
  EXPECT_EQ(values<int32_t>(a % b), (std::vector<int32_t>{2, 1, -1, -2}));
  EXPECT_EQ(values<int32_t>(fmod(a, b)), (std::vector<int32_t>{-1, 1, -1, 1}));
  EXPECT_EQ(values<int32_t>(pow(make<int32_t>({2, 3}), 3)), (std::vector<int32_t>{8, 27}));
  EXPECT_EQ(values<float>(pow(make<int32_t>({4, 9}), 0.5)), (Floats{2, 3}));
  EXPECT_EQ(error_of([&] { (void)pow(make<int32_t>({2}), -1); }), "[pow] Integers to negative integer powers are not allowed.");
  EXPECT_EQ(values<float>(pow(make<float>({2}), -1)), (Floats{0.5f}));
  EXPECT_EQ(error_of([&] { (void)remainder(make<bool>({true}), true); }), "[remainder] remainder is not supported for bool tensors");
}

TEST(Pointwise, FloatOnlyUnaryPromotesIntegers) {
  Tensor i = make<int64_t>({0, 1, 4});
  EXPECT_EQ(values<float>(sqrt(i)), (Floats{0, 1, 2}));
  EXPECT_EQ(values<float>(exp(make<bool>({false}))), (Floats{1}));
  EXPECT_EQ(values<double>(sqrt(make<double>({9}))), (std::vector<double>{3}));
  EXPECT_EQ(values<float>(atan2(make<int32_t>({0}), make<int32_t>({1}))), (Floats{0}));
  EXPECT_EQ(values<float>(hypot(make<int32_t>({3}), 4.0)), (Floats{5}));
  // PyTorch's hypot kernel has no integral version: integral operands are refused.
  EXPECT_EQ(error_of([&] { (void)hypot(make<int32_t>({3}), 4); }), "[hypot] \"hypot_cpu\" not implemented for 'Int'");
  EXPECT_EQ(error_of([&] { (void)hypot(make<uint8_t>({3}), make<uint8_t>({4})); }),
            "[hypot] \"hypot_cpu\" not implemented for 'Byte'");
}

TEST(Pointwise, RoundingOnIntegersCopies) {
  Tensor i = make<int32_t>({-3, 5});
  Tensor f = floor(i);
  EXPECT_EQ(values<int32_t>(f), (std::vector<int32_t>{-3, 5}));
  EXPECT_FALSE(f.is_alias_of(i));
  EXPECT_EQ(values<float>(round(make<float>({0.5f, 1.5f, 2.5f, -0.5f}))), (Floats{0, 2, 2, -0}));
  EXPECT_EQ(values<float>(trunc(make<float>({-1.7f, 1.7f}))), (Floats{-1, 1}));
  EXPECT_EQ(error_of([&] { (void)ceil(make<bool>({true})); }), "[ceil] ceil is not supported for bool tensors");
  EXPECT_EQ(error_of([&] { (void)frac(i); }), "[frac] frac is only supported for floating point tensors, but got a tensor with dtype Int");
}

TEST(Pointwise, UnaryMiscellany) {
  Tensor x = make<float>({-2, 0, 3, kNaN});
  EXPECT_EQ(values<float>(abs(make<float>({-2, 3}))), (Floats{2, 3}));
  EXPECT_EQ(bools(isnan(x)), (Bools{false, false, false, true}));
  EXPECT_EQ(bools(isfinite(make<float>({1, kInf, kNaN}))), (Bools{true, false, false}));
  EXPECT_EQ(bools(isnan(make<int32_t>({1}))), (Bools{false}));
  EXPECT_EQ(values<float>(relu(make<float>({-1, 2}))), (Floats{0, 2}));
  EXPECT_EQ(values<int8_t>(relu(make<int8_t>({-1, 2}))), (std::vector<int8_t>{0, 2}));
  EXPECT_EQ(values<int64_t>(square(make<bool>({true, false}))), (Longs{1, 0}));
  EXPECT_EQ(values<float>(square(make<float>({-3}))), (Floats{9}));
  EXPECT_EQ(values<int32_t>(sign(make<int32_t>({-5, 0, 7}))), (std::vector<int32_t>{-1, 0, 1}));
  EXPECT_EQ(bools(!make<float>({0, 2})), (Bools{true, false}));
  EXPECT_EQ(values<uint8_t>(~make<uint8_t>({0, 255})), (std::vector<uint8_t>{255, 0}));
  EXPECT_EQ(bools(~make<bool>({true, false})), (Bools{false, true}));
  EXPECT_EQ(error_of([&] { (void)bitwise_not(make<float>({1})); }),
            "[bitwise_not] bitwise_not is only supported for integer and boolean tensors, but got Float");
  EXPECT_EQ(error_of([&] { (void)relu(make<bool>({true})); }), "[relu] Boolean inputs not supported for relu");
}

// ---- comparisons, logical and bitwise ops ------------------------------------------------------------

TEST(Pointwise, ComparisonsUsePromotedDtype) {
  Tensor i = make<int32_t>({1, 2, 3});
  EXPECT_EQ(bools(i < 1.5), (Bools{true, false, false}));
  EXPECT_EQ(bools(i >= 2), (Bools{false, true, true}));
  EXPECT_EQ(bools(i == make<float>({1.0f, 2.5f, 3.0f})), (Bools{true, false, true}));
  EXPECT_EQ(bools(ne(make<float>({kNaN, 1}), make<float>({kNaN, 1}))), (Bools{true, false}));
  EXPECT_EQ(bools(2 > i), (Bools{true, false, false}));
  EXPECT_EQ(bools(i.le(2)), (Bools{true, true, false}));
}

TEST(Pointwise, LogicalOpsTestAgainstZero) {
  Tensor f = make<float>({0, 0.5f, kNaN, 0});
  Tensor n = make<int64_t>({3, 0, 0, 0});
  EXPECT_EQ(bools(logical_and(f, n)), (Bools{false, false, false, false}));
  EXPECT_EQ(bools(logical_or(f, n)), (Bools{true, true, true, false}));
  EXPECT_EQ(bools(logical_xor(f, n)), (Bools{true, true, true, false}));
  EXPECT_EQ(bools(logical_and(f, 2)), (Bools{false, true, true, false}));
}

TEST(Pointwise, BitwiseAndShifts) {
  Tensor a = make<int32_t>({12, -1});
  Tensor b = make<int32_t>({10, 5});
  EXPECT_EQ(values<int32_t>(a & b), (std::vector<int32_t>{8, 5}));
  EXPECT_EQ(values<int32_t>(a | b), (std::vector<int32_t>{14, -1}));
  EXPECT_EQ(values<int32_t>(a ^ b), (std::vector<int32_t>{6, -6}));
  EXPECT_EQ(values<int32_t>(a << 2), (std::vector<int32_t>{48, -4}));
  EXPECT_EQ(values<int32_t>(a >> 1), (std::vector<int32_t>{6, -1}));
  EXPECT_EQ(bools(make<bool>({true, false}) ^ true), (Bools{false, true}));
  EXPECT_EQ(error_of([&] { (void)(make<float>({1}) & 1); }),
            "[bitwise_and] bitwise_and is only supported for integer and boolean tensors, but got Float");
  EXPECT_EQ(error_of([&] { (void)(make<bool>({true}) << true); }),
            "[bitwise_left_shift] bitwise_left_shift is only supported for integer tensors, but got Bool");
}

TEST(Pointwise, MaximumMinimumPropagateNaN) {
  Tensor a = make<float>({1, kNaN, 3});
  Tensor b = make<float>({2, 0, kNaN});
  Floats mx = values<float>(maximum(a, b));
  EXPECT_EQ(mx[0], 2);
  EXPECT_TRUE(std::isnan(mx[1]) && std::isnan(mx[2]));
  EXPECT_EQ(values<float>(fmax(a, b)), (Floats{2, 0, 3}));
  EXPECT_EQ(values<float>(fmin(a, b)), (Floats{1, 0, 3}));
  EXPECT_EQ(values<int32_t>(minimum(make<int32_t>({5, -5}), 0)), (std::vector<int32_t>{0, -5}));
}

// ---- where, clamp -------------------------------------------------------------------------------------

TEST(Ternary, WhereBroadcastsAllThree) {
  Tensor cond = make<bool>({true, false}, {2, 1});
  Tensor a = make<float>({1, 2, 3}, {3});
  Tensor r = where(cond, a, 0);
  EXPECT_EQ(sizes_of(r), (Ints{2, 3}));
  EXPECT_EQ(values<float>(r), (Floats{1, 2, 3, 0, 0, 0}));
  EXPECT_EQ(values<int64_t>(where(make<bool>({true, false}), 7, -7)), (Longs{7, -7}));
  EXPECT_EQ(values<float>(where(make<bool>({false, true}), make<int32_t>({1, 2}), 2.5)), (Floats{2.5f, 2}));
  EXPECT_EQ(error_of([&] { (void)where(make<float>({1}), a, a); }),
            "[where] expected condition to be a boolean tensor, but got a tensor with dtype Float");
}

TEST(Ternary, ClampWithScalarAndTensorBounds) {
  Tensor x = make<float>({-5, 0.5f, 5, kNaN});
  Floats both = values<float>(clamp(x, -1, 1));
  EXPECT_EQ((Floats{both[0], both[1], both[2]}), (Floats{-1, 0.5f, 1}));
  EXPECT_TRUE(std::isnan(both[3]));
  EXPECT_EQ(values<float>(clamp_min(make<float>({-5, 5}), 0)), (Floats{0, 5}));
  EXPECT_EQ(values<float>(clamp_max(make<float>({-5, 5}), 0)), (Floats{-5, 0}));
  EXPECT_EQ(values<float>(x.clamp(std::nullopt, 2).slice(0, 0, 3)), (Floats{-5, 0.5f, 2}));
  // min > max gives max everywhere.
  EXPECT_EQ(values<int32_t>(clamp(make<int32_t>({-3, 0, 3}), 2, 1)), (std::vector<int32_t>{1, 1, 1}));
  // Tensor bounds broadcast with the input.
  Tensor lo = make<float>({0, 10}, {2, 1});
  Tensor r = clamp(make<float>({-1, 5, 20}), std::optional<Tensor>(lo), std::optional<Tensor>(make<float>({15})));
  EXPECT_EQ(sizes_of(r), (Ints{2, 3}));
  EXPECT_EQ(values<float>(r), (Floats{0, 5, 15, 10, 10, 15}));
  // An int tensor with a float bound computes in float.
  EXPECT_EQ(values<float>(clamp(make<int32_t>({1, 3}), 1.5)), (Floats{1.5f, 3}));
  EXPECT_EQ(error_of([&] { (void)clamp(x, std::optional<Scalar>(), std::optional<Scalar>()); }),
            "[clamp] At least one of 'min' or 'max' must not be None");
  EXPECT_EQ(error_of([&] { (void)clamp(make<bool>({true}), true, true); }), "[clamp] \"clamp_scalar_cpu\" not implemented for 'Bool'");
}

// ---- reductions and scans ------------------------------------------------------------------------------

TEST(Reductions, SumOverDims) {
  Tensor x = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(values<float>(sum(x)), (Floats{21}));
  EXPECT_EQ(sum(x).dim(), 0);
  EXPECT_EQ(values<float>(x.sum({0})), (Floats{5, 7, 9}));
  EXPECT_EQ(values<float>(x.sum({-1})), (Floats{6, 15}));
  Tensor k = x.sum({1}, true);
  EXPECT_EQ(sizes_of(k), (Ints{2, 1}));
  EXPECT_EQ(values<float>(k), (Floats{6, 15}));
  EXPECT_EQ(values<float>(x.sum({1, 0})), (Floats{21}));
  EXPECT_EQ(sizes_of(x.sum({}, true)), (Ints{1, 1}));  // dims {} means every dim
  EXPECT_EQ(values<float>(x.t().sum({1})), (Floats{5, 7, 9}));
  EXPECT_EQ(values<int64_t>(sum(make<bool>({true, true, false}))), (Longs{2}));
  EXPECT_EQ(values<int64_t>(sum(make<int8_t>({100, 100}))), (Longs{200}));  // no int8 overflow
  EXPECT_EQ(values<float>(sum(zeros({0, 3}))), (Floats{0}));
  EXPECT_EQ(error_of([&] { (void)x.sum({1, -1}); }), "[sum] dim 1 appears multiple times in the list of dims");
  EXPECT_THAT(error_of([&] { (void)x.sum({2}); }), HasSubstr("[sum] Dimension out of range"));
}

TEST(Reductions, ProdMean) {
  Tensor x = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(values<float>(prod(x)), (Floats{720}));
  EXPECT_EQ(values<float>(x.prod(1)), (Floats{6, 120}));
  EXPECT_EQ(values<int64_t>(prod(make<int32_t>({2, 3}))), (Longs{6}));
  EXPECT_EQ(values<float>(mean(x)), (Floats{3.5f}));
  EXPECT_EQ(values<float>(x.mean({0})), (Floats{2.5f, 3.5f, 4.5f}));
  EXPECT_EQ(sizes_of(x.mean({1}, true)), (Ints{2, 1}));
  EXPECT_EQ(values<double>(mean(make<int32_t>({1, 2}), kDouble)), (std::vector<double>{1.5}));
  EXPECT_TRUE(std::isnan(values<float>(mean(zeros({0})))[0]));
  // float16: summed and divided in float32, then rounded once; a float16 sum would overflow
  // (120000 > 65504) and give inf.
  Tensor h = make<Half>({Half(60000.f), Half(60000.f)});
  EXPECT_EQ(static_cast<float>(values<Half>(mean(h))[0]), 60000.f);
  EXPECT_EQ(error_of([&] { (void)mean(make<int64_t>({1})); }),
            "[mean] mean(): could not infer output dtype. Input dtype must be either a floating point or complex "
            "dtype. Got: Long");
  EXPECT_EQ(error_of([&] { (void)mean(make<float>({1}), kInt32); }),
            "[mean] mean(): could not infer output dtype. Optional dtype must be either a floating point or complex "
            "dtype. Got: Int");
}

TEST(Reductions, ExtremaAndArgs) {
  Tensor x = make<int32_t>({3, 9, 1, 9, 0, 2}, {2, 3});
  EXPECT_EQ(values<int32_t>(amax(x)), (std::vector<int32_t>{9}));
  EXPECT_EQ(values<int32_t>(x.amax({1})), (std::vector<int32_t>{9, 9}));
  EXPECT_EQ(values<int32_t>(x.amin({0}, true)), (std::vector<int32_t>{3, 0, 1}));
  EXPECT_EQ(values<int32_t>(max(x)), (std::vector<int32_t>{9}));
  EXPECT_EQ(values<int32_t>(min(x)), (std::vector<int32_t>{0}));
  EXPECT_EQ(values<int64_t>(argmax(x)), (Longs{1}));  // first occurrence, flattened
  EXPECT_EQ(values<int64_t>(argmax(x, 1)), (Longs{1, 0}));
  EXPECT_EQ(values<int64_t>(argmin(x, 0, true)), (Longs{0, 1, 0}));
  EXPECT_EQ(sizes_of(argmin(x, 0, true)), (Ints{1, 3}));
  EXPECT_EQ(error_of([&] { (void)max(zeros({0})); }),
            "[max] max(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim "
            "with the 'dim' argument.");
  EXPECT_EQ(error_of([&] { (void)amax(zeros({2, 0}), {1}); }), "[amax] amax(): Expected reduction dim 1 to have non-zero size.");
  EXPECT_THAT(error_of([&] { (void)argmax(zeros({0})); }), HasSubstr("[argmax] argmax(): Expected reduction dim"));
  // amax over a dim of an empty tensor is fine when that dim is not the empty one.
  EXPECT_EQ(sizes_of(amax(zeros({0, 2}), {1})), (Ints{0}));
}

TEST(Reductions, AnyAll) {
  Tensor x = make<float>({0, 1, 0, 0}, {2, 2});
  EXPECT_EQ(bools(any(x)), (Bools{true}));
  EXPECT_EQ(bools(all(x)), (Bools{false}));
  EXPECT_EQ(bools(x.any(1)), (Bools{true, false}));
  EXPECT_EQ(bools(x.all(0, true)), (Bools{false, false}));
  EXPECT_EQ(bools(all(zeros({0}))), (Bools{true}));
}

TEST(Scans, CumsumCumprod) {
  Tensor x = make<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor c = cumsum(x, 1);
  EXPECT_EQ(c.dtype(), kInt64);
  EXPECT_EQ(values<int64_t>(c), (Longs{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(values<int64_t>(x.cumsum(-2)), (Longs{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(values<int64_t>(cumprod(x, 1)), (Longs{1, 2, 6, 4, 20, 120}));
  EXPECT_EQ(values<float>(cumsum(make<bool>({true, true}), 0, kFloat)), (Floats{1, 2}));
  EXPECT_EQ(values<int64_t>(cumsum(make<bool>({true, false, true}), 0)), (Longs{1, 1, 2}));
  EXPECT_THAT(error_of([&] { (void)cumsum(x, 2); }), HasSubstr("[cumsum] Dimension out of range"));
}

// ---- cat, stack, pad ---------------------------------------------------------------------------------

TEST(Joining, CatPromotesAndChecks) {
  Tensor a = make<int32_t>({1, 2}, {1, 2});
  Tensor b = make<float>({3.5f, 4, 5, 6}, {2, 2});
  Tensor c = cat({a, b});
  EXPECT_EQ(sizes_of(c), (Ints{3, 2}));
  EXPECT_EQ(values<float>(c), (Floats{1, 2, 3.5f, 4, 5, 6}));
  EXPECT_EQ(values<float>(cat({b, b.t()}, -1)), (Floats{3.5f, 4, 3.5f, 5, 5, 6, 4, 6}));
  // Legacy: 1-D empty tensors are skipped whatever the other shapes.
  EXPECT_EQ(values<int32_t>(cat({make<int32_t>({}, {0}), a})), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(sizes_of(cat({zeros({0}), zeros({0})})), (Ints{0}));
  EXPECT_EQ(error_of([&] { (void)cat({a, zeros({2, 2, 1})}); }), "[cat] Tensors must have same number of dimensions: got 2 and 3");
  EXPECT_EQ(error_of([&] { (void)cat({a, zeros({1, 3})}, 0); }),
            "[cat] Sizes of tensors must match except in dimension 0. Expected size 2 but got size 3 for tensor number 1 "
            "in the list.");
  EXPECT_EQ(error_of([&] { (void)cat({}); }), "[cat] torch.cat(): expected a non-empty list of Tensors");
  EXPECT_EQ(error_of([&] { (void)cat({zeros({})}); }), "[cat] zero-dimensional tensor (at position 0) cannot be concatenated");
}

TEST(Joining, Stack) {
  Tensor a = make<float>({1, 2});
  Tensor b = make<float>({3, 4});
  EXPECT_EQ(values<float>(stack({a, b})), (Floats{1, 2, 3, 4}));
  Tensor s = stack({a, b}, 1);
  EXPECT_EQ(sizes_of(s), (Ints{2, 2}));
  EXPECT_EQ(values<float>(s), (Floats{1, 3, 2, 4}));
  EXPECT_EQ(sizes_of(stack({zeros({}), zeros({})})), (Ints{2}));
  EXPECT_EQ(error_of([&] { (void)stack({a, zeros({3})}); }),
            "[stack] stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 1");
}

TEST(Joining, ConstantPad) {
  Tensor x = make<float>({1, 2, 3, 4}, {2, 2});
  Tensor p = constant_pad_nd(x, {1, 0}, 9);  // one column on the left
  EXPECT_EQ(sizes_of(p), (Ints{2, 3}));
  EXPECT_EQ(values<float>(p), (Floats{9, 1, 2, 9, 3, 4}));
  Tensor q = pad(x, {0, 0, 0, 1});  // one row at the bottom, zeros
  EXPECT_EQ(values<float>(q), (Floats{1, 2, 3, 4, 0, 0}));
  EXPECT_EQ(values<float>(pad(x, {-1, 1}, "constant", 7.0)), (Floats{2, 7, 4, 7}));  // negative pads crop
  EXPECT_EQ(error_of([&] { (void)constant_pad_nd(x, {1}); }), "[constant_pad_nd] Length of pad must be even but instead it equals 1");
  EXPECT_EQ(error_of([&] { (void)constant_pad_nd(x, {0, 0, 0, 0, 1, 1}); }),
            "[constant_pad_nd] Length of pad should be no more than twice the number of dimensions of the input. Pad "
            "length is 6 while the input has 2 dimensions.");
  EXPECT_EQ(error_of([&] { (void)constant_pad_nd(x, {-2, -1}); }),
            "[constant_pad_nd] The input size 2, plus negative padding -2 and -1 resulted in a negative output size, "
            "which is invalid. Check dimension 1 of your input.");
  EXPECT_EQ(values<float>(pad(x, {1, 1}, "reflect")), (Floats{2, 1, 2, 1, 4, 3, 4, 3}));
  EXPECT_EQ(values<float>(pad(x, {1, 2}, "replicate")), (Floats{1, 1, 2, 2, 2, 3, 3, 4, 4, 4}));
  EXPECT_EQ(values<float>(pad(x, {2, 1}, "circular")), (Floats{1, 2, 1, 2, 1, 3, 4, 3, 4, 3}));
  EXPECT_THAT(error_of([&] { (void)pad(x, {-1, 1}, "reflect"); }), HasSubstr("[pad] negative padding (-1, 1) crops only in constant mode"));
  EXPECT_THAT(error_of([&] { (void)pad(x, {2, 0}, "reflect"); }), HasSubstr("Padding size should be less than"));
  EXPECT_EQ(error_of([&] { (void)pad(x, {1, 1}, "mirror"); }), "[pad] Unrecognised padding mode mirror");
}

// ---- gather, scatter, index_select ----------------------------------------------------------------------

TEST(Indexing, GatherScatter) {
  Tensor x = make<float>({1, 2, 3, 4}, {2, 2});
  Tensor idx = make<int64_t>({0, 0, 1, 0}, {2, 2});
  EXPECT_EQ(values<float>(gather(x, 1, idx)), (Floats{1, 1, 4, 3}));
  EXPECT_EQ(values<float>(x.gather(0, make<int64_t>({1, 0}, {1, 2}))), (Floats{3, 2}));
  Tensor z = zeros({2, 3});
  Tensor src = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor s = scatter(z, 1, make<int64_t>({2, 0, 1, 2}, {2, 2}), src);
  EXPECT_EQ(values<float>(s), (Floats{2, 0, 1, 0, 4, 5}));
  EXPECT_EQ(values<float>(z), (Floats{0, 0, 0, 0, 0, 0}));  // out of place
  EXPECT_EQ(values<float>(z.scatter(0, make<int64_t>({1, 0, 1}, {1, 3}), 7.0)), (Floats{0, 7, 0, 7, 0, 7}));
  Tensor acc = scatter_add(zeros({3}), 0, make<int64_t>({0, 2, 0, 2}), make<float>({1, 2, 3, 4}));
  EXPECT_EQ(values<float>(acc), (Floats{4, 0, 6}));
  // int32 indices work as int64 ones (PyTorch 2.x); other dtypes are refused.
  EXPECT_EQ(values<float>(gather(x, 1, make<int32_t>({0, 0, 1, 0}, {2, 2}))),
            values<float>(gather(x, 1, make<int64_t>({0, 0, 1, 0}, {2, 2}))));
  EXPECT_EQ(values<float>(scatter(z, 1, make<int32_t>({2, 0, 1, 2}, {2, 2}), src)), (Floats{2, 0, 1, 0, 4, 5}));
  EXPECT_EQ(values<float>(scatter_add(zeros({3}), 0, make<int32_t>({0, 2, 0, 2}), make<float>({1, 2, 3, 4}))),
            (Floats{4, 0, 6}));
  EXPECT_EQ(error_of([&] { (void)gather(x, 1, make<int16_t>({0, 0, 1, 0}, {2, 2})); }),
            "[gather] gather(): Expected dtype int32/int64 for index");
  EXPECT_EQ(error_of([&] { (void)scatter(x, 1, idx, make<double>({1, 2, 3, 4}, {2, 2})); }),
            "[scatter] Expected self.dtype to be equal to src.dtype");
  EXPECT_EQ(error_of([&] { (void)gather(x, 1, make<int64_t>({0, 0, 0, 0, 0, 0}, {3, 2})); }),
            "[gather] Size does not match at dimension 0 expected index [3, 2] to be no larger than self [2, 2] apart from "
            "dimension 1");
  EXPECT_EQ(error_of([&] { (void)gather(x, 0, make<int64_t>({0})); }),
            "[gather] Index tensor must have the same number of dimensions as input tensor");
  // scatter with a scalar value words its checks as scatter does (PyTorch 2.15).
  EXPECT_EQ(error_of([&] { (void)x.scatter(1, make<int64_t>({0, 0, 0, 0, 0, 0}, {3, 2}), 1.0); }),
            "[scatter] Expected index [3, 2] to be no larger than self [2, 2] apart from dimension 1");
  EXPECT_EQ(error_of([&] { (void)x.scatter(0, make<int64_t>({0}), 1.0); }),
            "[scatter] Index tensor must have the same number of dimensions as self tensor");
}

TEST(Indexing, IndexSelect) {
  Tensor x = make<float>({1, 2, 3, 4, 5, 6}, {3, 2});
  EXPECT_EQ(values<float>(index_select(x, 0, make<int64_t>({2, 0}))), (Floats{5, 6, 1, 2}));
  EXPECT_EQ(values<float>(x.index_select(1, make<int32_t>({1, 1, 0}))), (Floats{2, 2, 1, 4, 4, 3, 6, 6, 5}));
  Tensor one = index_select(x, 0, make<int64_t>({1}, {}));
  EXPECT_EQ(sizes_of(one), (Ints{1, 2}));
  EXPECT_EQ(error_of([&] { (void)index_select(x, 0, make<float>({0})); }),
            "[index_select] index_select(): Expected dtype int32 or int64 for index");
  EXPECT_EQ(error_of([&] { (void)index_select(x, 0, make<int64_t>({0, 0}, {1, 2})); }),
            "[index_select] index_select(): Index is supposed to be a vector");
}

// ---- matrix products ---------------------------------------------------------------------------------------

TEST(Matmul, MmAndBmm) {
  Tensor a = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = make<float>({1, 0, 0, 1, 1, 1}, {3, 2});
  EXPECT_EQ(values<float>(mm(a, b)), (Floats{4, 5, 10, 11}));
  EXPECT_EQ(values<float>(a.mm(a.t())), (Floats{14, 32, 32, 77}));  // transposed operand
  Tensor ba = make<float>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
  Tensor bb = make<float>({1, 0, 0, 1, 0, 1, 1, 0}, {2, 2, 2});
  EXPECT_EQ(values<float>(bmm(ba, bb)), (Floats{1, 2, 3, 4, 6, 5, 8, 7}));
  EXPECT_EQ(error_of([&] { (void)mm(a, a); }), "[mm] mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)");
  EXPECT_EQ(error_of([&] { (void)mm(a, make<double>({1, 2, 3}, {3, 1})); }),
            "[mm] expected m1 and m2 to have the same dtype, but got: float != double");
  // PyTorch's names of the C++ element types, as g++ spells them on Linux (torch 2.15).
  EXPECT_EQ(error_of([&] { (void)mm(a, make<float>({1, 2, 3}, {3, 1}).to(kHalf)); }),
            "[mm] expected m1 and m2 to have the same dtype, but got: float != c10::Half");
  EXPECT_EQ(error_of([&] { (void)mm(a, make<int64_t>({1, 2, 3}, {3, 1})); }),
            "[mm] expected m1 and m2 to have the same dtype, but got: float != long int");
  EXPECT_EQ(error_of([&] { (void)mm(a, make<int16_t>({1, 2, 3}, {3, 1})); }),
            "[mm] expected m1 and m2 to have the same dtype, but got: float != short int");
  EXPECT_EQ(error_of([&] { (void)mm(a, make<float>({1, 2, 3})); }), "[mm] mat2 must be a matrix");
  EXPECT_EQ(error_of([&] { (void)bmm(ba, zeros({3, 2, 2})); }),
            "[bmm] Expected size for first two dimensions of batch2 tensor to be: [2, 2] but got: [3, 2].");
  EXPECT_EQ(error_of([&] { (void)bmm(a, a); }), "[bmm] batch1 must be a 3D tensor");
  // The rest of the matrix-product family's dtype and bool wording, torch 2.15's (CPU).
  const Tensor f32 = zeros({2, 2}), f64 = zeros({2, 2}, kDouble), b32 = zeros({1, 2, 2}), b64 = zeros({1, 2, 2}, kDouble);
  EXPECT_EQ(error_of([&] { (void)bmm(b64, b32); }), "[bmm] expected scalar type Double but found Float");
  EXPECT_EQ(error_of([&] { (void)addmm(f32, f32, f64); }), "[addmm] self and mat2 must have the same dtype, but got Float and Double");
  EXPECT_EQ(error_of([&] { (void)addmm(f64, f32, f64); }), "[addmm] mat1 and mat2 must have the same dtype, but got Float and Double");
  EXPECT_EQ(error_of([&] { (void)baddbmm(b64, b32, b32); }),
            "[baddbmm] Input dtypes must be the same, got: input double, batch1: float, batch2: float");
  EXPECT_EQ(error_of([&] { (void)baddbmm(b32, b32, b64); }), "[baddbmm] expected scalar type Float but found Double");
  const Tensor bools = zeros({1, 2, 2}, kBool);
  EXPECT_EQ(error_of([&] { (void)bmm(bools, bools); }), "[bmm] \"bmm\" not implemented for 'Bool'");
  EXPECT_EQ(error_of([&] { (void)baddbmm(bools, bools, bools); }), "[baddbmm] \"baddbmm\" not implemented for 'Bool'");
  EXPECT_EQ(error_of([&] { (void)addmm(bools[0], bools[0], bools[0]); }), "[addmm] \"addmm_impl_cpu_\" not implemented for 'Bool'");
}

TEST(Matmul, AllTorchMatmulCases) {
  Tensor v = make<float>({1, 2, 3});
  Tensor m = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor dot = matmul(v, v);  // 1-D x 1-D: a 0-dim dot product
  EXPECT_EQ(dot.dim(), 0);
  EXPECT_EQ(values<float>(dot), (Floats{14}));
  EXPECT_EQ(values<float>(matmul(m, v)), (Floats{14, 32}));                    // 2-D x 1-D
  EXPECT_EQ(values<float>(matmul(make<float>({1, 1}), m)), (Floats{5, 7, 9}));  // 1-D x 2-D
  EXPECT_EQ(sizes_of(matmul(m, m.t())), (Ints{2, 2}));
  // Batched with broadcast batch dims: [2, 1, 2, 3] @ [4, 3, 1] -> [2, 4, 2, 1].
  Tensor a = ones({2, 1, 2, 3});
  Tensor b = make<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {4, 3, 1});
  Tensor r = matmul(a, b);
  EXPECT_EQ(sizes_of(r), (Ints{2, 4, 2, 1}));
  EXPECT_EQ(values<float>(r), (Floats{6, 6, 15, 15, 24, 24, 33, 33, 6, 6, 15, 15, 24, 24, 33, 33}));
  // N-D x 1-D and 1-D x N-D drop the vector's dim.
  EXPECT_EQ(sizes_of(matmul(ones({2, 4, 3}), v)), (Ints{2, 4}));
  EXPECT_EQ(values<float>(matmul(ones({2, 4, 3}), v)), Floats(8, 6));
  Tensor vn = matmul(make<float>({1, 2}), ones({5, 2, 3}));
  EXPECT_EQ(sizes_of(vn), (Ints{5, 3}));
  EXPECT_EQ(values<float>(vn), Floats(15, 3));
  EXPECT_EQ(values<float>(m.matmul(ones({3, 1}))), (Floats{6, 15}));
  EXPECT_EQ(error_of([&] { (void)matmul(m, m); }), "[matmul] shapes [2, 3] and [2, 3] cannot be multiplied");
  EXPECT_EQ(error_of([&] { (void)matmul(v, make<float>({1, 2})); }), "[matmul] shapes [3] and [2] cannot be multiplied");
  EXPECT_EQ(error_of([&] { (void)matmul(zeros({}), m); }),
            "[matmul] both arguments to matmul need to be at least 1D, but they are 0D and 2D");
  EXPECT_THAT(error_of([&] { (void)matmul(ones({2, 2, 3}), ones({3, 3, 2})); }), HasSubstr("[matmul] The size of tensor a (2)"));
}

// ---- conversion, comparison, in place ----------------------------------------------------------------------

TEST(Conversion, ToAndClone) {
  Tensor x = make<float>({1.5f, -2.5f});
  EXPECT_TRUE(x.to(kFloat).is_same(x));  // same dtype: the tensor itself
  Tensor i = x.to(kInt32);
  EXPECT_EQ(values<int32_t>(i), (std::vector<int32_t>{1, -2}));
  EXPECT_EQ(x.to(TensorOptions(kDouble)).dtype(), kDouble);
  EXPECT_TRUE(x.to(Device()).is_same(x));
  Tensor c = x.t().clone();
  EXPECT_FALSE(c.is_alias_of(x));
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(values<float>(c), (Floats{1.5f, -2.5f}));
  Tensor m = make<float>({1, 2, 3, 4}, {2, 2}).t();
  Tensor mc = clone(m);
  EXPECT_TRUE(mc.is_contiguous());
  EXPECT_EQ(values<float>(mc), (Floats{1, 3, 2, 4}));
}

TEST(Methods, ForwardToTheFreeFunctions) {
  Tensor x = zeros({2, 1, 3, 1});
  EXPECT_EQ(sizes_of(x.squeeze(IntArrayRef{1, 3})), (Ints{2, 3}));
  EXPECT_EQ(sizes_of(x.squeeze(IntArrayRef{0, -1})), (Ints{2, 1, 3}));  // size-2 dim 0 is left alone
  EXPECT_TRUE(x.squeeze(IntArrayRef{1}).is_alias_of(x));
  EXPECT_EQ(error_of([&] { (void)x.squeeze(IntArrayRef{1, -3}); }), "[squeeze] dim 1 appears multiple times in the list of dims");
  Tensor b = make<float>({1, 2, 3, 4, 5, 6}, {1, 2, 3});
  EXPECT_EQ(sizes_of(b.mT()), (Ints{1, 3, 2}));
  EXPECT_EQ(values<float>(b.mT()), (Floats{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(error_of([&] { (void)make<float>({1}).mT(); }),
            "[mT] tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.");
  std::vector<Tensor> parts = b.split(IntArrayRef{1, 2}, 2);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(values<float>(parts[1]), (Floats{2, 3, 5, 6}));
  EXPECT_EQ(values<float>(make<float>({0}).exp()), (Floats{1}));
  EXPECT_EQ(values<float>(b.reshape({6}).narrow(0, 4, 2).neg()), (Floats{-5, -6}));
  EXPECT_EQ(values<int64_t>(make<int32_t>({3, 4}).sum()), (Longs{7}));
}

TEST(Reductions, ZeroDimInputs) {
  Tensor s = make<float>({5}, {});
  EXPECT_EQ(values<float>(s.sum()), (Floats{5}));
  EXPECT_EQ(values<float>(s.sum({0})), (Floats{5}));
  EXPECT_EQ(values<float>(s.mean({-1}, true)), (Floats{5}));
  EXPECT_EQ(values<float>(s.amax()), (Floats{5}));
  EXPECT_EQ(values<int64_t>(s.argmax(0)), (Longs{0}));
  EXPECT_EQ(values<float>(s.cumsum(0)), (Floats{5}));
  EXPECT_EQ(s.cumsum(0).dim(), 0);
  EXPECT_EQ(values<bool>(s.any(0)), (Bools{true}));
}

TEST(Comparison, EqualAndAllclose) {
  Tensor a = make<float>({1, 2, 3});
  EXPECT_TRUE(equal(a, make<float>({1, 2, 3})));
  EXPECT_FALSE(equal(a, make<float>({1, 2, 4})));
  EXPECT_FALSE(equal(a, make<float>({1, 2, 3}, {3, 1})));  // sizes differ
  EXPECT_FALSE(equal(make<float>({kNaN}), make<float>({kNaN})));
  EXPECT_TRUE(equal(make<float>({1, 2, 3, 4}, {2, 2}).t(), make<float>({1, 3, 2, 4}, {2, 2})));
  // Other dtypes compare after promotion, as in PyTorch 2.15 (values checked there).
  EXPECT_TRUE(equal(a, make<double>({1, 2, 3})));
  EXPECT_TRUE(equal(a, make<int64_t>({1, 2, 3})));
  EXPECT_FALSE(equal(make<float>({1.5f}), make<int64_t>({1})));
  EXPECT_FALSE(equal(make<float>({1.0000001f}), make<double>({1.0000001})));
  EXPECT_TRUE(equal(make<bool>({true}), make<int64_t>({1})));
  EXPECT_FALSE(equal(make<int64_t>({-1}), make<uint8_t>({255})));

  EXPECT_TRUE(allclose(a, make<float>({1.000001f, 2, 3})));
  EXPECT_FALSE(allclose(a, make<float>({1.1f, 2, 3})));
  EXPECT_TRUE(allclose(a, make<float>({1.1f, 2, 3}), 0.2));
  EXPECT_TRUE(allclose(make<float>({kInf}), make<float>({kInf})));
  EXPECT_FALSE(allclose(make<float>({kInf}), make<float>({-kInf})));
  EXPECT_FALSE(allclose(make<float>({kNaN}), make<float>({kNaN})));
  EXPECT_TRUE(allclose(make<float>({kNaN}), make<float>({kNaN}), 1e-5, 1e-8, true));
  EXPECT_TRUE(allclose(make<float>({2, 2}, {2, 1}), make<float>({2})));  // broadcasts
  EXPECT_TRUE(allclose(make<int64_t>({100}), make<int64_t>({101}), 0.01, 0));
  EXPECT_FALSE(allclose(make<int64_t>({100}), make<int64_t>({102}), 0.01, 0));
  EXPECT_EQ(error_of([&] { (void)allclose(a, make<double>({1, 2, 3})); }), "[allclose] Float did not match Double");
  EXPECT_EQ(error_of([&] { (void)allclose(a, a, -1.0); }), "[allclose] rtol must be greater than or equal to zero, but got -1");
}

TEST(InPlace, ComputeThenCopyInto) {
  Tensor x = make<float>({1, 2, 3, 4}, {2, 2});
  Tensor row = x.select(0, 1);  // a view: writes reach x
  row.add_(make<float>({10, 20}));
  EXPECT_EQ(values<float>(x), (Floats{1, 2, 13, 24}));
  x.mul_(2);
  EXPECT_EQ(values<float>(x), (Floats{2, 4, 26, 48}));
  x.sub_(make<float>({1, 1}), 2);
  EXPECT_EQ(values<float>(x), (Floats{0, 2, 24, 46}));
  x /= 2;
  EXPECT_EQ(values<float>(x), (Floats{0, 1, 12, 23}));
  x += make<int64_t>({1, 2});
  EXPECT_EQ(values<float>(x), (Floats{1, 3, 13, 25}));
  x -= 1;
  x *= make<float>({0.5f});
  EXPECT_EQ(values<float>(x), (Floats{0, 1, 6, 12}));
  Tensor i = make<int64_t>({1, 2});
  EXPECT_EQ(error_of([&] { i.add_(make<float>({1, 1})); }), "[add_] result type Float can't be cast to the desired output type Long");
  EXPECT_EQ(error_of([&] { i.div_(2); }), "[div_] result type Float can't be cast to the desired output type Long");
  EXPECT_EQ(error_of([&] { i.add_(zeros({3, 2}, kInt64)); }), "[add_] output with shape [2] doesn't match the broadcast shape [3, 2]");
  EXPECT_EQ(values<int64_t>(i), (Longs{1, 2}));  // unchanged by the failed calls
}

}  // namespace
}  // namespace kiln
