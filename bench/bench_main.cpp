// kiln/bench/bench_main.cpp — kiln_bench's main: runs every benchmark, then prints the summary.
//
// A ConsoleReporter subclass prints the usual Google Benchmark lines and records each run's
// wall time per iteration under its name. After RunSpecifiedBenchmarks the summary is computed
// from those records only (the same process, the same run): per workload the eager, compiled
// and fused-loop times, the bandwidth-limit time (minimal bytes / STREAM copy bandwidth), the
// ratios and whether the target is met; then the overhead and compile-time rows, then
// (bench_dynamic.cpp) Dynamic::True versus static on the large workloads and the guard
// evaluation and warm-call rows. The tables are Markdown, ready to paste into bench/README.md.
//
// Defaults: --benchmark_min_time=0.1 and --benchmark_repetitions=3 unless given (the summary
// uses the median of the repetitions); the disk compile cache is off
// (KILN_DISABLE_CACHE=1 unless set) so "cold compile" means a real compilation.
#include "bench/bench_common.h"
#include "bench/bench_fused.h"

#include "runtime/cpu/blas_library.h"
#include "runtime/thread_pool.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <tuple>
#include <unistd.h>
#include <vector>

namespace kiln::bench {

namespace {

class Collector : public benchmark::ConsoleReporter {
 public:
  explicit Collector(OutputOptions opts) : ConsoleReporter(opts) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.error_occurred || r.run_type != Run::RT_Iteration || r.iterations <= 0) continue;
      times_[r.run_name.function_name].push_back(r.real_accumulated_time / static_cast<double>(r.iterations));
    }
    ConsoleReporter::ReportRuns(runs);
  }
  // Median seconds per iteration over repetitions; negative when the benchmark did not run.
  double time(const std::string& name) const {
    auto it = times_.find(name);
    return it == times_.end() ? -1.0 : median(it->second);
  }
  static double median(std::vector<double> v) {
    if (v.empty()) return -1.0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  }

 private:
  std::map<std::string, std::vector<double>> times_;
};

std::string fmt_time(double s) {
  if (s < 0) return "—";
  if (s < 1e-3) return fmt::format("{:.2f} µs", s * 1e6);
  if (s < 1.0) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.2f} s", s);
}

std::string fmt_ratio(double num, double den) {
  if (num < 0 || den <= 0) return "—";
  return fmt::format("{:.2f}x", num / den);
}

