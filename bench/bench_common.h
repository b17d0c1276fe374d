// kiln/bench/bench_common.h — what the bench files share: workloads, registration, results.
//
// A Workload names one (computation, size) pair of the issue and knows how to build an
// Instance: its input tensors plus three closures that compute the same result three ways —
// kiln eager, kiln compiled (warm, cache hit) and the hand-written fused loop. Benchmarks are
// registered explicitly (not by static BENCHMARK macros) so their order is fixed: STREAM copy
// first, then every workload as eager / compiled / fused, then the overhead and compile-time
// benches. The reporter in bench_main.cpp records the time per iteration of every run under
// its benchmark name; the summary table is computed from those records after the run.
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
  std::function<void()> compiled;
  std::function<void()> fused;
  // Largest |compiled - fused| / (1 + |fused|) over the outputs, after one run of each.
  std::function<double()> max_rel_diff;
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
};

// Every workload of the issue, in table order.
const std::vector<Workload>& workloads();

// Registers "<key>/eager", "<key>/compiled", "<key>/fused" for every workload.
void register_workload_benchmarks();
// Registers "limits/stream_copy" (first), and the overhead and cold-compile benches (last).
void register_stream_benchmark();
void register_overhead_benchmarks();

// Bytes moved by one stream_copy iteration (read + write), for the bandwidth figure.
double stream_copy_bytes();

// Numbers the benches compute themselves (medians of cold compiles, correctness checks).
struct Side {
  std::map<std::string, std::vector<double>> samples;  // name -> seconds per sample
  std::map<std::string, double> check;                 // workload key -> max_rel_diff
};
Side& side();

}  // namespace kiln::bench
