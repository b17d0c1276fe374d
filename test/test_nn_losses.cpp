// kiln/test/test_nn_losses.cpp — the loss functions (frontend/ops_linear_losses.cpp) and modules
// (nn/loss.h): PyTorch 2.15's wording, dtypes and edge values (measured in torch), gradients at the
// points where a formula has a kink or a clamp, and that a compiled training step records only
// existing ops. Outputs and gradients on the op database's samples are checked against torch in
// every mode by the OpDbGolden and GoldenGrad suites.
#include "kiln/kiln.h"
#include "test_support/check.h"
#include "test_support/make.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace kiln {
namespace {

using ::testing::HasSubstr;
using namespace kiln::test;
namespace F = kiln::nn::functional;

using Floats = std::vector<float>;

TEST(LossFunctions, CheckWhatPyTorchChecks) {
  EXPECT_THAT(error_of([] { (void)mse_loss(zeros({2}), zeros({2}), "avg"); }),
              HasSubstr("avg is not a valid value for reduction"));
  EXPECT_THAT(error_of([] { (void)mse_loss(zeros({3}), zeros({4}), "avg"); }), HasSubstr("must match"));  // sizes first
  EXPECT_THAT(error_of([] { (void)mse_loss(arange(2), arange(2)); }),
              HasSubstr("\"mse_cpu\" not implemented for 'Long'"));
  EXPECT_THAT(error_of([] { (void)smooth_l1_loss(zeros({2}), zeros({2}), "mean", -1); }),
              HasSubstr("smooth_l1_loss does not support negative values for beta."));
  EXPECT_THAT(error_of([] { (void)huber_loss(zeros({2}), zeros({2}), "mean", 0); }),
              HasSubstr("huber_loss does not support non-positive values for delta."));
  EXPECT_THAT(error_of([] {
                (void)nll_loss(zeros({4, 3}), make<int64_t>({0, 1, 2}));
              }),
              HasSubstr("Expected input batch_size (4) to match target batch_size (3)."));
  EXPECT_THAT(error_of([] {
                (void)nll_loss(zeros({3, 3}), make<int32_t>({0, 1, 2}));
              }),
              HasSubstr("expected target dtype to be Long or Byte, but got Int"));
  EXPECT_THAT(error_of([] {
                (void)nll_loss(zeros({3, 3}), make<int64_t>({0, 1, 2}), zeros({4}));
              }),
              HasSubstr("weight tensor should be defined either for all 3 classes or no classes but got weight tensor "
                        "of shape: [4]"));
  EXPECT_THAT(error_of([] {
                (void)nll_loss(zeros({2, 3, 5}), zeros({2, 4}, kLong));
              }),
              HasSubstr("Expected target size [2, 5], got [2, 4]"));
  EXPECT_THAT(error_of([] { (void)nll_loss(zeros({3, 3}), make<int64_t>({0, 3, 1})); }), HasSubstr("out of bounds"));
  EXPECT_THAT(error_of([] { (void)multi_margin_loss(zeros({2, 3}), make<int64_t>({0, 1}), 3); }),
              HasSubstr("only p == 1 and p == 2 supported"));
  EXPECT_THAT(error_of([] { (void)multi_margin_loss(zeros({2, 3}), make<int64_t>({0, 1}), 1, 1, ones({1, 3})); }),
              HasSubstr("weight must be one-dimensional"));
  EXPECT_THAT(error_of([] { (void)multi_margin_loss(zeros({2, 3}), make<int64_t>({0, 1, 2})); }),
              HasSubstr("Expected target size [2], but got [3]. Input has shape [2, 3]."));
  EXPECT_THAT(error_of([] { (void)multi_margin_loss(zeros({2, 3}), make<int64_t>({0, 1}), 1, 1, ones({4})); }),
              HasSubstr("inconsistent weight size, expected 3 but got [4]"));
  EXPECT_THAT(error_of([] { (void)multi_margin_loss(zeros({2, 3}), make<int64_t>({0, 3})); }),
              HasSubstr("[gather] index 3 is out of bounds for dimension 1 with size 3"));
  EXPECT_THAT(error_of([] { (void)multi_margin_loss(zeros({2, 3}), make<int64_t>({0, 1}), 1, 1, ones({3}).requires_grad_()); }),
              HasSubstr("not differentiable with respect to argument 'weight'"));
  EXPECT_THAT(error_of([] { (void)multilabel_margin_loss(zeros({2, 3}), make<int64_t>({0, -1, 3, 1, 2, -1}, {2, 3})); }),
              HasSubstr("[gather] index 3 is out of bounds for dimension 1 with size 3"));  // past the -1 too
  EXPECT_THAT(error_of([] { (void)multilabel_margin_loss(zeros({2, 3}), make<int64_t>({0, 1, 2})); }),
              HasSubstr("inconsistent target size: [3] for input of size: [2, 3]"));
  EXPECT_THAT(error_of([] { (void)multilabel_margin_loss(zeros({2, 0}), zeros({2, 0}, kLong)); }),
              HasSubstr("Expected non-empty vector or matrix with optional 0-dim batch size, but got: [2, 0]"));
  EXPECT_THAT(error_of([] { (void)multilabel_margin_loss(zeros({3}), make<int32_t>({0, 1, 2})); }),
              HasSubstr("expected scalar type Long but found Int"));
  EXPECT_THAT(error_of([] { (void)binary_cross_entropy(full({2}, 1.5), zeros({2})); }),
              HasSubstr("all elements of input should be between 0 and 1"));
  EXPECT_THAT(error_of([] { (void)binary_cross_entropy(full({2}, 0.5), full({2}, -1.0)); }),
              HasSubstr("all elements of target should be between 0 and 1"));
  EXPECT_THAT(error_of([] { (void)binary_cross_entropy(zeros({2}), zeros({2}, kDouble)); }),
              HasSubstr("Found dtype Double but expected Float"));
  EXPECT_THAT(error_of([] {
                (void)binary_cross_entropy(zeros({3, 4}), zeros({4}));
              }),
              HasSubstr("Using a target size (torch.Size([4])) that is different to the input size (torch.Size([3, "
                        "4])) is deprecated."));
  EXPECT_THAT(error_of([] {
                (void)binary_cross_entropy_with_logits(zeros({3, 4}), zeros({4}));
              }),
              HasSubstr("Target size (torch.Size([4])) must be the same as input size (torch.Size([3, 4]))"));
  EXPECT_THAT(error_of([] { (void)kl_div(zeros({2}), arange(2)); }),
              HasSubstr("kl_div: Integral inputs not supported."));
  EXPECT_THAT(error_of([] {
                (void)soft_margin_loss(zeros({4}), zeros({3, 4}));
              }),
              HasSubstr("output with shape [4] doesn't match the broadcast shape [3, 4]"));
  EXPECT_THAT(error_of([] { (void)cosine_embedding_loss(zeros({5}), zeros({5}), zeros({1})); }),
              HasSubstr("1D target tensor expects 2D input tensors, but found inputs with sizes [5] and [5]."));
  EXPECT_THAT(error_of([] { (void)triplet_margin_loss(zeros({2}), zeros({2}), zeros({2}), 0); }),
              HasSubstr("margin must be greater than 0, got 0.0"));
  EXPECT_THAT(error_of([] {
                (void)gaussian_nll_loss(zeros({3, 4}), zeros({3, 4}), ones({4}));
              }),
              HasSubstr("var is of incorrect size"));
  EXPECT_THAT(error_of([] { (void)gaussian_nll_loss(zeros({2}), zeros({2}), full({2}, -1.0)); }),
              HasSubstr("var has negative entry/entries"));
  EXPECT_THAT(error_of([] { (void)multilabel_soft_margin_loss(zeros({}), zeros({})); }),
              HasSubstr("Dimension specified as -1"));
}

TEST(LossFunctions, ValuesAndDtypesAsPyTorch) {
  const Tensor x = make<float>({0.5f, -1.0f, 2.0f}), t = make<float>({1.0f, 1.0f, 0.0f});
  EXPECT_FLOAT_EQ(mse_loss(x, t).item<float>(), (0.25f + 4.0f + 4.0f) / 3);
  EXPECT_FLOAT_EQ(l1_loss(x, t, "sum").item<float>(), 0.5f + 2.0f + 2.0f);
  EXPECT_EQ(values<float>(smooth_l1_loss(x, t, "none", 1.0)), (Floats{0.125f, 1.5f, 1.5f}));
  EXPECT_EQ(values<float>(huber_loss(x, t, "none", 1.0)), (Floats{0.125f, 1.5f, 1.5f}));
  EXPECT_TRUE(std::isnan(mse_loss(zeros({0}), zeros({0})).item<float>()));  // the mean of nothing
  // Dtypes: promoted, except huber (the input's) and BCE with logits (the target's).
  EXPECT_EQ(mse_loss(zeros({2}), zeros({2}, kDouble)).dtype(), kDouble);
  EXPECT_EQ(huber_loss(zeros({2}), zeros({2}, kDouble)).dtype(), kFloat);
  EXPECT_EQ(binary_cross_entropy_with_logits(zeros({2}, kDouble), zeros({2})).dtype(), kFloat);
  EXPECT_EQ(mse_loss(zeros({2}), make<bool>({true, false})).dtype(), kFloat);
  // A weight multiplies in place: the loss keeps its dtype and shape.
  EXPECT_EQ(binary_cross_entropy(full({2}, 0.5), full({2}, 0.5), zeros({2}, kDouble)).dtype(), kFloat);
  EXPECT_THAT(error_of([] {
                (void)binary_cross_entropy_with_logits(zeros({3}), zeros({3}), ones({2, 3}));
              }),
              HasSubstr("output with shape [3] doesn't match the broadcast shape [2, 3]"));
  // var of the input's rank is 1 along the dims where it differs (PyTorch's rule).
  EXPECT_EQ(gaussian_nll_loss(zeros({2, 3}), zeros({2, 3}), ones({1, 3}), false, 1e-6, "none").sizes().vec(),
            (std::vector<int64_t>{2, 3}));
  // BCE clamps its logs at -100: x = 0 with t = 1 costs 100.
  EXPECT_EQ(
      values<float>(binary_cross_entropy(make<float>({0, 1, 0, 1}), make<float>({0, 0, 1, 1}), std::nullopt, "none")),
      (Floats{0, 100, 100, 0}));
  // nll_loss: weights and ignore_index; the mean divides by the weights of the counted targets.
  const Tensor logp = make<float>({-1, -2, -3, -4, -5, -6}, {2, 3});
  EXPECT_FLOAT_EQ(nll_loss(logp, make<int64_t>({2, 0}), make<float>({1, 1, 3})).item<float>(), (9.0f + 4.0f) / 4.0f);
  EXPECT_FLOAT_EQ(nll_loss(logp, make<int64_t>({2, -100})).item<float>(), 3.0f);
  EXPECT_TRUE(std::isnan(nll_loss(logp, make<int64_t>({-100, -100})).item<float>()));
  EXPECT_FLOAT_EQ(nll_loss(make<float>({-1, -2}), full({}, int64_t{1})).item<float>(), 2.0f);  // one sample
  // kl_div: xlogy(t, t) - t x, 0 where t is 0; batchmean divides the sum by the batch.
  EXPECT_EQ(values<float>(kl_div(make<float>({-1, -2}), make<float>({0, 1}), "none")), (Floats{0, 2}));
  EXPECT_FLOAT_EQ(kl_div(make<float>({-1, -2}, {2, 1}), make<float>({1, 1}, {2, 1}), "batchmean").item<float>(), 1.5f);
  // log_sigmoid far into both tails, without overflow.
  EXPECT_EQ(values<float>(log_sigmoid(make<float>({-200, 0, 200}))), (Floats{-200, -std::log(2.0f), 0}));
  EXPECT_FLOAT_EQ(hinge_embedding_loss(make<float>({0.3f, 2.0f}), make<float>({-1, 1}), 1.0, "sum").item<float>(),
                  0.7f + 2.0f);
  EXPECT_FLOAT_EQ(margin_ranking_loss(make<float>({1}), make<float>({2}), make<float>({1}), 0.5).item<float>(), 1.5f);
  EXPECT_FLOAT_EQ(cosine_embedding_loss(make<float>({1, 0}), make<float>({1, 0}), full({}, 1.0)).item<float>(), 0.0f);
  EXPECT_EQ(values<float>(poisson_nll_loss(zeros({2}), make<float>({1, 0}), true, false, 1e-8, "none")),
            (Floats{1, 1}));
}

TEST(LossFunctions, GradientsAtKinksAndClamps) {
  // log_sigmoid's slope is sigmoid(-x): 1/2 at 0, where min(x, 0) has its kink.
  const Tensor x = zeros({1}).requires_grad_();
  log_sigmoid(x).sum().backward();
  EXPECT_FLOAT_EQ(x.grad().item<float>(), 0.5f);
  // gaussian_nll_loss clamps var at eps outside autograd, as PyTorch: the gradient is var's own.
  const Tensor var = full({1}, 1e-9).requires_grad_();
  gaussian_nll_loss(zeros({1}), zeros({1}), var).backward();
  EXPECT_NEAR(var.grad().item<float>(), 0.5f / 1e-6f, 1.0f);  // d/dv of 0.5 log(v) at the clamped v = 1e-6
  // BCE with logits stays finite for large logits, and its gradient is sigmoid(x) - t.
  const Tensor z = make<float>({-100, 100}).requires_grad_();
  const Tensor loss = binary_cross_entropy_with_logits(z, make<float>({1, 0}), std::nullopt, std::nullopt, "sum");
  EXPECT_FLOAT_EQ(loss.item<float>(), 200.0f);
  loss.backward();
  EXPECT_EQ(values<float>(z.grad()), (Floats{-1, 1}));
  // BCE's input gradient is ATen's (x - t) / max(x (1 - x), 1e-12): finite at 0 and 1, where the
  // clamped logs' own derivatives would be 0/0 (a sigmoid that saturates to 1.0 in f32).
  const Tensor p = make<float>({0, 1, 0, 1, 0.5f}).requires_grad_();
  binary_cross_entropy(p, make<float>({0, 1, 1, 0, 0.5f}), std::nullopt, "sum").backward();
  const Floats g = values<float>(p.grad());
  EXPECT_EQ(g[0], 0.0f);
  EXPECT_EQ(g[1], 0.0f);
  EXPECT_FLOAT_EQ(g[2], -1e12f);
  EXPECT_FLOAT_EQ(g[3], 1e12f);
  EXPECT_EQ(g[4], 0.0f);
  // In f16 the value stays finite at 0 and 1 too.
  const Tensor h =
      binary_cross_entropy(make<float>({0, 1}).to(kHalf), make<float>({1, 0}).to(kHalf), std::nullopt, "none");
  EXPECT_EQ(values<float>(h.to(kFloat)), (Floats{100, 100}));
}

// multi_margin_loss and multilabel_margin_loss pass no gradient where a hinge sits exactly at its
// kink (ATen tests z > 0); away from it, value and gradient are the hinge's (torch 2.15:
// F.multilabel_margin_loss([[0.5, 1, 0.25]], [[1, -1, 0]]) is 0.25, its gradient [1/3, -2/3, 1/3]).
TEST(LossFunctions, ClassMarginHingesAtTheirKinks) {
  const Tensor tie = make<float>({0, 1, 0}, {1, 3}).requires_grad_();
  const Tensor at_kink = add(multi_margin_loss(tie, make<int64_t>({1})), multi_margin_loss(tie, make<int64_t>({1}), 2));
  EXPECT_FLOAT_EQ(at_kink.item<float>(), 0.0f);
  add(at_kink, multilabel_margin_loss(tie, make<int64_t>({1, -1, 0}, {1, 3}))).backward();
  EXPECT_EQ(values<float>(tie.grad()), (Floats{0, 0, 0}));
  const Tensor x = make<float>({0.5f, 1, 0.25f}, {1, 3}).requires_grad_();
  const Tensor loss = multilabel_margin_loss(x, make<int64_t>({1, -1, 0}, {1, 3}));
  EXPECT_FLOAT_EQ(loss.item<float>(), 0.25f);  // (1 - 1 + 0.5) + (1 - 1 + 0.25), over 3 classes
  loss.backward();
  EXPECT_THAT(values<float>(x.grad()), ::testing::Pointwise(::testing::FloatEq(), Floats{1.0f / 3, -2.0f / 3, 1.0f / 3}));
}

// ctc_loss on cases counted by hand: two frames of P(blank) = 0.4, P(label) = 0.6 emit the label
// through "l l", "b l" and "l b" (0.36 + 0.24 + 0.24); its gradient with respect to log_probs is
// minus each frame's occupancy (PyTorch's backward adds exp(log_probs)).
TEST(LossFunctions, CtcLossCountsAlignments) {
  const Tensor lp = log(make<double>({0.4, 0.6, 0.4, 0.6}, {2, 1, 2})).requires_grad_();
  const Tensor loss = ctc_loss(lp, make<int64_t>({1}, {1, 1}), make<int64_t>({2}), make<int64_t>({1}));
  EXPECT_NEAR(loss.item<double>(), -std::log(0.84), 1e-15);
  loss.backward();  // frame 0: "b" in 0.24 of 0.84, "l" in 0.60; frame 1 likewise
  EXPECT_THAT(values<double>(lp.grad()), ::testing::Pointwise(::testing::DoubleNear(1e-15),
                                                               std::vector<double>{-0.24 / 0.84, -0.6 / 0.84,
                                                                                   -0.24 / 0.84, -0.6 / 0.84}));
  // One frame cannot emit two labels: inf, or 0 with zero_infinity; an empty target costs the blanks.
  const Tensor one = log(make<float>({0.4f, 0.6f}, {1, 1, 2}));
  EXPECT_EQ(ctc_loss(one, make<int64_t>({1, 1}, {1, 2}), make<int64_t>({1}), make<int64_t>({2})).item<float>(),
            std::numeric_limits<float>::infinity());
  EXPECT_EQ(ctc_loss(one, make<int64_t>({1, 1}, {1, 2}), make<int64_t>({1}), make<int64_t>({2}), 0, "sum", true)
                .item<float>(),
            0.0f);
  EXPECT_NEAR(ctc_loss(lp, make<int64_t>({}, {1, 0}), make<int64_t>({2}), make<int64_t>({0})).item<double>(),
              -2 * std::log(0.4), 1e-15);
  // A label outside [0, C) is refused (PyTorch reads past the row), the padding past a length not.
  EXPECT_THAT(error_of([&] { (void)ctc_loss(one, make<int64_t>({2}, {1, 1}), std::vector<int64_t>{1}, std::vector<int64_t>{1}); }),
              HasSubstr("[gather] index 2 is out of bounds for dimension 2 with size 2"));
  EXPECT_EQ(ctc_loss(one, make<int64_t>({1, -7}, {1, 2}), std::vector<int64_t>{1}, std::vector<int64_t>{1}).item<float>(),
            ctc_loss(one, make<int64_t>({1}, {1, 1}), std::vector<int64_t>{1}, std::vector<int64_t>{1}).item<float>());
  nn::CTCLoss module(0, "sum");
  EXPECT_NEAR(module(lp.detach(), make<int64_t>({1}), std::vector<int64_t>{2}, std::vector<int64_t>{1}).item<double>(),
              -std::log(0.84), 1e-15);
}

// Compiled, padded targets with traced lengths run as kernels (a length past its bound fails the
// gather that reads it); concatenated targets need the lengths' values, so compile() runs them
// eagerly, with the same results.
TEST(LossFunctions, CtcLossCompiles) {
  manual_seed(5);
  const Tensor x = randn({6, 3, 5});
  const Tensor targets = make<int64_t>({1, 2, 3, 4, 4, 0, 2, 0, 0}, {3, 3});
  const Tensor il = make<int64_t>({6, 5, 3}), tl = make<int64_t>({3, 2, 1});
  auto padded = compile([](const Tensor& a, const Tensor& t, const Tensor& i, const Tensor& l) {
    return ctc_loss(log_softmax(a, 2), t, i, l, 0, "none");
  });
  const Tensor eager = ctc_loss(log_softmax(x, 2), targets, il, tl, 0, "none");
  EXPECT_TRUE(allclose(padded(x, targets, il, tl), eager, 1e-5, 1e-6));
  EXPECT_EQ(padded.stats().compiles, 1);
  EXPECT_THAT(error_of([&] { (void)padded(x, targets, make<int64_t>({7, 5, 3}), tl); }), HasSubstr("out of bounds"));
  auto concatenated = compile([](const Tensor& a, const Tensor& t, const Tensor& l) {
    return ctc_loss(log_softmax(a, 2), t, make<int64_t>({6, 5, 3}), l, 0, "none");
  });
  EXPECT_TRUE(allclose(concatenated(x, make<int64_t>({1, 2, 3, 4, 4, 2}), tl), eager, 1e-5, 1e-6));
}

TEST(LossFunctions, ATrainingStepCompilesThemToExistingOps) {
  const Tensor w = make<float>({0.5f, -0.25f, 1.0f, 0.75f}, {2, 2}).requires_grad_();
  auto step = compile([&](const Tensor& x, const Tensor& y) {
    return add(binary_cross_entropy_with_logits(matmul(x, w), y), mse_loss(matmul(x, w), y));
  });
  const Tensor x = make<float>({1, 2, 3, 4}, {2, 2}), y = make<float>({0, 1, 1, 0}, {2, 2});
  const Tensor eager = add(binary_cross_entropy_with_logits(matmul(x, w), y), mse_loss(matmul(x, w), y));
  EXPECT_TRUE(allclose(step(x, y), eager));
  const std::string graph = step.explain(x, y);
  EXPECT_EQ(graph.find("= mse_loss("), std::string::npos);
  EXPECT_EQ(graph.find("= binary_cross_entropy"), std::string::npos);
}

TEST(LossModules, HoldTheirOptionsAndWeights) {
  nn::MSELoss mse;
  EXPECT_FLOAT_EQ(mse(make<float>({1, 3}), make<float>({0, 0})).item<float>(), 5.0f);
  nn::L1Loss l1("sum");
  EXPECT_FLOAT_EQ(l1(make<float>({1, -3}), make<float>({0, 0})).item<float>(), 4.0f);
  nn::CrossEntropyLoss ce(make<float>({1, 2}), -100, "mean", 0.0);
  EXPECT_EQ(ce->named_buffers().size(), 1u);
  EXPECT_TRUE(allclose(ce(make<float>({0, 0}, {1, 2}), make<int64_t>({1})), full({}, std::log(2.0))));
  nn::NLLLoss nll(std::nullopt, 0);
  EXPECT_FLOAT_EQ(nll(make<float>({-1, -2, -3, -4}, {2, 2}), make<int64_t>({0, 1})).item<float>(), 4.0f);
  const Tensor w = make<float>({1, 1});
  nn::NLLLoss weighted(w);
  weighted->to(kDouble);  // the module's buffer converts; the caller's tensor stays f32
  EXPECT_EQ(w.dtype(), kFloat);
  EXPECT_EQ(weighted->weight->dtype(), kDouble);
  nn::BCEWithLogitsLoss bce(std::nullopt, "none", make<float>({2}));
  EXPECT_EQ(bce->named_buffers().size(), 1u);
  EXPECT_TRUE(allclose(bce(zeros({1}), ones({1})), full({1}, 2 * std::log(2.0))));
  nn::TripletMarginLoss triplet(1.0, 2.0, 0.0);
  EXPECT_FLOAT_EQ(triplet(zeros({1, 2}), zeros({1, 2}), make<float>({3, 4}, {1, 2})).item<float>(), 0.0f);
  nn::HuberLoss huber("mean", 0.5);
  EXPECT_FLOAT_EQ(huber(make<float>({2}), make<float>({0})).item<float>(), 0.5f * (2 - 0.25f));
  EXPECT_FLOAT_EQ(F::logsigmoid(zeros({})).item<float>(), -std::log(2.0f));
  EXPECT_FLOAT_EQ(F::kl_div(make<float>({-1}), make<float>({1}), "sum", false).item<float>(), 1.0f);
  nn::MultiMarginLoss multi_margin(2, 0.5, make<float>({1, 3}), "sum");
  EXPECT_EQ(multi_margin->named_buffers().size(), 1u);
  EXPECT_FLOAT_EQ(multi_margin(make<float>({2, 1}, {1, 2}), make<int64_t>({1})).item<float>(),
                  1.5f * 1.5f * 3 / 2);  // (0.5 - 1 + 2)^2 * weight 3, over 2 classes
  EXPECT_THAT(error_of([] { nn::MultiMarginLoss(3); }), HasSubstr("only p == 1 and p == 2 supported"));
  EXPECT_THAT(error_of([] { nn::MultiMarginLoss(1, 1, ones({1, 2})); }),
              HasSubstr("MultiMarginLoss: expected weight to be None or 1D tensor, got 2D instead"));
  nn::MultiLabelMarginLoss multilabel("none");
  EXPECT_EQ(values<float>(multilabel(make<float>({1, 0, 0, 1}, {2, 2}), make<int64_t>({0, -1, 0, -1}, {2, 2}))),
            (Floats{0, 1}));  // row 1: 1 - x[0] + x[1] = 2, over 2 classes
  std::ostringstream printed;
  printed << *nn::KLDivLoss();
  EXPECT_THAT(printed.str(), HasSubstr("KLDivLoss"));
}

}  // namespace
}  // namespace kiln
