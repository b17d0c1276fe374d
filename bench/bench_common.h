// kiln/bench/bench_common.h — what the bench files share: workloads, registration, results.
//
// A Workload names one (computation, size) pair of the issue and knows how to build an
// Instance: its input tensors plus closures that compute the same result several ways — kiln
// eager, kiln compiled (warm, cache hit; static shapes, as CompileOptions{} compiles a first
// call), the same function compiled with Dynamic::True (symbolic sizes; large workloads only)
// and the hand-written fused loop. Benchmarks are registered explicitly (not by static
// BENCHMARK macros) so their order is fixed: STREAM copy first, then every workload as eager /
// compiled / dynamic / fused, then the overhead, guard and compile-time benches. The reporter
// in bench_main.cpp records the time per iteration of every run under its benchmark name; the
// summary tables are computed from those records after the run.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kiln::bench {

// Which target of the issue a workload row is judged against.
enum class Target {
  None,       // reported, no target (small sizes, compute-bound epilogue workloads)
  Fused125,   // large memory-bound: compiled within 1.25x of the hand-written fused loop
  Blas90,     // matmul: compiled at least 90% of cblas_sgemm's GFLOP/s
};

struct Instance {
  std::function<void()> eager;
  std::function<void()> compiled;  // compile(fn): static shapes
  std::function<void()> dynamic;   // compile(fn, {.dynamic = Dynamic::True}): symbolic sizes
  std::function<void()> fused;
  // Largest |compiled - fused| / (1 + |fused|) over the outputs, after one run of each;
  // dynamic_rel_diff is the same for the Dynamic::True output.
  std::function<double()> max_rel_diff;
  std::function<double()> dynamic_rel_diff;
  // f.explain(inputs) of the Dynamic::True function (symbols, guards, kernels).
  std::function<std::string()> explain_dynamic;
  bool warmed_eager = false;
};

struct Workload {
  std::string key;    // benchmark name prefix, e.g. "softmax/4096x1024"
  std::string label;  // table label, e.g. "softmax [4096,1024]"
  double bytes = 0;   // minimal bytes moved (inputs read once + outputs written once)
  double flops = 0;   // floating-point operations (compute-bound rows), else 0
  Target target = Target::None;
  double tolerance = 1e-3;  // allowed max_rel_diff between compiled and fused
  std::function<std::unique_ptr<Instance>()> make;
  // Large rows (memory-bound >= 8 MB moved, or >= 1e8 FLOP) also run under Dynamic::True.
  bool large() const { return bytes >= 8e6 || flops >= 1e8; }
};

// Every workload of the issue, in table order.
const std::vector<Workload>& workloads();

// Registers "<key>/eager", "<key>/compiled", "<key>/fused" for every workload, and
// "<key>/dynamic" (after compiled) for the large ones.
void register_workload_benchmarks();
// Registers "limits/stream_copy", "limits/stream_read" and "limits/peak_fma" (first), and the overhead and cold-compile benches (last).
void register_stream_benchmark();
void register_overhead_benchmarks();
// Registers the guard-evaluation benches "guards/{static,dynamic}/<N>" (GuardSet::check alone)
// and "overhead/call_{static,dynamic}_<N>" (a warm compiled call) for N = 1, 4, 16 inputs.
void register_dynamic_benchmarks();

// Median seconds per iteration of a benchmark in this run; negative when it did not run.
using TimeOf = std::function<double(const std::string& name)>;
// Prints the dynamic-vs-static and guard tables; appends missed targets to `misses`.
void print_dynamic_summary(const TimeOf& time, std::vector<std::string>& misses);

// Bytes moved by one stream_copy iteration (read + write), for the bandwidth figure.
double stream_copy_bytes();
// Bytes read by one stream_read iteration (64 MiB).
double stream_read_bytes();

// Numbers the benches compute themselves (medians of cold compiles, correctness checks).
struct Side {
  std::map<std::string, std::vector<double>> samples;  // name -> seconds per sample
  std::map<std::string, double> check;                 // workload key -> max_rel_diff
  std::map<std::string, double> dynamic_check;         // workload key -> Dynamic::True max_rel_diff
  // workload key -> "symbolic" when explain shows "2 <= " guards, else what went wrong.
  std::map<std::string, std::string> dynamic_status;
  // guard-bench key ("guards/dynamic/4") -> number of guards in the set.
  std::map<std::string, size_t> guard_counts;
  double peak_fma_flops = 0;  // floating-point operations in one limits/peak_fma iteration
};
Side& side();

}  // namespace kiln::bench
