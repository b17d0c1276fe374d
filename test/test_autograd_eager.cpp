// kiln/test/test_autograd_eager.cpp — eager reverse mode: the libtorch API and its semantics.
//
// Values are derivatives known in closed form; messages are PyTorch's. Per-op derivatives are
// checked against finite differences and PyTorch in test_autograd_gradcheck.cpp.
#include "kiln/kiln.h"

#include "test_support/check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

namespace kiln {
namespace {

using test::error_of;
using test::expect_close;
using test::expect_exact;
using test::make;

Tensor leaf(std::vector<double> v, std::vector<int64_t> shape = {}) {
  if (shape.empty()) shape = {static_cast<int64_t>(v.size())};
  return make<double>(v, shape).requires_grad_();
}

// Attention whose mask has batch dims q, k and v lack: the output takes them, and the gradients
// equal those of q, k and v expanded to them first, eager and compiled.
TEST(AutogradEager, AttentionWhoseMaskAddsBatchDims) {
  manual_seed(3);
  struct Case {
    std::vector<int64_t> q, kv, mask, out;
    bool bool_mask;
  };
  for (const Case& c : {Case{{4, 8}, {6, 8}, {2, 4, 6}, {2, 4, 8}, false}, Case{{4, 8}, {6, 8}, {3, 1, 6}, {3, 4, 8}, true}}) {
    SCOPED_TRACE(shape_str(c.mask));
    const Tensor q0 = randn(c.q, kDouble), k0 = randn(c.kv, kDouble), v0 = randn(c.kv, kDouble);
    const Tensor mask = c.bool_mask ? rand(c.mask, kDouble) < 0.7 : randn(c.mask, kDouble);
    const Tensor g = randn(c.out, kDouble);
    auto f = [&mask](const Tensor& q, const Tensor& k, const Tensor& v) {
      return scaled_dot_product_attention(q, k, v, mask);
    };
    auto grads = [&](auto fn, bool expanded) {
      Tensor q = q0.clone().requires_grad_(), k = k0.clone().requires_grad_(), v = v0.clone().requires_grad_();
      std::vector<int64_t> qs = c.out, kvs = c.out;
      qs.back() = c.q.back();
      kvs[kvs.size() - 2] = c.kv[0];
      const Tensor y = expanded ? fn(q.expand(qs), k.expand(kvs), v.expand(kvs)) : fn(q, k, v);
      EXPECT_EQ(y.sizes().vec(), c.out);
      y.backward(g);
      return std::vector<Tensor>{q.grad(), k.grad(), v.grad()};
    };
    const std::vector<Tensor> want = grads(f, true);
    for (const std::vector<Tensor>& got : {grads(f, false), grads(compile(f), false)})
      for (size_t i = 0; i < want.size(); ++i) expect_close(got[i], want[i].to_vector<double>(), 1e-9, 1e-12);
  }
}

TEST(AutogradEager, SquareSumGradient) {
  Tensor x = leaf({1, 2, 3});
  EXPECT_TRUE(x.requires_grad());
  EXPECT_TRUE(x.is_leaf());
  Tensor y = (x * x).sum();
  EXPECT_TRUE(y.requires_grad());
  EXPECT_FALSE(y.is_leaf());
  ASSERT_TRUE(y.grad_fn());
  EXPECT_EQ(y.grad_fn()->name(), "SumBackward0");
  EXPECT_EQ((x * x).grad_fn()->name(), "MulBackward0");
  y.backward();
  expect_exact(x.grad(), kDouble, {2, 4, 6});
}

TEST(AutogradEager, GradientsAccumulateAndGraphsAreFreed) {
  Tensor x = leaf({1, 2});
  Tensor y = (x.exp() * 3).sum();
  y.backward({}, /*retain_graph=*/true);
  y.backward();
  expect_close(x.grad(), {6 * std::exp(1.0), 6 * std::exp(2.0)}, 1e-12);
  EXPECT_EQ(error_of([&] { y.backward(); }),
            "[backward] Trying to backward through the graph a second time (or directly access saved tensors after "
            "they have already been freed). Saved intermediate values of the graph are freed when you call "
            ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a "
            "second time or if you need to access saved tensors after calling backward.");
}

TEST(AutogradEager, GradReturnsWithoutAccumulating) {
  Tensor x = leaf({1, 2});
  Tensor z = leaf({5});
  Tensor y = (x * x * x).sum();
  std::vector<Tensor> g = autograd::grad({y}, {x});
  expect_exact(g.at(0), kDouble, {3, 12});
  EXPECT_FALSE(x.grad().defined());
  EXPECT_EQ(error_of([&] { autograd::grad({(x * 2).sum()}, {z}); }),
            "[grad] One of the differentiated Tensors appears to not have been used in the graph. Set "
            "allow_unused=True if this is the desired behavior.");
  std::vector<Tensor> u = autograd::grad({(x * 2).sum()}, {x, z}, {}, std::nullopt, false, /*allow_unused=*/true);
  expect_exact(u.at(0), kDouble, {2, 2});
  EXPECT_FALSE(u.at(1).defined());
}

TEST(AutogradEager, NonScalarOutputsNeedAGradient) {
  Tensor x = leaf({1, 2, 3});
  Tensor y = x * 2;
  EXPECT_EQ(error_of([&] { y.backward(); }), "[backward] grad can be implicitly created only for scalar outputs");
  y.backward(make<double>({1, 10, 100}, {3}));
  expect_exact(x.grad(), kDouble, {2, 20, 200});
  EXPECT_EQ(error_of([&] { (x * 2).backward(make<double>({1, 2}, {2})); }),
            "[backward] Mismatch in shape: grad_output[0] has a shape of torch.Size([2]) and output[0] has a shape "
            "of torch.Size([3]).");
}

TEST(AutogradEager, OutputsThatDoNotRequireGrad) {
  Tensor x = leaf({1, -2, 3});
  Tensor i = argmax(x);
  EXPECT_FALSE(i.requires_grad());
  EXPECT_EQ(error_of([&] { gt(x, 0).sum().backward(); }),
            "[backward] element 0 of tensors does not require grad and does not have a grad_fn");
  EXPECT_EQ(error_of([&] { make<int64_t>({1, 2}, {2}).requires_grad_(); }),
            "[requires_grad_] only Tensors of floating point and complex dtype can require gradients");
  {
    NoGradGuard guard;
    EXPECT_FALSE((x * 2).requires_grad());
  }
  EXPECT_FALSE(x.detach().requires_grad());
  Tensor y = x * 2;
  EXPECT_EQ(error_of([&] { y.requires_grad_(false); }),
            "[requires_grad_] you can only change requires_grad flags of leaf variables. If you want to use a "
            "computed variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
}

TEST(AutogradEager, InPlaceErrorsAreRaised) {
  Tensor x = leaf({1, 2});
  EXPECT_EQ(error_of([&] { x.mul_(2); }),
            "[inplace] a leaf Variable that requires grad is being used in an in-place operation.");
  Tensor y = x.exp();
  Tensor z = y.sum();
  y.mul_(2);  // exp saved its output
  EXPECT_EQ(y._version(), 1);
  EXPECT_EQ(error_of([&] { z.backward(); }),
            "[backward] one of the variables needed for gradient computation has been modified by an inplace "
            "operation: [torch.DoubleTensor [2]], which is output 0 of ExpBackward0, is at version 1; expected "
            "version 0 instead. Hint: enable anomaly detection to find the operation that failed to compute its "
            "gradient, with torch.autograd.set_detect_anomaly(True).");
}

TEST(AutogradEager, InPlaceOpsRecordHistory) {
  Tensor x = leaf({1, 2, 3});
  Tensor a = x * 1;
  a.add_(x);          // a = 2x
  a.mul_(x);          // a = 2x^2
  a.sum().backward();
  expect_exact(x.grad(), kDouble, {4, 8, 12});
  // A write into a view rewrites the base's history.
  Tensor w = leaf({1, 2, 3});
  Tensor b = w * 1;
  b.narrow(0, 0, 1).mul_(5);
  (b * b).sum().backward();  // b = [5, 2, 3] * w
  expect_exact(w.grad(), kDouble, {50, 4, 6});
  EXPECT_EQ(error_of([&] { w.narrow(0, 0, 1).mul_(2); }),
            "[inplace] a view of a leaf Variable that requires grad is being used in an in-place operation.");
}

// hardsigmoid's gradient is PyTorch's hardsigmoid_backward: 0 at the bounds, beyond them and for
// NaN, and inside 1/6 rounded to f32, in f64 too (the values torch 2.x gives), eager and compiled.
TEST(AutogradEager, HardsigmoidGradientFollowsPyTorch) {
  const std::vector<double> want = {0, 0.1666666716337204, 0.1666666716337204, 0, 0, 0};
  for (bool compiled : {false, true}) {
    SCOPED_TRACE(compiled ? "compiled" : "eager");
    Tensor x = leaf({-3, -1, 0, 3, 4, std::numeric_limits<double>::quiet_NaN()});
    auto f = compile([](const Tensor& t) { return hardsigmoid(t).sum(); });
    (compiled ? f(x) : hardsigmoid(x).sum()).backward();
    expect_exact(x.grad(), kDouble, want);
  }
  // f16 and bf16: g * (1/6 in f32) rounded once (torch: 0.83349609375 and 0.83203125 for g = 5).
  for (const auto& [dt, v] : {std::pair{kHalf, 0.83349609375}, std::pair{kBFloat16, 0.83203125}}) {
    Tensor x = make<double>({-1, 0, 3}, {3}).to(dt).requires_grad_();
    (hardsigmoid(x) * 5).sum().backward();
    expect_exact(x.grad(), dt, {v, v, 0});
  }
}

// As in PyTorch, copy_ and fill_ overwrite: the old contents get a zero gradient, so an input
// reached only through them has a gradient of zeros, not an undefined one (an optimizer's
// weight decay and momentum tell the two apart). An in-place op that reads the old contents
// passes their gradient on as before.
TEST(AutogradEager, OverwrittenValuesGetZeroGradients) {
  Tensor x = leaf({1, 2, 3});
  Tensor y = x * 2;
  y.fill_(3.0);
  EXPECT_TRUE(y.requires_grad());
  y.sum().backward();
  ASSERT_TRUE(x.grad().defined());
  expect_exact(x.grad(), kDouble, {0, 0, 0});
  Tensor u = leaf({1, 2, 3}), v = leaf({4, 5, 6});
  Tensor z = u * 1;
  z.copy_(v * v);
  (z * 2).sum().backward();
  ASSERT_TRUE(u.grad().defined());
  expect_exact(u.grad(), kDouble, {0, 0, 0});
  expect_exact(v.grad(), kDouble, {16, 20, 24});
  // An in-place op whose value reads the old contents passes their gradient on through its own
  // node: its CopyBackwards has one edge (no zeros to add); a copy_ of another tensor has two.
  Tensor r = leaf({1, 2, 3});
  Tensor acc = r * 1;
  acc.add_(r);
  EXPECT_EQ(acc.grad_fn()->next_edges().size(), 1u);
  acc.mul_(r);  // mul(clone(acc), r): the old contents two steps back
  EXPECT_EQ(acc.grad_fn()->next_edges().size(), 1u);
  acc.copy_(r * 2);
  EXPECT_EQ(acc.grad_fn()->next_edges().size(), 2u);
  // A copy into a tensor that did not require grad has only the value's history.
  Tensor plain = zeros({3}, kDouble);
  Tensor w = leaf({1, 2, 3});
  plain.copy_(w * 3);
  plain.sum().backward();
  expect_exact(w.grad(), kDouble, {3, 3, 3});
}

// As in PyTorch, a view knows its base whether or not either required grad when it was made:
// writing a value that requires grad into a view of a plain buffer gives the buffer history.
TEST(AutogradEager, WritesIntoViewsOfPlainTensorsReachTheBase) {
  Tensor w = leaf({1, 2, 3});
  Tensor out = zeros({2, 3}, TensorOptions(kDouble));
  out.narrow(0, 1, 1).copy_((w * 2).unsqueeze(0));  // out = [[0, 0, 0], 2w]
  EXPECT_TRUE(out.requires_grad());
  EXPECT_EQ(out.grad_fn()->name(), "CopySlices");
  (out * out).sum().backward();  // d/dw of 4 w^2
  expect_exact(w.grad(), kDouble, {8, 16, 24});

  // Two writes through views of views: each region's gradient reaches its own value.
  Tensor v = leaf({1, 2});
  Tensor buf = zeros({2, 2}, TensorOptions(kDouble));
  Tensor row0 = buf.select(0, 0), row1 = buf.select(0, 1);
  row0.copy_(v * 3);
  row1.narrow(0, 1, 1).copy_(v.narrow(0, 0, 1) * 5);  // buf = [[3 v0, 3 v1], [0, 5 v0]]
  (buf * make<double>({1, 2, 3, 4}, {2, 2})).sum().backward();
  expect_exact(v.grad(), kDouble, {3 + 20, 6});

  // A view made under no_grad of a leaf that requires grad still refuses a write.
  Tensor leaf_view;
  {
    NoGradGuard no_grad;
    leaf_view = w.narrow(0, 0, 2);
  }
  EXPECT_EQ(error_of([&] { leaf_view.mul_(2); }),
            "[inplace] a view of a leaf Variable that requires grad is being used in an in-place operation.");
}

// PyTorch's clamp gradient at x equal to a bound: nothing against a scalar bound, half against
// a tensor bound, whether or not the bound requires grad (torch 2.15 measured).
TEST(AutogradEager, ClampTiesFollowPyTorch) {
  auto grad_of = [](const std::function<Tensor(const Tensor&)>& f) {
    Tensor x = leaf({0, 0.5, 1});
    f(x).sum().backward();
    return x.grad();
  };
  const Tensor lo = zeros({3}, TensorOptions(kDouble)), hi = ones({3}, TensorOptions(kDouble));
  expect_exact(grad_of([](const Tensor& x) { return clamp(x, Scalar(0.0), std::nullopt); }), kDouble, {0, 1, 1});
  expect_exact(grad_of([](const Tensor& x) { return clamp_max(x, 1.0); }), kDouble, {1, 1, 0});
  expect_exact(grad_of([](const Tensor& x) { return clamp(x, Scalar(0.0), Scalar(1.0)); }), kDouble, {0, 1, 0});
  expect_exact(grad_of([](const Tensor& x) { return hardtanh(x, 0.0, 1.0); }), kDouble, {0, 1, 0});
  expect_exact(grad_of([&](const Tensor& x) { return clamp(x, lo, std::nullopt); }), kDouble, {0.5, 1, 1});
  expect_exact(grad_of([&](const Tensor& x) { return clamp(x, std::nullopt, hi); }), kDouble, {1, 1, 0.5});
  expect_exact(grad_of([&](const Tensor& x) { return clamp(x, lo, hi); }), kDouble, {0.5, 1, 0.5});
  Tensor bound = lo.clone().requires_grad_();
  Tensor x = leaf({0, 0.5, 1});
  clamp(x, bound, hi).sum().backward();
  expect_exact(x.grad(), kDouble, {0.5, 1, 0.5});
  expect_exact(bound.grad(), kDouble, {0.5, 0, 0});
}

// fmax/fmin split a tie in half, as maximum/minimum do, and give the rest to the number (x when
// both are NaN); torch 2.15 measured: fmax x [0.5, 0, 0.5, 0, 1, 1, 1], z [0.5, 1, 0.5, 1, 0,
// 0, 0]; fmin x [0.5, 1, 0.5, 0, 1, 1, 0], z [0.5, 0, 0.5, 1, 0, 0, 1]. The fuzzer against
// torch found the tie (seed 5200605): kiln gave it all to x.
TEST(AutogradEager, FmaxAndFminTiesFollowPyTorch) {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  for (bool is_max : {true, false}) {
    Tensor x = leaf({0.1, -2, 1, nan, inf, nan, 3});
    Tensor z = leaf({0.1, 1, 1, 2, nan, nan, -1});
    (is_max ? fmax(x, z) : fmin(x, z)).sum().backward();
    SCOPED_TRACE(is_max ? "fmax" : "fmin");
    expect_exact(x.grad(), kDouble, is_max ? std::vector<double>{0.5, 0, 0.5, 0, 1, 1, 1} : std::vector<double>{0.5, 1, 0.5, 0, 1, 1, 0});
    expect_exact(z.grad(), kDouble, is_max ? std::vector<double>{0.5, 1, 0.5, 1, 0, 0, 0} : std::vector<double>{0.5, 0, 0.5, 1, 0, 0, 1});
  }
}

TEST(AutogradEager, SoftmaxWithADtypeRoundsItsGradientToIt) {
  // Backward fuzz seed 5800461: log_softmax(x, dim, bf16) of an f64 x runs on x.to(bf16), so
  // PyTorch's gradient is bf16 before it is cast to f64. kiln cast the f32 result straight to
  // f64: 0.7559 where torch gives 0.7578125. Values from torch 2.15; the tolerance is far below
  // the bf16 rounding it checks (0.25% at elements 0 and 3) and far above f32's noise.
  const Tensor c = make<double>({1.0, -0.5, 0.25, 2.0, -1.5, 0.75, 1.25, -0.25}, {2, 4});
  const std::vector<double> log_softmax_grad = {0.7578125, -0.9453125, 0.189453125, -0.0001888275146484375,
                                                -1.625, 0.73046875, 1.2109375, -0.318359375};
  const std::vector<double> softmax_grad = {-0.04150390625, -0.318359375, -0.0267333984375, 0.38671875,
                                            -0.462890625, 0.09912109375, 0.2734375, 0.0888671875};
  for (bool log : {true, false})
    for (bool compiled : {false, true}) {
      SCOPED_TRACE(std::string(log ? "log_softmax" : "softmax") + (compiled ? ", compiled" : ", eager"));
      Tensor x = leaf({0.1, 0.7, -1.3, 2.2, 1.5, -0.4, 0.3, 0.9}, {2, 4});
      auto f = [log](const Tensor& t) { return log ? log_softmax(t, 1, kBFloat16) : softmax(t, 1, kBFloat16); };
      const Tensor y = compiled ? compile(f)(x) : f(x);
      ASSERT_EQ(y.dtype(), kBFloat16);
      (y.to(kDouble) * c).sum().backward();
      expect_close(x.grad(), log ? log_softmax_grad : softmax_grad, 2e-4, 1e-5);
    }
}

TEST(AutogradEager, MeanWithADtypeRoundsItsGradientToIt) {
  // The same for mean (review of the softmax fix): PyTorch divides the gradient by the count in
  // the result's dtype. Values from torch 2.15.
  for (bool compiled : {false, true}) {
    SCOPED_TRACE(compiled ? "compiled" : "eager");
    auto run = [compiled](auto f, const Tensor& x) { return compiled ? compile(f)(x) : f(x); };
    Tensor x = ones({3}).requires_grad_(true);
    run([](const Tensor& t) { return mean(t, kBFloat16); }, x).backward();
    expect_exact(x.grad(), kFloat, {0.333984375, 0.333984375, 0.333984375});
    Tensor y = ones({2, 3}, kDouble).requires_grad_(true);
    run([](const Tensor& t) { return mean(t, {1}, false, kHalf).sum(); }, y).backward();
    expect_exact(y.grad(), kDouble, std::vector<double>(6, 0.333251953125));
    Tensor h = ones({2, 3}, kHalf).requires_grad_(true);
    run([](const Tensor& t) { return mean(t, {0}, true, kBFloat16).sum(); }, h).backward();
    expect_exact(h.grad(), kHalf, std::vector<double>(6, 0.5));
    Tensor e = ones({0, 3}).requires_grad_(true);
    run([](const Tensor& t) { return mean(t, {0}, false, kBFloat16).sum(); }, e).backward();
    EXPECT_EQ(e.grad().sizes().vec(), (std::vector<int64_t>{0, 3}));
  }
}

TEST(AutogradEager, EmptyOperandsKeepTheirGradients) {
  // The backward fuzzer against torch, seeds 5600188 and 5601333: cat skips a legacy 1-D empty
  // tensor, but one that requires grad still makes the result require grad (PyTorch's
  // CatBackward; its gradient is empty); and seed 5600433: prod over a dim of size 0 raised
  // narrow's error in its backward instead of giving an empty gradient.
  const Tensor flags = make<bool>({true, false}, {2});
  for (bool compiled : {false, true}) {
    SCOPED_TRACE(compiled ? "compiled" : "eager");
    Tensor e = leaf({}, {0});
    auto join = [&flags](const Tensor& t) { return cat({flags, t}, 0); };
    const Tensor y = compiled ? compile(join)(e) : join(e);
    ASSERT_TRUE(y.requires_grad());
    expect_exact(y.detach(), kDouble, {1, 0});
    y.sum().backward();
    ASSERT_TRUE(e.grad().defined());
    EXPECT_EQ(e.grad().sizes().vec(), std::vector<int64_t>{0});
    Tensor only = leaf({}, {0});
    const Tensor z = compiled ? compile([](const Tensor& t) { return cat({t, t}, 0); })(only) : cat({only, only}, 0);
    ASSERT_TRUE(z.requires_grad());
    EXPECT_EQ(z.sizes().vec(), std::vector<int64_t>{0});
    Tensor x = leaf({}, {3, 0});
    auto product = [](const Tensor& t) { return t.prod(1); };
    const Tensor p = compiled ? compile(product)(x) : product(x);
    expect_exact(p.detach(), kDouble, {1, 1, 1});
    p.sum().backward();
    EXPECT_EQ(x.grad().sizes().vec(), (std::vector<int64_t>{3, 0}));
  }
  // Under Dynamic::True the reduced size can be a symbolic expression equal to 0 (x[2:] of [s0]
  // at s0 = 2).
  CompileOptions dynamic;
  dynamic.dynamic = Dynamic::True;
  Tensor v = leaf({1, 2}, {2});
  const Tensor q = compile([](const Tensor& t) { return t.slice(0, 2).prod(0); }, dynamic)(v);
  expect_exact(q.detach(), kDouble, {1});
  q.backward();
  expect_exact(v.grad(), kDouble, {0, 0});
  // A skipped tensor that requires no grad leaves the result without one.
  EXPECT_FALSE(cat({flags, make<float>({}, {0})}, 0).requires_grad());
}

TEST(AutogradEager, HooksAndRetainGrad) {
  Tensor x = leaf({1, 2});
  Tensor h = x * 3;
  h.retain_grad();
  h.register_hook([](const Tensor& g) { return g * 10; });
  x.register_hook([](const Tensor& g) { return g + 1; });
  (h * h).sum().backward();
  expect_exact(h.grad(), kDouble, {60, 120});   // 2h, then the hook
  expect_exact(x.grad(), kDouble, {181, 361});  // 3 * 10 * 2h + 1
}

TEST(AutogradEager, SecondDerivatives) {
  Tensor x = leaf({1, 2});
  Tensor y = (x * x * x).sum();
  std::vector<Tensor> g = autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true);
  expect_exact(g.at(0), kDouble, {3, 12});
  EXPECT_TRUE(g.at(0).requires_grad());
  g.at(0).sum().backward();
  expect_exact(x.grad(), kDouble, {6, 12});
  // Through saved outputs: d2/dx2 exp(x) = exp(x).
  Tensor z = leaf({0.5});
  Tensor e = z.exp();
  Tensor dz = autograd::grad({e.sum()}, {z}, {}, std::nullopt, true).at(0);
  Tensor d2 = autograd::grad({dz.sum()}, {z}).at(0);
  expect_close(d2, {std::exp(0.5)}, 1e-14);
}

TEST(AutogradEager, BackwardIntoNamedInputsOnly) {
  Tensor x = leaf({1, 2});
  Tensor w = leaf({3, 4});
  (x * w).sum().backward({}, std::nullopt, false, {w});
  expect_exact(w.grad(), kDouble, {1, 2});
  EXPECT_FALSE(x.grad().defined());
}

// logsumexp of a 0-dim f64 tensor decomposes to the tensor itself. Its eager result was the
// input's own TensorImpl, and recording the op's history there made the leaf a non-leaf, so the
// gradient of its earlier use (x1 * x3) was lost (fuzz seed 20261376: 1.5 instead of 1.376).
TEST(AutogradEager, AnOpWhoseDecompositionIsItsInputReturnsANewTensor) {
  const Tensor x1 = full({}, 0.5, kDouble).requires_grad_(), x3 = full({}, 2.5, kDouble).requires_grad_();
  const Tensor m = x1 * x3;
  const Tensor l = logsumexp(x3, {0});
  EXPECT_FALSE(l.is_same(x3));
  EXPECT_NE(l.data_ptr(), x3.data_ptr());  // not a view either: logsumexp is no view op
  EXPECT_TRUE(x3.is_leaf());
  const Tensor loss = m * -0.25 + remainder(l, l) * -1.5 + l * 2;
  const std::vector<Tensor> g = autograd::grad({loss}, {x1, x3});
  expect_close(g[0], {-0.625}, 1e-15);       // -0.25 * x3
  expect_close(g[1], {-0.125 + 0 + 2}, 1e-15);  // -0.25 * x1 + remainder's 1 - floor(l / l) + 2
  // Without grad, too: an in-place write into the result leaves the input alone.
  Tensor r = logsumexp(x3.detach(), {0});
  r.add_(1);
  expect_close(x3.detach(), {2.5}, 0);
}

TEST(AutogradEager, GradModesAndFloatDtypes) {
  EXPECT_TRUE(GradMode::is_enabled());
  {
    InferenceMode inference;
    EXPECT_TRUE(InferenceMode::is_enabled());
    EXPECT_FALSE(GradMode::is_enabled());
  }
  EXPECT_FALSE(InferenceMode::is_enabled());
  EXPECT_TRUE(GradMode::is_enabled());
  Tensor x = make<float>({1, 2, 3}, {3}).requires_grad_();
  Tensor y = (x.to(kDouble) * 2).sum();
  y.backward();
  EXPECT_EQ(x.grad().dtype(), kFloat);
  expect_exact(x.grad(), kFloat, {2, 2, 2});
}

}  // namespace
}  // namespace kiln
