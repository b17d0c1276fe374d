// kiln/test/test_compile_results.cpp — what compile() returns and which arguments it sees.
//
// Tuple and vector results, an input returned as it is, captured tensors lifted by
// reference (mutated in place between calls, the compiled result follows), the
// "interpreter" and "eager" backends against "cpu", unknown backends, and user errors raised
// while tracing: the message names the op, the function and the argument signature, and the
// function keeps working afterwards.
#include "kiln/kiln.h"
#include "runtime/thread_pool.h"
#include "test_support/check.h"
#include "test_support/partial_sum.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace kiln {
namespace {

using test::mk;

TEST(CompileResults, TupleResults) {
  auto f = compile([](const Tensor& a, const Tensor& b) { return std::make_tuple(a + b, a * b, (a - b).sum()); });
  Tensor a = mk<float>({1, 2, 3, 4}, {2, 2}), b = mk<float>({10, 20, 30, 40}, {2, 2});
  auto [s, p, d] = f(a, b);
  test::expect_exact(s, kFloat32, {11, 22, 33, 44});
  test::expect_exact(p, kFloat32, {10, 40, 90, 160});
  test::expect_exact(d, kFloat32, {-90});
  EXPECT_EQ(d.dim(), 0);
  auto [s2, p2, d2] = f(b, a);  // a hit
  test::expect_exact(s2, kFloat32, {11, 22, 33, 44});
  test::expect_exact(d2, kFloat32, {90});
  EXPECT_EQ(f.stats().compiles, 1);
  EXPECT_EQ(f.stats().cache_hits, 1);
}

TEST(CompileResults, VectorResults) {
  auto f = compile([](const Tensor& a) {
    std::vector<Tensor> out;
    out.push_back(a * 2);
    out.push_back(a.amax({0}, false));
    out.push_back(a.to(kInt64));
    return out;
  });
  std::vector<Tensor> r = f(mk<float>({1.5, -2, 3, 0.5}, {2, 2}));
  ASSERT_EQ(r.size(), 3u);
  test::expect_exact(r[0], kFloat32, {3, -4, 6, 1});
  test::expect_exact(r[1], kFloat32, {3, 0.5});
  test::expect_exact(r[2], kInt64, {1, -2, 3, 0});
}

TEST(CompileResults, InputAndRepeatedResults) {
  auto f = compile([](const Tensor& a) { return std::make_tuple(a, a + 1, a + 1); });
  Tensor a = mk<float>({1, 2});
  auto [x, y, z] = f(a);
  test::expect_exact(x, kFloat32, {1, 2});
  test::expect_exact(y, kFloat32, {2, 3});
  test::expect_exact(z, kFloat32, {2, 3});
  auto [x2, y2, z2] = f(mk<float>({5, 6}));
  test::expect_exact(x2, kFloat32, {5, 6});
  test::expect_exact(y2, kFloat32, {6, 7});
  // Results of one call are not the storage of an earlier call's results.
  test::expect_exact(y, kFloat32, {2, 3});
}

TEST(CompileResults, CapturedWeightsAreLiftedByReference) {
  Tensor w = mk<float>({1, 2, 3});
  Tensor bias = mk<float>({0.5});
  auto f = compile([w, &bias](const Tensor& x) { return x * w + bias; });
  Tensor x = mk<float>({10, 20, 30});
  test::expect_exact(f(x), kFloat32, {10.5, 40.5, 90.5});
  w.add_(1);  // in place: the compiled entry reads the same storage
  test::expect_exact(f(x), kFloat32, {20.5, 60.5, 120.5});
  w.fill_(-1);
  bias.fill_(2);
  test::expect_exact(f(x), kFloat32, {-8, -18, -28});
  EXPECT_EQ(f.stats().traces, 1);
  EXPECT_EQ(f.stats().cache_hits, 2);
  // A second signature lifts the same weights.
  test::expect_exact(f(mk<float>({1})), kFloat32, {1, 1, 1});
  w.mul_(2);
  test::expect_exact(f(mk<float>({1})), kFloat32, {0, 0, 0});
  test::expect_exact(f(x), kFloat32, {-18, -38, -58});
}

TEST(CompileResults, CapturedNonContiguousWeight) {
  Tensor base = mk<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor wt = base.t();  // [3, 2], strides [1, 3]
  auto f = compile([wt](const Tensor& x) { return x + wt; });
  test::expect_exact(f(mk<float>({0, 0, 0, 0, 0, 0}, {3, 2})), kFloat32, {1, 4, 2, 5, 3, 6});
  base.add_(10);
  test::expect_exact(f(mk<float>({0, 0, 0, 0, 0, 0}, {3, 2})), kFloat32, {11, 14, 12, 15, 13, 16});
}

Tensor model(const Tensor& x, const Tensor& w) {
  return softmax(matmul(x, w) / 4, -1) + x.sum({1}, true);
}

TEST(CompileResults, BackendsAgree) {
  Generator gen(42);
  Tensor x = randn({6, 5}, gen), w = randn({5, 7}, gen);
  auto on = [&](const char* backend) {
    CompileOptions o;
    o.backend = backend;
    auto f = compile([](const Tensor& x, const Tensor& w) { return model(x, w); }, o);
    Tensor y = f(x, w);
    Tensor y2 = f(x, w);
    EXPECT_TRUE(equal(y, y2)) << backend;
    return std::make_pair(y, f.stats());
  };
  auto [cpu, cpu_s] = on("cpu");
  auto [interp, interp_s] = on("interpreter");
  auto [eager, eager_s] = on("eager");
  auto [dflt, dflt_s] = on("");
  EXPECT_EQ(test::sizes_of(cpu), (test::Ints{6, 7}));
  EXPECT_TRUE(allclose(cpu, interp, 1e-5, 1e-6)) << cpu << interp;
  EXPECT_TRUE(allclose(eager, interp, 1e-5, 1e-6)) << eager << interp;
  EXPECT_TRUE(equal(dflt, cpu));
  EXPECT_EQ(cpu_s.compiles, 1);
  EXPECT_GE(cpu_s.kernels, 1);
  EXPECT_EQ(interp_s.compiles, 1);
  EXPECT_EQ(interp_s.cache_hits, 1);
  EXPECT_EQ(eager_s.traces, 0);  // eager traces nothing
  EXPECT_EQ(eager_s.compiles, 0);
}

// Eager semantics: each call of x + randn(...) draws new numbers. A random tensor made while
// tracing must not become a lifted constant that every later call reuses.
TEST(CompileResults, RandomFactoryInsideDrawsFreshValuesPerCall) {
  auto f = compile([](const Tensor& x) { return x + randn({64}); });
  Tensor x = zeros({64});
  Tensor r1 = f(x), r2 = f(x);
  EXPECT_FALSE(equal(r1, r2)) << "two calls returned the same random numbers";
  // Each call draws what the eager op would draw from the default generator at that point.
  manual_seed(5);
  Tensor r3 = f(x);
  manual_seed(5);
  EXPECT_TRUE(equal(r3, randn({64})));
}

// dropout is one native_dropout node holding the (seed, offset) of its draw when traced; the
// compiled program draws anew on each call, what the eager op draws at that point.
TEST(CompileResults, DropoutDrawsFreshMasksPerCallLikeEager) {
  auto f = compile([](const Tensor& x) { return dropout(x, 0.5, true); });
  Tensor x = ones({256});
  f(x);  // traces and compiles (tracing takes a draw of its own, as for every random op)
  manual_seed(11);
  Tensor r1 = f(x), r2 = f(x);
  EXPECT_FALSE(equal(r1, r2)) << "two calls returned the same mask";
  manual_seed(11);
  Tensor e1 = dropout(x, 0.5, true), e2 = dropout(x, 0.5, true);
  EXPECT_TRUE(equal(r1, e1));
  EXPECT_TRUE(equal(r2, e2));
  EXPECT_EQ(f.stats().compiles, 1);
}

// native_batch_norm is functional in the graph (it returns the new running statistics); the
// frontend writes them back, so a compiled training step updates the caller's buffers on every
// call, as the eager op does.
TEST(CompileResults, BatchNormTrainingUpdatesRunningStatisticsPerCall) {
  Tensor x = arange(24, kFloat32).reshape({4, 3, 2}) * 0.25;
  auto step = [](const Tensor& in, const Tensor& rm, const Tensor& rv) {
    return batch_norm(in, std::nullopt, std::nullopt, rm, rv, true, 0.1, 1e-5);
  };
  Tensor rm = zeros({3}), rv = ones({3});
  Tensor erm = zeros({3}), erv = ones({3});
  auto f = compile(step);
  for (int k = 0; k < 3; ++k) {
    Tensor got = f(x, rm, rv), want = step(x, erm, erv);
    test::expect_close(got, test::doubles(want), 1e-5);
    test::expect_close(rm, test::doubles(erm), 1e-5);
    test::expect_close(rv, test::doubles(erv), 1e-5);
  }
  EXPECT_GT(erm.to_vector<float>()[0], 0.0f);  // three updates moved the eager buffers
  EXPECT_EQ(f.stats().compiles, 1);
}

// Eager semantics: an in-place op on an argument mutates the caller's tensor.
// The tracer rebinds a.add_(1) to a functional add; compile() writes the new value back into
// the caller's tensor after every run.
TEST(CompileResults, InPlaceOpOnAnArgumentMutatesTheCallersTensor) {
  auto f = compile([](Tensor a) {
    a.add_(1);
    return a * 2;
  });
  Tensor x = mk<float>({1, 2});
  test::expect_exact(f(x), kFloat32, {4, 6});
  test::expect_exact(x, kFloat32, {2, 3});
  test::expect_exact(f(x), kFloat32, {6, 8});  // a cache hit writes back too
  test::expect_exact(x, kFloat32, {3, 4});
  EXPECT_EQ(f.stats().compiles, 1);
}

// An op on a captured tensor alone (w * 2) is recorded, not folded into a constant at trace
// time: a later in-place change of w reaches the compiled function.
TEST(CompileResults, OpsOnCapturedTensorsAreRecordedNotFolded) {
  Tensor w = mk<float>({1, 2});
  auto f = compile([w](const Tensor& x) { return x + w * 2; });
  Tensor x = mk<float>({10, 20});
  test::expect_exact(f(x), kFloat32, {12, 24});
  w.fill_(5);
  test::expect_exact(f(x), kFloat32, {20, 30});
  EXPECT_EQ(f.stats().traces, 1);
}

// A captured tensor updated in place (a module's running statistics) is written back after
// every call, as an argument is; the update reads the value current at the call.
TEST(CompileResults, InPlaceUpdateOfACapturedTensorIsWrittenBack) {
  Tensor running = mk<float>({0, 10});
  Tensor count = mk<int64_t>({0});
  auto f = compile([running, count](const Tensor& x) {
    Tensor r = running, c = count;
    r.mul_(0.5).add_(x * 0.5);  // later reads in the trace see the new value
    c.add_(1);
    return r + 1;
  });
  test::expect_exact(f(mk<float>({2, 2})), kFloat32, {2, 7});
  test::expect_exact(running, kFloat32, {1, 6});
  test::expect_exact(f(mk<float>({3, 4})), kFloat32, {3, 6});  // a cache hit reads and writes back
  test::expect_exact(running, kFloat32, {2, 5});
  test::expect_exact(count, kInt64, {2});
  running.fill_(0);  // the user's own update reaches the next call
  test::expect_exact(f(mk<float>({4, 4})), kFloat32, {3, 3});
  EXPECT_EQ(f.stats().traces, 1);
}

// The use that needs the write-back: a module's batch_norm in training, its running statistics
// captured, agrees with eager over several calls, outputs and statistics alike.
TEST(CompileResults, BatchNormTrainingUpdatesCapturedRunningStatistics) {
  Generator gen(7);
  Tensor weight = randn({3}, gen), bias = randn({3}, gen);
  auto module = [&](const Tensor& rm, const Tensor& rv) {
    return [=](const Tensor& x) { return relu(batch_norm(x, weight, bias, rm, rv, true, 0.1, 1e-5)); };
  };
  Tensor rm_eager = zeros({3}), rv_eager = ones({3}), rm = zeros({3}), rv = ones({3});
  auto eager = module(rm_eager, rv_eager);
  auto f = compile(module(rm, rv));
  for (int call = 0; call < 3; ++call) {
    Tensor x = randn({4, 3, 5}, gen) * (call + 1);
    Tensor want = eager(x), got = f(x);
    EXPECT_TRUE(allclose(got, want, 1e-5, 1e-6)) << "call " << call << got << want;
    EXPECT_TRUE(allclose(rm, rm_eager, 1e-5, 1e-6)) << "call " << call << rm << rm_eager;
    EXPECT_TRUE(allclose(rv, rv_eager, 1e-5, 1e-6)) << "call " << call << rv << rv_eager;
  }
  EXPECT_FALSE(allclose(rm, zeros({3})));  // the statistics did move
  EXPECT_EQ(f.stats().traces, 1);
}

// Two captured tensors sharing memory: writing one back would leave the other read stale.
TEST(CompileResults, InPlaceUpdateOfACapturedTensorSharingMemoryIsRefused) {
  Tensor base = mk<float>({1, 2, 3, 4});
  Tensor head = base.slice(0, 0, 2);
  auto f = compile([base, head](const Tensor& x) {
    Tensor h = head;
    Tensor y = base.sum() + x;
    h.add_(x);
    return y;
  });
  const std::string e = test::error_of([&] { f(mk<float>({1, 1})); });
  EXPECT_EQ(e.rfind("[copy_] in-place update of a captured tensor", 0), 0u) << e;
}

// Every output of two tuple results is close (test::expect_close with rtol relative to
// 1 + |want|; NaN and infinities exactly), named in order by `names`.
template <typename... T>
void expect_all_match(const std::tuple<T...>& got, const std::tuple<T...>& want, double rtol,
                      const std::vector<std::string>& names, const std::string& what) {
  ASSERT_EQ(names.size(), sizeof...(T));
  auto one = [&](const Tensor& g, const Tensor& w, const std::string& name) {
    SCOPED_TRACE(name + what);
    test::expect_close(g, test::doubles(w), rtol, rtol);
  };
  [&]<size_t... I>(std::index_sequence<I...>) { (one(std::get<I>(got), std::get<I>(want), names[I]), ...); }(
      std::index_sequence_for<T...>{});
}

// Large products run in kiln's pool (runtime/cpu/extern_matmul.cpp): a block of C's rows per
// thread (M >= N), of its columns (M < N), or a share of a batch's products, each one
// single-threaded BLAS call. With 1, 2 and 3 threads (uneven blocks), operands plain and
// transposed, f32 and f64, every element equals the interpreter's product: no block is
// computed twice, left out or offset.
TEST(CompileResults, ProductsSplitAcrossThePoolAgreeWithTheInterpreter) {
  struct ThreadCount {
    int old = rt::num_threads();
    explicit ThreadCount(int n) { rt::set_num_threads(n); }
    ~ThreadCount() { rt::set_num_threads(old); }
  };
  auto fn = [](const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& d, const Tensor& e, const Tensor& f) {
    return std::make_tuple(mm(a, b),                  // rows: [700, 64] x [64, 90]
                           mm(b.t(), a.t()),          // columns: [90, 64] x [64, 700], both transposed
                           mm(c, d),                  // columns: [37, 300] x [300, 530]
                           bmm(e, f),                 // a batch of 3 across the pool
                           bmm(e.narrow(0, 1, 1), f.narrow(0, 2, 1)));  // a batch of 1, split
  };
  CompileOptions ref_opts;
  ref_opts.backend = "interpreter";
  for (ScalarType dt : {kFloat32, kFloat64}) {
    const TensorOptions o = TensorOptions().dtype(dt);
    const Tensor a = randn({700, 64}, o), b = randn({64, 90}, o), c = randn({37, 300}, o), d = randn({300, 530}, o);
    const Tensor e = randn({3, 130, 70}, o), f = randn({3, 70, 150}, o);
    const auto want = compile(fn, ref_opts)(a, b, c, d, e, f);
    for (int threads : {1, 2, 3}) {
      ThreadCount t(threads);
      const auto got = compile(fn)(a, b, c, d, e, f);
      expect_all_match(got, want, dt == kFloat32 ? 1e-4 : 1e-10, {"rows", "columns transposed", "columns", "batch", "batch of 1"},
                       fmt::format(" ({}, {} threads)", dtype_name(dt), threads));
    }
  }
}

// Float max/min reductions fold with maxnum/minnum and a separate NaN flag (codegen_cpu's
// emit_stage): a NaN anywhere in a row, in the vector body or the remainder, gives NaN, as the
// interpreter's (and PyTorch's) amax/amin do; infinities are ordinary values. 1000 columns
// leave a remainder on every vector width.
TEST(CompileResults, MaxAndMinReductionsPropagateNaNFromAnyPosition) {
  Tensor x = randn({6, 1000});
  float* p = x.data_ptr<float>();
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  p[1 * 1000 + 0] = nan;
  p[2 * 1000 + 500] = nan;
  p[3 * 1000 + 999] = nan;
  p[4 * 1000 + 7] = inf;
  p[4 * 1000 + 8] = -inf;
  for (int i = 0; i < 1000; ++i) p[5 * 1000 + i] = nan;
  auto fn = [](const Tensor& t) {
    return std::make_tuple(t.amax({1}), t.amin({1}), softmax(t, -1).sum({1}), logsumexp(t, {1}), t.amax(), t.amin({0}));
  };
  const auto got = compile(fn)(x);
  CompileOptions ref_opts;
  ref_opts.backend = "interpreter";
  const auto want = compile(fn, ref_opts)(x);
  expect_all_match(got, want, 1e-5, {"amax(1)", "amin(1)", "softmax(-1).sum(1)", "logsumexp(1)", "amax()", "amin(0)"},
                   "");
  const std::vector<float> mx = std::get<0>(got).to_vector<float>();
  EXPECT_FALSE(std::isnan(mx[0]));
  for (int r = 1; r <= 3; ++r) EXPECT_TRUE(std::isnan(mx[static_cast<size_t>(r)])) << "row " << r;
  EXPECT_EQ(mx[4], inf);
  EXPECT_EQ(std::get<1>(got).to_vector<float>()[4], -inf);
  EXPECT_TRUE(std::isnan(std::get<4>(got).item<float>()));
}

// Row reductions run as a main loop over a multiple of 64 columns and a masked vector tail
// (codegen_cpu's LoopHint::masked_tail). Every length around the boundaries, static and
// symbolic, gives the interpreter's result: no column is summed twice or left out, a masked
// lane never reads the next row, and a NaN in the tail still propagates.
TEST(CompileResults, RowReductionsAgreeAtEveryTailLength) {
  auto fn = [](const Tensor& t) {
    return std::make_tuple(t.sum({1}), t.amax({1}), t.amin({1}), softmax(t, -1), logsumexp(t, {1}),
                           t.to(kFloat64).sum({1}), t.var({1}));
  };
  CompileOptions ref_opts;
  ref_opts.backend = "interpreter";
  CompileOptions static_opts, dyn_opts;
  static_opts.dynamic = Dynamic::False;
  static_opts.cache_size_limit = 16;
  dyn_opts.dynamic = Dynamic::True;
  auto ref = compile(fn, ref_opts);
  auto fixed = compile(fn, static_opts);
  auto dynamic = compile(fn, dyn_opts);
  for (int64_t n : {1, 2, 15, 16, 17, 63, 64, 65, 100, 127, 128, 129, 1000}) {
    Tensor x = randn({3, n});
    x.data_ptr<float>()[2 * n - 1] = std::numeric_limits<float>::quiet_NaN();  // row 1's last column
    const auto want = ref(x);
    for (auto* f : {&fixed, &dynamic}) {
      const auto got = (*f)(x);
      const std::string what = fmt::format("n = {}, {}", n, f == &fixed ? "static" : "dynamic");
      expect_all_match(got, want, 2e-6, {"sum", "amax", "amin", "softmax", "logsumexp", "sum f64", "var"}, ", " + what);
    }
  }
  EXPECT_EQ(fixed.stats().compiles, 13);
  EXPECT_LE(dynamic.stats().compiles, 3);  // n = 1 and n = 2.. specialize, then one symbolic entry
}

// A float sum of f32 (f16, bf16) values adds them into 64 f32 partials per block of 512 and the
// blocks' totals in f64 (ir/kernel.h KVectorize::partials): every addition has fixed operands,
// so the result is the same bits on every host, whatever its vector width. Held bit for bit to
// the layout written out in scalar C++ (test_support/partial_sum.h), static, symbolic and eager,
// for rows whose values span six decades (so that any other order of addition would round
// differently), and within the layout's error bound of the exact sum: at most 7 roundings in an
// f32 partial (the tree adds in f64), 8 units of 2^-24 of the sum of magnitudes. f16 rows sum
// their values (exact in f32) the same way.
TEST(CompileResults, FloatSumsFollowTheFixedPartialLayout) {
  auto fn = [](const Tensor& t) { return std::make_tuple(t.sum({1}), t.to(kHalf).sum({1}, false, kFloat)); };
  CompileOptions static_opts, dyn_opts;
  static_opts.dynamic = Dynamic::False;
  static_opts.cache_size_limit = 32;
  dyn_opts.dynamic = Dynamic::True;
  auto fixed = compile(fn, static_opts);
  auto dynamic = compile(fn, dyn_opts);
  for (int64_t n : {1, 2, 5, 63, 64, 65, 100, 511, 512, 513, 1000, 1025, 4095, 5000}) {
    manual_seed(n);
    const Tensor x = (randn({3, n}) * exp((rand({3, n}) * 6 - 3) * std::log(10.0))).contiguous();
    const float* px = x.data_ptr<float>();
    const Tensor xh = x.to(kHalf).to(kFloat);  // the f16 values, exact in f32
    for (int64_t r = 0; r < 3; ++r) {
      const float want = static_cast<float>(test::partial_layout_sum<float>(px + r * n, n));
      const float want_half = static_cast<float>(test::partial_layout_sum<float>(xh.data_ptr<float>() + r * n, n));
      long double exact = 0, magnitude = 0;
      for (int64_t i = 0; i < n; ++i) {
        exact += px[r * n + i];
        magnitude += std::fabs(px[r * n + i]);
      }
      EXPECT_LE(std::fabs(static_cast<long double>(want) - exact),
                8 * std::ldexp(1.0L, -24) * magnitude + std::fabs(exact) * std::ldexp(1.0L, -24))
          << "n = " << n << ", row " << r;
      const std::vector<std::pair<const char*, std::tuple<Tensor, Tensor>>> runs = {
          {"static", fixed(x)}, {"dynamic", dynamic(x)}, {"eager", fn(x)}};
      for (const auto& [mode, got] : runs) {
        const std::string what = fmt::format("n = {}, row {}, {}", n, r, mode);
        EXPECT_EQ(std::get<0>(got).to_vector<float>()[static_cast<size_t>(r)], want) << what;
        EXPECT_EQ(std::get<1>(got).to_vector<float>()[static_cast<size_t>(r)], want_half) << what;
      }
    }
  }
}

// Column reductions (over outer dims) add kTileRows = 4 input rows into their tile of
// accumulators per pass, then the remaining rows one by one (codegen_cpu's emit_tiled). Every
// row count around the grouping, over one outer dim and over two, agrees with the interpreter,
// and a NaN in the last (ungrouped) row propagates.
TEST(CompileResults, ColumnReductionsAgreeAtEveryRowCount) {
  auto fn = [](const Tensor& t) {
    return std::make_tuple(t.sum({0}), t.amax({0}), t.amin({0}), t.sum({0, 1}), t.to(kFloat64).sum({0}),
                           t.mean({0}));
  };
  CompileOptions ref_opts;
  ref_opts.backend = "interpreter";
  auto ref = compile(fn, ref_opts);
  auto compiled = compile(fn);
  for (int64_t rows : {1, 2, 3, 4, 5, 7, 8, 9, 13}) {
    Tensor x = randn({rows, 3, 300});
    x.data_ptr<float>()[(rows - 1) * 900 + 5] = std::numeric_limits<float>::quiet_NaN();
    expect_all_match(compiled(x), ref(x), 2e-6, {"sum(0)", "amax(0)", "amin(0)", "sum(0, 1)", "sum f64", "mean(0)"},
                     fmt::format(", rows = {}", rows));
  }
}

// A full reduction of rows of 4096 or more elements splits into column partials on the CPU
// (passes' split_by_columns, 20_split_by_columns.kir): every row count around the four-row
// grouping, static and symbolic, agrees with the interpreter, and a NaN propagates.
TEST(CompileResults, FullReductionsSplitByColumnsAgree) {
  auto fn = [](const Tensor& t) { return std::make_tuple(t.sum(), t.amax(), t.amin(), t.to(kFloat64).sum()); };
  CompileOptions ref_opts, dyn_opts;
  ref_opts.backend = "interpreter";
  dyn_opts.dynamic = Dynamic::True;
  auto ref = compile(fn, ref_opts);
  auto fixed = compile(fn);
  auto dynamic = compile(fn, dyn_opts);
  for (int64_t rows : {16, 17, 18, 19, 23}) {
    Tensor x = randn({rows, 4100});
    for (auto* f : {&fixed, &dynamic})
      expect_all_match((*f)(x), ref(x), 2e-6, {"sum", "amax", "amin", "sum f64"}, fmt::format(", rows = {}", rows));
    x.data_ptr<float>()[(rows - 1) * 4100 + 4099] = std::numeric_limits<float>::quiet_NaN();
    expect_all_match(dynamic(x), ref(x), 2e-6, {"sum", "amax", "amin", "sum f64"}, fmt::format(", NaN, rows = {}", rows));
  }
}

TEST(CompileResults, UnknownBackendIsAnErrorNamingIt) {
  CompileOptions o;
  o.backend = "tpu";
  const std::string e = test::error_of([&] { compile([](const Tensor& a) { return a; }, o); });
  EXPECT_EQ(e.rfind("[compile] ", 0), 0u) << e;
  EXPECT_NE(e.find("'tpu'"), std::string::npos) << e;
}

TEST(CompileResults, UndefinedTensorArgumentIsAnError) {
  auto f = compile([](const Tensor& a) { return a + 1; });
  EXPECT_EQ(test::error_of([&] { f(Tensor()); }), "[compile] function 'fn' received an undefined tensor");
}

TEST(CompileErrors, ShapeErrorNamesOpAndSignatureAndFunctionStaysUsable) {
  CompileOptions o;
  o.name = "adder";
  auto f = compile([](const Tensor& a, const Tensor& b) { return a + b; }, o);
  const std::string e = test::error_of([&] { f(mk<float>({1, 2, 3, 4, 5, 6}, {2, 3}), mk<float>({1, 2, 3, 4})); });
  EXPECT_EQ(e.rfind("[add] ", 0), 0u) << e;
  EXPECT_NE(e.find("'adder'"), std::string::npos) << e;
  EXPECT_NE(e.find("(f32[2, 3], f32[4])"), std::string::npos) << e;
  // The same bad call fails again the same way (nothing half-built was cached) ...
  EXPECT_EQ(test::error_of([&] { f(mk<float>({1, 2, 3, 4, 5, 6}, {2, 3}), mk<float>({1, 2, 3, 4})); }), e);
  EXPECT_EQ(f.stats().compiles, 0);
  // ... and good calls work.
  test::expect_exact(f(mk<float>({1, 2, 3, 4, 5, 6}, {2, 3}), mk<float>({10, 20, 30})), kFloat32,
                     {11, 22, 33, 14, 25, 36});
  EXPECT_EQ(f.stats().compiles, 1);
}

TEST(CompileErrors, MatmulErrorNamesOpAndSignature) {
  auto f = compile([](const Tensor& a, const Tensor& b, int64_t k) { return matmul(a, b) * k; });
  const std::string e = test::error_of([&] { f(mk<float>({1, 2, 3, 4, 5, 6}, {2, 3}), mk<float>({1, 2, 3, 4}, {2, 2}), 3); });
  EXPECT_EQ(e.rfind("[matmul] ", 0), 0u) << e;
  EXPECT_NE(e.find("(f32[2, 3], f32[2, 2], 3)"), std::string::npos) << e;
  test::expect_exact(f(mk<float>({1, 2, 3, 4}, {2, 2}), mk<float>({1, 0, 0, 1}, {2, 2}), 3), kFloat32, {3, 6, 9, 12});
}

// Reading values while tracing (item(), nonzero, unique) ends the trace: the signature gets
// an eager entry (its guards static) that runs the function as it is, once warned; fullgraph
// makes it an error naming the op and the signature.
TEST(CompileDataDependent, ReadingDataRunsTheSignatureEagerly) {
  int calls = 0;
  auto f = compile([&calls](const Tensor& a) {
    ++calls;
    return a.item<float>() > 0 ? a * 2 : -a;
  });
  test::expect_exact(f(mk<float>({3})), kFloat32, {6});
  test::expect_exact(f(mk<float>({-4})), kFloat32, {4});  // the same entry, run eagerly again
  EXPECT_EQ(calls, 3);  // the aborted trace, then two eager runs
  CompileStats st = f.stats();
  EXPECT_EQ(st.traces, 1);
  EXPECT_EQ(st.compiles, 0);
  EXPECT_EQ(st.cache_hits, 1);
  test::expect_exact(f(mk<double>({-1})), kFloat64, {1});  // another dtype: the f32 entry's guards fail
  EXPECT_EQ(f.stats().traces, 2);
  EXPECT_NE(f.explain(mk<float>({3})).find("runs eagerly: [item]"), std::string::npos) << f.explain(mk<float>({3}));
}

TEST(CompileDataDependent, NonzeroInsideACompiledFunction) {
  auto f = compile([](const Tensor& a) { return nonzero(a * 2); });
  const Tensor got = f(mk<float>({0, 1.5, 0, -2}, {2, 2}));
  EXPECT_EQ(got.sizes().vec(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(got.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 1, 1}));
}

TEST(CompileDataDependent, FullgraphIsAClearError) {
  CompileOptions o;
  o.fullgraph = true;
  auto f = compile([](const Tensor& a) { return a.item<float>() > 0 ? a : -a; }, o);
  try {
    f(mk<float>({1}));
    ADD_FAILURE() << "expected DataDependentError";
  } catch (const DataDependentError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("[item] ", 0), 0u) << msg;
    EXPECT_NE(msg.find("(f32[1])"), std::string::npos) << msg;
    EXPECT_NE(msg.find("fullgraph"), std::string::npos) << msg;
  }
}

