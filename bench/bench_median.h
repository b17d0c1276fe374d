// kiln/bench/bench_median.h — timing for the standalone benchmarks (kiln_bench_conv,
// kiln_bench_models): the median of --runs calls after one warm-up call.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

namespace kiln::bench {

// --runs N from the command line, else `fallback`.
inline int runs_arg(int argc, char** argv, int fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--runs") == 0) return std::max(1, std::atoi(argv[i + 1]));
  return fallback;
}

// Milliseconds per call of f: the median of `runs` calls after one warm-up call.
inline double median_ms(const std::function<void()>& f, int runs) {
  f();
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace kiln::bench