void print_summary(const Collector& c) {
  std::vector<std::string> misses;
  const double copy_s = c.time("limits/stream_copy");
  const double bw = copy_s > 0 ? stream_copy_bytes() / copy_s : -1.0;  // bytes per second

  fmt::print("\n## kiln_bench summary ({} threads; STREAM copy {:.1f} GB/s)\n\n", rt::num_threads(),
             bw > 0 ? bw / 1e9 : 0.0);
  fmt::print("| workload | eager | compiled | fused loop | bw limit | compiled rate | compiled/fused | "
             "eager/compiled | target | met | check |\n");
  fmt::print("|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Workload& w : workloads()) {
    const double e = c.time(w.key + "/eager"), k = c.time(w.key + "/compiled"), f = c.time(w.key + "/fused");
    if (e < 0 && k < 0 && f < 0) continue;  // filtered out
    const double limit = (w.bytes > 0 && bw > 0) ? w.bytes / bw : -1.0;
    std::string rate = "—";
    if (k > 0 && w.flops > 0) rate = fmt::format("{:.0f} GFLOP/s", w.flops / k / 1e9);
    else if (k > 0 && w.bytes > 0) rate = fmt::format("{:.1f} GB/s", w.bytes / k / 1e9);
    std::string target = "—", met = "—";
    if (w.target == Target::Fused125) {
      target = "≤1.25x fused";
      if (k > 0 && f > 0) met = k / f <= 1.25 ? "yes" : "NO";
    } else if (w.target == Target::Blas90) {
      target = "≥90% BLAS";
      if (k > 0 && f > 0) met = f / k >= 0.9 ? "yes" : fmt::format("NO ({:.0f}%)", 100.0 * f / k);
    }
    if (met.rfind("NO", 0) == 0)
      misses.push_back(fmt::format("{}: compiled {} vs fused {} ({})", w.label, fmt_time(k), fmt_time(f), fmt_ratio(k, f)));
    std::string check = "—";
    auto it = side().check.find(w.key);
    if (it != side().check.end()) {
      check = it->second <= w.tolerance ? "ok" : fmt::format("DIFF {:.1e}", it->second);
      if (it->second > w.tolerance) misses.push_back(fmt::format("{}: compiled differs from fused loop by {:.2e}", w.label, it->second));
    }
    fmt::print("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", w.label, fmt_time(e), fmt_time(k),
               fmt_time(f), fmt_time(limit), rate, fmt_ratio(k, f), fmt_ratio(e, k), target, met, check);
  }

  // A sum reads its input once: held to 90% of the pure read rate measured in this run.
  const double read_s = c.time("limits/stream_read"), sum_s = c.time("sum_all/4096x4096/compiled");
  if (read_s > 0 && sum_s > 0) {
    const double read_bw = stream_read_bytes() / read_s, sum_bw = 4.0 * 4096 * 4096 / sum_s;
    const bool ok = sum_bw >= 0.9 * read_bw;
    fmt::print("\nsum(x) [4096,4096] compiled reads {:.1f} GB/s, {:.0f}% of the STREAM read bandwidth ({:.1f} GB/s, "
               "{} threads, 64 MiB); target ≥90%: {}\n",
               sum_bw / 1e9, 100.0 * sum_bw / read_bw, read_bw / 1e9, rt::num_threads(), ok ? "yes" : "NO");
    if (!ok) misses.push_back(fmt::format("sum(x) [4096,4096]: {:.0f}% of the read bandwidth", 100.0 * sum_bw / read_bw));
  }

  // GEMM rows against the host's multiply-add limit, measured in this run on the same threads.
  const double peak_s = c.time("limits/peak_fma");
  if (peak_s > 0 && side().peak_fma_flops > 0) {
    const double peak = side().peak_fma_flops / peak_s;
    fmt::print("\nPeak f32 FMA rate ({} threads, this build's widest vectors): {:.0f} GFLOP/s. Compiled GEMM rows:",
               rt::num_threads(), peak / 1e9);
    for (const Workload& w : workloads()) {
      const double k = c.time(w.key + "/compiled");
      if (w.flops > 0 && k > 0) fmt::print(" {} {:.0f}% of peak;", w.label, 100.0 * w.flops / k / peak);
    }
    fmt::print("\n");
  }

  fmt::print("\n| overhead / compile time | measured | target | met |\n|---|---|---|---|\n");
  auto row = [&](const std::string& what, double s, double target_s, const std::string& target_text) {
    if (s < 0) return;
    std::string met = "—";
    if (target_s > 0) {
      met = s <= target_s ? "yes" : "NO";
      if (s > target_s) misses.push_back(fmt::format("{}: {} (target {})", what, fmt_time(s), target_text));
    }
    fmt::print("| {} | {} | {} | {} |\n", what, fmt_time(s), target_text, met);
  };
  row("cached call overhead (compiled a+b, 1 element, warm)", c.time("overhead/compiled_add_1"), 1e-6, "≤1 µs");
  row("eager per-op overhead (eager a+b, 1 element)", c.time("overhead/eager_add_1"), 2e-6, "≤2 µs");
  for (auto [key, what, target_s, text] :
       {std::tuple{"compile/softmax_cold", "cold compile + first call, softmax [64,128]", 50e-3, "≤50 ms"},
        std::tuple{"compile/mlp_cold", "cold compile + first call, MLP [64,512]->2048->512", -1.0, "—"}}) {
    auto it = side().samples.find(key);
    if (it == side().samples.end()) continue;
    row(fmt::format("{} (median of {})", what, it->second.size()), Collector::median(it->second), target_s, text);
  }
  if (bw > 0) fmt::print("| STREAM copy bandwidth ({} threads, 64 MiB) | {:.1f} GB/s | — | — |\n", rt::num_threads(), bw / 1e9);

  print_dynamic_summary([&c](const std::string& name) { return c.time(name); }, misses);

  fmt::print("\nMisses ({}):\n", misses.size());
  for (const std::string& m : misses) fmt::print("- {}\n", m);
  std::fflush(stdout);
}

// Google Benchmark applies --benchmark_color only to the reporter it creates itself; ours
// reads the flag here: false/no/0 and true/yes/1 decide, otherwise ("auto") a terminal does.
benchmark::ConsoleReporter::OutputOptions console_options(int argc, char** argv) {
  bool color = isatty(STDOUT_FILENO) != 0;
  constexpr std::string_view flag = "--benchmark_color=";
  for (int i = 1; i < argc; ++i) {
    const std::string_view a(argv[i]);
    if (a.rfind(flag, 0) != 0) continue;
    const std::string_view v = a.substr(flag.size());
    if (v == "false" || v == "no" || v == "0") color = false;
    else if (v == "true" || v == "yes" || v == "1") color = true;
  }
  return color ? benchmark::ConsoleReporter::OO_ColorTabular : benchmark::ConsoleReporter::OO_Tabular;
}

}  // namespace

}  // namespace kiln::bench

int main(int argc, char** argv) {
  using namespace kiln::bench;
  // Cold compile must compile: no disk cache unless the user asks for one explicitly.
  setenv("KILN_DISABLE_CACHE", "1", /*overwrite=*/0);
  std::vector<char*> args(argv, argv + argc);
  auto given = [&](std::string_view flag) {
    for (int i = 1; i < argc; ++i)
      if (std::string_view(argv[i]).rfind(flag, 0) == 0) return true;
    return false;
  };
  static char default_min_time[] = "--benchmark_min_time=0.1";
  static char default_repetitions[] = "--benchmark_repetitions=3";
  if (!given("--benchmark_min_time")) args.push_back(default_min_time);
  if (!given("--benchmark_repetitions")) args.push_back(default_repetitions);
  int n = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;

  // The cblas baseline and kiln's matmuls share one OpenBLAS, on kiln's thread count.
  std::printf("OpenBLAS kernels: %s, %d threads\n", kiln::rt::blas().core.c_str(), kiln::rt::num_threads());
  register_stream_benchmark();
  register_workload_benchmarks();
  register_dynamic_benchmarks();
  register_overhead_benchmarks();

  Collector reporter(console_options(argc, argv));
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_summary(reporter);
  benchmark::Shutdown();
  return 0;
}
