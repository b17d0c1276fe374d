// kiln/test/test_compile_cache.cpp — guards and the per-function cache of compile().
//
// Counts traces, compiles, hits and misses across calls that keep or change the signature
// (shape, dtype, strides, aliasing, scalar values), checks results against values computed
// here element by element, the cache_size_limit fallback and its one warning, the
// KILN_LOG=recompiles message, and GuardSet on its own (text, first failure, signature).
#include "kiln/kiln.h"
#include "guards/guard_set.h"
#include "test_compile_util.h"
#include "test_support/check.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

using test::Doubles;
using test::doubles;
using test::mk;

// a * b + 1 computed here.
Doubles mul_add1(const Tensor& a, const Tensor& b) {
  Doubles x = doubles(a), y = doubles(b), out;
  for (size_t i = 0; i < x.size(); ++i) out.push_back(x[i] * y[i] + 1);
  return out;
}

void expect_stats(const CompileStats& s, int64_t traces, int64_t compiles, int64_t hits, int64_t misses) {
  EXPECT_EQ(s.traces, traces);
  EXPECT_EQ(s.compiles, compiles);
  EXPECT_EQ(s.cache_hits, hits);
  EXPECT_EQ(s.cache_misses, misses);
}

TEST(CompileCache, SameShapesHitNewShapeAndDtypeMiss) {
  auto f = compile([](const Tensor& a, const Tensor& b) { return a * b + 1; });
  Tensor a = mk<float>({1, 2, 3, 4, 5, 6}, {2, 3}), b = mk<float>({2, -1, 0.5, 3, 4, -2}, {2, 3});
  test::expect_exact(f(a, b), kFloat32, {3, -1, 2.5, 13, 21, -11});
  expect_stats(f.stats(), 1, 1, 0, 1);
  EXPECT_EQ(f.stats().kernels, 1);
  // Same signature, new values: a hit that computes with the new values.
  Tensor c = mk<float>({0, 1, 2, 3, 4, 5}, {2, 3});
  test::expect_exact(f(c, b), kFloat32, mul_add1(c, b));
  test::expect_exact(f(a, b), kFloat32, {3, -1, 2.5, 13, 21, -11});
  expect_stats(f.stats(), 1, 1, 2, 1);
  // New shape.
  Tensor a3 = mk<float>({1, 2, 3}, {1, 3}), b3 = mk<float>({4, 5, 6}, {1, 3});
  test::expect_exact(f(a3, b3), kFloat32, {5, 11, 19});
  expect_stats(f.stats(), 2, 2, 2, 2);
  // New dtype (f64): a third entry, computing in f64.
  Tensor ad = mk<double>({0.1, 0.2, 0.3}, {1, 3}), bd = mk<double>({3, 3, 3}, {1, 3});
  Tensor yd = f(ad, bd);
  test::expect_exact(yd, kFloat64, {0.1 * 3 + 1, 0.2 * 3 + 1, 0.3 * 3 + 1});
  expect_stats(f.stats(), 3, 3, 2, 3);
  // Every earlier signature still hits.
  f(a, b);
  f(a3, b3);
  f(ad, bd);
  expect_stats(f.stats(), 3, 3, 5, 3);
}

