// kiln/test/test_tensor_layout.cpp — eager elementwise ops give their output their inputs'
// layout, as PyTorch's TensorIterator does (frontend/elementwise_layout.h).
//
// The expected sizes and strides were printed by PyTorch 2.15 for the same expressions, written
// in Python (`torch.exp(a(3,4).t())` and so on, with a(*s) = torch.randn(*s)); values are
// compared with the same op on row-major copies.
#include "base/error.h"
#include "frontend/elementwise_layout.h"
#include "frontend/ops.h"
#include "kiln/kiln.h"
#include "test_support/check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace kiln {
namespace {

using ::testing::HasSubstr;
using Ints = std::vector<int64_t>;

Tensor a(Ints s) { return randn(s); }

struct Case {
  std::string name;
  std::function<Tensor()> make;
  Ints sizes, strides;  // PyTorch 2.15's
};

std::vector<Case> cases() {
  return {
      {"exp_t", [] { return exp(a({3, 4}).t()); }, {4, 3}, {1, 4}},
      {"neg_permute", [] { return neg(a({2, 3, 4}).permute({2, 0, 1})); }, {4, 2, 3}, {1, 12, 4}},
      {"add_tt", [] { return a({3, 4}).t() + a({3, 4}).t(); }, {4, 3}, {1, 4}},
      {"add_t_c", [] { return a({3, 4}).t() + a({4, 3}); }, {4, 3}, {1, 4}},
      {"add_c_t", [] { return a({4, 3}) + a({3, 4}).t(); }, {4, 3}, {3, 1}},
      {"mul_channels_last", [] { return a({2, 4, 5, 3}).permute({0, 3, 1, 2}) * a({2, 4, 5, 3}).permute({0, 3, 1, 2}); },
       {2, 3, 4, 5}, {60, 1, 15, 3}},
      {"add_t_bias", [] { return a({3, 4}).t() + a({3}); }, {4, 3}, {1, 4}},
      {"add_col_t", [] { return a({4, 1}) + a({3, 4}).t(); }, {4, 3}, {1, 4}},
      {"sin_strided", [] { return sin(a({3, 8}).slice(1, std::nullopt, std::nullopt, 2)); }, {3, 4}, {4, 1}},
      {"sin_sliced_t", [] { return sin(a({8, 3}).slice(0, std::nullopt, std::nullopt, 2).t()); }, {3, 4}, {1, 3}},
      {"gelu_t", [] { return gelu(a({3, 4}).t()); }, {4, 3}, {1, 4}},
      {"relu_permute", [] { return relu(a({2, 3, 4}).permute({1, 2, 0})); }, {3, 4, 2}, {4, 1, 12}},
      {"where_t", [] { return where(a({3, 4}).t() > 0, a({3, 4}).t(), a({4, 3})); }, {4, 3}, {1, 4}},
      {"to_f64_t", [] { return a({3, 4}).t().to(kFloat64); }, {4, 3}, {1, 4}},
      {"unit_dims", [] { return exp(a({3, 1, 4}).permute({2, 1, 0})); }, {4, 1, 3}, {1, 4, 4}},
      {"expand_plus_t", [] { return a({1, 4}).expand({3, 4}) + a({4, 3}).t(); }, {3, 4}, {1, 3}},
      {"scalar_t", [] { return a({3, 4}).t() * scalar_tensor(2.0); }, {4, 3}, {1, 4}},
      {"gt_t_sliced", [] { return gt(a({3, 4}).t(), a({4, 6}).slice(1, std::nullopt, std::nullopt, 2)); }, {4, 3}, {1, 4}},
      {"lerp_t", [] { return lerp(a({3, 4}).t(), a({3, 4}).t(), 0.5); }, {4, 3}, {1, 4}},
      {"nan_to_num_t", [] { return nan_to_num(a({3, 4}).t()); }, {4, 3}, {1, 4}},
      {"dense_3d_same", [] { return a({2, 3, 4}).permute({1, 0, 2}) + a({2, 3, 4}).permute({1, 0, 2}); }, {3, 2, 4}, {4, 12, 1}},
      {"mixed_3d", [] { return a({2, 3, 4}).permute({1, 0, 2}) + a({4, 3, 2}).permute({1, 2, 0}); }, {3, 2, 4}, {4, 12, 1}},
      {"half_t", [] { return a({3, 4}).t().to(kHalf).abs(); }, {4, 3}, {1, 4}},
      {"int_t_plus_float", [] { return a({3, 4}).t().to(kInt32) + 1.5; }, {4, 3}, {1, 4}},
  };
}

TEST(ElementwiseLayout, OutputsTakeTheInputsLayoutAsInPyTorch) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const Tensor t = c.make();
    EXPECT_EQ(t.sizes().vec(), c.sizes);
    EXPECT_EQ(t.strides().vec(), c.strides);
  }
}

