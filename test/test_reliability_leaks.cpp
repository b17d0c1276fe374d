// kiln/test/test_reliability_leaks.cpp — memory stays flat in a long-running process.
//
// A process that compiles a fresh function again and again must not keep the code of every
// function it dropped (the JIT unmaps a module when its last program goes), and every
// in-memory cache of compiled code keeps a bound (the eager kernel cache evicts). Each loop
// here runs a few thousand compiles; bench/leak_probe.cpp runs the 100,000 of issue 28.
#include "codegen_cpu/linked_code.h"
#include "codegen_cpu/module_cache.h"
#include "kiln/kiln.h"
#include "runtime/config.h"
#include "runtime/eager/eager.h"
#include "runtime/interpreter/interpreter.h"
#include "test_support/files.h"
#include "test_support/resident.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace kiln {
namespace {

TEST(ReliabilityLeaks, ADroppedFunctionReleasesItsCode) {
  const std::string dir = test::make_temp_dir("kiln-leak");
  ::setenv("KILN_CACHE_DIR", dir.c_str(), 1);
  rt::reload_config_for_testing();
  const Tensor x = tensor(std::vector<float>{0.5f, -1.0f, 2.0f});
  const Tensor want = (x * 3 + 1).exp();
  auto round = [&] {
    auto f = compile([](const Tensor& t) { return (t * 3 + 1).exp(); });
    EXPECT_TRUE(allclose(f(x), want));
  };  // f and its code go here; the next round links the code again from the disk cache
  for (int i = 0; i < 200; ++i) round();
  const int64_t live0 = cpu::live_linked_modules(), rss0 = test::resident_bytes();
  constexpr int kRounds = 3000;
  for (int i = 0; i < kRounds; ++i) round();
  const int64_t live1 = cpu::live_linked_modules(), rss1 = test::resident_bytes();
  const double per_compile = static_cast<double>(rss1 - rss0) / kRounds;
  std::printf("[ leak ] %d compiles of fresh functions: live modules %lld -> %lld, resident %+.0f bytes per compile\n",
              kRounds, static_cast<long long>(live0), static_cast<long long>(live1), per_compile);
  EXPECT_LE(live1, live0 + 1) << "modules of dropped functions stay linked";
  EXPECT_LT(per_compile, 1024);  // was ~19 KB per compile
  ::unsetenv("KILN_CACHE_DIR");
  rt::reload_config_for_testing();
  std::filesystem::remove_all(dir);
}

TEST(ReliabilityLeaks, TheEagerKernelCacheKeepsItsBound) {
  rt::set_eager_cache_capacity_for_testing(8);
  const rt::EagerStats before = rt::eager_stats();
  const int64_t live0 = cpu::live_linked_modules();
  // Sums over every set of dims of a rank-6 tensor, with and without keepdim: 126 distinct
  // eager kernels, each checked against the reference interpreter.
  int kernels = 0;
  const Tensor t = arange(64, kFloat).reshape({2, 2, 2, 2, 2, 2});
  for (int mask = 1; mask < 64; ++mask)
    for (bool keepdim : {false, true}) {
      std::vector<int64_t> dims;
      for (int d = 0; d < 6; ++d)
        if (mask & (1 << d)) dims.push_back(d);
      const Tensor want = rt::interpret_op(ir::OpKind::sum, {t}, ir::AttrList({dims, keepdim})).at(0);
      ASSERT_TRUE(equal(t.sum(dims, keepdim), want));
      ++kernels;
    }
  const rt::EagerStats after = rt::eager_stats();
  const int64_t live1 = cpu::live_linked_modules();
  rt::set_eager_cache_capacity_for_testing(0);
  std::printf("[ leak ] %d eager sums with the cache bound at 8: %lld evicted, live modules %lld -> %lld\n", kernels,
              static_cast<long long>(after.kernels_evicted - before.kernels_evicted), static_cast<long long>(live0),
              static_cast<long long>(live1));
  EXPECT_GT(after.kernels_evicted - before.kernels_evicted, 100);
  // Linked, at most: the cache's 8, this thread's 32 recent entries, the JIT's 64 most
  // recently linked modules (codegen_cpu/module_cache.h).
  EXPECT_LE(live1 - live0, 8 + 32 + 64);
}

}  // namespace
}  // namespace kiln