TEST(CompileCache, NonContiguousInputIsGuardedByStrides) {
  auto f = compile([](const Tensor& a, const Tensor& b) { return a * b + 1; });
  Tensor base = mk<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  Tensor b = mk<float>({1, 10, 100, 1000, 10000, 100000, 1, 2, 3}, {3, 3});
  test::expect_exact(f(base, b), kFloat32, mul_add1(base, b));
  // The transpose has the same sizes but strides [1, 3]: the contiguous entry must not run
  // on it (it would read the elements in the wrong order).
  Tensor t = base.t();
  ASSERT_EQ(t.strides().vec(), (std::vector<int64_t>{1, 3}));
  test::expect_exact(f(t, b), kFloat32, mul_add1(t, b));
  expect_stats(f.stats(), 2, 2, 0, 2);
  // An offset view with the same strides as a fresh tensor (a row slice) reuses the entry and
  // reads from its offset.
  Tensor big = mk<float>({9, 9, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {4, 3});
  Tensor rows = big.slice(0, 1, 4);
  test::expect_exact(f(rows, b), kFloat32, mul_add1(base, b));
  expect_stats(f.stats(), 2, 2, 1, 2);
  // A broadcast (stride 0) input is a third signature.
  Tensor row = mk<float>({1, 2, 3}, {1, 3}).expand({3, 3});
  test::expect_exact(f(row, b), kFloat32, mul_add1(row, b));
  expect_stats(f.stats(), 3, 3, 1, 3);
}

TEST(CompileCache, AliasingInputsAreASignature) {
  auto f = compile([](const Tensor& a, const Tensor& b) { return a * b + 1; });
  Tensor a = mk<float>({1, 2, 3, 4}, {4}), b = mk<float>({5, 6, 7, 8}, {4});
  test::expect_exact(f(a, b), kFloat32, {6, 13, 22, 33});
  test::expect_exact(f(a, a), kFloat32, {2, 5, 10, 17});
  expect_stats(f.stats(), 2, 2, 0, 2);
  test::expect_exact(f(b, b), kFloat32, {26, 37, 50, 65});  // aliasing again: a hit
  test::expect_exact(f(b, a), kFloat32, {6, 13, 22, 33});   // distinct again: a hit
  expect_stats(f.stats(), 2, 2, 2, 2);
  // Two views of one storage alias too.
  Tensor s = mk<float>({1, 2, 3, 4, 5, 6, 7, 8}, {8});
  test::expect_exact(f(s.slice(0, 0, 4), s.slice(0, 4, 8)), kFloat32, {6, 13, 22, 33});
  expect_stats(f.stats(), 2, 2, 3, 2);
}

TEST(CompileCache, IntScalarIsGuardedByValue) {
  auto f = compile([](const Tensor& x, int64_t k) { return x * k; });
  Tensor x = mk<int64_t>({1, -2, 3});
  test::expect_exact(f(x, int64_t{3}), kInt64, {3, -6, 9});
  test::expect_exact(f(x, int64_t{3}), kInt64, {3, -6, 9});
  test::expect_exact(f(x, int64_t{-5}), kInt64, {-5, 10, -15});
  expect_stats(f.stats(), 2, 2, 1, 2);
  test::expect_exact(f(x, int64_t{3}), kInt64, {3, -6, 9});
  expect_stats(f.stats(), 2, 2, 2, 2);
}

TEST(CompileCache, DoubleScalarIsGuardedByValue) {
  auto f = compile([](const Tensor& x, double s) { return x + s; });
  Tensor x = mk<float>({1, 2});
  test::expect_exact(f(x, 0.5), kFloat32, {1.5, 2.5});
  test::expect_exact(f(x, 0.25), kFloat32, {1.25, 2.25});
  test::expect_exact(f(x, 0.5), kFloat32, {1.5, 2.5});
  expect_stats(f.stats(), 2, 2, 1, 2);
  // -0.0 and 0.0 compare equal but are guarded bit-exactly: a separate entry, same result.
  test::expect_exact(f(x, 0.0), kFloat32, {1, 2});
  test::expect_exact(f(x, -0.0), kFloat32, {1, 2});
  EXPECT_EQ(f.stats().compiles, 4);
}

TEST(CompileCache, BoolScalarIsGuardedByValue) {
  auto f = compile([](const Tensor& x, bool negate) { return negate ? -x : x * 2; });
  Tensor x = mk<float>({1, -3});
  test::expect_exact(f(x, true), kFloat32, {-1, 3});
  test::expect_exact(f(x, false), kFloat32, {2, -6});
  test::expect_exact(f(x, true), kFloat32, {-1, 3});
  test::expect_exact(f(x, false), kFloat32, {2, -6});
  expect_stats(f.stats(), 2, 2, 2, 2);
}

TEST(CompileCache, PastTheLimitCallsRunEagerlyAndWarnOnce) {
  test::LogCapture logs;
  CompileOptions o;
  o.cache_size_limit = 2;
  o.name = "limited";
  o.dynamic = Dynamic::False;  // every size is a new signature
  auto f = compile([](const Tensor& a) { return a * 2 + 1; }, o);
  for (int64_t n = 1; n <= 5; ++n) {
    std::vector<double> v;
    for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<double>(i));
    Tensor a = mk<float>(v);
    std::vector<double> want;
    for (double x : v) want.push_back(x * 2 + 1);
    test::expect_exact(f(a), kFloat32, want);
  }
  // Two entries compiled; sizes 3, 4, 5 ran eagerly (still misses).
  EXPECT_EQ(f.stats().compiles, 2);
  EXPECT_EQ(f.stats().traces, 2);
  EXPECT_EQ(f.stats().cache_misses, 5);
  std::vector<std::string> warnings = logs.matching("cache_size_limit");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("[kiln:warning]"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("'limited'"), std::string::npos) << warnings[0];
  // The guard that failed, with the expected and the actual value (the last entry had size 2).
  EXPECT_NE(warnings[0].find("(last miss: guard failed: arg0.size(0) == 2, got 3)"), std::string::npos) << warnings[0];
  // Signatures compiled before the limit still hit.
  test::expect_exact(f(mk<float>({4})), kFloat32, {9});
  EXPECT_EQ(f.stats().cache_hits, 1);
  EXPECT_EQ(logs.matching("cache_size_limit").size(), 1u);
}

