// kiln/test/test_tensor_checks.cpp — bad values and writes that must fail clearly instead of
// wrapping silently: scalar conversions, writes into self-overlapping tensors, in-place updates
// that a trace cannot express, overflowing shapes.
#include "kiln/kiln.h"
#include "runtime/interpreter/interpreter.h"
#include "test_support/check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace kiln {
namespace {

using ::testing::HasSubstr;
using namespace kiln::test;

TEST(ScalarChecks, OverflowFollowsC10Rules) {
  EXPECT_TRUE(Scalar(300).overflows(kByte));
  EXPECT_FALSE(Scalar(-1).overflows(kByte));  // negative integers may wrap into unsigned types
  EXPECT_TRUE(Scalar(-256).overflows(kByte));
  EXPECT_TRUE(Scalar(128).overflows(kChar));
  EXPECT_FALSE(Scalar(-128).overflows(kChar));
  EXPECT_TRUE(Scalar(-1.0).overflows(kByte));  // floating values must be in range for integers
  EXPECT_TRUE(Scalar(std::nan("")).overflows(kLong));
  EXPECT_TRUE(Scalar(INFINITY).overflows(kInt));
  EXPECT_FALSE(Scalar(INFINITY).overflows(kHalf));
  EXPECT_FALSE(Scalar(std::nan("")).overflows(kFloat));
  EXPECT_TRUE(Scalar(1e10).overflows(kHalf));
  EXPECT_FALSE(Scalar(65504.0).overflows(kHalf));
  EXPECT_TRUE(Scalar(1e39).overflows(kFloat));
  EXPECT_FALSE(Scalar(1e300).overflows(kDouble));
  EXPECT_FALSE(Scalar(12345).overflows(kBool));
}

TEST(ScalarChecks, UncheckedConversionOfNaNIsDefined) {
  EXPECT_EQ(Scalar(std::nan("")).to<int64_t>(), INT64_MIN);
  EXPECT_EQ(Scalar(1e30).to<int64_t>(), INT64_MIN);
  EXPECT_EQ(Scalar(-7.9).to<int32_t>(), -7);
}

TEST(ScalarChecks, FactoriesFillPadClampAndItemRefuseOverflow) {
  EXPECT_THAT(error_of([] { (void)full({2}, 1e10, kHalf); }),
              HasSubstr("[full] value cannot be converted to type c10::Half without overflow"));
  EXPECT_THAT(error_of([] { zeros({3}, kByte).fill_(300); }),
              HasSubstr("[fill_] value cannot be converted to type uint8_t without overflow: 300"));
  EXPECT_THAT(error_of([] {
                (void)constant_pad_nd(zeros({3}, kChar), {1, 1}, 200);
              }),
              HasSubstr("[constant_pad_nd] value cannot be converted to type int8_t without overflow"));
  EXPECT_THAT(error_of([] { (void)clamp(zeros({3}, kHalf), 0, 1e10); }),
              HasSubstr("[clamp] value cannot be converted to type c10::Half without overflow"));
  // scalar_tensor checks as full does (fuzz seed 5900217; torch 2.15 refuses -1.5 as uint8).
  EXPECT_THAT(error_of([] { (void)scalar_tensor(-1.5, kByte); }),
              HasSubstr("[scalar_tensor] value cannot be converted to type uint8_t without overflow"));
  EXPECT_THAT(error_of([] { (void)scalar_tensor(1e40, kFloat); }),
              HasSubstr("[scalar_tensor] value cannot be converted to type float without overflow"));
  EXPECT_EQ(scalar_tensor(1.5, kByte).item<int64_t>(), 1);
  // PyTorch's one-element CPU fill converts f16/bf16 through float unchecked: 70000 is inf there,
  // refused for two elements (torch 2.15).
  EXPECT_TRUE(std::isinf(scalar_tensor(70000, kHalf).item<float>()));
  EXPECT_TRUE(std::isinf(full({1, 1}, 1e10, kHalf).item<float>()));
  EXPECT_TRUE(std::isinf(zeros({1}, kBFloat16).fill_(1e39).item<float>()));
  EXPECT_TRUE(std::isinf(full_like(zeros({}, kHalf), 1e5).item<float>()));
  EXPECT_THAT(error_of([] { zeros({2}, kBFloat16).fill_(1e39); }),
              HasSubstr("[fill_] value cannot be converted to type c10::BFloat16 without overflow"));
  EXPECT_THAT(error_of([] { (void)full({}, 1e40, kFloat); }),
              HasSubstr("[full] value cannot be converted to type float without overflow"));
  // searchsorted and bucketize convert a number to the boundaries' dtype unchecked, as
  // PyTorch 2.15 does: 300 as uint8 is 44 and -1 is 255 (both after [0, 10, 20]: 3).
  const Tensor bounds = tensor({int64_t{0}, int64_t{10}, int64_t{20}}).to(kByte);
  EXPECT_EQ(searchsorted(bounds, Scalar(300)).item<int64_t>(), 3);
  EXPECT_EQ(searchsorted(bounds, Scalar(-1)).item<int64_t>(), 3);
  EXPECT_EQ(bucketize(Scalar(300), bounds).item<int64_t>(), 3);
  // masked_fill and scatter with a value check it as fill_ does, at any size (torch 2.15); -1
  // still wraps into uint8 and inf fits f16.
  const Tensor first = tensor({true, false});
  EXPECT_THAT(error_of([&] { (void)masked_fill(zeros({2}, kHalf), first, 1e10); }),
              HasSubstr("[masked_fill] value cannot be converted to type c10::Half without overflow"));
  EXPECT_THAT(error_of([] { (void)zeros({2}, kByte).scatter(0, tensor({int64_t{0}}), 300); }),
              HasSubstr("[scatter] value cannot be converted to type uint8_t without overflow"));
  EXPECT_EQ(masked_fill(zeros({2}, kByte), first, -1).to_vector<int64_t>(), (std::vector<int64_t>{255, 0}));
  EXPECT_TRUE(std::isinf(masked_fill(zeros({2}, kHalf), first, INFINITY).to_vector<float>()[0]));
  EXPECT_THAT(error_of([] { (void)scalar_tensor(300.0).item<uint8_t>(); }),
              HasSubstr("[item] value cannot be converted to type uint8_t without overflow"));
  // A floating bound promotes instead (result_type), so nothing overflows.
  EXPECT_EQ(clamp(zeros({1}, kByte), -1.5, 300).dtype(), kFloat);
  // What PyTorch allows stays allowed: -1 wraps into uint8, and binary ops wrap wrapped numbers.
  EXPECT_EQ(full({2}, -1, kByte).to_vector<int64_t>(), (std::vector<int64_t>{255, 255}));
  EXPECT_EQ((zeros({1}, kByte) + 300).to_vector<int64_t>(), (std::vector<int64_t>{44}));
}

TEST(ScalarChecks, AValueIsCheckedOnlyWhereItIsWrittenAndAfterTheOperandsChecks) {
  // torch 2.15, measured: masked_fill checks the broadcast, then a tensor value's rank, then the
  // mask's dtype, and only then the value; a 0-dim tensor value is checked as a number is.
  const Tensor h = zeros({3}, kHalf), u = zeros({3}, kByte), all = ones({3}, kBool);
  EXPECT_THAT(error_of([&] { (void)masked_fill(h, zeros({4}, kLong), 1e10); }),
              HasSubstr("[masked_fill] The size of tensor a (4) must match the size of tensor b (3)"));
  EXPECT_THAT(error_of([&] { (void)masked_fill(h, zeros({3}, kLong), 1e10); }),
              HasSubstr("[masked_fill] masked_fill_ only supports boolean masks, but got mask with dtype long int"));
  EXPECT_THAT(error_of([&] { (void)masked_fill(h, zeros({3}, kLong), zeros({1})); }),
              HasSubstr("[masked_fill] masked_fill_ only supports a 0-dimensional value tensor"));
  EXPECT_THAT(error_of([&] { (void)masked_fill(h, zeros({3}, kBool), scalar_tensor(1e10, kDouble)); }),
              HasSubstr("[masked_fill] value cannot be converted to type c10::Half without overflow"));
  EXPECT_THAT(error_of([&] { (void)masked_fill(u, all, scalar_tensor(300, kLong)); }),
              HasSubstr("[masked_fill] value cannot be converted to type uint8_t without overflow: 300"));
  EXPECT_EQ(masked_fill(u, all, scalar_tensor(-1, kLong)).to_vector<int64_t>(), (std::vector<int64_t>{255, 255, 255}));
  // scatter converts its value only when the index has an element.
  EXPECT_EQ(u.scatter(0, zeros({0}, kLong), 300).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(zeros({2, 3}, kHalf).scatter(1, zeros({2, 0}, kLong), 1e10).sum().item<double>(), 0.0);
  // constant_pad_nd writes its value only where a pad is positive; otherwise it narrows.
  EXPECT_EQ(constant_pad_nd(arange(4, kByte), {-1, 0}, 300).to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(constant_pad_nd(h, {0, 0}, 1e10).sizes().vec(), (std::vector<int64_t>{3}));
  auto cut = compile([](const Tensor& a) { return constant_pad_nd(a, {0, -2}, 300); });
  EXPECT_EQ(cut(arange(4, kByte)).to_vector<int64_t>(), (std::vector<int64_t>{0, 1}));
  // fill_ with a 0-dim tensor converts unchecked, as `to` does (300 into uint8 is 44).
  Tensor c = u.clone();
  c.fill_(scalar_tensor(300, kLong));
  EXPECT_EQ(c.to_vector<int64_t>(), (std::vector<int64_t>{44, 44, 44}));
  EXPECT_THAT(error_of([&] { c.fill_(zeros({1})); }),
              HasSubstr("[fill_] fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions."));
  auto fill = compile([](const Tensor& a, const Tensor& v) {
    Tensor out = a.clone();
    out.fill_(v);
    return out;
  });
  EXPECT_EQ(fill(zeros({2}, kByte), scalar_tensor(2.5)).to_vector<int64_t>(), (std::vector<int64_t>{2, 2}));
}

TEST(ScalarChecks, IntegerClampBoundsPastTheRangeAreNoBoundsOrErrors) {
  // PyTorch 2.15 (measured): an integer tensor's integer bound past the dtype's range on its
  // own side is no bound; a min above the range or a max below it raises. Before, the bounds
  // wrapped (clamp(u8 [1, 200], -3, 5) gave [5, 5]) or raised the conversion error.
  const Tensor u8 = tensor(std::vector<int64_t>{1, 200}, {2}).to(kByte), i8 = tensor(std::vector<int64_t>{1, -100}, {2}).to(kChar);
  auto values = [](const Tensor& t) { return t.to(kLong).to_vector<int64_t>(); };
  EXPECT_EQ(values(clamp(u8, -3, 5)), (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(values(clamp(u8, 0, 300)), (std::vector<int64_t>{1, 200}));
  EXPECT_EQ(values(clamp(u8, std::nullopt, 0)), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(values(clamp(i8, -200, std::nullopt)), (std::vector<int64_t>{1, -100}));
  EXPECT_EQ(values(clamp(i8, std::nullopt, 128)), (std::vector<int64_t>{1, -100}));
  EXPECT_EQ(values(clamp(i8, std::nullopt, -128)), (std::vector<int64_t>{-128, -128}));
  EXPECT_EQ(clamp(u8, -3, 5).dtype(), kByte);
  EXPECT_THAT(error_of([&] { (void)clamp(u8, -3, -3); }),
              HasSubstr("[clamp] Clamp max value -3 is outside the representable range of uint8 [0, 255]"));
  EXPECT_THAT(error_of([&] { (void)clamp_min(u8, 300); }),
              HasSubstr("[clamp] Clamp min value 300 is outside the representable range of uint8 [0, 255]"));
  EXPECT_THAT(error_of([&] { (void)clamp_max(i8, -129); }),
              HasSubstr("[clamp] Clamp max value -129 is outside the representable range of int8 [-128, 127]"));
  // Traced and compiled, the same.
  auto f = compile([](const Tensor& t) { return clamp(t, -3, 5); });
  EXPECT_EQ(values(f(u8)), (std::vector<int64_t>{1, 5}));
}

TEST(OverlapChecks, WritingIntoAnExpandedTensorIsRefused) {
  Tensor z = zeros({1, 3});
  Tensor ze = z.expand({2, 3});
  EXPECT_THAT(error_of([&] {
                ze.copy_(ones({2, 3}));
              }),
              HasSubstr("[copy_] unsupported operation: more than one element of the written-to tensor refers to a "
                        "single memory location"));
  EXPECT_THAT(error_of([&] { ze.add_(ones({2, 3})); }), HasSubstr("more than one element"));
  EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{0, 0, 0}));
  ze.fill_(7);  // allowed, as in PyTorch: every alias receives the same value
  EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{7, 7, 7}));
}

TEST(TraceChecks, InPlaceUpdateOfATracedBaseWithViewsIsRefused) {
  auto fn = [](const std::vector<Tensor>& in) {
    Tensor x = in[0].clone();
    Tensor v = x.slice(0, 0, 2);
    x.add_(10);
    return std::vector<Tensor>{v, x};
  };
  EXPECT_THAT(error_of([&] { trace(fn, {arange(4, kFloat)}); }),
              HasSubstr("[copy_] in-place update of a traced tensor that has views (slice) cannot be recorded"));
}

TEST(ShapeChecks, OverflowingShapesAreRefused) {
  const int64_t p = (int64_t{1} << 32) + 1, m = (int64_t{1} << 32) - 1;
  EXPECT_THAT(error_of([&] {
                (void)zeros({p, m, p, m, 6});
              }),
              HasSubstr("[zeros] the number of elements of a tensor of shape [4294967297, 4294967295, 4294967297, "
                        "4294967295, 6] overflows int64"));
  // The interpreter guards its allocations too (a parsed graph reaches it without the frontend).
  EXPECT_THAT(error_of([&] {
                (void)rt::interpret_op(ir::OpKind::full, {},
                                       ir::AttrList({ir::to_exprs({p, m, p, m, 6}), Scalar(0), kFloat, Device()}));
              }),
              HasSubstr("[empty] the number of elements of a tensor of shape [4294967297, 4294967295, 4294967297, "
                        "4294967295, 6] overflows int64"));
}

TEST(ReductionDtypes, AnyAndAllKeepUint8) {
  Tensor u = tensor({1, 0, 2}).to(kByte);
  EXPECT_EQ(u.all().dtype(), kByte);
  EXPECT_EQ(u.any(0).dtype(), kByte);
  EXPECT_EQ(u.all().item<int64_t>(), 0);
  EXPECT_EQ(u.any().item<int64_t>(), 1);
  EXPECT_EQ(tensor({1, 2}).all().dtype(), kBool);
}

}  // namespace
}  // namespace kiln
