// kiln/test/test_interp_reduce.cpp — the interpreter's reductions and scans against
// hand-computed values.
//
// Covers every reduction over single and multiple dims, keepdim, transposed / offset /
// expanded (zero-stride) inputs, empty extents and their errors, NaN propagation, integer
// wrap-around, argmax/argmin ties and NaN, and cumsum/cumprod.

#include "base/error.h"
#include "ir/attr.h"
#include "test_support/check.h"
#include "test_support/interp.h"
#include "test_support/make.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace kiln {
namespace {

using namespace test;

Tensor red(ir::OpKind op, const Tensor& a, Ints dims, bool keepdim = false) { return run(op, {a}, {dims, keepdim}); }

Tensor arg(ir::OpKind op, const Tensor& a, std::optional<int64_t> dim, bool keepdim = false) {
  ir::AttrValue d = dim ? ir::AttrValue(*dim) : ir::AttrValue(std::monostate{});
  return run(op, {a}, {d, keepdim});
}

constexpr float kNaNF = std::numeric_limits<float>::quiet_NaN();

TEST(InterpReduce, SumOverEachDim) {
  Tensor a = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor s0 = red(ir::OpKind::sum, a, {0});
  EXPECT_EQ(sizes_of(s0), (Ints{3}));
  EXPECT_EQ(values<float>(s0), (std::vector<float>{5, 7, 9}));
  Tensor s1 = red(ir::OpKind::sum, a, {1});
  EXPECT_EQ(sizes_of(s1), (Ints{2}));
  EXPECT_EQ(values<float>(s1), (std::vector<float>{6, 15}));
  Tensor all = red(ir::OpKind::sum, a, {0, 1});
  EXPECT_EQ(sizes_of(all), (Ints{}));
  EXPECT_EQ(values<float>(all), (std::vector<float>{21}));
}

TEST(InterpReduce, KeepdimAndMultipleDims) {
  Tensor a = make<int64_t>({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2});
  Tensor s = red(ir::OpKind::sum, a, {0, 2}, true);
  EXPECT_EQ(sizes_of(s), (Ints{1, 2, 1}));
  EXPECT_EQ(values<int64_t>(s), (std::vector<int64_t>{10, 18}));
  Tensor p = red(ir::OpKind::prod, a, {1, 2});
  EXPECT_EQ(sizes_of(p), (Ints{2}));
  EXPECT_EQ(values<int64_t>(p), (std::vector<int64_t>{0, 4 * 5 * 6 * 7}));
  Tensor k = red(ir::OpKind::amax, make<float>({1, 2, 3, 4, 5, 6}, {2, 3}), {1}, true);
  EXPECT_EQ(sizes_of(k), (Ints{2, 1}));
  EXPECT_EQ(values<float>(k), (std::vector<float>{3, 6}));
}

TEST(InterpReduce, EmptyDimsIsACopy) {
  Tensor a = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor s = red(ir::OpKind::sum, a, {});
  EXPECT_EQ(sizes_of(s), (Ints{2, 3}));
  EXPECT_FALSE(s.is_alias_of(a));
  EXPECT_EQ(values<float>(s), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  Tensor b = red(ir::OpKind::any, make<float>({0, 2, kNaNF}), {});
  EXPECT_EQ(values<bool>(b), (std::vector<bool>{false, true, true}));
  Tensor scalar = red(ir::OpKind::prod, make<double>({2.5}, {}), {});
  EXPECT_EQ(sizes_of(scalar), (Ints{}));
  EXPECT_EQ(values<double>(scalar), (std::vector<double>{2.5}));
}

TEST(InterpReduce, ProdAmaxAminAnyAll) {
  Tensor a = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(values<float>(red(ir::OpKind::prod, a, {1})), (std::vector<float>{6, 120}));
  EXPECT_EQ(values<float>(red(ir::OpKind::prod, a, {0})), (std::vector<float>{4, 10, 18}));
  EXPECT_EQ(values<float>(red(ir::OpKind::amax, a, {1})), (std::vector<float>{3, 6}));
  EXPECT_EQ(values<float>(red(ir::OpKind::amin, a, {0})), (std::vector<float>{1, 2, 3}));
  Tensor ints = make<int32_t>({3, -7, 5, -1}, {4});
  EXPECT_EQ(values<int32_t>(red(ir::OpKind::amax, ints, {0})), (std::vector<int32_t>{5}));
  EXPECT_EQ(values<int32_t>(red(ir::OpKind::amin, ints, {0})), (std::vector<int32_t>{-7}));
  Tensor z = make<float>({0, 1, 0, 0, 0, 0}, {2, 3});
  Tensor any = red(ir::OpKind::any, z, {1});
  EXPECT_EQ(any.dtype(), kBool);
  EXPECT_EQ(values<bool>(any), (std::vector<bool>{true, false}));
  Tensor all = red(ir::OpKind::all, make<int64_t>({1, 2, 0, 3}, {2, 2}), {0});
  EXPECT_EQ(all.dtype(), kBool);
  EXPECT_EQ(values<bool>(all), (std::vector<bool>{false, true}));
  Tensor ball = red(ir::OpKind::all, make<bool>({true, true, true, false}, {2, 2}), {1});
  EXPECT_EQ(values<bool>(ball), (std::vector<bool>{true, false}));
}

TEST(InterpReduce, TransposedAndOffsetInputs) {
  Tensor base = make<float>({1, 2, 3, 4, 5, 6}, {6});
  Tensor t = strided(base, {3, 2}, {1, 3});  // [[1, 4], [2, 5], [3, 6]]
  EXPECT_EQ(values<float>(red(ir::OpKind::sum, t, {1})), (std::vector<float>{5, 7, 9}));
  EXPECT_EQ(values<float>(red(ir::OpKind::sum, t, {0})), (std::vector<float>{6, 15}));
  EXPECT_EQ(values<float>(red(ir::OpKind::amax, t, {0})), (std::vector<float>{3, 6}));
  Tensor off = strided(base, {2, 2}, {2, 1}, 2);  // [[3, 4], [5, 6]]
  EXPECT_EQ(values<float>(red(ir::OpKind::prod, off, {0})), (std::vector<float>{15, 24}));
}

TEST(InterpReduce, ExpandedInputs) {
  Tensor row = make<float>({1, 2, 3});
  Tensor e = strided(row, {4, 3}, {0, 1});
  EXPECT_EQ(values<float>(red(ir::OpKind::sum, e, {0})), (std::vector<float>{4, 8, 12}));
  EXPECT_EQ(values<float>(red(ir::OpKind::sum, e, {1})), (std::vector<float>{6, 6, 6, 6}));
  Tensor scalar = make<int64_t>({3}, {});
  Tensor all = strided(scalar, {2, 5}, {0, 0});
  EXPECT_EQ(values<int64_t>(red(ir::OpKind::sum, all, {0, 1})), (std::vector<int64_t>{30}));
  EXPECT_EQ(values<int64_t>(red(ir::OpKind::prod, all, {1})), (std::vector<int64_t>{243, 243}));
}

TEST(InterpReduce, EmptyExtents) {
  Tensor a = make<float>({}, {2, 0});
  EXPECT_EQ(values<float>(red(ir::OpKind::sum, a, {1})), (std::vector<float>{0, 0}));
  EXPECT_EQ(values<float>(red(ir::OpKind::prod, a, {1})), (std::vector<float>{1, 1}));
  EXPECT_EQ(values<bool>(red(ir::OpKind::any, a, {1})), (std::vector<bool>{false, false}));
  EXPECT_EQ(values<bool>(red(ir::OpKind::all, a, {1})), (std::vector<bool>{true, true}));
  Tensor s0 = red(ir::OpKind::sum, a, {0});
  EXPECT_EQ(sizes_of(s0), (Ints{0}));
  Tensor m0 = red(ir::OpKind::amax, a, {0});  // the reduced dim is non-empty: an empty result
  EXPECT_EQ(sizes_of(m0), (Ints{0}));
  EXPECT_EQ(error_of([&] { red(ir::OpKind::amax, a, {1}); }), "[amax] Expected reduction dim 1 to have non-zero size.");
  EXPECT_EQ(error_of([&] {
              red(ir::OpKind::amin, make<int32_t>({}, {0, 3}), {0, 1});
            }),
            "[amin] Expected reduction dim 0 to have non-zero size.");
  Tensor sum_all = red(ir::OpKind::sum, make<int64_t>({}, {0, 3}), {0, 1});
  EXPECT_EQ(values<int64_t>(sum_all), (std::vector<int64_t>{0}));
}

TEST(InterpReduce, NaNPropagates) {
  Tensor a = make<float>({1, kNaNF, 3, 4, 5, 6}, {2, 3});
  std::vector<float> mx = values<float>(red(ir::OpKind::amax, a, {1}));
  EXPECT_TRUE(std::isnan(mx[0]));
  EXPECT_EQ(mx[1], 6);
  std::vector<float> mn = values<float>(red(ir::OpKind::amin, a, {0}));
  EXPECT_EQ(mn[0], 1);
  EXPECT_TRUE(std::isnan(mn[1]));
  EXPECT_EQ(mn[2], 3);
  EXPECT_TRUE(std::isnan(values<float>(red(ir::OpKind::sum, a, {0, 1}))[0]));
  // NaN first, then larger values: still NaN.
  EXPECT_TRUE(std::isnan(values<double>(red(ir::OpKind::amax, make<double>({NAN, 7}), {0}))[0]));
}

TEST(InterpReduce, IntegerWrapAround) {
  EXPECT_EQ(values<int8_t>(red(ir::OpKind::sum, make<int8_t>({100, 100}), {0})), (std::vector<int8_t>{-56}));
  EXPECT_EQ(values<uint8_t>(red(ir::OpKind::sum, make<uint8_t>({200, 100}), {0})), (std::vector<uint8_t>{44}));
  EXPECT_EQ(values<int32_t>(red(ir::OpKind::sum, make<int32_t>({std::numeric_limits<int32_t>::max(), 1}), {0})),
            (std::vector<int32_t>{std::numeric_limits<int32_t>::min()}));
  EXPECT_EQ(values<int64_t>(red(ir::OpKind::sum, make<int64_t>({std::numeric_limits<int64_t>::max(), 2}), {0})),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::min() + 1}));
  EXPECT_EQ(values<int8_t>(red(ir::OpKind::prod, make<int8_t>({16, 9}), {0})), (std::vector<int8_t>{-112}));
  EXPECT_EQ(values<int16_t>(red(ir::OpKind::prod, make<int16_t>({256, 256}), {0})), (std::vector<int16_t>{0}));
}