TEST(CompileCache, ZeroLimitNeverCompiles) {
  test::LogCapture logs;
  CompileOptions o;
  o.cache_size_limit = 0;
  auto f = compile([](const Tensor& a) { return a - 1; }, o);
  test::expect_exact(f(mk<float>({1, 2})), kFloat32, {0, 1});
  test::expect_exact(f(mk<float>({5})), kFloat32, {4});
  EXPECT_EQ(f.stats().compiles, 0);
  EXPECT_EQ(f.stats().traces, 0);
  ASSERT_EQ(logs.matching("cache_size_limit").size(), 1u);
  EXPECT_NE(logs.matching("cache_size_limit")[0].find("(last miss: no entry yet)"), std::string::npos)
      << logs.matching("cache_size_limit")[0];
}

TEST(CompileCache, NegativeLimitIsAnError) {
  CompileOptions o;
  o.cache_size_limit = -1;
  EXPECT_EQ(test::error_of([&] { compile([](const Tensor& a) { return a; }, o); }),
            "[compile] cache_size_limit must be >= 0, got -1");
}

TEST(CompileCache, RecompilesLogNamesTheFailingGuard) {
  test::LogCapture logs;
  test::EnvScope env("KILN_LOG", "recompiles");
  CompileOptions o;
  o.name = "relog";
  auto f = compile([](const Tensor& a, double s) { return a * s; }, o);
  f(mk<float>({1, 2, 3, 4}), 2.0);
  EXPECT_TRUE(logs.matching("[kiln:recompiles]").empty()) << "the first compile is not a recompile";
  f(mk<float>({1, 2, 3, 4, 5, 6, 7, 8}), 2.0);
  std::vector<std::string> rec = logs.matching("[kiln:recompiles]");
  ASSERT_EQ(rec.size(), 2u);
  EXPECT_NE(rec[0].find("relog"), std::string::npos) << rec[0];
  EXPECT_NE(rec[0].find("arg0.size(0) == 4, got 8"), std::string::npos) << rec[0];
  // Only a size changed: the next entry makes that dim symbolic (Dynamic::Auto).
  EXPECT_NE(rec[1].find("relog: automatic dynamic: arg0.size(0)"), std::string::npos) << rec[1];
  f(mk<float>({1, 2, 3, 4, 5, 6, 7, 8}), 2.5);
  rec = logs.matching("[kiln:recompiles]");
  ASSERT_EQ(rec.size(), 3u);
  EXPECT_NE(rec[2].find("arg1 == 2, got 2.5"), std::string::npos) << rec[2];
  f(mk<double>({1, 2, 3, 4, 5, 6, 7, 8}), 2.5);
  rec = logs.matching("[kiln:recompiles]");
  ASSERT_EQ(rec.size(), 4u);
  EXPECT_NE(rec[3].find("arg0.dtype == f32, got f64"), std::string::npos) << rec[3];
  // A hit logs nothing; nor does another size, which the symbolic entry covers.
  f(mk<double>({1, 2, 3, 4, 5, 6, 7, 8}), 2.5);
  f(mk<double>({1, 2, 3}), 2.5);
  EXPECT_EQ(logs.matching("[kiln:recompiles]").size(), 4u);
}

TEST(CompileCache, NoRecompileLogWhenTheChannelIsOff) {
  test::LogCapture logs;
  auto f = compile([](const Tensor& a) { return a + a; });
  f(mk<float>({1}));
  f(mk<float>({1, 2}));
  EXPECT_TRUE(logs.matching("[kiln:recompiles]").empty());
  EXPECT_EQ(f.stats().compiles, 2);
}

// ---------------------------------------------------------------------------------------------
// GuardSet on its own

using detail::ArgValue;
using guards::GuardSet;

