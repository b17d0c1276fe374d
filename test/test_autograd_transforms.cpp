// kiln/test/test_autograd_transforms.cpp — grad, value_and_grad and vjp of functions
// (frontend/function_transforms.h): against closed forms and the eager tape, composed with
// each other and with compile(), static and Dynamic::True.
#include "kiln/kiln.h"

#include "test_support/check.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kiln {
namespace {

using test::error_of;
using test::expect_close;
using test::make;

Tensor f64(std::vector<double> v, std::vector<int64_t> shape) { return make<double>(v, shape); }

std::vector<double> double_values(const Tensor& t) { return t.contiguous().to(kDouble).to_vector<double>(); }

// An MLP layer's loss, the same function for the transforms and the eager tape.
Tensor mlp_loss(const Tensor& x, const Tensor& w, const Tensor& b) {
  return log_softmax(gelu(x.mm(w) + b), -1).sum() * -0.5;
}

TEST(AutogradTransforms, GradOfASquare) {
  auto g = grad([](const std::vector<Tensor>& a) { return std::vector<Tensor>{(a[0] * a[0]).sum()}; });
  std::vector<Tensor> r = g({f64({1, -2, 3}, {3})});
  ASSERT_EQ(r.size(), 1u);
  expect_close(r[0], {2, -4, 6}, 1e-15);
}

TEST(AutogradTransforms, ValueAndGradMatchesTheEagerTape) {
  const Tensor x = f64({0.5, -1, 2, 0.25, 1.5, -0.75}, {2, 3});
  const Tensor w = f64({0.1, 0.2, -0.3, 0.4, 0.5, -0.6, 0.7, 0.8, 0.9, -1.0, 1.1, 1.2}, {3, 4});
  const Tensor b = f64({0.01, -0.02, 0.03, 0.04}, {4});
  auto vg = value_and_grad([](const std::vector<Tensor>& a) { return std::vector<Tensor>{mlp_loss(a[0], a[1], a[2])}; },
                           {1, 2});
  std::vector<Tensor> r = vg({x, w, b});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_FALSE(w.grad().defined());  // functional: nothing accumulates

  Tensor wl = w.clone().requires_grad_(), bl = b.clone().requires_grad_();
  Tensor loss = mlp_loss(x, wl, bl);
  loss.backward();
  expect_close(r[0], double_values(loss), 1e-14);
  expect_close(r[1], double_values(wl.grad()), 1e-12, 1e-14);
  expect_close(r[2], double_values(bl.grad()), 1e-12, 1e-14);
}

TEST(AutogradTransforms, VjpOfTwoOutputs) {
  const Tensor x = f64({1, 2, 3}, {3});
  VjpResult r = vjp([](const std::vector<Tensor>& a) { return std::vector<Tensor>{a[0].exp(), (a[0] * a[1]).sum()}; },
                    {x, f64({4, 5, 6}, {3})});
  ASSERT_EQ(r.outputs.size(), 2u);
  std::vector<Tensor> c = r.pullback({f64({1, 0, 2}, {3}), f64({10}, {}).reshape({})});
  expect_close(c[0], {std::exp(1.0) + 40, 50, 2 * std::exp(3.0) + 60}, 1e-14);
  expect_close(c[1], {10, 20, 30}, 1e-15);
  // Again, with only the second cotangent.
  std::vector<Tensor> d = r.pullback({Tensor(), f64({1}, {}).reshape({})});
  expect_close(d[0], {4, 5, 6}, 1e-15);
}

TEST(AutogradTransforms, GradOfGrad) {
  auto f = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{(a[0].sin() * a[0]).sum()}; };
  // d/dx (x sin x) = sin x + x cos x; d2/dx2 = 2 cos x - x sin x.
  auto d2 = grad(grad(f));
  const double x = 0.7;
  std::vector<Tensor> r = d2({f64({x}, {1}).reshape({})});
  expect_close(r[0], {2 * std::cos(x) - x * std::sin(x)}, 1e-13);
}

