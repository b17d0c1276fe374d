// kiln/test/test_cpu_sgemm.cpp — kiln's own f32 matrix product (runtime/cpu/sgemm.h) against the f64
// product of the same values, on every micro-kernel this host runs.
//
// Shapes cross every edge of the blocking: rows on either side of each kernel's tile height and
// of a block of A's rows (kMc = 120), columns around the tile width (8, 16, 32) and a block of B's
// columns (kNc = 1536), depths around a block (kKc = 256, where C starts accumulating) and 0.
// Both operands are tried as stored and transposed, with leading dimensions wider than the
// matrices; C's padding must stay untouched and what C held before must not leak into it. With B
// transposed, 32 to 64 rows whose 32-row panels pad little (32, 57, 60, 64) take AVX-512's
// weight-rows kernel, which packs A per block of 512 of K and adds each later block to C (512,
// 700 and 1100 cross those blocks, 700 and 1100 with a partial one); more than 120 rows take the blocked
// path, with a second block of columns past 1536.
#include "runtime/cpu/sgemm.h"

#include "base/error.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace kiln::rt {
namespace {

struct Case {
  int64_t M, N, K;
  bool ta, tb;
};

// Runs one product on `kernel` and checks each element of C against the f64 product within the
// rounding bound of an f32 sum of K products (2 K u sum |a b|, u = 2^-24), the padding of C
// unchanged.
void check(const std::string& kernel, const Case& c, std::mt19937& gen) {
  SCOPED_TRACE(fmt::format("{} {}x{}x{} ta={} tb={}", kernel, c.M, c.N, c.K, c.ta, c.tb));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const int64_t lda = (c.ta ? c.M : c.K) + 3, ldb = (c.tb ? c.K : c.N) + 5, ldc = c.N + 2;
  std::vector<float> a(static_cast<size_t>((c.ta ? c.K : c.M) * lda)), b(static_cast<size_t>((c.tb ? c.N : c.K) * ldb));
  for (float& x : a) x = u(gen);
  for (float& x : b) x = u(gen);
  const float sentinel = -12345.0f;
  std::vector<float> out(static_cast<size_t>(c.M * ldc), sentinel);
  kiln_sgemm_on(kernel, c.ta, c.tb, c.M, c.N, c.K, a.data(), lda, b.data(), ldb, out.data(), ldc);
  int64_t wrong = 0;
  for (int64_t i = 0; i < c.M; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const float got = out[static_cast<size_t>(i * ldc + j)];
      if (j >= c.N) {
        if (got != sentinel && wrong++ < 3) ADD_FAILURE() << "C's padding at " << i << "," << j << " became " << got;
        continue;
      }
      double want = 0, mag = 0;
      for (int64_t k = 0; k < c.K; ++k) {
        const double x = c.ta ? a[static_cast<size_t>(k * lda + i)] : a[static_cast<size_t>(i * lda + k)];
        const double y = c.tb ? b[static_cast<size_t>(j * ldb + k)] : b[static_cast<size_t>(k * ldb + j)];
        want += x * y;
        mag += std::fabs(x * y);
      }
      const double bound = 2.0 * static_cast<double>(c.K) * std::ldexp(1.0, -24) * mag;
      if (!(std::fabs(got - want) <= bound) && wrong++ < 3)
        ADD_FAILURE() << "C[" << i << "," << j << "] = " << got << ", the f64 product is " << want << " (bound " << bound
                      << ")";
    }
  }
  EXPECT_EQ(wrong, 0);
}

TEST(Sgemm, EveryMicroKernelMatchesTheF64ProductAcrossTheBlockEdges) {
  const std::vector<std::string> kernels = kiln_sgemm_kernels();
  ASSERT_FALSE(kernels.empty());
  EXPECT_EQ(kernels.front(), kiln_sgemm_kernel());  // the widest the host runs is the one used
  EXPECT_EQ(kernels.back(), "portable 4x8");
  std::vector<Case> cases;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (const auto& [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {5, 7, 3}, {8, 16, 9}, {12, 32, 8},
                                    {13, 33, 17}, {64, 64, 64}, {25, 100, 255}, {7, 17, 256}, {19, 31, 257},
                                    {121, 40, 30}, {130, 47, 300}, {3, 1550, 20}, {33, 1600, 40}, {6, 9, 0},
                                    {32, 9, 1}, {57, 20, 33}, {60, 19, 700}, {64, 70, 260}, {125, 1545, 40},
                                    {32, 24, 512}, {64, 41, 1100}})
        cases.push_back({M, N, K, ta, tb});
  for (const std::string& kernel : kernels) {
    std::mt19937 gen(7);
    for (const Case& c : cases) check(kernel, c, gen);
  }
}

// The shapes above reach each path: on an AVX-512 host the weight-rows kernel, and everywhere
// the per-panel path and the blocked one (a second block of columns in {125, 1545, 40}).
TEST(Sgemm, TheShapesReachEveryPath) {
  EXPECT_STREQ(kiln_sgemm_path(false, 64), "panels");
  EXPECT_STREQ(kiln_sgemm_path(true, 48), "panels");  // 16 padded rows of 64: the panels
  EXPECT_STREQ(kiln_sgemm_path(true, 130), "blocks");
  if (std::string(kiln_sgemm_kernel()) != "avx512 12x32") GTEST_SKIP() << "no AVX-512 here: the weight-rows kernel is not run";
  for (int64_t m : {32, 57, 60, 64}) EXPECT_STREQ(kiln_sgemm_path(true, m), "weight rows") << m;
}

TEST(Sgemm, SeededRandomShapesOnEveryMicroKernel) {
  const uint32_t seed = 20261203;
  std::mt19937 gen(seed);
  SCOPED_TRACE(fmt::format("seed {}", seed));
  std::uniform_int_distribution<int64_t> rows(1, 140), cols(1, 200), depth(0, 600);
  for (int t = 0; t < 40; ++t) {
    const Case c{rows(gen), cols(gen), depth(gen), gen() % 2 == 1, gen() % 2 == 1};
    for (const std::string& kernel : kiln_sgemm_kernels()) check(kernel, c, gen);
  }
}

TEST(Sgemm, AKernelTheHostCannotRunIsRefusedByName) {
  float x = 1.0f, y = 2.0f, z = 0.0f;
  try {
    kiln_sgemm_on("avx9000 1x1", false, false, 1, 1, 1, &x, 1, &y, 1, &z, 1);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("[sgemm]"), std::string::npos) << what;
    EXPECT_NE(what.find("avx9000 1x1"), std::string::npos) << what;
    EXPECT_NE(what.find("portable 4x8"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace kiln::rt
