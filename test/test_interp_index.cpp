// kiln/test/test_interp_index.cpp — the interpreter's indexing and data movement prims
// (gather, scatter, scatter_add, index_select, cat, constant_pad) against hand-computed values.
//
// Includes strided and expanded operands, repeated scatter positions (last write wins,
// adds accumulate), integer wrap-around in scatter_add, every out-of-bounds error message,
// and negative (cropping) pads.

#include "base/error.h"
#include "ir/attr.h"
#include "test_support/check.h"
#include "test_support/interp.h"
#include "test_support/make.h"

#include <gtest/gtest.h>

#include <string>

namespace kiln {
namespace {

using namespace test;

Tensor pad(const Tensor& a, Ints amounts, Scalar value) { return run(ir::OpKind::constant_pad, {a}, {amounts, value}); }

TEST(InterpGather, AlongEachDim) {
  Tensor self = make<float>({1, 2, 3, 4}, {2, 2});
  Tensor g1 = run(ir::OpKind::gather, {self, make<int64_t>({0, 0, 1, 0}, {2, 2})}, {int64_t{1}});
  EXPECT_EQ(sizes_of(g1), (Ints{2, 2}));
  EXPECT_EQ(values<float>(g1), (std::vector<float>{1, 1, 4, 3}));
  Tensor g0 = run(ir::OpKind::gather, {self, make<int64_t>({1, 0, 0, 0}, {2, 2})}, {int64_t{0}});
  EXPECT_EQ(values<float>(g0), (std::vector<float>{3, 2, 1, 2}));
}

TEST(InterpGather, SmallerIndexAndStridedSelf) {
  Tensor self = make<int32_t>({0, 1, 2, 3, 4, 5, 6, 7, 8}, {3, 3});
  Tensor g = run(ir::OpKind::gather, {self, make<int64_t>({2, 0}, {2, 1})}, {int64_t{0}});
  EXPECT_EQ(sizes_of(g), (Ints{2, 1}));
  EXPECT_EQ(values<int32_t>(g), (std::vector<int32_t>{6, 0}));
  Tensor t = strided(self, {3, 3}, {1, 3});  // the transpose: [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
  Tensor gt = run(ir::OpKind::gather, {t, make<int64_t>({2, 1, 0}, {3, 1})}, {int64_t{1}});
  EXPECT_EQ(values<int32_t>(gt), (std::vector<int32_t>{6, 4, 2}));
  Tensor idx_base = make<int64_t>({1});
  Tensor expanded_index = strided(idx_base, {2, 3}, {0, 0});  // all ones
  EXPECT_EQ(values<int32_t>(run(ir::OpKind::gather, {self, expanded_index}, {int64_t{0}})),
            (std::vector<int32_t>{3, 4, 5, 3, 4, 5}));
}

TEST(InterpGather, OutOfBounds) {
  Tensor self = make<float>({1, 2, 3}, {3});
  EXPECT_EQ(error_of([&] {
              run(ir::OpKind::gather, {self, make<int64_t>({0, 5})}, {int64_t{0}});
            }),
            "[gather] index 5 is out of bounds for dimension 0 with size 3");
  EXPECT_EQ(error_of([&] {
              run(ir::OpKind::gather, {self, make<int64_t>({-1})}, {int64_t{0}});
            }),
            "[gather] index -1 is out of bounds for dimension 0 with size 3");
}

TEST(InterpScatter, WritesIntoACopy) {
  Tensor self = make<float>({0, 0, 0, 0, 0, 0}, {2, 3});
  Tensor src = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor s = run(ir::OpKind::scatter, {self, make<int64_t>({1, 0, 1}, {1, 3}), src}, {int64_t{0}});
  EXPECT_EQ(sizes_of(s), (Ints{2, 3}));
  EXPECT_EQ(values<float>(s), (std::vector<float>{0, 2, 0, 1, 0, 3}));
  EXPECT_EQ(values<float>(self), (std::vector<float>(6, 0)));  // self is untouched
  Tensor s1 = run(ir::OpKind::scatter, {self, make<int64_t>({2, 0, 1, 1}, {2, 2}), src}, {int64_t{1}});
  EXPECT_EQ(values<float>(s1), (std::vector<float>{2, 0, 1, 0, 5, 0}));
}

TEST(InterpScatter, RepeatedPositions) {
  Tensor self = make<int64_t>({0, 0, 0, 0});
  Tensor index = make<int64_t>({0, 0, 1});
  Tensor src = make<int64_t>({1, 2, 3});
  EXPECT_EQ(values<int64_t>(run(ir::OpKind::scatter, {self, index, src}, {int64_t{0}})),
            (std::vector<int64_t>{2, 3, 0, 0}));
  EXPECT_EQ(values<int64_t>(run(ir::OpKind::scatter_add, {self, index, src}, {int64_t{0}})),
            (std::vector<int64_t>{3, 3, 0, 0}));
}

TEST(InterpScatter, AddWrapsAndReadsStrides) {
  Tensor wrap = run(ir::OpKind::scatter_add, {make<int8_t>({100, 1}), make<int64_t>({0, 0}), make<int8_t>({100, 100})},
                    {int64_t{0}});
  EXPECT_EQ(values<int8_t>(wrap), (std::vector<int8_t>{44, 1}));
  Tensor self = make<double>({1, 2, 3, 4}, {2, 2});
  Tensor t = strided(self, {2, 2}, {1, 2});  // [[1, 3], [2, 4]]
  Tensor src = strided(make<double>({10}), {2, 2}, {0, 0});
  Tensor r = run(ir::OpKind::scatter_add, {t, make<int64_t>({1, 1}, {1, 2}), src}, {int64_t{0}});
  EXPECT_EQ(values<double>(r), (std::vector<double>{1, 3, 12, 14}));
  Tensor h = run(ir::OpKind::scatter_add,
                 {make<Half>({Half(1.5f), Half(0.0f)}), make<int64_t>({0}), make<Half>({Half(0.25f)})}, {int64_t{0}});
  EXPECT_EQ(static_cast<float>(values<Half>(h)[0]), 1.75f);
}

TEST(InterpScatter, OutOfBounds) {
  Tensor self = make<float>({0, 0, 0, 0, 0, 0}, {2, 3});
  Tensor src = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(error_of([&] {
              run(ir::OpKind::scatter, {self, make<int64_t>({0, 3}, {1, 2}), src}, {int64_t{1}});
            }),
            "[scatter] index 3 is out of bounds for dimension 1 with size 3");
  EXPECT_EQ(error_of([&] {
              run(ir::OpKind::scatter_add, {self, make<int64_t>({-2}, {1, 1}), src}, {int64_t{0}});
            }),
            "[scatter_add] index -2 is out of bounds for dimension 0 with size 2");
}

TEST(InterpIndexSelect, Basics) {
  Tensor self = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor s1 = run(ir::OpKind::index_select, {self, make<int64_t>({2, 0, 2})}, {int64_t{1}});
  EXPECT_EQ(sizes_of(s1), (Ints{2, 3}));
  EXPECT_EQ(values<float>(s1), (std::vector<float>{3, 1, 3, 6, 4, 6}));
  Tensor s0 = run(ir::OpKind::index_select, {self, make<int64_t>({1})}, {int64_t{0}});
  EXPECT_EQ(sizes_of(s0), (Ints{1, 3}));
  EXPECT_EQ(values<float>(s0), (std::vector<float>{4, 5, 6}));
  Tensor scalar_index = run(ir::OpKind::index_select, {self, make<int64_t>({1}, {})}, {int64_t{1}});
  EXPECT_EQ(sizes_of(scalar_index), (Ints{2, 1}));
  EXPECT_EQ(values<float>(scalar_index), (std::vector<float>{2, 5}));
  Tensor none = run(ir::OpKind::index_select, {self, make<int64_t>({}, {0})}, {int64_t{1}});
  EXPECT_EQ(sizes_of(none), (Ints{2, 0}));
  Tensor t = strided(self, {3, 2}, {1, 3});  // [[1, 4], [2, 5], [3, 6]]
  EXPECT_EQ(values<float>(run(ir::OpKind::index_select, {t, make<int64_t>({2, 2, 1})}, {int64_t{0}})),
            (std::vector<float>{3, 6, 3, 6, 2, 5}));
}

TEST(InterpIndexSelect, OutOfBounds) {
  Tensor self = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(error_of([&] {
              run(ir::OpKind::index_select, {self, make<int64_t>({0, -1})}, {int64_t{0}});
            }),
            "[index_select] index -1 is out of bounds for dimension 0 with size 2");
  EXPECT_EQ(error_of([&] {
              run(ir::OpKind::index_select, {self, make<int64_t>({3})}, {int64_t{1}});
            }),
            "[index_select] index 3 is out of bounds for dimension 1 with size 3");
}

TEST(InterpCat, AlongEachDim) {
  Tensor a = make<int64_t>({1, 2, 3, 4}, {2, 2});
  Tensor c0 = run(ir::OpKind::cat, {a, make<int64_t>({5, 6}, {1, 2})}, {int64_t{0}});
  EXPECT_EQ(sizes_of(c0), (Ints{3, 2}));
  EXPECT_EQ(values<int64_t>(c0), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  Tensor c1 = run(ir::OpKind::cat, {a, make<int64_t>({7, 8}, {2, 1})}, {int64_t{1}});
  EXPECT_EQ(sizes_of(c1), (Ints{2, 3}));
  EXPECT_EQ(values<int64_t>(c1), (std::vector<int64_t>{1, 2, 7, 3, 4, 8}));
}

TEST(InterpCat, StridedAndEmptyInputs) {
  Tensor base = make<float>({1, 2, 3, 4}, {4});
  Tensor t = strided(base, {2, 2}, {1, 2});  // [[1, 3], [2, 4]]
  Tensor e = strided(make<float>({9}), {1, 2}, {0, 0});
  Tensor c = run(ir::OpKind::cat, {t, make<float>({}, {0, 2}), e}, {int64_t{0}});
  EXPECT_EQ(sizes_of(c), (Ints{3, 2}));
  EXPECT_EQ(values<float>(c), (std::vector<float>{1, 3, 2, 4, 9, 9}));
  Tensor one = run(ir::OpKind::cat, {t}, {int64_t{1}});
  EXPECT_FALSE(one.is_alias_of(t));
  EXPECT_EQ(values<float>(one), (std::vector<float>{1, 3, 2, 4}));
}

TEST(InterpConstantPad, PadsFromTheLastDim) {
  Tensor a = make<float>({1, 2, 3, 4}, {2, 2});
  Tensor p = pad(a, {1, 0}, 9.0);
  EXPECT_EQ(sizes_of(p), (Ints{2, 3}));
  EXPECT_EQ(values<float>(p), (std::vector<float>{9, 1, 2, 9, 3, 4}));
  Tensor q = pad(a, {0, 1, 1, 0}, -1.5);
  EXPECT_EQ(sizes_of(q), (Ints{3, 3}));
  EXPECT_EQ(values<float>(q), (std::vector<float>{-1.5, -1.5, -1.5, 1, 2, -1.5, 3, 4, -1.5}));
  Tensor none = pad(a, {}, 0.0);
  EXPECT_EQ(values<float>(none), (std::vector<float>{1, 2, 3, 4}));
}

TEST(InterpConstantPad, NegativePadsCrop) {
  Tensor a = make<int32_t>({1, 2, 3, 4}, {2, 2});
  Tensor c = pad(a, {-1, 0}, 0);
  EXPECT_EQ(sizes_of(c), (Ints{2, 1}));
  EXPECT_EQ(values<int32_t>(c), (std::vector<int32_t>{2, 4}));
  Tensor m = pad(a, {-1, 1}, 7);
  EXPECT_EQ(values<int32_t>(m), (std::vector<int32_t>{2, 7, 4, 7}));
  Tensor all = pad(a, {0, 0, -2, 1}, 5);  // dim 0: 2 - 2 + 1 = 1 row, all fill
  EXPECT_EQ(sizes_of(all), (Ints{1, 2}));
  EXPECT_EQ(values<int32_t>(all), (std::vector<int32_t>{5, 5}));
  EXPECT_EQ(
      error_of([&] {
        pad(a, {-3, 0}, 0);
      }),
      "[constant_pad] The input size 2, plus negative padding -3 and 0 resulted in a negative output size, which is "
      "invalid. Check dimension 1 of your input.");
}

TEST(InterpConstantPad, ValueConversionAndStrides) {
  Tensor a = make<int64_t>({1, 2}, {2});
  EXPECT_EQ(values<int64_t>(pad(a, {1, 1}, 2.7)), (std::vector<int64_t>{2, 1, 2, 2}));  // truncated like fill_
  Tensor h = pad(make<Half>({Half(1.0f)}), {0, 1}, 0.5);
  EXPECT_EQ(static_cast<float>(values<Half>(h)[1]), 0.5f);
  Tensor b = pad(make<bool>({false}), {1, 0}, true);
  EXPECT_EQ(values<bool>(b), (std::vector<bool>{true, false}));
  Tensor base = make<double>({1, 2, 3, 4, 5, 6}, {6});
  Tensor t = strided(base, {2, 3}, {1, 2});  // [[1, 3, 5], [2, 4, 6]]
  Tensor p = pad(t, {-1, 1, 1, -1}, 0.0);    // crop the first column, add one; add a row, drop the last
  EXPECT_EQ(sizes_of(p), (Ints{2, 3}));
  EXPECT_EQ(values<double>(p), (std::vector<double>{0, 0, 0, 3, 5, 0}));
}

}  // namespace
}  // namespace kiln
