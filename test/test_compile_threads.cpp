// kiln/test/test_compile_threads.cpp — one compiled function called from several threads.
//
// Threads start together (a barrier) and call the same compiled function, with one shared
// signature or with a mix of shapes and scalar values; every result is checked against
// values computed here, and the function must have compiled exactly once per distinct
// signature however the calls raced (the compile lock and the second look-up after it).
#include "kiln/kiln.h"
#include "test_support/check.h"

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <thread>
#include <vector>

namespace kiln {
namespace {

using test::doubles;

// x * k + row_sum(x) computed here, for x of shape [r, c].
std::vector<double> expected(const Tensor& x, int64_t k) {
  const int64_t r = x.size(0), c = x.size(1);
  std::vector<double> v = doubles(x), out;
  for (int64_t i = 0; i < r; ++i) {
    double s = 0;
    for (int64_t j = 0; j < c; ++j) s += v[static_cast<size_t>(i * c + j)];
    for (int64_t j = 0; j < c; ++j) out.push_back(v[static_cast<size_t>(i * c + j)] * static_cast<double>(k) + s);
  }
  return out;
}

// Small integers in f32: every sum and product is exact, so results compare exactly.
Tensor ints(int64_t r, int64_t c, int64_t seed) {
  std::vector<double> v;
  for (int64_t i = 0; i < r * c; ++i) v.push_back(static_cast<double>((i * 7 + seed * 3) % 11 - 5));
  return test::mk<float>(v, {r, c});
}

void run_threads(int n, const std::function<void(int)>& body) {
  std::barrier start(n);
  std::vector<std::thread> ts;
  for (int t = 0; t < n; ++t)
    ts.emplace_back([&, t] {
      start.arrive_and_wait();
      body(t);
    });
  for (std::thread& t : ts) t.join();
}

// Static shapes: every (shape, k) pair is its own signature.
auto make_fn() {
  CompileOptions o;
  o.dynamic = Dynamic::False;
  return compile([](const Tensor& x, int64_t k) { return x * k + x.sum({1}, true); }, o);
}

TEST(CompileThreads, SameSignatureFromEightThreads) {
  auto f = make_fn();
  std::atomic<int> bad{0};
  run_threads(8, [&](int t) {
    for (int i = 0; i < 6; ++i) {
      Tensor x = ints(5, 9, t * 10 + i);
      if (test::doubles(f(x, 3)) != expected(x, 3)) bad.fetch_add(1);
    }
  });
  EXPECT_EQ(bad.load(), 0);
  const CompileStats s = f.stats();
  EXPECT_EQ(s.compiles, 1);
  EXPECT_EQ(s.traces, 1);
  EXPECT_EQ(s.cache_misses, 1);
  EXPECT_EQ(s.cache_hits, 8 * 6 - 1);
}

TEST(CompileThreads, MixedSignaturesFromSixThreads) {
  auto f = make_fn();
  // 3 shapes x 2 scalar values = 6 signatures; each thread walks them from its own start.
  const std::vector<std::pair<int64_t, int64_t>> shapes{{2, 3}, {4, 17}, {33, 8}};
  const std::vector<int64_t> ks{2, -1};
  std::atomic<int> bad{0};
  run_threads(6, [&](int t) {
    for (int i = 0; i < 12; ++i) {
      const int sig = (t + i) % 6;
      const auto [r, c] = shapes[static_cast<size_t>(sig % 3)];
      const int64_t k = ks[static_cast<size_t>(sig / 3)];
      Tensor x = ints(r, c, t + i);
      Tensor y = f(x, k);
      if (y.sizes().vec() != std::vector<int64_t>{r, c} || test::doubles(y) != expected(x, k)) bad.fetch_add(1);
    }
  });
  EXPECT_EQ(bad.load(), 0);
  const CompileStats s = f.stats();
  EXPECT_EQ(s.compiles, 6);
  EXPECT_EQ(s.traces, 6);
  EXPECT_EQ(s.cache_misses, 6);
  EXPECT_EQ(s.cache_hits + s.cache_misses, 6 * 12);
}

TEST(CompileThreads, ThreadsDuringAnErrorAndAfter) {
  // Some threads pass mismatched shapes (a trace error), others good ones: the errors do not
  // poison the function and every good call is right.
  auto f = compile([](const Tensor& a, const Tensor& b) { return a + b; });
  std::atomic<int> bad{0}, errors{0};
  run_threads(4, [&](int t) {
    for (int i = 0; i < 5; ++i) {
      if (t % 2 == 0) {
        try {
          f(ints(2, 3, i), ints(2, 4, i));
        } catch (const Error&) {
          errors.fetch_add(1);
        }
      } else {
        Tensor a = ints(2, 3, i), b = ints(2, 3, i + 1);
        std::vector<double> want, av = doubles(a), bv = doubles(b);
        for (size_t j = 0; j < av.size(); ++j) want.push_back(av[j] + bv[j]);
        if (doubles(f(a, b)) != want) bad.fetch_add(1);
      }
    }
  });
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(errors.load(), 10);
  EXPECT_EQ(f.stats().compiles, 1);
}

}  // namespace
}  // namespace kiln