// argsort runs as a library call (runtime/cpu/extern_sort.cpp) in compiled programs and eager
// ops: rows split among threads, NaNs moved aside, std::stable_sort on the rest. It must equal
// the interpreter's reference position for position, ties and NaNs included, in every layout.
TEST(CompiledSort, LibraryCallMatchesTheReference) {
  manual_seed(7);
  Tensor x = (randn({37, 1000}) * 4).round();  // many ties
  x = where(rand({37, 1000}) < 0.05, std::numeric_limits<double>::quiet_NaN(), x);
  CompileOptions ref;
  ref.backend = "interpreter";
  for (const Tensor& in : {x, x.t(), x.to(kHalf), x.to(kInt32).slice(1, 0, 1000, 3)}) {
    for (int64_t d : {0, 1}) {
      for (bool desc : {false, true}) {
        auto fn = [d, desc](const Tensor& a) { return argsort(a, d, desc); };
        const std::vector<int64_t> want = compile(fn, ref)(in).to_vector<int64_t>();
        EXPECT_EQ(compile(fn)(in).to_vector<int64_t>(), want) << "dim " << d << (desc ? " descending" : "");
        EXPECT_EQ(argsort(in, d, desc).to_vector<int64_t>(), want) << "eager, dim " << d;
      }
    }
  }
  auto f = compile([](const Tensor& a) { return argsort(a, 1); });
  const std::string e = f.explain(x);
  EXPECT_NE(e.find("extern argsort [sort]"), std::string::npos) << e;
}


