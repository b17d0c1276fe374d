// kiln/test/test_reliability_graphs.cpp — deep and wide graphs: bounded recursion, linear time.
//
// A traced loop of 100,000 `z = z + y` compiles on a thread with a small stack (fusion cuts
// chains of inlined producers at a bounded depth, so neither its walks nor the kernel
// builder recurse without limit), and agrees with eager. Graphs of 10^5 nodes or outputs
// parse and verify in time proportional to their size (each is timed against one ten times
// smaller: a quadratic step shows as a hundredfold ratio), and a cat of 10,000 inputs runs in
// about the time of its copy. The ReliabilityScale tests time and size things; the sanitizer
// pass leaves them out (CMakePresets.json).
#include "kiln/kiln.h"
#include "ir/text.h"
#include "ir/verifier.h"
#include "runtime/debug/run_graph.h"
#include "test_support/check.h"
#include "test_support/small_stack.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace kiln {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(const std::function<void()>& fn) {
  const auto t0 = Clock::now();
  fn();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// graph(%x : f32[4]) { %1 = neg(%x) ... %n = neg(%n-1); return (%n) }
std::string chain_text(int n) {
  std::string s = "graph(%x : f32[4]) {\n";
  std::string prev = "%x";
  for (int i = 1; i <= n; ++i) {
    s += "  %" + std::to_string(i) + " : f32[4] = neg(" + prev + ")\n";
    prev = "%" + std::to_string(i);
  }
  return s + "  return (" + prev + ")\n}\n";
}

// graph(%x : f32[2]) { %1 = neg(%x); return (%1, %1, ... n times) }
std::string outputs_text(int n) {
  std::string s = "graph(%x : f32[2]) {\n  %1 : f32[2] = neg(%x)\n  return (";
  for (int i = 0; i < n; ++i) s += i ? ", %1" : "%1";
  return s + ")\n}\n";
}

TEST(ReliabilityScale, AHundredThousandNodeChainCompilesOnASmallStack) {
  constexpr int kNodes = 100000;
  const Tensor y = tensor(std::vector<float>{0.5f, -0.25f, 1.0f});
  auto f = compile([](const Tensor& z0, const Tensor& step) {
    Tensor z = z0;
    for (int i = 0; i < kNodes; ++i) z = z + step;  // an ordinary traced loop
    return z;
  });
  Tensor got;
  test::run_with_stack(size_t{512} << 10, [&] { got = f(zeros({3}), y); });
  // Each add rounds in f32, as the eager loop does; kNodes * y is the exact sum.
  Tensor want = zeros({3});
  for (int i = 0; i < kNodes; ++i) want = want + y;
  EXPECT_TRUE(equal(got, want)) << got << " vs " << want;
  EXPECT_GT(f.stats().kernels, 100) << "the chain was cut into groups of bounded depth";
}

// A recurrence over shifted rows, as a dynamic program (ctc_loss's) builds: each step reads the
// previous one at s, s-1 and s-2. Fused whole, its first step would be evaluated at 2k+1 points
// after k steps, and 50 steps took over ten minutes to compile; a value one group would evaluate
// at more than 16 points is materialized (passes/fuse.cpp, kMaxInlinePoints), so compile time
// grows with the steps (ten times the steps: about ten times the time, quadratic was a hundred).
TEST(ReliabilityScale, AShiftedRecurrenceCompilesInTimeLinearInItsSteps) {
  auto recurrence = [](int steps) {
    return [steps](const Tensor& x0, const Tensor& w) {
      Tensor x = x0;
      for (int i = 0; i < steps; ++i) {
        const Tensor one_back = constant_pad_nd(x.narrow(0, 0, 63), {1, 0}, 0.0);
        const Tensor two_back = constant_pad_nd(x.narrow(0, 0, 62), {2, 0}, 0.0);
        x = tanh(x + one_back * 0.5 + two_back * 0.25) * w;
      }
      return x;
    };
  };
  manual_seed(11);
  const Tensor x = randn({64}), w = randn({64});
  auto few = compile(recurrence(8)), many = compile(recurrence(80));
  Tensor got_few, got_many;
  const double t_few = seconds([&] { got_few = few(x, w); });
  const double t_many = seconds([&] { got_many = many(x, w); });
  std::printf("[ perf ] shifted recurrence: 8 steps %.3f s, 80 steps %.3f s, %d kernels\n", t_few, t_many,
              static_cast<int>(many.stats().kernels));
  EXPECT_TRUE(allclose(got_few, recurrence(8)(x, w), 1e-5, 1e-6));
  EXPECT_TRUE(allclose(got_many, recurrence(80)(x, w), 1e-5, 1e-6));
  EXPECT_LT(t_many, 30 * t_few + 1.0);
  EXPECT_GT(many.stats().kernels, 80 / 16) << "each step's rows are evaluated at more points than the bound";
}