TEST(AutogradTransforms, AuxiliaryOutputs) {
  auto vg = value_and_grad(
      [](const std::vector<Tensor>& a) {
        Tensor y = a[0] * 3;
        return std::vector<Tensor>{y.sum(), y.amax()};
      },
      {0}, /*has_aux=*/true);
  std::vector<Tensor> r = vg({f64({1, 4, 2}, {3})});
  ASSERT_EQ(r.size(), 3u);
  expect_close(r[0], {21}, 0);
  expect_close(r[1], {12}, 0);
  expect_close(r[2], {3, 3, 3}, 0);
}

TEST(AutogradTransforms, CompiledValueAndGradIsOneGraph) {
  auto vg = value_and_grad([](const std::vector<Tensor>& a) { return std::vector<Tensor>{mlp_loss(a[0], a[1], a[2])}; },
                           {1, 2});
  auto step = compile([vg](const Tensor& x, const Tensor& w, const Tensor& b) { return vg({x, w, b}); });
  const Tensor w = f64({0.1, 0.2, -0.3, 0.4, 0.5, -0.6, 0.7, 0.8, 0.9, -1.0, 1.1, 1.2}, {3, 4});
  const Tensor b = f64({0.01, -0.02, 0.03, 0.04}, {4});
  for (int rows : {2, 5}) {
    Tensor x = arange(rows * 3, TensorOptions(kDouble)).reshape({rows, 3}) * 0.1 - 0.4;
    std::vector<Tensor> got = step(x, w, b);
    std::vector<Tensor> want = vg({x, w, b});
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) expect_close(got[k], double_values(want[k]), 1e-12, 1e-14);
  }
  EXPECT_GE(step.stats().compiles, 1);
  EXPECT_GE(step.stats().kernels, 1);
}

TEST(AutogradTransforms, DynamicShapesServeEveryBatch) {
  auto vg = value_and_grad(
      [](const std::vector<Tensor>& a) { return std::vector<Tensor>{(softmax(a[0].mm(a[1]), -1) * a[0].sum(1, true)).sum()}; },
      {1});
  CompileOptions o;
  o.dynamic = Dynamic::True;
  auto step = compile([vg](const Tensor& x, const Tensor& w) { return vg({x, w}); }, o);
  const Tensor w = f64({0.3, -0.1, 0.2, 0.5, 0.7, -0.4}, {3, 2});
  // Batch sizes unlike the other dims (equal sizes share one symbol: docs/dynamic_shapes.md).
  for (int rows : {4, 5, 9}) {
    Tensor x = arange(rows * 3, TensorOptions(kDouble)).reshape({rows, 3}) * 0.05;
    std::vector<Tensor> got = step(x, w);
    std::vector<Tensor> want = vg({x, w});
    for (size_t k = 0; k < got.size(); ++k) expect_close(got[k], double_values(want[k]), 1e-12, 1e-14);
  }
  EXPECT_EQ(step.stats().compiles, 1);
}

TEST(AutogradTransforms, Errors) {
  auto vec = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{a[0] * 2}; };
  EXPECT_EQ(error_of([&] { grad(vec)({f64({1, 2}, {2})}); }),
            "[grad] Gradient only defined for scalar-output functions of a floating dtype. Output had shape: [2] and "
            "dtype Double");
  auto sum = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{a[0].sum()}; };
  EXPECT_EQ(error_of([&] { grad(sum, {3})({f64({1, 2}, {2})}); }),
            "[grad] argnums 3 is out of range for a function called with 1 arguments");
  EXPECT_EQ(error_of([&] { grad(sum)({make<int64_t>({1, 2}, {2})}); }),
            "[grad] differentiating with respect to argument 0 requires a floating-point tensor, got Long");
  auto two = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{a[0].sum(), a[0]}; };
  EXPECT_EQ(error_of([&] { value_and_grad(two)({f64({1, 2}, {2})}); }),
            "[value_and_grad] the function returned 2 tensors; it must return one scalar (or pass has_aux = true to "
            "return auxiliary tensors after it)");
}

}  // namespace
}  // namespace kiln
