// kiln/test/test_interp_matmul.cpp — the interpreter's mm and bmm against hand-computed
// products.
//
// Covers contiguous, transposed and batch-broadcast (zero-stride) operands, zero-size k and
// empty outputs, the accumulation types (float for f16/bf16/f32, double for f64, wrapping
// integers) and the bool error.

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

Tensor mm(const Tensor& a, const Tensor& b) { return run(ir::OpKind::mm, {a, b}); }
Tensor bmm(const Tensor& a, const Tensor& b) { return run(ir::OpKind::bmm, {a, b}); }

TEST(InterpMatmul, MmContiguous) {
  Tensor a = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = make<float>({7, 8, 9, 10, 11, 12}, {3, 2});
  Tensor c = mm(a, b);
  EXPECT_EQ(c.sizes().vec(), (Ints{2, 2}));
  EXPECT_EQ(c.dtype(), kFloat);
  EXPECT_EQ(values<float>(c), (std::vector<float>{58, 64, 139, 154}));
}

TEST(InterpMatmul, MmTransposedOperands) {
  Tensor at = strided(make<double>({1, 4, 2, 5, 3, 6}, {6}), {2, 3}, {1, 2});     // [[1, 2, 3], [4, 5, 6]]
  Tensor bt = strided(make<double>({7, 9, 11, 8, 10, 12}, {6}), {3, 2}, {1, 3});  // [[7, 8], [9, 10], [11, 12]]
  EXPECT_EQ(values<double>(mm(at, bt)), (std::vector<double>{58, 64, 139, 154}));
  Tensor row = strided(make<double>({1, 2, 3}), {2, 3}, {0, 1});  // both rows [1, 2, 3]
  EXPECT_EQ(values<double>(mm(row, bt)), (std::vector<double>{58, 64, 58, 64}));
}

TEST(InterpMatmul, ZeroSizeKAndEmptyOutputs) {
  Tensor z = mm(make<float>({}, {2, 0}), make<float>({}, {0, 3}));
  EXPECT_EQ(z.sizes().vec(), (Ints{2, 3}));
  EXPECT_EQ(values<float>(z), (std::vector<float>(6, 0.0f)));
  Tensor e = mm(make<int64_t>({}, {0, 3}), make<int64_t>({1, 2, 3, 4, 5, 6}, {3, 2}));
  EXPECT_EQ(e.sizes().vec(), (Ints{0, 2}));
  Tensor zb = bmm(make<int32_t>({}, {2, 1, 0}), make<int32_t>({}, {2, 0, 2}));
  EXPECT_EQ(zb.sizes().vec(), (Ints{2, 1, 2}));
  EXPECT_EQ(values<int32_t>(zb), (std::vector<int32_t>(4, 0)));
}

TEST(InterpMatmul, AccumulationTypes) {
  // f32 accumulates in float in k order: 1e8 + 1 rounds back to 1e8, then - 1e8 gives 0.
  Tensor ones_f = make<float>({1, 1, 1}, {3, 1});
  EXPECT_EQ(values<float>(mm(make<float>({1e8f, 1, -1e8f}, {1, 3}), ones_f)), (std::vector<float>{0}));
  Tensor ones_d = make<double>({1, 1, 1}, {3, 1});
  EXPECT_EQ(values<double>(mm(make<double>({1e16, 1, -1e16}, {1, 3}), ones_d)), (std::vector<double>{0}));
  EXPECT_EQ(values<double>(mm(make<double>({1e8, 1, -1e8}, {1, 3}), ones_d)), (std::vector<double>{1}));
  // f16 products are accumulated in float and rounded once: 2048 + 1 + 1 = 2050 (f16 steps: 2048).
  Tensor h = make<Half>({Half(2048.0f), Half(1.0f), Half(1.0f)}, {1, 3});
  Tensor ones_h = make<Half>({Half(1.0f), Half(1.0f), Half(1.0f)}, {3, 1});
  EXPECT_EQ(static_cast<float>(values<Half>(mm(h, ones_h))[0]), 2050.0f);
  Tensor b = make<BFloat16>({BFloat16(0.5f), BFloat16(0.25f)}, {1, 2});
  Tensor b2 = make<BFloat16>({BFloat16(2.0f), BFloat16(4.0f)}, {2, 1});
  EXPECT_EQ(static_cast<float>(values<BFloat16>(mm(b, b2))[0]), 2.0f);
  // Integers wrap around.
  EXPECT_EQ(values<int8_t>(mm(make<int8_t>({100, 100}, {1, 2}), make<int8_t>({1, 1}, {2, 1}))),
            (std::vector<int8_t>{-56}));
  EXPECT_EQ(values<int64_t>(mm(make<int64_t>({2, 3}, {1, 2}), make<int64_t>({4, 5}, {2, 1}))),
            (std::vector<int64_t>{23}));
  EXPECT_EQ(values<uint8_t>(mm(make<uint8_t>({16, 16}, {1, 2}), make<uint8_t>({8, 8}, {2, 1}))),
            (std::vector<uint8_t>{0}));
}

TEST(InterpMatmul, Bmm) {
  Tensor a = make<float>({1, 2, 3, 4}, {2, 1, 2});
  Tensor b = make<float>({1, 1, 2, 0}, {2, 2, 1});
  Tensor c = bmm(a, b);
  EXPECT_EQ(c.sizes().vec(), (Ints{2, 1, 1}));
  EXPECT_EQ(values<float>(c), (std::vector<float>{3, 6}));
  Tensor shared = strided(make<float>({5, 6}, {2}), {2, 2, 1}, {0, 1, 1});  // the same [[5], [6]] per batch
  EXPECT_EQ(values<float>(bmm(a, shared)), (std::vector<float>{17, 39}));
  // Batch 1 of a transposed per batch: a^T[b] read through strides.
  Tensor base = make<int64_t>({1, 3, 2, 4, 5, 7, 6, 8}, {8});
  Tensor t = strided(base, {2, 2, 2}, {4, 1, 2});                   // [[[1, 2], [3, 4]], [[5, 6], [7, 8]]]
  Tensor eye = make<int64_t>({1, 0, 0, 1, 0, 1, 1, 0}, {2, 2, 2});  // identity, then swap
  EXPECT_EQ(values<int64_t>(bmm(t, eye)), (std::vector<int64_t>{1, 2, 3, 4, 6, 5, 8, 7}));
}

TEST(InterpMatmul, BoolIsAnError) {
  Tensor a = make<bool>({true, false}, {1, 2});
  Tensor b = make<bool>({true, true}, {2, 1});
  EXPECT_EQ(error_of([&] { mm(a, b); }), "[mm] \"addmm_impl_cpu_\" not implemented for 'Bool'");
  Tensor a3 = make<bool>({true, false}, {1, 1, 2});
  Tensor b3 = make<bool>({true, true}, {1, 2, 1});
  EXPECT_EQ(error_of([&] { bmm(a3, b3); }), "[bmm] \"bmm\" not implemented for 'Bool'");
}

}  // namespace
}  // namespace kiln
