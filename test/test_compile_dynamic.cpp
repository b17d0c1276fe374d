// kiln/test/test_compile_dynamic.cpp — symbolic sizes through compile(): size sweeps against
// the interpreter, recompilation counts under each policy, guard text and failure messages,
// the automatic-dynamic log, mark_dynamic / mark_static and specialization on reading a size.
#include "frontend/ops_factory.h"
#include "frontend/ops.h"
#include "kiln/kiln.h"
#include "frontend/ops_view.h"
#include "runtime/compile/compile.h"
#include "test_compile_util.h"
#include "test_support/check.h"

#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

namespace kiln {
namespace {

const std::vector<int64_t> kSweep{0, 1, 2, 3, 7, 8, 15, 16, 17, 63, 64, 65, 1000, 4097};

// Deterministic values in [0.5, 1.5) (positive, so sums do not cancel).
Tensor values(std::vector<int64_t> shape, int seed) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = 0.5f + static_cast<float>((i * 7919 + seed * 104729) % 1000) / 1000.0f;
  return tensor(v, shape);
}

// |got - want| <= atol + rtol * |want| elementwise, and equal shapes.
void expect_near_all(const Tensor& got, const Tensor& want, double rtol, const std::string& what) {
  ASSERT_EQ(got.sizes().vec(), want.sizes().vec()) << what;
  const std::vector<double> g = test::doubles(got), w = test::doubles(want);
  for (size_t i = 0; i < w.size(); ++i) {
    if (std::isnan(g[i]) && std::isnan(w[i])) continue;
    ASSERT_NEAR(g[i], w[i], 1e-6 + rtol * std::fabs(w[i])) << what << ", element " << i;
  }
}

CompileOptions dyn(Dynamic d, std::vector<std::string> names = {"a", "b"}) {
  CompileOptions o;
  o.dynamic = d;
  o.arg_names = std::move(names);
  o.name = "dyn";  // logs of the interpreter reference are named "fn"
  return o;
}

CompileOptions reference() {
  CompileOptions o;
  o.backend = "interpreter";
  o.dynamic = Dynamic::False;
  o.cache_size_limit = 1000;  // one entry per size
  return o;
}

// Runs `fn` compiled with every dim symbolic over shapes(n) for n in the sweep, comparing
// with the interpreter; sizes 0 and 1 may add one specialization each. (The first symbolic
// trace is at n = 2; no other dim is 2, so duck sizing merges no symbols.)
template <typename Fn>
void sweep(const char* what, Fn fn, std::function<std::vector<std::vector<int64_t>>(int64_t)> shapes,
           double rtol = 0) {
  auto f = compile(fn, dyn(Dynamic::True));
  auto ref = compile(fn, reference());
  for (int64_t n : kSweep) {
    const auto sh = shapes(n);
    Tensor a = values(sh[0], 1);
    Tensor b = sh.size() > 1 ? values(sh[1], 2) : a;
    const std::string ctx = fmt::format("{} at n = {}", what, n);
    if (sh.size() > 1) expect_near_all(f(a, b), ref(a, b), rtol, ctx);
    else expect_near_all(f(a, a), ref(a, a), rtol, ctx);
  }
  EXPECT_LE(f.stats().compiles, 3) << what << ": one symbolic entry plus sizes 0 and 1";
}

TEST(DynamicSweep, Pointwise) {
  auto fn = [](const Tensor& a, const Tensor& b) { return (a * b + 1.5f) / (b - 0.25f); };
  sweep("pointwise [3, n]", fn, [](int64_t n) { return std::vector<std::vector<int64_t>>{{3, n}, {3, n}}; });
  sweep("pointwise [n, 5]", fn, [](int64_t n) { return std::vector<std::vector<int64_t>>{{n, 5}, {n, 5}}; });
  auto ex = [](const Tensor& a, const Tensor&) { return exp(a) * sigmoid(a); };
  sweep("exp*sigmoid [n]", ex, [](int64_t n) { return std::vector<std::vector<int64_t>>{{n}}; }, 4e-7);
}

TEST(DynamicSweep, Broadcast) {
  auto fn = [](const Tensor& a, const Tensor& b) { return a * b + b; };
  sweep("[n, 6] * [6]", fn, [](int64_t n) { return std::vector<std::vector<int64_t>>{{n, 6}, {6}}; });
  sweep("[4, n] * [n]", fn, [](int64_t n) { return std::vector<std::vector<int64_t>>{{4, n}, {n}}; });
  sweep("[n, 1] * [1, 9]", fn, [](int64_t n) { return std::vector<std::vector<int64_t>>{{n, 1}, {1, 9}}; });
}

TEST(DynamicSweep, Reductions) {
  auto rows = [](int64_t n) { return std::vector<std::vector<int64_t>>{{5, n}}; };
  auto cols = [](int64_t n) { return std::vector<std::vector<int64_t>>{{n, 5}}; };
  auto last = [](const Tensor& a, const Tensor&) { return a.sum({-1}); };
  auto first = [](const Tensor& a, const Tensor&) { return a.sum({0}); };
  auto all = [](const Tensor& a, const Tensor&) { return a.sum(); };
  auto mx = [](const Tensor& a, const Tensor&) { return amax(a, {-1}); };
  auto mean_last = [](const Tensor& a, const Tensor&) { return a.mean({-1}); };
  for (auto& [name, shapes] : std::vector<std::pair<std::string, std::function<std::vector<std::vector<int64_t>>(int64_t)>>>{
           {"[5, n]", rows}, {"[n, 5]", cols}}) {
    sweep(("sum(-1) " + name).c_str(), last, shapes, 1e-5);
    sweep(("sum(0) " + name).c_str(), first, shapes, 1e-5);
    sweep(("sum() " + name).c_str(), all, shapes, 1e-5);
    sweep(("mean(-1) " + name).c_str(), mean_last, shapes, 1e-5);
  }
  sweep("amax [5, n]", mx, [](int64_t n) { return std::vector<std::vector<int64_t>>{{5, std::max<int64_t>(n, 1)}}; });
}

TEST(DynamicSweep, SoftmaxAndNorms) {
  auto sm = [](const Tensor& a, const Tensor&) { return softmax(a, -1); };
  sweep("softmax [3, n]", sm, [](int64_t n) { return std::vector<std::vector<int64_t>>{{3, n}}; }, 1e-5);
  sweep("softmax [n, 7]", sm, [](int64_t n) { return std::vector<std::vector<int64_t>>{{n, 7}}; }, 1e-5);
  auto ln = [](const Tensor& a, const Tensor&) { return layer_norm(a, {16}); };
  sweep("layer_norm [n, 16]", ln, [](int64_t n) { return std::vector<std::vector<int64_t>>{{n, 16}}; }, 1e-4);
  auto lnd = [](const Tensor& a, const Tensor&) { return (a - a.mean({-1}, true)) / sqrt(var(a, {-1}, 1, true) + 1e-5); };
  sweep("mean/var norm [4, n]", lnd, [](int64_t n) { return std::vector<std::vector<int64_t>>{{4, std::max<int64_t>(n, 2)}}; },
        1e-3);
}

TEST(DynamicSweep, ReshapeSliceCat) {
  auto flat = [](const Tensor& a, const Tensor&) { return a.reshape({-1}) * 2.0f; };
  sweep("reshape(-1) [n, 3]", flat, [](int64_t n) { return std::vector<std::vector<int64_t>>{{n, 3}}; });
  auto sl = [](const Tensor& a, const Tensor&) { return a.slice(1, 1) + a.slice(1, 0, -1); };
  sweep("slice [2, n]", sl, [](int64_t n) { return std::vector<std::vector<int64_t>>{{2, std::max<int64_t>(n, 1)}}; });
  auto ct = [](const Tensor& a, const Tensor& b) { return cat({a, b * 3.0f}, 0); };
  sweep("cat [n, 4] [n, 4]", ct, [](int64_t n) { return std::vector<std::vector<int64_t>>{{n, 4}, {n, 4}}; });
  auto ct1 = [](const Tensor& a, const Tensor& b) { return cat({a, b}, 1).sum({1}); };
  sweep("cat dim 1 [3, n] [3, 5]", ct1, [](int64_t n) { return std::vector<std::vector<int64_t>>{{3, n}, {3, 5}}; }, 1e-5);
}

TEST(DynamicSweep, Matmul) {
  auto mmf = [](const Tensor& a, const Tensor& b) { return matmul(a, b) + 1.0f; };
  sweep("[n, 8] @ [8, 4]", mmf, [](int64_t n) { return std::vector<std::vector<int64_t>>{{n, 8}, {8, 4}}; }, 1e-5);
  sweep("[4, n] @ [n, 3]", mmf, [](int64_t n) { return std::vector<std::vector<int64_t>>{{4, n}, {n, 3}}; }, 1e-5);
  sweep("[6, n, 9] @ [9, 5]", mmf, [](int64_t n) { return std::vector<std::vector<int64_t>>{{6, n, 9}, {9, 5}}; }, 1e-5);
}

TEST(DynamicSweep, InterpreterBackendRunsSymbolicGraphs) {
  auto fn = [](const Tensor& a, const Tensor& b) { return softmax(a.reshape({-1, 3}) * b, -1).sum({0}); };
  CompileOptions o = dyn(Dynamic::True);
  o.backend = "interpreter";
  auto f = compile(fn, o);
  auto ref = compile(fn, reference());
  for (int64_t n : {2, 5, 17}) {
    Tensor a = values({n, 6}, 1), b = values({3}, 2);
    expect_near_all(f(a, b), ref(a, b), 0, fmt::format("n = {}", n));
  }
  EXPECT_EQ(f.stats().compiles, 1);
}

// ---- recompilation counts ---------------------------------------------------------------------------

std::vector<int64_t> shuffled_batches(unsigned seed) {
  std::vector<int64_t> b;
  for (int64_t n = 2; n <= 64; ++n) b.push_back(n);
  std::shuffle(b.begin(), b.end(), std::mt19937(seed));
  return b;
}

auto mlp_like() {
  return [](const Tensor& a, const Tensor& w) { return softmax(relu(matmul(a, w)) + a.sum({-1}, true), -1); };
}

TEST(DynamicRecompiles, AutoCompilesAtMostTwiceForBatches2To64) {
  auto f = compile(mlp_like(), dyn(Dynamic::Auto));
  auto ref = compile(mlp_like(), reference());
  Tensor w = values({100, 10}, 3) * 0.01f;  // logits of order 1
  for (int64_t n : shuffled_batches(7)) {
    Tensor a = values({n, 100}, static_cast<int>(n));
    expect_near_all(f(a, w), ref(a, w), 1e-5, fmt::format("batch {}", n));
  }
  EXPECT_EQ(f.stats().compiles, 2) << "static first, then one symbolic entry";
  EXPECT_EQ(f.stats().cache_misses, 2);
  EXPECT_EQ(f.stats().cache_hits, 63 - 2);
  // Sizes 0 and 1 specialize: one entry each, and then they hit.
  for (int64_t n : {1, 0, 1, 0, 5}) {
    Tensor a = values({n, 100}, 1);
    expect_near_all(f(a, w), ref(a, w), 1e-5, fmt::format("batch {}", n));
  }
  EXPECT_EQ(f.stats().compiles, 4);
}

TEST(DynamicRecompiles, TrueCompilesOnce) {
  auto f = compile(mlp_like(), dyn(Dynamic::True));
  Tensor w = values({100, 10}, 3);
  for (int64_t n : shuffled_batches(11)) (void)f(values({n, 100}, 1), w);
  EXPECT_EQ(f.stats().compiles, 1);
  EXPECT_EQ(f.stats().cache_hits, 62);
}

TEST(DynamicRecompiles, FalseCompilesEverySize) {
  auto f = compile([](const Tensor& a) { return a + 1.0f; }, dyn(Dynamic::False, {"a"}));
  for (int64_t n = 2; n < 6; ++n) (void)f(values({n}, 1));
  EXPECT_EQ(f.stats().compiles, 4);
}

TEST(DynamicRecompiles, OtherChangesDoNotMakeSizesDynamic) {
  test::LogCapture logs;
  test::EnvScope env("KILN_LOG", "recompiles");
  auto f = compile([](const Tensor& a) { return a + 1; }, dyn(Dynamic::Auto, {"a"}));
  (void)f(values({4}, 1));
  (void)f(values({4}, 1).to(kFloat64));  // a dtype change, same size
  EXPECT_TRUE(logs.matching("automatic dynamic").empty());
  (void)f(values({6}, 1).to(kFloat64));
  std::vector<std::string> dyn_lines = logs.matching("automatic dynamic");
  ASSERT_EQ(dyn_lines.size(), 1u);
  EXPECT_NE(dyn_lines[0].find("dyn: automatic dynamic: a.size(0)"), std::string::npos) << dyn_lines[0];
  EXPECT_EQ(f.stats().compiles, 3);
  (void)f(values({9}, 1).to(kFloat64));
  EXPECT_EQ(f.stats().compiles, 3);
}

TEST(DynamicRecompiles, CacheSizeLimitStillHolds) {
  CompileOptions o = dyn(Dynamic::Auto, {"a"});
  o.cache_size_limit = 1;
  auto f = compile([](const Tensor& a) { return a * 2.0f; }, o);
  for (int64_t n : {3, 5, 9}) test::expect_exact(f(values({n}, 0) * 0.0f), kFloat32, std::vector<double>(n, 0.0));
  EXPECT_EQ(f.stats().compiles, 1);
}

// ---- guards: text, failures, explain ---------------------------------------------------------------

TEST(DynamicGuards, ExplainShowsSymbolsAndRelationalGuards) {
  auto f = compile([](const Tensor& a, const Tensor& b) { return a + b; }, dyn(Dynamic::True));
  const std::string text = f.explain(values({8, 3}, 1), values({8, 3}, 2));
  EXPECT_NE(text.find("s0 = a.size(0) = b.size(0) (hint 8)"), std::string::npos) << text;
  EXPECT_NE(text.find("2 <= a.size(0)"), std::string::npos) << text;
  EXPECT_NE(text.find("b.size(0) == a.size(0)"), std::string::npos) << text;
  EXPECT_NE(text.find("a is contiguous"), std::string::npos) << text;
  EXPECT_NE(text.find("f32[s0, s1]"), std::string::npos) << text;
}

TEST(DynamicGuards, FailuresNameTheGuardWithExpectedAndActual) {
  test::LogCapture logs;
  test::EnvScope env("KILN_LOG", "recompiles");
  auto f = compile([](const Tensor& a, const Tensor& b) { return a + b; }, dyn(Dynamic::True));
  (void)f(values({8}, 1), values({8}, 2));
  // Duck sizing: a and b shared one symbol; sizes that now differ must broadcast (here: 1).
  (void)f(values({7}, 1), values({1}, 2));
  std::vector<std::string> rec = logs.matching("dyn: recompiling");
  ASSERT_EQ(rec.size(), 1u);
  EXPECT_NE(rec[0].find("guard failed: b.size(0) == a.size(0), got 1 and 7"), std::string::npos) << rec[0];
  EXPECT_THROW((void)f(values({7}, 1), values({5}, 2)), Error);  // 7 and 5 do not broadcast
}

TEST(DynamicGuards, DuckSizingFailureSaysBothSizes) {
  test::LogCapture logs;
  test::EnvScope env("KILN_LOG", "recompiles");
  auto f = compile([](const Tensor& a, const Tensor& b) { return a.sum() + b.sum(); }, dyn(Dynamic::True));
  (void)f(values({8}, 1), values({8}, 2));
  (void)f(values({8}, 1), values({5}, 2));
  std::vector<std::string> rec = logs.matching("dyn: recompiling");
  ASSERT_EQ(rec.size(), 1u);
  EXPECT_NE(rec[0].find("guard failed: b.size(0) == a.size(0), got 5 and 8"), std::string::npos) << rec[0];
}

TEST(DynamicGuards, ReshapeDivisibilityIsAGuard) {
  test::LogCapture logs;
  test::EnvScope env("KILN_LOG", "recompiles");
  auto fn = [](const Tensor& a) { return a.reshape({-1, 4}).sum({1}); };
  auto f = compile(fn, dyn(Dynamic::True, {"a"}));
  auto ref = compile(fn, reference());
  const std::string text = f.explain(values({12}, 1));
  EXPECT_NE(text.find("a.size(0) % 4 == 0"), std::string::npos) << text;
  for (int64_t n : {12, 20, 400}) expect_near_all(f(values({n}, 1)), ref(values({n}, 1)), 1e-6, fmt::format("n={}", n));
  EXPECT_EQ(f.stats().compiles, 1);
  EXPECT_THROW((void)f(values({6}, 1)), Error);  // not a multiple of 4: a clear trace error
  std::vector<std::string> rec = logs.matching("dyn: recompiling");
  ASSERT_EQ(rec.size(), 1u) << fmt::format("{}", fmt::join(logs.lines(), "\n"));
  EXPECT_NE(rec[0].find("guard failed: a.size(0) % 4 == 0, got a.size(0) = 6"), std::string::npos) << rec[0];
}

TEST(DynamicGuards, SliceBoundIsAGuard) {
  auto fn = [](const Tensor& a) { return a.slice(0, 0, 5) * 2.0f; };
  auto f = compile(fn, dyn(Dynamic::True, {"a"}));
  const std::string text = f.explain(values({9}, 1));
  EXPECT_NE(text.find("5 <= a.size(0)"), std::string::npos) << text;
  auto ref = compile(fn, reference());
  for (int64_t n : {9, 6, 100}) expect_near_all(f(values({n}, 1)), ref(values({n}, 1)), 0, fmt::format("n={}", n));
  EXPECT_EQ(f.stats().compiles, 1);
  expect_near_all(f(values({3}, 1)), ref(values({3}, 1)), 0, "n=3");  // end clamps: a new entry
  EXPECT_EQ(f.stats().compiles, 2);
}

TEST(DynamicGuards, ReadingASizeSpecializesIt) {
  // User code that reads a size as an integer gets that integer: the symbol is pinned.
  auto fn = [](const Tensor& a) { return a * static_cast<float>(a.size(0)); };
  auto f = compile(fn, dyn(Dynamic::True, {"a"}));
  const std::string text = f.explain(values({6, 3}, 1));
  EXPECT_NE(text.find("a.size(0) == 6"), std::string::npos) << text;
  test::expect_exact(f(full({6, 3}, 1.0f)), kFloat32, std::vector<double>(18, 6.0));
  test::expect_exact(f(full({2, 3}, 1.0f)), kFloat32, std::vector<double>(6, 2.0));
  EXPECT_EQ(f.stats().compiles, 2);
}

TEST(DynamicGuards, ADerivedSizeEqualToOneSqueezesAndBroadcasts) {
  // A size computed from a symbol (here a.size(0) - 1 and a.size(0) // 2) that is 1 at trace
  // time is guarded equal to 1, and the view ops accept it as 1 (found by the fuzzer, seed
  // 7100006: squeeze() of a reshape's [1, s1//2, 2] raised "only dimensions of size 1 can be
  // squeezed").
  auto fn = [](const Tensor& a) {
    const Tensor row = a.slice(0, 1);                           // [s0 - 1, 3]
    const Tensor half = a.reshape({-1, 2, 3}).squeeze();         // [s0 // 2, 2, 3] -> [2, 3]
    return row.expand({4, 3}) + half.sum(0) + row.squeeze(0);    // [4, 3]
  };
  auto f = compile(fn, dyn(Dynamic::True, {"a"}));
  auto ref = compile(fn, reference());
  expect_near_all(f(values({2, 3}, 1)), ref(values({2, 3}, 1)), 0, "n=2");
  const std::string text = f.explain(values({2, 3}, 1));
  EXPECT_NE(text.find("a.size(0)*a.size(1)//6 == 1"), std::string::npos) << text;
  EXPECT_NE(text.find("a.size(0) - 1 == 1"), std::string::npos) << text;
  // Another size fails the guard and compiles again, with the same result as the reference.
  EXPECT_THROW(ref(values({4, 3}, 1)), Error);  // [3, 3] cannot expand to [4, 3]
  EXPECT_THROW(f(values({4, 3}, 1)), Error);
}

TEST(DynamicGuards, AnInPlaceOpBroadcastsAGuardedOneAsOne) {
  // b.reshape({1, -1, 2}) is [1, s0 // 2, s0] (b's 2 duck-sized with a's); the broadcast with
  // a's [1, 1, s0] keeps a's 1, so a.sub_ writes a's own sizes (the fuzzer against torch, seed
  // 5300939: "[copy_] in-place update of a traced tensor that has views (expand)").
  auto fn = [](const Tensor& a, const Tensor& b) { return a.clone().sub_(b.reshape({1, -1, 2})); };
  auto f = compile(fn, dyn(Dynamic::True));
  auto ref = compile(fn, reference());
  const Tensor a = values({1, 1, 2}, 1), b = values({2}, 2);
  expect_near_all(f(a, b), ref(a, b), 0, "a [1, 1, 2], b [2]");
}

TEST(DynamicGuards, AGuardRecordedLaterLeavesEarlierTypesAsTraced) {
  // max_pool2d's output [s1, s0, (s0 - 1)//2 + 1, ...] is traced before `+ x` guards
  // (s0 - 1)//2 + 1 == 1. The verifier infers max_pool2d's type again by running its
  // decomposition under all the guards, and must get the traced type back (the golden
  // gradients of pool under Dynamic::True, max_pool2d sample 7, failed when broadcasting read
  // a size guarded equal to 1 as a literal 1).
  auto fn = [](const Tensor& x) { return max_pool2d(x, {1, 1}, {2, 2}) + x; };
  auto f = compile(fn, dyn(Dynamic::True));
  auto ref = compile(fn, reference());
  const Tensor x = values({3, 2, 2, 2}, 3);
  expect_near_all(f(x), ref(x), 0, "x [3, 2, 2, 2]");
}

TEST(DynamicGuards, AnInPlaceOpsZeroDimOperandPromotesAsZeroDim) {
  // x.mul_(c) with a bf16 x and an f32 0-dim c computes in bf16 (c rounds to 1), as eagerly and in
  // PyTorch: the in-place ops expand their other operand to self's sizes only when it has dims.
  auto fn = [](const Tensor& a, const Tensor& c) { return a.clone().mul_(c); };
  const Tensor a = full({3}, 3.0, TensorOptions(kBFloat16)), c = full({}, 1.00390625, TensorOptions(kFloat));
  const Tensor want = fn(a, c);
  EXPECT_EQ(test::doubles(want), (std::vector<double>{3, 3, 3}));
  expect_near_all(compile(fn, dyn(Dynamic::True))(a, c), want, 0, "bf16 [3] *= f32 0-dim");
}

TEST(DynamicGuards, CommonOpsStayDynamic) {
  // Each function is traced once with every dim symbolic and must serve other sizes without
  // recompiling: no frontend op may read a symbolic size as an integer.
  using F = std::function<Tensor(const Tensor&, const Tensor&)>;
  const std::vector<std::pair<std::string, F>> fns{
      {"pointwise", [](const Tensor& a, const Tensor& b) { return exp(a) * b - a / 2 + sqrt(abs(b)); }},
      {"where/clamp", [](const Tensor& a, const Tensor& b) { return where(a > b, a, b).clamp(0.6, 1.2); }},
      {"reductions", [](const Tensor& a, const Tensor& b) { return a.sum({1}) + amax(b, {1}) + a.mean({1}); }},
      {"var", [](const Tensor& a, const Tensor&) { return var(a, {1}, 1, false) + var(a, {0}, 0, false).sum(); }},
      {"argmax", [](const Tensor& a, const Tensor&) { return argmax(a, 1); }},
      {"softmax", [](const Tensor& a, const Tensor& b) { return softmax(a, 1) + log_softmax(b, 0); }},
      {"views", [](const Tensor& a, const Tensor& b) { return a.t().flatten() + b.transpose(0, 1).reshape({-1}); }},
      {"unsqueeze", [](const Tensor& a, const Tensor&) { return a.unsqueeze(0).squeeze(0).unsqueeze(2).sum({2}); }},
      {"expand_as", [](const Tensor& a, const Tensor& b) { return a.sum({1}, true).expand_as(b) * b; }},
      {"cat/stack", [](const Tensor& a, const Tensor& b) { return cat({a, b}, 1).sum({1}) + stack({a, b}, 0).sum({0, 2}); }},
      {"slice", [](const Tensor& a, const Tensor&) { return a.slice(1, 1) .sum({1}) + a.narrow(0, 1, 1).sum(); }},
      {"select", [](const Tensor& a, const Tensor&) { return a.select(0, -1) + a.select(0, 0); }},
      {"matmul", [](const Tensor& a, const Tensor& b) { return matmul(a, b.t()); }},
      {"like", [](const Tensor& a, const Tensor&) { return zeros_like(a) + ones_like(a) + full_like(a, 2.0); }},
      {"cast", [](const Tensor& a, const Tensor&) { return a.to(kFloat64).sum({1}).to(kFloat32); }},
  };
  for (const auto& [name, fn] : fns) {
    auto f = compile(fn, dyn(Dynamic::True));
    auto ref = compile(fn, reference());
    for (auto [r, c] : std::vector<std::pair<int64_t, int64_t>>{{6, 10}, {7, 11}, {9, 13}}) {
      Tensor a = values({r, c}, 1), b = values({r, c}, 2);
      expect_near_all(f(a, b), ref(a, b), 1e-5, fmt::format("{} at [{}, {}]", name, r, c));
    }
    EXPECT_EQ(f.stats().compiles, 1) << name << ":\n" << f.explain(values({6, 10}, 1), values({6, 10}, 2)).substr(0, 1500);
  }
}

TEST(DynamicGuards, LossesAndIndexOpsStayDynamic) {
  // A training step's loss and the indexing ops read the batch and class counts as expressions:
  // reading them as integers pinned both (one compile per batch size: a smaller last batch, a
  // sequence of another length), which CommonOpsStayDynamic did not cover.
  using F = std::function<Tensor(const Tensor&, const Tensor&)>;
  const std::vector<std::pair<std::string, F>> fns{
      {"cross_entropy", [](const Tensor& x, const Tensor& t) { return cross_entropy(x, t); }},
      {"cross_entropy smoothed, weighted",
       [](const Tensor& x, const Tensor& t) { return cross_entropy(x, t, x.sum({0}) / 8, "sum", -100, 0.1); }},
      {"cross_entropy on probabilities",
       [](const Tensor& x, const Tensor&) { return cross_entropy(x, softmax(x * 2, 1), std::nullopt, "mean", -100, 0.2); }},
      {"nll_loss", [](const Tensor& x, const Tensor& t) { return nll_loss(log_softmax(x, 1), t); }},
      {"nll_loss weighted",
       [](const Tensor& x, const Tensor& t) { return nll_loss(log_softmax(x, 1), t, x.sum({0}) / 8, "none"); }},
      {"gather", [](const Tensor& x, const Tensor& t) { return x.gather(1, t.unsqueeze(1)); }},
      {"scatter_add",
       [](const Tensor& x, const Tensor& t) { return zeros_like(x).scatter_add(1, t.unsqueeze(1), x.narrow(1, 0, 1)); }},
      {"scatter value", [](const Tensor& x, const Tensor& t) { return x.scatter(1, t.unsqueeze(1), 2.5); }},
      {"topk", [](const Tensor& x, const Tensor&) { return std::get<0>(topk(x, 2, 1)); }},
      {"sort", [](const Tensor& x, const Tensor&) { return std::get<1>(sort(x, 0)).to(kFloat); }},
      {"one_hot", [](const Tensor&, const Tensor& t) { return one_hot(t, 20).to(kFloat); }},
      {"kl_div batchmean",
       [](const Tensor& x, const Tensor&) { return kl_div(log_softmax(x, 1), softmax(x * 2, 1), "batchmean"); }},
      {"index_add", [](const Tensor& x, const Tensor& t) { return x.index_add(0, t, x * 2); }},
      {"index_copy",  // a permutation: PyTorch leaves repeated indices undefined
       [](const Tensor& x, const Tensor&) { return x.index_copy(0, std::get<1>(sort(x.select(1, 0))), x * 2); }},
      {"index_reduce", [](const Tensor& x, const Tensor& t) { return x.index_reduce(0, t, x * 2, "amax"); }},
      {"embedding_bag", [](const Tensor& x, const Tensor& t) {
         const Tensor bags = t.reshape({-1, 1}).expand({-1, 3});  // [r, 3]: r bags of three rows
         return embedding_bag(x, bags, std::nullopt, "mean") +
                embedding_bag(x, bags, std::nullopt, "sum", x.narrow(1, 0, 3), false, 2) +
                embedding_bag(x, t, arange(3), "max", std::nullopt, true).sum();
       }},
      {"flip, roll, diff", [](const Tensor& x, const Tensor&) {
         return x.flip({0}) + x.roll({2}, {0}) - x.roll({-1}, {1}) + x.roll({-25}, {1}) + diff(x, 1, 0).sum({0}, true);
       }},
  };
  for (const auto& [name, fn] : fns) {
    auto f = compile(fn, dyn(Dynamic::True));
    auto ref = compile(fn, reference());
    for (auto [r, c] : std::vector<std::pair<int64_t, int64_t>>{{6, 10}, {7, 11}, {9, 13}}) {
      Tensor x = values({r, c}, 1), t = remainder(arange(r) * 5, Scalar(int64_t{6}));
      expect_near_all(f(x, t), ref(x, t), 1e-5, fmt::format("{} at [{}, {}]", name, r, c));
    }
    EXPECT_EQ(f.stats().compiles, 1) << name << ":\n" << f.explain(values({6, 10}, 1), arange(6)).substr(0, 1500);
  }
  // Label smoothing's share of a symbolic class count rounds as a constant count's does, in
  // every floating dtype: a dynamic entry gives the static entry's bits.
  for (ScalarType dt : {kFloat, kHalf, kBFloat16, kDouble}) {
    auto fn = [](const Tensor& x, const Tensor& t) {
      return cross_entropy(x, t, std::nullopt, "none", -100, 0.3) + cross_entropy(x, softmax(x, 1), std::nullopt, "sum", -100, 0.3);
    };
    auto f = compile(fn, dyn(Dynamic::True));
    auto st = compile(fn, dyn(Dynamic::False));
    for (auto [r, c] : std::vector<std::pair<int64_t, int64_t>>{{6, 10}, {7, 11}, {9, 13}}) {
      Tensor x = values({r, c}, 3).to(dt) * 3, t = remainder(arange(r) * 5, Scalar(int64_t{6}));
      EXPECT_TRUE(equal(f(x, t), st(x, t))) << dtype_name(dt) << " at [" << r << ", " << c << "]";
    }
    EXPECT_EQ(f.stats().compiles, 1) << dtype_name(dt);
  }
}

// ---- mark_dynamic / mark_static ----------------------------------------------------------------------

TEST(DynamicMarks, MarkDynamicOverridesFalse) {
  auto f = compile([](const Tensor& a) { return a.sum({1}); }, dyn(Dynamic::False, {"a"}));
  Tensor a = values({8, 3}, 1);
  mark_dynamic(a, 0);
  EXPECT_NE(f.explain(a).find("2 <= a.size(0)"), std::string::npos);
  (void)f(a);
  for (int64_t n : {5, 9, 30}) {
    Tensor x = values({n, 3}, 1);
    mark_dynamic(x, 0);
    (void)f(x);
  }
  EXPECT_EQ(f.stats().compiles, 1);
}

TEST(DynamicMarks, MarkStaticOverridesTrue) {
  auto f = compile([](const Tensor& a) { return a.sum({1}); }, dyn(Dynamic::True, {"a"}));
  Tensor a = values({8, 3}, 1);
  mark_static(a, 0);
  const std::string text = f.explain(a);
  EXPECT_NE(text.find("a.size(0) == 8"), std::string::npos) << text;
  EXPECT_NE(text.find("2 <= a.size(1)"), std::string::npos) << text;
  EXPECT_THROW(mark_dynamic(a, 2), Error);
}

}  // namespace
}  // namespace kiln