// The values are those of the op on row-major copies of the inputs: only the layout moved.
TEST(ElementwiseLayout, ValuesAreTheRowMajorOnes) {
  manual_seed(7);
  const Tensor x = randn({3, 4, 5}), y = randn({3, 5}), z = randn({4, 1});
  const Tensor xt = x.permute({2, 0, 1}), yt = y.t();
  auto same = [](const Tensor& got, const Tensor& want) {
    ASSERT_EQ(got.sizes().vec(), want.sizes().vec());
    EXPECT_TRUE(equal(got.contiguous(), want));
  };
  same(exp(xt), exp(xt.contiguous()));
  same(xt * 2 + yt.unsqueeze(2), xt.contiguous() * 2 + yt.contiguous().unsqueeze(2));
  same(where(xt > 0, xt, z.t().unsqueeze(0)), where(xt.contiguous() > 0, xt.contiguous(), z.t().contiguous().unsqueeze(0)));
  same(gelu(xt.to(kFloat64)), gelu(xt.contiguous().to(kFloat64)));
  // In place on a transposed tensor writes its own elements.
  Tensor w = x.clone().permute({2, 0, 1});
  w.add_(1);
  same(w, xt.contiguous() + 1);
}

// view() refuses what PyTorch refuses: the output of exp on a transposed tensor is transposed.
TEST(ElementwiseLayout, ViewOfATransposedResultIsRefused) {
  const Tensor t = exp(randn({3, 4}).t());
  EXPECT_FALSE(t.is_contiguous());
  try {
    (void)t.view({-1});
    FAIL() << "view of a transposed result succeeded";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("view size is not compatible with input tensor's size and stride"));
  }
  EXPECT_EQ(t.reshape({-1}).sizes().vec(), Ints{12});
  EXPECT_TRUE(t.contiguous().is_contiguous());
  EXPECT_TRUE(t.clone().is_contiguous());  // kiln's clone is PyTorch's clone(memory_format=contiguous_format)
}

// The *_like factories keep the layout too (PyTorch's preserve_format), but for the random
// ones: a draw fills row-major, as a compiled draw does (frontend/ops_factory.cpp).
TEST(ElementwiseLayout, LikeFactoriesKeepTheLayout) {
  const std::vector<Case> like = {
      {"zeros_like_t", [] { return zeros_like(a({3, 4}).t()); }, {4, 3}, {1, 4}},
      {"empty_like_sliced_t", [] { return empty_like(a({8, 3}).slice(0, std::nullopt, std::nullopt, 2).t()); }, {3, 4}, {1, 3}},
      {"ones_like_unit_dims", [] { return ones_like(a({3, 1, 4}).permute({2, 1, 0})); }, {4, 1, 3}, {1, 4, 4}},
      {"full_like_channels_last", [] { return full_like(a({2, 4, 5, 3}).permute({0, 3, 1, 2}), 2.0); }, {2, 3, 4, 5}, {60, 1, 15, 3}},
      {"zeros_like_strided", [] { return zeros_like(a({3, 4}).slice(1, std::nullopt, std::nullopt, 2)); }, {3, 2}, {2, 1}},
  };
  for (const Case& c : like) {
    SCOPED_TRACE(c.name);
    const Tensor t = c.make();
    EXPECT_EQ(t.sizes().vec(), c.sizes);
    EXPECT_EQ(t.strides().vec(), c.strides);
  }
  const Tensor f = full_like(a({2, 4, 5, 3}).permute({0, 3, 1, 2}), 2.5, TensorOptions(kFloat64));
  EXPECT_TRUE(equal(f.contiguous(), full({2, 3, 4, 5}, 2.5, TensorOptions(kFloat64))));
  EXPECT_TRUE(rand_like(a({3, 4}).t()).is_contiguous());
  // A dense tensor's own strides, those of its size-1 dims included (row-major for PyTorch's
  // is_contiguous, but not its strides).
  EXPECT_EQ(ones_like(a({4, 1}).t()).strides().vec(), (Ints{1, 1}));
}

// Inside a trace, a *_like of a captured transposed tensor records a factory like any other.
TEST(ElementwiseLayout, LikeFactoriesOfCapturedTensorsTrace) {
  const Tensor w = a({3, 4}).t();
  auto f = compile([&](const Tensor& x) { return x + zeros_like(w) + full_like(w, 2.0) + exp(w); });
  const Tensor x = a({4, 3});
  const Tensor got = f(x);
  EXPECT_TRUE(allclose(got, x + 2.0 + exp(w.contiguous())));
}

// The rule on its own, on layouts no op above makes.
TEST(ElementwiseLayout, TheRuleMatchesTensorIterator) {
  EXPECT_TRUE(is_non_overlapping_and_dense(IntArrayRef{4, 3}, IntArrayRef{1, 4}));
  EXPECT_TRUE(is_non_overlapping_and_dense(IntArrayRef{4, 1, 3}, IntArrayRef{1, 99, 4}));
  EXPECT_FALSE(is_non_overlapping_and_dense(IntArrayRef{4, 3}, IntArrayRef{1, 8}));
  EXPECT_FALSE(is_non_overlapping_and_dense(IntArrayRef{4, 3}, IntArrayRef{0, 1}));
  EXPECT_TRUE(is_non_overlapping_and_dense(IntArrayRef{5}, IntArrayRef{1}));
  EXPECT_EQ(outer_to_inner(IntArrayRef{2, 3, 4, 5}, IntArrayRef{60, 1, 15, 3}), (Ints{0, 2, 3, 1}));
}

}  // namespace
}  // namespace kiln
