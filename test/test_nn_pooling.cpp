// kiln/test/test_nn_pooling.cpp — the pooling, reshaping and resampling modules (nn/pooling.h):
// each computes what its functional op computes (those are checked against PyTorch in the op
// database), prints as PyTorch's repr (the strings below are PyTorch 2.15's), has no state,
// refuses bad options, and works inside a compiled Sequential with gradients.
#include "kiln/kiln.h"
#include "test_support/check.h"
#include "test_support/plan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

namespace kiln {
namespace {

using test::error_of;

bool same(const Tensor& a, const Tensor& b) { return a.sizes() == b.sizes() && a.eq(b).all().item<bool>(); }

template <typename M> std::string repr(const M& m) {
  std::ostringstream os;
  m->pretty_print(os);
  return os.str();
}

TEST(NnPooling, ModulesComputeTheirFunctionalOps) {
  manual_seed(1);
  const Tensor x1 = randn({2, 3, 9}), x2 = randn({2, 3, 9, 8}), x3 = randn({1, 2, 6, 5, 4});
  EXPECT_TRUE(same(nn::MaxPool1d(nn::MaxPoolOptions(3).stride({1}).padding({1}))(x1), max_pool1d(x1, {3}, {1}, {1})));
  EXPECT_TRUE(same(nn::MaxPool2d(2)(x2), max_pool2d(x2, {2})));
  EXPECT_TRUE(same(nn::MaxPool2d(nn::MaxPoolOptions({2, 3}).stride({1, 2}).ceil_mode(true))(x2),
                   max_pool2d(x2, {2, 3}, {1, 2}, {0}, {1}, true)));
  EXPECT_TRUE(same(nn::MaxPool3d(nn::MaxPoolOptions(2).dilation({1, 2, 1}))(x3), max_pool3d(x3, {2}, {}, {0}, {1, 2, 1})));
  EXPECT_TRUE(same(nn::AvgPool1d(nn::AvgPoolOptions(3).stride({2}).padding({1}).count_include_pad(false))(x1),
                   avg_pool1d(x1, {3}, {2}, {1}, false, false)));
  EXPECT_TRUE(same(nn::AvgPool2d(nn::AvgPoolOptions(2).divisor_override(3))(x2), avg_pool2d(x2, {2}, {}, {0}, false, true, 3)));
  EXPECT_TRUE(same(nn::AvgPool3d(2)(x3), avg_pool3d(x3, {2})));
  EXPECT_TRUE(same(nn::AdaptiveAvgPool1d(4)(x1), adaptive_avg_pool1d(x1, {4})));
  EXPECT_TRUE(same(nn::AdaptiveAvgPool2d(std::vector<int64_t>{1, 1})(x2), adaptive_avg_pool2d(x2, {1, 1})));
  EXPECT_TRUE(same(nn::AdaptiveAvgPool2d(3)(x2), adaptive_avg_pool2d(x2, {3, 3})));
  EXPECT_TRUE(same(nn::AdaptiveAvgPool3d(std::vector<int64_t>{3, 2, 1})(x3), adaptive_avg_pool3d(x3, {3, 2, 1})));
  EXPECT_TRUE(same(nn::Flatten()(x2), x2.reshape({2, 3 * 9 * 8})));
  EXPECT_TRUE(same(nn::Flatten(0, 1)(x2), x2.reshape({6, 9, 8})));
  const Tensor flat = x2.reshape({2, 72, 3});
  EXPECT_TRUE(same(nn::Unflatten(1, std::vector<int64_t>{2, 36})(flat), flat.view({2, 2, 36, 3})));
  EXPECT_TRUE(same(nn::Unflatten(-1, std::vector<int64_t>{3, 1})(flat), flat.view({2, 72, 3, 1})));
  EXPECT_TRUE(same(nn::Upsample(nn::UpsampleOptions().scale_factor({2.0}))(x2), interpolate(x2, std::nullopt, std::vector<double>{2.0})));
  EXPECT_TRUE(same(nn::Upsample(nn::UpsampleOptions().size({4, 5}).mode("bilinear").align_corners(false))(x2),
                   interpolate(x2, std::vector<int64_t>{4, 5}, std::nullopt, "bilinear", false)));
}

TEST(NnPooling, PrintsAsPyTorch) {
  EXPECT_EQ(repr(nn::MaxPool2d(2)), "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)");
  EXPECT_EQ(repr(nn::MaxPool1d(nn::MaxPoolOptions(3).stride({1}).padding({1}))),
            "MaxPool1d(kernel_size=3, stride=1, padding=1, dilation=1, ceil_mode=False)");
  EXPECT_EQ(repr(nn::MaxPool2d(nn::MaxPoolOptions({2, 3}).stride({1, 2}).ceil_mode(true))),
            "MaxPool2d(kernel_size=(2, 3), stride=(1, 2), padding=0, dilation=1, ceil_mode=True)");
  EXPECT_EQ(repr(nn::AvgPool2d(2)), "AvgPool2d(kernel_size=2, stride=2, padding=0)");
  EXPECT_EQ(repr(nn::AdaptiveAvgPool2d(std::vector<int64_t>{1, 1})), "AdaptiveAvgPool2d(output_size=(1, 1))");
  EXPECT_EQ(repr(nn::AdaptiveAvgPool2d(7)), "AdaptiveAvgPool2d(output_size=7)");
  EXPECT_EQ(repr(nn::Flatten()), "Flatten(start_dim=1, end_dim=-1)");
  EXPECT_EQ(repr(nn::Unflatten(1, std::vector<int64_t>{2, 3})), "Unflatten(dim=1, unflattened_size=(2, 3))");
  EXPECT_EQ(repr(nn::Upsample(nn::UpsampleOptions().scale_factor({2.0}))), "Upsample(scale_factor=2.0, mode='nearest')");
  EXPECT_EQ(repr(nn::Upsample(nn::UpsampleOptions().size({4, 5}).mode("bilinear"))), "Upsample(size=(4, 5), mode='bilinear')");
}

TEST(NnPooling, BadOptionsAreRefused) {
  EXPECT_EQ(error_of([] { nn::MaxPool2d(nn::MaxPoolOptions({2, 2, 2})); }),
            "[MaxPool2d] kernel_size, stride and padding take 1 or 2 values, got kernel_size (2, 2, 2), stride (), padding 0");
  EXPECT_EQ(error_of([] { nn::AvgPool1d(nn::AvgPoolOptions(2).divisor_override(2)); }),
            "[AvgPool1d] divisor_override is not an option of AvgPool1d");
  EXPECT_EQ(error_of([] { nn::Upsample(nn::UpsampleOptions()); }), "[Upsample] give exactly one of size and scale_factor");
  EXPECT_EQ(error_of([] { nn::Unflatten(3, std::vector<int64_t>{2, 2})(zeros({4, 4})); }),
            "[Unflatten] dim 3 is out of range for an input of 2 dims");
}

// A small CNN written as one Sequential, as a PyTorch user would: compiled forward and backward
// agree with eager.
TEST(NnPooling, CompiledSequentialCnnTrains) {
  manual_seed(3);
  nn::Sequential net(nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1)), nn::ReLU(), nn::MaxPool2d(2),
                     nn::Conv2d(nn::Conv2dOptions(4, 8, 3).padding(1)), nn::ReLU(), nn::AdaptiveAvgPool2d(2), nn::Flatten(),
                     nn::Linear(32, 10));
  EXPECT_EQ(net->parameters().size(), 6u);  // the pooling and reshaping modules have none
  const Tensor x = randn({5, 1, 8, 8});
  const Tensor y = tensor({1, 2, 3, 4, 5}).to(kInt64);
  cross_entropy(net->forward(x), y).backward();
  std::vector<Tensor> eager_grads;
  for (const Tensor& p : net->parameters()) eager_grads.push_back(p.grad().clone());
  net->zero_grad();
  auto fast = compile(net);
  cross_entropy(fast(x), y).backward();
  const auto params = net->parameters();
  for (size_t i = 0; i < params.size(); ++i)
    EXPECT_TRUE(allclose(params[i].grad(), eager_grads[i], 1e-4, 1e-6)) << "parameter " << i;
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// Max pooling whose indices nobody reads is one pointwise kernel, a maximum over the window's
// taps read in place: no stacked windows in a temporary, no argmax. The indices, when wanted,
// still come out (and the values stay equal to the indexed pooling's), NaN windows included.
TEST(NnPooling, InferenceMaxPoolIsOneKernelOverTheTaps) {
  const Tensor x = randn({2, 3, 9, 8});
  const ir::ExecPlan plan = test::plan_of(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{max_pool2d(in[0], {3, 3}, {2, 2}, {1, 1})}; }, {x});
  EXPECT_EQ(plan.kernels().size(), 1u) << plan.str();
  for (const ir::PlanBuffer& b : plan.buffers) EXPECT_NE(b.role, ir::BufferRole::Temp) << plan.str();