// scaled_dot_product_attention runs whole as a library call (runtime/cpu/extern_attention.cpp):
// blocks of query rows, scores by BLAS, the masked softmax in cache, the product with v by BLAS.
// Compiled and eager it must agree with the interpreter, which runs the decomposition, across
// row blocks, causal masks with L < S and L > S, bool and additive masks (broadcast, strided,
// a row that sees no key), NaN and inf inputs, broadcast batch dims, strided operands, f64,
// and f16/bf16 (computed in f32: compared with the f32 reference rounded once).
TEST(CompiledAttention, LibraryCallMatchesTheReference) {
  manual_seed(11);
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  CompileOptions ref;
  ref.backend = "interpreter";
  auto check = [&](const std::string& what, const Tensor& q, const Tensor& k, const Tensor& v,
                   const std::optional<Tensor>& mask, bool causal, std::optional<double> scale, double tol) {
    SCOPED_TRACE(what);
    auto fn = [&](const Tensor& a, const Tensor& b, const Tensor& c) {
      return scaled_dot_product_attention(a, b, c, mask, 0.0, causal, scale);
    };
    const bool narrow = q.dtype() == kHalf || q.dtype() == kBFloat16;
    // The reference in f32 for f16/bf16 inputs (the kernel's own precision), rounded once.
    const Tensor want = narrow ? compile(fn, ref)(q.to(kFloat), k.to(kFloat), v.to(kFloat)).to(q.dtype())
                               : compile(fn, ref)(q, k, v);
    auto compiled = compile(fn);
    for (const auto& [mode, got] : {std::pair<const char*, Tensor>{"compiled", compiled(q, k, v)},
                                    std::pair<const char*, Tensor>{"eager", fn(q, k, v)}}) {
      ASSERT_EQ(got.sizes().vec(), want.sizes().vec()) << mode;
      ASSERT_EQ(got.dtype(), want.dtype()) << mode;
      const std::vector<double> g = got.to(kDouble).contiguous().to_vector<double>();
      const std::vector<double> w = want.to(kDouble).contiguous().to_vector<double>();
      int bad = 0;
      for (size_t i = 0; i < w.size() && bad < 5; ++i) {
        const bool ok = std::isnan(w[i]) ? std::isnan(g[i]) : std::fabs(g[i] - w[i]) <= tol * (1 + std::fabs(w[i]));
        if (!ok) ++bad;
        EXPECT_TRUE(ok) << mode << " element " << i << ": got " << g[i] << ", want " << w[i];
      }
    }
    const std::string e = compiled.explain(q, k, v);
    EXPECT_NE(e.find("[attention]"), std::string::npos) << e;
  };
  const Tensor q = randn({2, 2, 300, 32}), k = randn({2, 2, 700, 32}), v = randn({2, 2, 700, 24});
  check("several row blocks", q, k, v, std::nullopt, false, std::nullopt, 1e-5);
  check("causal, L < S", q, k, v, std::nullopt, true, 0.2, 1e-5);
  const Tensor ql = randn({1, 2, 500, 16}), kl = randn({1, 2, 200, 16}), vl = randn({1, 2, 200, 16});
  check("causal, L > S", ql, kl, vl, std::nullopt, true, std::nullopt, 1e-5);
  Tensor allowed = rand({300, 700}) > 0.3;
  allowed.select(0, 5).fill_(false);  // row 5 sees no key: zeros
  check("bool mask", q, k, v, allowed, false, std::nullopt, 1e-5);
  Tensor add = randn({700});
  add.slice(0, 0, 700, 7).fill_(-inf);
  check("additive mask over keys", q, k, v, add, false, std::nullopt, 1e-5);
  check("additive mask over queries (stride 0 along keys)", q, k, v, randn({300, 1}), false, std::nullopt, 1e-5);
  Tensor qn = q.clone(), kn = k.clone();
  qn.select(2, 7).fill_(nan);
  kn.select(2, 9).fill_(inf);
  check("NaN and inf", qn, kn, v, std::nullopt, false, std::nullopt, 1e-5);
  check("broadcast batch dims", q, k.select(0, 1), v.slice(0, 0, 1), std::nullopt, false, std::nullopt, 1e-5);
  check("strided operands", randn({2, 2, 32, 300}).transpose(-1, -2), randn({2, 2, 700, 64}).slice(-1, 0, 64, 2),
        v.transpose(-1, -2).contiguous().transpose(-1, -2), std::nullopt, true, std::nullopt, 1e-5);
  check("f64", q.to(kDouble), k.to(kDouble), v.to(kDouble), allowed, false, std::nullopt, 1e-12);
  check("f16", q.to(kHalf), k.to(kHalf), v.to(kHalf), std::nullopt, true, std::nullopt, 2e-3);
  check("bf16", q.to(kBFloat16), k.to(kBFloat16), v.to(kBFloat16), std::nullopt, false, std::nullopt, 1e-2);
  check("no keys", randn({2, 4, 8}), randn({2, 0, 8}), randn({2, 0, 5}), std::nullopt, false, std::nullopt, 0);
}

}  // namespace
}  // namespace kiln
