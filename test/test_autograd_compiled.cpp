// kiln/test/test_autograd_compiled.cpp — compiled functions called on tensors that require grad
// (runtime/compile/compiled_backward.h): a compiled forward and a compiled backward, against the eager
// tape; requires_grad in the cache key; the partition's report; PyTorch's errors.
#include "kiln/kiln.h"

#include "test_compile_util.h"
#include "test_support/check.h"

#include <gtest/gtest.h>

#include <functional>

namespace kiln {
namespace {

using test::error_of;
using test::expect_close;
using test::make;

std::vector<double> values(const Tensor& t) { return t.contiguous().to(kDouble).to_vector<double>(); }

Tensor ramp(std::vector<int64_t> shape, double scale, double shift) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return (arange(n, TensorOptions(kDouble)) * scale + shift).sin().reshape(shape);
}

struct Mlp {
  Tensor w1 = ramp({6, 8}, 0.37, 0.1).requires_grad_();
  Tensor b1 = ramp({8}, 0.21, 0.5).requires_grad_();
  Tensor w2 = ramp({8, 3}, 0.53, -0.3).requires_grad_();
  Tensor loss(const Tensor& x) const {
    Tensor h = gelu(x.mm(w1) + b1);
    return log_softmax(h.mm(w2), -1).mean() * -1.0;
  }
  void zero() {
    for (Tensor* p : {&w1, &b1, &w2}) p->mutable_grad() = Tensor();
  }
};

TEST(AutogradCompiled, CapturedParametersTrain) {
  Mlp m;
  const Tensor x = ramp({5, 6}, 0.11, 0.2);
  Tensor want = m.loss(x);
  want.backward();
  const std::vector<std::vector<double>> eager{values(m.w1.grad()), values(m.b1.grad()), values(m.w2.grad())};
  m.zero();

  auto step = compile([&m](const Tensor& in) { return m.loss(in); });
  Tensor got = step(x);
  ASSERT_TRUE(got.requires_grad());
  ASSERT_TRUE(got.grad_fn());
  EXPECT_EQ(got.grad_fn()->name(), "CompiledFunctionBackward");
  expect_close(got, values(want), 1e-12);
  got.backward();
  expect_close(m.w1.grad(), eager[0], 1e-10, 1e-14);
  expect_close(m.b1.grad(), eager[1], 1e-10, 1e-14);
  expect_close(m.w2.grad(), eager[2], 1e-10, 1e-14);
  // A second step hits the cache and accumulates into .grad, as eager does.
  step(x).backward();
  std::vector<double> twice = eager[2];
  for (double& v : twice) v *= 2;
  expect_close(m.w2.grad(), twice, 1e-10, 1e-14);
  EXPECT_EQ(step.stats().compiles, 1);
  EXPECT_EQ(step.stats().cache_hits, 1);
}

TEST(AutogradCompiled, ArgumentsThatRequireGrad) {
  const Tensor w = ramp({4, 3}, 0.3, 0.0);
  auto f = compile([](const Tensor& x, const Tensor& w) { return (x.mm(w).tanh() * x.sum(1, true)).sum(); });
  Tensor x1 = ramp({2, 4}, 0.7, 0.1).requires_grad_(), w1 = w.clone().requires_grad_();
  f(x1, w1).backward();
  Tensor x2 = ramp({2, 4}, 0.7, 0.1).requires_grad_(), w2 = w.clone().requires_grad_();
  (x2.mm(w2).tanh() * x2.sum(1, true)).sum().backward();
  expect_close(x1.grad(), values(x2.grad()), 1e-12, 1e-14);
  expect_close(w1.grad(), values(w2.grad()), 1e-12, 1e-14);
  // Only x requires grad: another entry, and w gets nothing.
  Tensor x3 = ramp({2, 4}, 0.7, 0.1).requires_grad_();
  f(x3, w).backward();
  expect_close(x3.grad(), values(x2.grad()), 1e-12, 1e-14);
  EXPECT_FALSE(w.grad().defined());
  EXPECT_EQ(f.stats().compiles, 2);
}

TEST(AutogradCompiled, RequiresGradAndGradModeAreInTheKey) {
  Mlp m;
  const Tensor x = ramp({5, 6}, 0.11, 0.2);
  auto step = compile([&m](const Tensor& in) { return m.loss(in); });
  {
    NoGradGuard no_grad;
    Tensor y = step(x);
    EXPECT_FALSE(y.requires_grad());
  }
  Tensor y = step(x);
  EXPECT_TRUE(y.requires_grad());
  EXPECT_EQ(step.stats().compiles, 2);
  {
    NoGradGuard no_grad;
    step(x);
  }
  step(x);
  EXPECT_EQ(step.stats().compiles, 2);
  // Frozen parameters: a third entry.
  m.w1.requires_grad_(false);
  m.b1.requires_grad_(false);
  step(x).backward();
  EXPECT_TRUE(m.w2.grad().defined());
  EXPECT_FALSE(m.w1.grad().defined());
  EXPECT_EQ(step.stats().compiles, 3);
}

TEST(AutogradCompiled, DynamicBatchOneCompile) {
  Mlp m;
  CompileOptions o;
  o.dynamic = Dynamic::True;
  auto step = compile([&m](const Tensor& in) { return m.loss(in); }, o);
  for (int64_t rows : {4, 7, 9}) {
    const Tensor x = ramp({rows, 6}, 0.13, 0.05 * static_cast<double>(rows));
    m.zero();
    m.loss(x).backward();
    const std::vector<double> want = values(m.w1.grad());
    m.zero();
    step(x).backward();
    expect_close(m.w1.grad(), want, 1e-10, 1e-14);
  }
  EXPECT_EQ(step.stats().compiles, 1);
}

TEST(AutogradCompiled, ExplainShowsTheJointGraphAndThePartition) {
  Mlp m;
  auto step = compile([&m](const Tensor& in) { return m.loss(in); });
  const std::string text = step.explain(ramp({5, 6}, 0.11, 0.2));
  if (std::getenv("KILN_SHOW")) std::printf("%s\n", text.c_str());
  EXPECT_NE(text.find("--- joint forward and backward graph ---"), std::string::npos) << text;
  EXPECT_NE(text.find("partition: "), std::string::npos) << text;
  EXPECT_NE(text.find("values saved"), std::string::npos) << text;
  EXPECT_NE(text.find("--- backward program: plan"), std::string::npos) << text;
}

// relu keeps its own rule, which reads its result; the cut recomputes that result from a value
// it saves anyway rather than saving it too.
TEST(AutogradCompiled, ReluIsRecomputedNotSaved) {
  Tensor w = ramp({6, 8}, 0.37, 0.1).requires_grad_();
  auto step = compile([&w](const Tensor& x) {
    Tensor y = x.mm(w);
    return (relu(y) + y * y).sum();  // y * y's gradient needs y
  });
  const std::string text = step.explain(ramp({5, 6}, 0.11, 0.2));
  EXPECT_NE(text.find("partition: 2 values saved, 560 bytes; recomputed in the backward:"), std::string::npos)
      << text;  // x [5, 6] and y [5, 8], f64
  EXPECT_NE(text.find(", relu\n"), std::string::npos) << text;
}

// KILN_LOG=decomp,fusion shows both programs of a training entry, named.
TEST(AutogradCompiled, LogsShowTheForwardAndTheBackward) {
  test::EnvScope env("KILN_LOG", "decomp,fusion");
  test::LogCapture log;
  Tensor w = make<float>({0.5f, -1.0f, 2.0f}, {3}).requires_grad_();
  auto f = compile([&w](const Tensor& x) { return (x * w).tanh().sum(); });
  f(make<float>({1, 2, 3}, {3})).backward();
  for (const char* what : {"fn (forward): decomposed graph", "fn (backward): decomposed graph", "fn (forward): plan",
                           "fn (backward): plan"}) {
    const std::vector<std::string> lines = log.matching(what);
    ASSERT_EQ(lines.size(), 1u) << what;
    // The graphs: the forward computes tanh, the backward multiplies by 1 - tanh^2 from the
    // saved output. The plans: kernels.
    const bool forward = std::string(what).find("forward") != std::string::npos;
    const bool plan = std::string(what).find("plan") != std::string::npos;
    EXPECT_NE(lines[0].find(plan ? "kernel " : forward ? "tanh(" : "mul("), std::string::npos) << lines[0];
  }
}

TEST(AutogradCompiled, PyTorchErrors) {
  Mlp m;
  auto step = compile([&m](const Tensor& in) { return m.loss(in); });
  const Tensor x = ramp({5, 6}, 0.11, 0.2);
  Tensor y = step(x);
  y.backward();
  EXPECT_NE(error_of([&] { y.backward(); }).find("Trying to backward through the graph a second time"),
            std::string::npos);
  // A parameter updated in place between the forward and the backward (an optimizer step too early).
  Tensor z = step(x);
  {
    NoGradGuard no_grad;
    m.w2.mul_(0.5);
  }
  EXPECT_NE(error_of([&] { z.backward(); }).find("has been modified by an inplace operation"), std::string::npos);
}

// backward with create_graph through a compiled function replays its joint graph eagerly: the
// gradients have history, and second derivatives match the eager ones, also under
// Dynamic::True. A joint graph that draws random numbers cannot be replayed and says so.
TEST(AutogradCompiled, SecondDerivativesThroughACompiledBackward) {
  auto fn = [](const Tensor& x, const Tensor& w) { return x.mm(w).tanh().pow(2).sum(); };
  auto second = [](const std::function<Tensor(const Tensor&, const Tensor&)>& f, int64_t rows) {
    Tensor x = ramp({rows, 3}, 0.3, -0.4).to(kDouble).requires_grad_();
    Tensor w = ramp({3, 2}, 0.7, 0.1).to(kDouble).requires_grad_();
    std::vector<Tensor> g = autograd::grad({f(x, w)}, {x, w}, {}, std::nullopt, /*create_graph=*/true);
    Tensor h = (g[0] * g[0]).sum() + g[1].sum();
    std::vector<Tensor> hg = autograd::grad({h}, {x, w});
    return std::vector<Tensor>{g[0].detach(), g[1].detach(), hg[0], hg[1]};
  };
  CompileOptions o;
  o.dynamic = Dynamic::True;
  auto compiled = compile(fn), dynamic = compile(fn, o);
  for (int64_t rows : {4, 6}) {
    const std::vector<Tensor> want = second(fn, rows);
    for (auto* f : {&compiled, &dynamic}) {
      const std::vector<Tensor> got = second([&](const Tensor& x, const Tensor& w) { return (*f)(x, w); }, rows);
      for (size_t i = 0; i < want.size(); ++i) expect_close(got[i], test::doubles(want[i]), 1e-10, 1e-12);
    }
  }
  EXPECT_EQ(dynamic.stats().compiles, 1);
  Tensor x = ramp({4, 3}, 0.3, -0.4).requires_grad_();
  auto noisy = compile([](const Tensor& v) { return dropout(v, 0.5, true).sum(); });
  EXPECT_NE(error_of([&] { autograd::grad({noisy(x)}, {x}, {}, std::nullopt, /*create_graph=*/true); })
                .find("cannot be differentiated again (create_graph) because it draws random numbers"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// A ResNet-style block in training mode: the batch norms update their running statistics in
// place (forward outputs copied back) while the weights train.
TEST(AutogradCompiled, BatchNormBuffersUpdateWhileTraining) {
  struct Block {
    Tensor w = ramp({4, 3, 3, 3}, 0.41, 0.2).mul(0.3).requires_grad_();
    Tensor gamma = ramp({4}, 0.3, 1.0).add(1.5).requires_grad_();
    Tensor beta = ramp({4}, 0.7, 0.0).mul(0.1).requires_grad_();
    Tensor mean = zeros({4}, TensorOptions(kDouble)), var = ones({4}, TensorOptions(kDouble));
    Tensor operator()(const Tensor& x) const {
      Tensor y = batch_norm(conv2d(x, w, std::nullopt, 1, 1), gamma, beta, mean, var, true, 0.1, 1e-5);
      return relu(y).square().mean();
    }
  };
  const Tensor x = ramp({2, 3, 5, 5}, 0.23, 0.4);
  Block eager, comp;
  eager(x).backward();
  auto step = compile([&comp](const Tensor& in) { return comp(in); });
  step(x).backward();
  expect_close(comp.w.grad(), values(eager.w.grad()), 1e-10, 1e-13);
  expect_close(comp.gamma.grad(), values(eager.gamma.grad()), 1e-10, 1e-13);
  expect_close(comp.beta.grad(), values(eager.beta.grad()), 1e-10, 1e-13);
  expect_close(comp.mean, values(eager.mean), 1e-12, 1e-14);
  expect_close(comp.var, values(eager.var), 1e-12, 1e-14);
}

// PyTorch refuses running statistics that require grad (buffers get no gradient); so does kiln,
// eagerly and compiled, since a compiled backward would otherwise differentiate the update.
TEST(AutogradCompiled, RunningStatisticsThatRequireGradAreRefused) {
  const Tensor x = ramp({2, 3, 4}, 0.23, 0.4).requires_grad_();
  const Tensor mean = zeros({3}, TensorOptions(kDouble)).requires_grad_();
  const Tensor var = ones({3}, TensorOptions(kDouble));
  auto bn = [&](const Tensor& in) { return batch_norm(in, std::nullopt, std::nullopt, mean.clone(), var.clone(), true, 0.1, 1e-5); };
  auto in_norm = [&](const Tensor& in) {
    return instance_norm(in, std::nullopt, std::nullopt, mean.clone(), var.clone(), true, 0.1, 1e-5, false);
  };
  const std::string want = "The function 'native_batch_norm' is not differentiable with respect to argument 'running_mean'";
  EXPECT_NE(error_of([&] { bn(x); }).find(want), std::string::npos);
  EXPECT_NE(error_of([&] { in_norm(x); }).find(want), std::string::npos);
  // Compiled, the update is not differentiated either: a function returning the updated
  // statistics (which do not require grad here) gets the eager function's input gradient.
  const Tensor plain_mean = mean.detach();
  auto stats = [&](const Tensor& in) {
    Tensor m = plain_mean.clone(), v = var.clone();
    Tensor y = batch_norm(in, std::nullopt, std::nullopt, m, v, true, 0.1, 1e-5);
    return std::vector<Tensor>{(y * y.detach()).sum(), m, v};
  };
  auto fit = [&](const std::vector<Tensor>& r) { return r[0] + (r[1] * 3).sum() + (r[2] * 5).sum(); };
  const Tensor want_grad = autograd::grad({fit(stats(x))}, {x}).at(0);
  auto compiled = compile(stats);
  const std::vector<Tensor> got = compiled(x);
  EXPECT_FALSE(got[1].requires_grad());
  EXPECT_FALSE(got[2].requires_grad());
  expect_close(autograd::grad({fit(got)}, {x}).at(0), values(want_grad), 1e-12, 1e-14);
  // Without grad mode they are plain buffers.
  NoGradGuard no_grad;
  EXPECT_EQ(bn(x).sizes(), x.sizes());
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// NoGradGuard inside a compiled training step means what it means eagerly: a value computed
// under it carries no gradient, and a tensor written in place under it (an optimizer's update of
// a weight, an EMA of the weights) keeps its place for the gradient while its values change.
// Each case runs eagerly and compiled from equal starting values and compares losses,
// gradients and the written tensors.
TEST(AutogradCompiled, NoGradScopesInsideATrainingStepMatchEager) {
  struct Step {
    Tensor w = ramp({4, 3}, 0.37, 0.1).requires_grad_();
    Tensor ema = ramp({4, 3}, 0.19, -0.2);
    Tensor operator()(const Tensor& x) {
      Tensor target;
      {
        NoGradGuard no_grad;
        target = (x.mm(w) * 2.0).tanh();  // a target from the same weights: no gradient through it
        ema.mul_(0.9).add_(w * 0.1);      // an EMA of the weights: a buffer
        w.mul_(0.5);                      // a write into the weight: its gradient is that of the new value
      }
      return (x.mm(w) - target).square().sum() + (x.mm(ema) * x.mm(w)).sum();
    }
  };
  const Tensor x = ramp({5, 4}, 0.11, 0.2);
  Step eager, comp;
  const Tensor want = eager(x);
  want.backward();
  auto step = compile([&comp](const Tensor& in) { return comp(in); });
  const Tensor got = step(x);
  got.backward();
  expect_close(got, values(want), 1e-12);
  expect_close(comp.w.grad(), values(eager.w.grad()), 1e-10, 1e-13);
  expect_close(comp.w, values(eager.w), 1e-12, 1e-14);
  expect_close(comp.ema, values(eager.ema), 1e-12, 1e-14);
  // A second step from the new values: the writes happen again, as eagerly.
  eager.w.mutable_grad() = Tensor();
  comp.w.mutable_grad() = Tensor();
  eager(x).backward();
  step(x).backward();
  expect_close(comp.w.grad(), values(eager.w.grad()), 1e-10, 1e-13);
  expect_close(comp.w, values(eager.w), 1e-12, 1e-14);
  expect_close(comp.ema, values(eager.ema), 1e-12, 1e-14);
  // A backward with create_graph would replay the step from the weight's new contents: refused.
  const std::string err = error_of([&] { autograd::grad({step(x)}, {comp.w}, {}, true, true); });
  EXPECT_NE(err.find("create_graph through a compiled step that wrote into a tensor that requires grad"),
            std::string::npos) << err;
}

// A value computed from an input that requires grad and then overwritten (fill_, copy_ of
// another tensor) gives that input a gradient of zeros, compiled as eagerly: the result
// requires grad even when only the overwritten value reaches it, and nothing of the old value
// is computed in the forward program (the where(true, value, old) that keeps its place for the
// gradient folds away after differentiation).
TEST(AutogradCompiled, OverwrittenValuesGetZeroGradients) {
  auto only_filled = [](const Tensor& x) {
    Tensor y = x * 2;
    y.fill_(3.0);
    return y;
  };
  auto mixed = [](const Tensor& x, const Tensor& w) {
    Tensor y = x.sin();  // sin saves x, not y: the write leaves nothing it needs modified
    y.fill_(3.0);
    Tensor z = x * w;
    z.copy_(w.square());
    return y * z + x;  // 3 w^2 + x: dx = 1, dw = 6 w
  };
  const Tensor x0 = ramp({4}, 0.3, 0.1), w0 = ramp({4}, 0.7, -0.2);
  for (bool compiled : {false, true}) {
    SCOPED_TRACE(compiled ? "compiled" : "eager");
    Tensor x = x0.clone().requires_grad_(), w = w0.clone().requires_grad_();
    auto f = compile(only_filled);
    const Tensor y = compiled ? f(x) : only_filled(x);
    EXPECT_TRUE(y.requires_grad());
    y.sum().backward();
    ASSERT_TRUE(x.grad().defined());
    expect_close(x.grad(), {0, 0, 0, 0}, 0);
    x.mutable_grad() = Tensor();
    auto g = compile(mixed);
    const Tensor r = compiled ? g(x, w) : mixed(x, w);
    r.sum().backward();
    expect_close(x.grad(), {1, 1, 1, 1}, 0);
    expect_close(w.grad(), values(w0 * 6), 1e-12);
    // Overwritten by a comparison of itself, which passes no gradient back: zeros too.
    auto compared = [](const Tensor& a) {
      Tensor y = a * 2;
      y.copy_(gt(y, 0.5));
      return y;
    };
    x.mutable_grad() = Tensor();
    auto k = compile(compared);
    const Tensor c = compiled ? k(x) : compared(x);
    EXPECT_TRUE(c.requires_grad());
    c.sum().backward();
    expect_close(x.grad(), {0, 0, 0, 0}, 0);
    // The written tensor returned as it is: a copy of w, computing nothing of x * 2.
    auto copied = [](const Tensor& a, const Tensor& b) {
      Tensor y = a * 2;
      y.copy_(b);
      return y;
    };
    x.mutable_grad() = Tensor();
    w.mutable_grad() = Tensor();
    auto h = compile(copied);
    (compiled ? h(x, w) : copied(x, w)).sum().backward();
    expect_close(x.grad(), {0, 0, 0, 0}, 0);
    expect_close(w.grad(), {1, 1, 1, 1}, 0);
    if (compiled) {
      const std::string text = h.explain(x, w);
      const std::string forward = text.substr(text.find("--- forward program"), text.find("--- backward program") -
                                                                                   text.find("--- forward program"));
      EXPECT_EQ(forward.find("mul("), std::string::npos) << forward;
      EXPECT_EQ(forward.find("where"), std::string::npos) << forward;
    }
    if (compiled) {
      const std::string text = g.explain(x, w);
      const size_t fwd = text.find("--- forward program: optimized graph"), bwd = text.find("--- backward program");
      ASSERT_TRUE(fwd != std::string::npos && bwd != std::string::npos) << text;
      const std::string forward = text.substr(fwd, bwd - fwd);
      EXPECT_EQ(forward.find("where"), std::string::npos) << forward;
      EXPECT_EQ(forward.find(" sin("), std::string::npos) << forward;
    }
  }
}

// The transforms too: grad of x * stop_gradient(3x) is 3x, not 6x; a NoGradGuard around the
// transform is ignored (as torch.func.grad ignores an enclosing no_grad); a view taken under
// NoGradGuard cannot be written in place in a trace (its base would not see the write).
TEST(AutogradCompiled, NoGradInsideTheTransforms) {
  auto f = [](const std::vector<Tensor>& in) {
    Tensor t;
    {
      NoGradGuard no_grad;
      t = in[0] * 3.0;
    }
    return std::vector<Tensor>{(in[0] * t).sum()};
  };
  const Tensor x = ramp({5}, 0.3, 0.1);
  std::vector<double> want = values(x * 3.0);
  expect_close(grad(f)({x}).at(0), want, 1e-12, 1e-14);
  const TensorFn df = grad(f);
  auto compiled = compile([df](const Tensor& in) { return df({in}).at(0); });
  expect_close(compiled(x), want, 1e-12, 1e-14);
  {
    NoGradGuard outer;
    expect_close(grad(f)({x}).at(0), want, 1e-12, 1e-14);
  }
  auto write_view = [](const std::vector<Tensor>& in) {
    Tensor y = in[0] * 2.0;
    {
      NoGradGuard no_grad;
      Tensor v = y.narrow(0, 0, 2);
      v.zero_();
    }
    return std::vector<Tensor>{y.sum()};
  };
  const std::string err = error_of([&] { grad(write_view)({x}); });
  EXPECT_NE(err.find("in-place update of a view (slice) of a traced tensor cannot be recorded"), std::string::npos) << err;
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// The cpu runs a convolution's weight gradient as one library call (oneDNN's backward-weights
// primitive, the convolution_backward_weight node), not as the batch-as-channels convolution of
// its decomposition; its gradient matches the f64 tape, whose f64 node runs the decomposition.
TEST(AutogradCompiled, ConvolutionWeightGradientIsOneLibraryCall) {
  const Tensor x64 = ramp({2, 3, 7, 6}, 0.23, 0.4);
  const Tensor w64 = ramp({4, 3, 3, 3}, 0.41, 0.2).mul(0.3).requires_grad_();
  (conv2d(x64, w64, std::nullopt, 2, 1).square().mean()).backward();
  const Tensor w = w64.detach().to(kFloat).requires_grad_();
  auto step = compile([&w](const Tensor& in) { return conv2d(in, w, std::nullopt, 2, 1).square().mean(); });
  const Tensor x = x64.to(kFloat);
  step(x).backward();
  expect_close(w.grad(), values(w64.grad()), 1e-4, 1e-5);
  const std::string text = step.explain(x);
  EXPECT_NE(text.find("= convolution_backward_weight("), std::string::npos) << text;
  EXPECT_NE(text.find("# extern convolution_backward_weight"), std::string::npos) << text;
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// amin/amax's gradient goes to the elements equal to the result. Recomputing cos(x) in another
// kernel (the count's, or the backward) gave other last bits than the reduction's kernel saw
// (then libmvec in vectorized bodies, libm in tails; now the cpu computes math one way,
// codegen_cpu/llvm_math.h, but cuda's kernels may contract differently), and no element
// compared equal: a NaN or zero gradient (backward fuzzer seed 6518773). Values compared for
// equality are computed once (passes/equality_operands.h). Sizes give kernels a vector body and
// a scalar tail.
TEST(AutogradCompiled, AMinimumOfRecomputedMathGetsItsGradient) {
  using F = std::function<Tensor(const Tensor&)>;
  const std::vector<std::pair<std::string, F>> fns{
      {"amin(cos)", [](const Tensor& a) { return amin(cos(a), {0, 1}, false); }},
      {"amax(sin) rows", [](const Tensor& a) { return amax(sin(a * 3), {1}, false).sum(); }},
      {"amin of an overlapping view", [](const Tensor& a) {
         return amin(as_strided(cos(a), {3, 3}, {0, 1}, 0).unsqueeze(-1), {1, 0, 2}, false);
       }},
      {"max(tan) == max", [](const Tensor& a) { return where(tan(a) == tan(a).max(), a, a * 0).sum(); }},
      {"amin(cos) of long rows", [](const Tensor& a) { return amin(cos(a.reshape({5, -1})), {1}, false).sum(); }},
      {"amax(sin) of one row", [](const Tensor& a) { return amax(sin(a.reshape({1, -1}) * 2), {1}, false).sum(); }},
  };
  for (const auto& [name, fn] : fns) {
    const Tensor x0 = ramp({37, 20}, 0.37, -0.2).to(kFloat);
    const Tensor xe = x0.clone().requires_grad_(), xc = x0.clone().requires_grad_();
    fn(xe).backward();
    auto f = compile(fn);
    f(xc).backward();
    ASSERT_TRUE(xc.grad().defined()) << name;
    EXPECT_TRUE(isfinite(xc.grad()).all().item<bool>()) << name << ": " << xc.grad().sum().item<double>();
    EXPECT_TRUE(equal(xc.grad() != 0, xe.grad() != 0)) << name << ": the gradient reaches other elements";
    expect_close(xc.grad(), values(xe.grad()), 1e-5, 1e-6);
  }
  // Forward only: a hard one-hot of each row's maximum marks at least one element per row.
  auto onehot = compile([](const Tensor& a) { return (sin(a) == amax(sin(a), {1}, true)).to(kFloat).sum({1}); });
  for (int64_t w : {19, 200, 1000}) {
    const Tensor counts = onehot(ramp({3, w}, 0.37, -0.2).to(kFloat));
    EXPECT_TRUE((counts >= 1).all().item<bool>()) << "rows of " << w << ": " << counts.str();
  }
}

}  // namespace
}  // namespace kiln
