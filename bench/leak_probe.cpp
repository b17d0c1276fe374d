// kiln/bench/leak_probe.cpp — resident memory over a long run of compiles of fresh functions.
//
//   kiln_leak_probe [compiles=100000] [mode=same|shapes]
// `same`: every compile is a fresh compiled function of one program (traced, planned, its code
// linked again from the disk cache, then dropped). `shapes`: each compile sees a new static
// shape, so each one runs LLVM (slow: about a millisecond or ten each). Prints the resident
// size and the JIT's live modules every tenth of the run, and the growth per compile over the
// second half (after the caches warmed up). KILN_CACHE_DIR is a fresh directory of its own.
#include "codegen_cpu/linked_code.h"
#include "kiln/kiln.h"
#include "runtime/config.h"
#include "test/test_support/files.h"
#include "test/test_support/resident.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

using namespace kiln;

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 100000;
  const std::string mode = argc > 2 ? argv[2] : "same";
  const std::string dir = test::make_temp_dir("kiln-leak-probe");
  ::setenv("KILN_CACHE_DIR", dir.c_str(), 1);
  rt::reload_config_for_testing();
  const auto t0 = std::chrono::steady_clock::now();
  int64_t rss_half = 0;
  std::printf("%10s %14s %12s %14s %10s\n", "compiles", "resident MB", "live modules", "interned exprs", "seconds");
  for (int i = 1; i <= n; ++i) {
    const int64_t len = mode == "shapes" ? 1 + i % 100000 : 8;
    auto f = compile([](const Tensor& t) { return (t * 3 + 1).exp(); });
    (void)f(ones({len}));
    if (i == n / 2) rss_half = test::resident_bytes();
    if (i % std::max(1, n / 10) == 0)
      std::printf("%10d %14.1f %12lld %14zu %10.1f\n", i, static_cast<double>(test::resident_bytes()) / (1 << 20),
                  static_cast<long long>(cpu::live_linked_modules()), ir::interned_exprs(),
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("growth over the second half: %.1f bytes per compile\n",
              static_cast<double>(test::resident_bytes() - rss_half) / (n - n / 2));
  std::filesystem::remove_all(dir);
  return 0;
}