TEST(InterpReduce, FloatingAccumulation) {
  // Accumulated in double and rounded once: 1e8 + 1 - 1e8 is exactly 1 (f32 steps would give 0).
  EXPECT_EQ(values<float>(red(ir::OpKind::sum, make<float>({1e8f, 1, -1e8f}), {0})), (std::vector<float>{1}));
  Tensor h = make<Half>({Half(0.5f), Half(0.25f), Half(0.125f)});
  std::vector<Half> hs = values<Half>(red(ir::OpKind::sum, h, {0}));
  EXPECT_EQ(static_cast<float>(hs[0]), 0.875f);
  Tensor b = make<BFloat16>({BFloat16(3.0f), BFloat16(-2.0f)});
  EXPECT_EQ(static_cast<float>(values<BFloat16>(red(ir::OpKind::prod, b, {0}))[0]), -6.0f);
  EXPECT_EQ(static_cast<float>(values<BFloat16>(red(ir::OpKind::amax, b, {0}))[0]), 3.0f);
}

TEST(InterpArgReduce, DimsTiesAndFlattened) {
  Tensor a = make<float>({1, 3, 3, 5, 0, 5}, {2, 3});
  Tensor am1 = arg(ir::OpKind::argmax, a, 1);
  EXPECT_EQ(am1.dtype(), kLong);
  EXPECT_EQ(sizes_of(am1), (Ints{2}));
  EXPECT_EQ(values<int64_t>(am1), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(values<int64_t>(arg(ir::OpKind::argmin, a, 1)), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(values<int64_t>(arg(ir::OpKind::argmax, a, 0)), (std::vector<int64_t>{1, 0, 1}));
  Tensor k = arg(ir::OpKind::argmax, a, 1, true);
  EXPECT_EQ(sizes_of(k), (Ints{2, 1}));
  EXPECT_EQ(values<int64_t>(k), (std::vector<int64_t>{1, 0}));
  Tensor flat = arg(ir::OpKind::argmax, a, std::nullopt);
  EXPECT_EQ(sizes_of(flat), (Ints{}));
  EXPECT_EQ(values<int64_t>(flat), (std::vector<int64_t>{3}));
  Tensor flat_k = arg(ir::OpKind::argmin, a, std::nullopt, true);
  EXPECT_EQ(sizes_of(flat_k), (Ints{1, 1}));
  EXPECT_EQ(values<int64_t>(flat_k), (std::vector<int64_t>{4}));
  EXPECT_EQ(values<int64_t>(arg(ir::OpKind::argmax, make<int64_t>({-5, -2, -2}), 0)), (std::vector<int64_t>{1}));
}

TEST(InterpArgReduce, StridedInput) {
  Tensor base = make<int32_t>({4, 9, 2, 7, 1, 8}, {6});
  Tensor t = strided(base, {3, 2}, {1, 3});  // [[4, 7], [9, 1], [2, 8]]
  EXPECT_EQ(values<int64_t>(arg(ir::OpKind::argmax, t, 0)), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(values<int64_t>(arg(ir::OpKind::argmin, t, 1)), (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(values<int64_t>(arg(ir::OpKind::argmin, t, std::nullopt)), (std::vector<int64_t>{3}));  // the 1
}

TEST(InterpArgReduce, NaNWinsBoth) {
  Tensor a = make<float>({1, kNaNF, 5, kNaNF});
  EXPECT_EQ(values<int64_t>(arg(ir::OpKind::argmax, a, 0)), (std::vector<int64_t>{1}));
  EXPECT_EQ(values<int64_t>(arg(ir::OpKind::argmin, a, 0)), (std::vector<int64_t>{1}));
  EXPECT_EQ(values<int64_t>(arg(ir::OpKind::argmax, a, std::nullopt)), (std::vector<int64_t>{1}));
  Tensor first = make<double>({NAN, -1, 9});
  EXPECT_EQ(values<int64_t>(arg(ir::OpKind::argmax, first, 0)), (std::vector<int64_t>{0}));
  EXPECT_EQ(values<int64_t>(arg(ir::OpKind::argmin, first, 0)), (std::vector<int64_t>{0}));
}

TEST(InterpArgReduce, EmptyErrors) {
  EXPECT_EQ(error_of([] { arg(ir::OpKind::argmax, make<float>({}, {0}), std::nullopt); }),
            "[argmax] Expected reduction dim to be specified for input.numel() == 0.");
  EXPECT_EQ(error_of([] {
              arg(ir::OpKind::argmin, make<float>({}, {2, 0}), 1);
            }),
            "[argmin] Expected reduction dim 1 to have non-zero size.");
  EXPECT_EQ(error_of([] {
              arg(ir::OpKind::argmax, make<float>({}, {0, 3}), 0);
            }),
            "[argmax] Expected reduction dim 0 to have non-zero size.");
  Tensor ok = arg(ir::OpKind::argmax, make<float>({}, {0, 3}), 1);  // other dims may be empty
  EXPECT_EQ(sizes_of(ok), (Ints{0}));
}

TEST(InterpScan, CumsumCumprod) {
  Tensor a = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor c1 = run(ir::OpKind::cumsum, {a}, {int64_t{1}});
  EXPECT_EQ(sizes_of(c1), (Ints{2, 3}));
  EXPECT_EQ(values<float>(c1), (std::vector<float>{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(values<float>(run(ir::OpKind::cumsum, {a}, {int64_t{0}})), (std::vector<float>{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(values<float>(run(ir::OpKind::cumprod, {a}, {int64_t{1}})), (std::vector<float>{1, 2, 6, 4, 20, 120}));
  EXPECT_EQ(values<float>(run(ir::OpKind::cumprod, {a}, {int64_t{0}})), (std::vector<float>{1, 2, 3, 4, 10, 18}));
}

TEST(InterpScan, StridedEmptyScalarAndWrap) {
  Tensor base = make<int64_t>({1, 2, 3, 4, 5, 6}, {6});
  Tensor t = strided(base, {3, 2}, {1, 3});  // [[1, 4], [2, 5], [3, 6]]
  EXPECT_EQ(values<int64_t>(run(ir::OpKind::cumsum, {t}, {int64_t{0}})), (std::vector<int64_t>{1, 4, 3, 9, 6, 15}));
  Tensor e = strided(make<int64_t>({7}), {3}, {0});
  EXPECT_EQ(values<int64_t>(run(ir::OpKind::cumprod, {e}, {int64_t{0}})), (std::vector<int64_t>{7, 49, 343}));
  Tensor empty = run(ir::OpKind::cumsum, {make<float>({}, {2, 0})}, {int64_t{1}});
  EXPECT_EQ(sizes_of(empty), (Ints{2, 0}));
  Tensor scalar = run(ir::OpKind::cumsum, {make<double>({4.5}, {})}, {int64_t{0}});
  EXPECT_EQ(sizes_of(scalar), (Ints{}));
  EXPECT_EQ(values<double>(scalar), (std::vector<double>{4.5}));
  EXPECT_EQ(values<int8_t>(run(ir::OpKind::cumsum, {make<int8_t>({100, 100, 100})}, {int64_t{0}})),
            (std::vector<int8_t>{100, -56, 44}));
  // Sequential in double, each output rounded once: 1e8 + 1 rounds to 1e8 in f32, then 1.
  EXPECT_EQ(values<float>(run(ir::OpKind::cumsum, {make<float>({1e8f, 1, -1e8f})}, {int64_t{0}})),
            (std::vector<float>{1e8f, 1e8f, 1}));
}

}  // namespace
}  // namespace kiln