  Tensor y = x.clone();
  y[1][2][4][4].fill_(std::numeric_limits<double>::quiet_NaN());
  y[0][0][0][0].fill_(-std::numeric_limits<double>::infinity());
  auto pool = [](const Tensor& a) { return max_pool2d(a, {3, 3}, {2, 2}, {1, 1}); };
  const auto [want, indices] = max_pool2d_with_indices(y, {3, 3}, {2, 2}, {1, 1});
  EXPECT_EQ(indices.dtype(), kLong);
  const Tensor eager = pool(y), compiled = compile(pool)(y);
  for (const Tensor& got : {eager, compiled}) {
    const std::vector<float> g = got.to_vector<float>(), w = want.to_vector<float>();
    ASSERT_EQ(g.size(), w.size());
    for (size_t i = 0; i < g.size(); ++i)
      if (std::isnan(w[i])) EXPECT_TRUE(std::isnan(g[i])) << i;
      else EXPECT_EQ(g[i], w[i]) << i;
  }
  EXPECT_TRUE(std::isnan(eager[1][2][2][2].item<float>()));
  // The same eager call on a tensor that requires grad computes the indices its backward reads:
  // each output's gradient lands on one input element.
  Tensor leaf = x.clone();
  leaf.requires_grad_();
  pool(leaf).sum().backward();
  EXPECT_EQ(leaf.grad().sum().item<float>(), static_cast<float>(want.numel()));
}

}  // namespace
}  // namespace kiln