// GuardSet reads the arguments' metadata (guards::GuardArg); these take the arguments as a
// compiled function receives them, as compile() does.
GuardSet guards_of(const std::vector<ArgValue>& args, std::vector<std::string> names) {
  return GuardSet::from_args(detail::guard_args(args), std::move(names));
}
bool passes(const GuardSet& gs, const std::vector<ArgValue>& args) { return gs.check(detail::guard_args(args)); }
std::optional<guards::GuardFailure> failure_of(const GuardSet& gs, const std::vector<ArgValue>& args) {
  return gs.first_failure(detail::guard_args(args));
}

TEST(GuardSet, StrListsEveryGuard) {
  Tensor a = mk<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = mk<float>({1, 2, 3}, {1, 3});
  std::vector<ArgValue> args{a, b, a.t(), int64_t{7}, 0.5, true};
  GuardSet gs = guards_of(args, {"a", "b", "at", "k", "s", "flag"});
  EXPECT_EQ(gs.str(),
            "a is a tensor\n"
            "a.dtype == f32\n"
            "a.device == cpu\n"
            "a.dim() == 2\n"
            "a.size(0) == 2\n"
            "a.size(1) == 3\n"
            "a.stride(0) == 3\n"
            "a.stride(1) == 1\n"
            "a shares storage with no earlier argument\n"
            "b is a tensor\n"
            "b.dtype == f32\n"
            "b.device == cpu\n"
            "b.dim() == 2\n"
            "b.size(0) == 1\n"
            "b.size(1) == 3\n"
            "b.stride(1) == 1\n"
            "b shares storage with no earlier argument\n"
            "at is a tensor\n"
            "at.dtype == f32\n"
            "at.device == cpu\n"
            "at.dim() == 2\n"
            "at.size(0) == 3\n"
            "at.size(1) == 2\n"
            "at.stride(0) == 1\n"
            "at.stride(1) == 3\n"
            "at shares storage with a\n"
            "k is an int\n"
            "k == 7\n"
            "s is a double\n"
            "s == 0.5\n"
            "flag is a bool\n"
            "flag == true\n");
}

TEST(GuardSet, FirstFailureNamesExpectedAndActual) {
  Tensor a = mk<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = mk<float>({1, 2, 3}, {3});
  GuardSet gs = guards_of({a, b, int64_t{4}}, {"x", "y", "n"});
  EXPECT_FALSE(failure_of(gs, {a, b, int64_t{4}}).has_value());
  EXPECT_TRUE(passes(gs, {mk<float>({0, 0, 0, 0, 0, 0}, {2, 3}), mk<float>({0, 0, 0}), int64_t{4}}));

  auto fail_of = [&](std::vector<ArgValue> args) {
    auto f = failure_of(gs, args);
    return f ? f->str() : std::string("<passes>");
  };
  EXPECT_EQ(fail_of({mk<float>({1, 2, 3}, {1, 3}), b, int64_t{4}}), "x.size(0) == 2, got 1");
  EXPECT_EQ(fail_of({mk<double>({1, 2, 3, 4, 5, 6}, {2, 3}), b, int64_t{4}}), "x.dtype == f32, got f64");
  EXPECT_EQ(fail_of({mk<float>({1, 2, 3, 4, 5, 6}, {6}), b, int64_t{4}}), "x.dim() == 2, got 1");
  EXPECT_EQ(fail_of({a.t().contiguous().t(), b, int64_t{4}}), "x.stride(0) == 3, got 1");
  EXPECT_EQ(fail_of({a, a.reshape({6}).slice(0, 0, 3), int64_t{4}}), "y shares storage with no earlier argument, got aliasing argument 0");
  EXPECT_EQ(fail_of({a, b, int64_t{5}}), "n == 4, got 5");
  EXPECT_EQ(fail_of({a, b, 4.0}), "n is an int, got a double");
  EXPECT_EQ(fail_of({a, int64_t{1}, int64_t{4}}), "y is a tensor, got an int");
  EXPECT_EQ(fail_of({a, b}), "3 arguments, got 2");
}

TEST(GuardSet, BoolAndDoubleFailuresReadLikeTheirValues) {
  GuardSet gs = guards_of({true, 0.5}, {"flag", "s"});
  auto f = failure_of(gs, {false, 0.5});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->str(), "flag == true, got false");
  f = failure_of(gs, {true, -0.5});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->str(), "s == 0.5, got -0.5");
}

