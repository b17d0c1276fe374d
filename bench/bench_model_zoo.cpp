// kiln_bench_model_zoo — one whole model of tools/model_fixtures.py (a ResNet-18, a 2-block
// GPT-2, a U-Net or a 2-layer BERT) timed in a fresh process: the first compiled call (trace,
// compile and run, nothing compiled before it in the process), then eager and warm compiled
// calls, each checked against PyTorch's output.
//
//   kiln_bench_model_zoo DIR MODEL [--runs N]
//
// DIR holds the fixtures model_fixtures.py wrote (bench/models_peers.py writes them at the bench
// scale); prints one line
//   kiln_model MODEL FIRST_MS EAGER_MS COMPILED_MS EAGER_ERR COMPILED_ERR KERNELS
// where the times are the median of N calls (default 10) after one warm-up call, and the errors
// are the largest difference from PyTorch's output over its largest magnitude. Run it with
// KILN_DISABLE_CACHE=1 for a cold first call (bench/models_peers.py does).
#include "bench/bench_median.h"
#include "kiln/kiln.h"
#include "test/test_support/model_zoo.h"

#include <chrono>
#include <cstdio>
#include <exception>

using namespace kiln;

namespace {

double relative_error(const Tensor& got, const Tensor& want) {
  const Tensor w = want.to(kDouble);
  return (got.to(kDouble) - w).abs().max().item<double>() / w.abs().max().item<double>();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s DIR MODEL [--runs N]\n", argv[0]);
    return 2;
  }
  const int runs = bench::runs_arg(argc, argv, 10);
  try {
    test::ZooModel m = test::load_zoo_model(argv[1], argv[2]);
    NoGradGuard no_grad;
    const auto t0 = std::chrono::steady_clock::now();
    const Tensor first = m.compiled();
    const double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const double eager_ms = bench::median_ms([&] { (void)m.eager(); }, runs);
    const double compiled_ms = bench::median_ms([&] { (void)m.compiled(); }, runs);
    std::printf("kiln_model %s %.3f %.3f %.3f %.3g %.3g %lld\n", argv[2], first_ms, eager_ms, compiled_ms,
                relative_error(m.eager(), m.expected), relative_error(first, m.expected),
                static_cast<long long>(m.stats().kernels));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln_bench_model_zoo: %s\n", e.what());
    return 1;
  }
  return 0;
}