TEST(ReliabilityScale, ParsingAndVerifyingAreLinear) {
  test::run_with_stack(size_t{512} << 10, [] {
    const std::string small = chain_text(10000), large = chain_text(100000);
    std::unique_ptr<ir::Graph> g;
    const double t_small = seconds([&] { g = ir::parse_graph(small); });
    const double t_large = seconds([&] { g = ir::parse_graph(large); });
    EXPECT_EQ(g->num_nodes(), 100000u);
    std::printf("[ perf ] parse+verify: 10^4 nodes %.3f s, 10^5 nodes %.3f s\n", t_small, t_large);
    EXPECT_LT(t_large, 30 * t_small + 0.5);  // linear: ~10x (quadratic was ~50x)
    const std::string o_small = outputs_text(10000), o_large = outputs_text(100000);
    const double v_small = seconds([&] { g = ir::parse_graph(o_small); });
    const double v_large = seconds([&] { g = ir::parse_graph(o_large); });
    EXPECT_EQ(g->outputs().size(), 100000u);
    std::printf("[ perf ] 10^4 outputs %.3f s, 10^5 outputs %.3f s\n", v_small, v_large);
    EXPECT_LT(v_large, 30 * v_small + 0.5);
    // Printing and the interpreter walk it without recursion too.
    EXPECT_EQ(ir::print_graph(*ir::parse_graph(large)).size(), large.size());
  });
}

TEST(ReliabilityScale, ACatOfTenThousandInputsIsACopy) {
  constexpr int kInputs = 10000;
  std::string text = "graph(";
  for (int i = 0; i < kInputs; ++i) text += (i ? ", %x" : "%x") + std::to_string(i) + " : f32[2, 3]";
  text += ") {\n  %c : f32[2, " + std::to_string(3 * kInputs) + "] = cat([";
  for (int i = 0; i < kInputs; ++i) text += (i ? ", %x" : "%x") + std::to_string(i);
  text += "], dim=1)\n  %n : f32[2, " + std::to_string(3 * kInputs) + "] = neg(%c)\n  return (%n)\n}\n";
  const std::unique_ptr<ir::Graph> g = ir::parse_graph(text);
  std::vector<Tensor> parts;
  for (int i = 0; i < kInputs; ++i) parts.push_back(full({2, 3}, static_cast<double>(i)));
  rt::RunResult r;
  const double t = seconds([&] { r = rt::run_graph(*g, parts, "cpu"); });
  std::printf("[ perf ] cat of %d inputs: compile and run %.2f s\n", kInputs, t);
  ASSERT_TRUE(r.ok()) << r.message;
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_TRUE(equal(r.outputs[0], -cat(parts, 1)));
  EXPECT_LT(t, 30.0);
}

TEST(ReliabilityGraphs, ACatOfTensOfInputsCopiesEachInputOnceInKernels) {
  // 40 inputs, each computed inline (x_i * 2 + i) and stored into its slice: one Concat
  // kernel, not 40 reads per element.
  std::vector<Tensor> xs;
  for (int i = 0; i < 40; ++i) xs.push_back(full({3, 5}, static_cast<double>(i) / 8));
  auto f = compile([](const Tensor& a) {
    std::vector<Tensor> parts;
    for (int i = 0; i < 40; ++i) parts.push_back(a * static_cast<double>(i) + i);
    return cat(parts, 1);
  });
  const Tensor x = arange(15, kFloat).reshape({3, 5});
  std::vector<Tensor> want;
  for (int i = 0; i < 40; ++i) want.push_back(x * static_cast<double>(i) + i);
  EXPECT_TRUE(equal(f(x), cat(want, 1)));
  EXPECT_EQ(f.stats().kernels, 1);
  // Along dim 0 and with a dynamic first dim too.
  auto g = compile([](const Tensor& a) {
    std::vector<Tensor> parts;
    for (int i = 0; i < 20; ++i) parts.push_back(a - i);
    return cat(parts, 0);
  }, {.dynamic = Dynamic::True});
  for (int64_t rows : {2, 7}) {
    const Tensor y = arange(rows * 4, kFloat).reshape({rows, 4});
    std::vector<Tensor> parts;
    for (int i = 0; i < 20; ++i) parts.push_back(y - i);
    EXPECT_TRUE(equal(g(y), cat(parts, 0)));
  }
}

}  // namespace
}  // namespace kiln
