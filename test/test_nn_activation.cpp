// kiln/test/test_nn_activation.cpp — the activation modules (nn/activation.h) and the
// activations kiln writes with the ops they are made of (frontend/ops_activation_composed.cpp):
// the modules print as libtorch's and call their functions; PReLU learns its slopes; channel
// dropout zeroes whole channels; rrelu's
// training slopes lie in their range and are what its gradient carries; the shrinks and
// threshold pass no gradient where they select a constant and all of it elsewhere, NaN included.
// Values and gradients against PyTorch are the op database's (opdb_activation.cpp).
#include "kiln/kiln.h"
#include "test_support/check.h"
#include "test_support/make.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace kiln {
namespace {

using namespace kiln::test;
using ::testing::HasSubstr;
namespace F = kiln::nn::functional;

template <typename M> std::string printed(const M& m) {
  std::ostringstream os;
  os << *m;
  return os.str();
}

TEST(ActivationModules, PrintAsLibtorchAndCallTheirFunctions) {
  const Tensor x = make<float>({-3, -1, -0.25, 0, 0.5, 2}, {2, 3});
  const Tensor x4 = make<float>({-3, -1, -0.25, 0, 0.5, 2, 1, -2}, {2, 4});
  nn::ELU elu(0.5);
  nn::SELU selu;
  nn::CELU celu(2.0);
  nn::Hardtanh hardtanh(-2, 0.5);
  nn::ReLU6 relu6;
  nn::Hardswish hardswish;
  nn::Hardsigmoid hardsigmoid;
  nn::Mish mish;
  nn::Softplus softplus(2, 5);
  nn::Softsign softsign;
  nn::Tanhshrink tanhshrink;
  nn::Hardshrink hardshrink(0.4);
  nn::Softshrink softshrink(0.3);
  nn::Threshold threshold(0.1, 20);
  nn::LogSigmoid logsigmoid;
  nn::GLU glu(0);
  nn::Softmin softmin(1);
  nn::RReLU rrelu(0.1, 0.3);
  rrelu->eval();
  const std::vector<std::tuple<std::string, std::string, Tensor, Tensor>> cases = {
      {printed(elu), "ELU(alpha=0.5)", elu(x), F::elu(x, 0.5)},
      {printed(selu), "SELU()", selu(x), F::selu(x)},
      {printed(celu), "CELU(alpha=2)", celu(x), F::celu(x, 2.0)},
      {printed(hardtanh), "Hardtanh(min_val=-2, max_val=0.5)", hardtanh(x), F::hardtanh(x, -2, 0.5)},
      {printed(relu6), "ReLU6()", relu6(x), F::relu6(x)},
      {printed(hardswish), "Hardswish()", hardswish(x), F::hardswish(x)},
      {printed(hardsigmoid), "Hardsigmoid()", hardsigmoid(x), F::hardsigmoid(x)},
      {printed(mish), "Mish()", mish(x), F::mish(x)},
      {printed(softplus), "Softplus(beta=2, threshold=5)", softplus(x), F::softplus(x, 2, 5)},
      {printed(softsign), "Softsign()", softsign(x), F::softsign(x)},
      {printed(tanhshrink), "Tanhshrink()", tanhshrink(x), F::tanhshrink(x)},
      {printed(hardshrink), "Hardshrink(0.4)", hardshrink(x), F::hardshrink(x, 0.4)},
      {printed(softshrink), "Softshrink(0.3)", softshrink(x), F::softshrink(x, 0.3)},
      {printed(threshold), "Threshold(threshold=0.1, value=20)", threshold(x), F::threshold(x, 0.1, 20)},
      {printed(logsigmoid), "LogSigmoid()", logsigmoid(x), F::logsigmoid(x)},
      {printed(glu), "GLU(dim=0)", glu(x4), F::glu(x4, 0)},
      {printed(softmin), "Softmin(dim=1)", softmin(x), F::softmin(x, 1)},
      {printed(rrelu), "RReLU(lower=0.1, upper=0.3)", rrelu(x), F::leaky_relu(x, 0.2)},
  };
  for (const auto& [print, want_print, got, want] : cases) {
    EXPECT_EQ(print, want_print);
    EXPECT_TRUE(allclose(got, want, 0, 0)) << want_print;
  }
  // A few values by hand: the selections and their constants.
  EXPECT_TRUE(allclose(threshold(x), make<float>({20, 20, 20, 20, 0.5, 2}, {2, 3}), 0, 0));
  EXPECT_TRUE(allclose(hardshrink(x), make<float>({-3, -1, 0, 0, 0.5, 2}, {2, 3}), 0, 0));
  EXPECT_TRUE(allclose(softshrink(x), make<float>({-2.7f, -0.7f, 0, 0, 0.2f, 1.7f}, {2, 3}), 1e-6, 0));
  EXPECT_TRUE(allclose(glu(x4), x4.narrow(0, 0, 1) * sigmoid(x4.narrow(0, 1, 1)), 1e-6, 1e-7));
  EXPECT_THAT(error_of([] { nn::Hardtanh(1, 0); }), HasSubstr("max_val must be greater than min_val"));
  // As libtorch's, RReLU checks its bounds when called, and PReLU the weight's size.
  nn::RReLU reversed(0.5, 0.1);
  EXPECT_THAT(error_of([&] { reversed(x); }), HasSubstr("Lower bound should be less than or equal to the upper bound"));
  EXPECT_THAT(error_of([&] { kiln::rrelu(x, 0.1, INFINITY); }), HasSubstr("rrelu: upper bound must be finite, got inf"));
  EXPECT_THAT(error_of([&] { kiln::rrelu(x, NAN, INFINITY); }), HasSubstr("rrelu: lower bound must be finite, got nan"));
  nn::PReLU none(0);
  EXPECT_EQ(none(zeros({2, 0})).numel(), 0);
  EXPECT_THAT(error_of([&] { none(x); }), HasSubstr("Found parameter numbers = 0 and channel size = 3."));
}

// PReLU's weight is a parameter: a slope per channel, 0.25 at first, whose gradient is
// x * grad summed over everything but the channel where x <= 0; eager and compiled agree.
TEST(ActivationModules, PReLULearnsASlopePerChannel) {
  nn::PReLU prelu(3);
  EXPECT_EQ(printed(prelu), "PReLU(num_parameters=3)");
  ASSERT_EQ(prelu->named_parameters().size(), 1u);
  EXPECT_TRUE(allclose(prelu->weight, full({3}, 0.25), 0, 0));
  const Tensor x = make<float>({-1, 2, -3, 0, -0.5, 4, 5, -2, -6, 1, 0, -1}, {2, 3, 2});
  const Tensor y = prelu(x);
  EXPECT_TRUE(allclose(y, where(x > 0, x, x * 0.25), 0, 0));
  (y * y).sum().backward();  // dL/dy = 2y
  // Channel c collects x * 2y = 0.5 x^2 over the x <= 0 of both samples: channel 0 has -1 and
  // -2, channel 1 -3, 0 and -6, channel 2 -0.5, 0 and -1.
  const Tensor want = make<float>({0.5f * (1 + 4), 0.5f * (9 + 0 + 36), 0.5f * (0.25f + 0 + 1)});
  EXPECT_TRUE(allclose(prelu->weight.grad(), want, 1e-6, 1e-6)) << prelu->weight.grad();
  // Compiled: the same forward and gradients.
  nn::PReLU twin(3);
  auto step = compile([&](const Tensor& in) { return (twin(in) * twin(in)).sum(); });
  step(x).backward();
  EXPECT_TRUE(allclose(twin->weight.grad(), want, 1e-6, 1e-6)) << twin->weight.grad();
  // One slope for every channel; a mismatch names both counts.
  nn::PReLU one;
  EXPECT_TRUE(allclose(one(x), y, 0, 0));
  EXPECT_THAT(error_of([&] { prelu(make<float>({1, 2}, {1, 2})); }),
              HasSubstr("Found parameter numbers = 3 and channel size = 2."));
}

// Training: each x <= 0 is scaled by its own slope from U(lower, upper), which is its
// gradient; positive x pass with gradient 1; a seed draws the same slopes eagerly and compiled.
TEST(Activation, RReLUTrainingSlopesLieInTheirRangeAndCarryTheGradient) {
  const double lower = 0.1, upper = 0.3;
  Tensor x = make<float>({-1.0f}).expand({4096}).contiguous();
  x = cat({x, make<float>({2.0f, 0.0f})});
  x.requires_grad_(true);
  manual_seed(5);
  const Tensor y = rrelu(x, lower, upper, /*training=*/true);
  y.sum().backward();
  const Tensor slopes = -y.narrow(0, 0, 4096);
  EXPECT_GE(slopes.min().item<float>(), lower);
  EXPECT_LT(slopes.max().item<float>(), upper);
  EXPECT_NEAR(slopes.mean().item<float>(), (lower + upper) / 2, 0.005);  // sd of the mean: 0.0009
  EXPECT_NEAR(slopes.std().item<float>(), (upper - lower) / std::sqrt(12.0), 0.005);
  EXPECT_TRUE(allclose(x.grad().narrow(0, 0, 4096), slopes, 0, 0));
  EXPECT_EQ(y[4096].item<float>(), 2.0f);
  EXPECT_EQ(x.grad()[4096].item<float>(), 1.0f);
  EXPECT_EQ(y[4097].item<float>(), 0.0f);
  EXPECT_GE(x.grad()[4097].item<float>(), lower);  // at 0 the gradient is the slope, as ATen's noise
  // The same seed, compiled (after the call that traces, which draws too): the same slopes.
  auto f = compile([&](const Tensor& in) { return rrelu(in, lower, upper, true); });
  (void)f(x.detach());
  manual_seed(5);
  EXPECT_TRUE(allclose(f(x.detach()), y.detach(), 0, 0));
  // The module draws in training mode only.
  nn::RReLU module(lower, upper);
  EXPECT_FALSE(allclose(module(x.detach()), F::leaky_relu(x.detach(), 0.2), 0, 0));
  module->eval();
  EXPECT_TRUE(allclose(module(x.detach()), F::leaky_relu(x.detach(), 0.2), 0, 0));
  EXPECT_THAT(error_of([] { rrelu(make<int64_t>({1}), 0.1, 0.3, true); }),
              HasSubstr("\"rrelu_with_noise_out_cpu\" not implemented for 'Long'"));
}

// Where a shrink or threshold selects a constant, no gradient passes (both ends included, as
// ATen's backward tests); elsewhere all of it does, and a NaN input passes its gradient too.
TEST(Activation, SelectionsPassTheGradientWhereTheyPassTheInput) {
  const float nan = std::nanf("");
  const Tensor x = make<float>({-1, -0.5f, -0.25f, 0, 0.5f, 0.75f, nan});
  auto grad_of = [&](auto fn) {
    Tensor v = x.clone();
    v.requires_grad_(true);
    fn(v).sum().backward();
    return v.grad();
  };
  const Tensor shrink_grad = make<float>({1, 0, 0, 0, 0, 1, 1});
  EXPECT_TRUE(allclose(grad_of([](const Tensor& v) { return hardshrink(v, 0.5); }), shrink_grad, 0, 0));
  EXPECT_TRUE(allclose(grad_of([](const Tensor& v) { return softshrink(v, 0.5); }), shrink_grad, 0, 0));
  EXPECT_TRUE(allclose(grad_of([](const Tensor& v) { return threshold(v, 0.0, 7.0); }), make<float>({0, 0, 0, 0, 1, 1, 1}),
                       0, 0));
  const Tensor s = softshrink(x, 0.5);
  EXPECT_TRUE(std::signbit(s[1].item<float>()));  // -0.5 * 0: a negative zero, as ATen's scalar loop
  EXPECT_TRUE(std::isnan(s[6].item<float>()));
  // f16 and bf16: softshrink's lambd is rounded to the dtype (0.10002 to 0.10004 in f16, so
  // 0.10004 is inside); threshold compares the widened element with the threshold in f32 (so
  // 0.10004 > 0.10002 passes); hardshrink's lambd must fit the dtype.
  const Tensor h = make<float>({0.10003662f}).to(kHalf);
  EXPECT_EQ(softshrink(h, 0.10002).item<float>(), 0.0f);
  EXPECT_EQ(threshold(h, 0.10002, 5.0).item<float>(), h.item<float>());
  EXPECT_TRUE(allclose(threshold(ones({3}, kHalf), 70000.0, 0.0), zeros({3}, kHalf), 0, 0));
  EXPECT_THAT(error_of([&] { threshold(h, 1e39, 0.0); }), HasSubstr("value cannot be converted to type float without overflow"));
  EXPECT_THAT(error_of([&] { hardshrink(h, 1e5); }), HasSubstr("value cannot be converted to type c10::Half without overflow"));
  EXPECT_THAT(error_of([&] { softshrink(x.to(kHalf), 70000.0); }),
              HasSubstr("lambda must be in range [0, 65504] for input dtype Half, but found 70000"));
  EXPECT_THAT(error_of([&] { glu(x); }), HasSubstr("Halving dimension must be even, but dimension 0 is size 7"));
}

// Channel-wise dropout zeroes whole channels (dim 1 of a batch, dim 0 unbatched) and scales the
// rest by 1 / (1 - p); its gradient is that mask; evaluation passes the input through.
TEST(ActivationModules, ChannelDropoutZeroesWholeChannels) {
  manual_seed(3);
  auto check = [](const Tensor& y, int64_t channels, int64_t per_channel) {
    const Tensor rows = y.reshape({channels, per_channel});
    int64_t dropped = 0;
    for (int64_t c = 0; c < channels; ++c) {
      const float v = rows[c][0].item<float>();
      EXPECT_TRUE(v == 0.0f || v == 2.0f) << v;
      EXPECT_TRUE(allclose(rows[c], full({per_channel}, v), 0, 0)) << "channel " << c;
      dropped += v == 0.0f;
    }
    EXPECT_GT(dropped, channels / 8);
    EXPECT_LT(dropped, channels - channels / 8);
  };
  nn::Dropout2d d2(0.5);
  EXPECT_EQ(printed(d2), "Dropout2d(p=0.5)");
  Tensor x = ones({4, 16, 3, 3});
  x.requires_grad_(true);
  const Tensor y = d2(x);
  check(y.detach(), 64, 9);
  y.sum().backward();
  EXPECT_TRUE(allclose(x.grad(), y.detach(), 0, 0));
  nn::Dropout1d d1(0.5);
  check(d1(ones({40, 5})), 40, 5);  // unbatched [C, L]
  nn::Dropout3d d3(0.5);
  check(d3(ones({40, 2, 2, 2})), 40, 8);  // unbatched [C, D, H, W]
  d2->eval();
  EXPECT_TRUE(allclose(d2(x.detach()), x.detach(), 0, 0));
  EXPECT_THAT(error_of([&] { d1(ones({2, 3, 4, 5})); }), HasSubstr("dropout1d: Expected 2D or 3D input, but received a 4D input."));
  EXPECT_THAT(error_of([] { F::dropout2d(ones({3}), 0.5, true); }),
              HasSubstr("Feature dropout requires at least 2 dimensions in the input"));
  EXPECT_THAT(error_of([] { nn::Dropout2d(1.5); }), HasSubstr("dropout probability has to be between 0 and 1, but got 1.5"));
  // p = 1 returns input * 0 before the rank and the dtype are checked, as ATen.
  EXPECT_TRUE(allclose(F::dropout2d(make<float>({1, -2, 3}), 1.0, true), zeros({3}), 0, 0));
  EXPECT_EQ(F::dropout2d(ones({2, 3}, kLong), 1.0, true).dtype(), kLong);
  // The scale: ATen divides its f32 noise by float(1 - p) (1.0f / 0.85f, one ulp from
  // float(1 / 0.85)); f64 dropout keeps its scale in f64.
  const float f32_scale = 1.0f / static_cast<float>(1 - 0.15);
  const Tensor kept = F::dropout2d(ones({64, 16, 2}), 0.15, true);
  EXPECT_TRUE(allclose(kept, where(kept == 0, 0.0, f32_scale).to(kFloat), 0, 0));
  EXPECT_NE(f32_scale, static_cast<float>(1 / (1 - 0.15)));
  const Tensor d64 = F::dropout(ones({1000}, kDouble), 0.1, true);
  EXPECT_TRUE(allclose(d64, where(d64 == 0, zeros({1000}, TensorOptions(kDouble)), full({1000}, 1 / (1 - 0.1), TensorOptions(kDouble))), 0, 0));
  EXPECT_EQ(d64.dtype(), kDouble);
}

}  // namespace
}  // namespace kiln