TEST(GuardSet, AliasGuardFailsWhenAliasingStops) {
  Tensor a = mk<float>({1, 2, 3});
  GuardSet gs = guards_of({a, a}, {"p", "q"});
  EXPECT_TRUE(passes(gs, {a, a}));
  auto f = failure_of(gs, {a, mk<float>({1, 2, 3})});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->str(), "q shares storage with p, got no aliasing");
}

// An exported program's guards (runtime/export): the text reads back into an equal set, and
// damaged records are errors, never a check that reads out of bounds.
TEST(GuardSet, SerializedSetsReadBackEqualAndDamageIsRefused) {
  Tensor a = mk<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const std::vector<ArgValue> args{a, a.t(), int64_t{7}, -0.25, true};
  const GuardSet gs = guards_of(args, {"a", "my input", "k", "s", "flag"});
  const GuardSet back = GuardSet::deserialize(gs.serialize());
  EXPECT_EQ(back.str(), gs.str());
  EXPECT_EQ(back.signature(), gs.signature());
  EXPECT_EQ(back.serialize(), gs.serialize());
  EXPECT_TRUE(passes(back, args));
  const std::vector<ArgValue> other{a, a.t(), int64_t{7}, 0.25, true};
  ASSERT_TRUE(failure_of(back, other).has_value());
  EXPECT_EQ(failure_of(back, other)->str(), "s == -0.25, got 0.25");

  auto error = [](const std::string& text) { return test::error_of([&] { (void)GuardSet::deserialize(text); }); };
  const std::string good = gs.serialize();
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  EXPECT_EQ(error(with("guard 4 0 0 2", "guard 4 0 7 2")), "[guards] a guard reads dim 7 of argument 0 of rank 2");
  EXPECT_EQ(error(with("name a\n", "")), "[guards] a guard reads argument 4 dim 0 of 4 arguments");
  EXPECT_EQ(error(with("guard 1 0 0 8", "guard 1 0 0 99")), "[guards] argument 0 has dtype number 99");
  EXPECT_EQ(error("frob 1\n"), "[guards] line 1: unknown record: 'frob 1'");
  EXPECT_EQ(error("guard 1 0 0 8 0 cpu 0\n"), "[guards] a guard reads argument 0 dim 0 of 0 arguments");
  EXPECT_EQ(error("name x\nguard 1 0 0 8 0 cpu 0\n"), "[guards] a guard on argument 0 comes before its kind");
  for (size_t n = 0; n < good.size(); n += 7) {
    try {
      (void)GuardSet::deserialize(good.substr(0, n));
    } catch (const Error&) {
    }
  }
}

TEST(GuardSet, SignatureIsEqualForEqualInputsAndDiffersOtherwise) {
  auto sig = [](std::vector<ArgValue> args) { return guards_of(args, {}).signature(); };
  Tensor a = mk<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor a2 = mk<float>({6, 5, 4, 3, 2, 1}, {2, 3});  // other values, same signature
  Tensor b = mk<float>({1, 2, 3});
  const uint64_t base = sig({a, b, int64_t{1}});
  EXPECT_EQ(sig({a2, b, int64_t{1}}), base);
  EXPECT_EQ(sig({a2, mk<float>({0, 0, 0}), int64_t{1}}), base);
  // The names do not matter.
  EXPECT_EQ(guards_of({a, b, int64_t{1}}, {"x", "y", "z"}).signature(), base);

  std::vector<uint64_t> others{
      sig({mk<float>({1, 2, 3}, {1, 3}), b, int64_t{1}}),          // size
      sig({mk<double>({1, 2, 3, 4, 5, 6}, {2, 3}), b, int64_t{1}}),  // dtype
      sig({a.t().contiguous().t(), b, int64_t{1}}),                  // strides
      sig({a, b, int64_t{2}}),                                       // int value
      sig({a, b, 1.0}),                                              // int vs double
      sig({a, b, true}),                                             // int vs bool
      sig({a, a.reshape({6}).slice(0, 0, 3), int64_t{1}}),           // aliasing
      sig({a, b}),                                                   // arity
  };
  for (size_t i = 0; i < others.size(); ++i) {
    EXPECT_NE(others[i], base) << "variant " << i;
    for (size_t j = 0; j < i; ++j) EXPECT_NE(others[i], others[j]) << "variants " << j << " and " << i;
  }
  EXPECT_NE(sig({a, b, 0.5}), sig({a, b, 0.25}));
  EXPECT_NE(sig({a, b, true}), sig({a, b, false}));
}

}  // namespace
}  // namespace kiln
