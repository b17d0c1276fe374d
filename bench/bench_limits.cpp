// kiln/bench/bench_limits.cpp — STREAM copy bandwidth, call overheads and cold compile times.
//
// limits/stream_copy: a 64 MiB float array copied by the pool's threads (memcpy per chunk);
// bytes counted as STREAM does (read + write, 128 MiB per iteration). The summary divides
// each memory-bound workload's minimal traffic by this bandwidth to get its "bandwidth limit".
// limits/stream_read: the same 64 MiB only read (its words or-ed together), the limit of a
// reduction that reads its input once (sum(x) is held to 90% of it). limits/peak_fma: the host's
// peak f32 multiply-add rate on the pool's threads (bench_fused.h peak_fma), against which the
// summary states each GEMM row's throughput.
//
// overhead/compiled_add_1: a warm compiled `a + b` on 1-element tensors (guard check, cache
// hit, output allocation, one tiny kernel). overhead/eager_add_1: eager `a + b` on 1-element
// tensors. overhead/eager_view_1: an eager narrow of an [8, 8] tensor (a view: metadata, the
// storage shared, the base recorded). compile/softmax_cold and compile/mlp_cold: each iteration constructs a new
// compile() object and makes its first call (trace, passes, LLVM codegen, run), timed by hand;
// the per-sample times go to side().samples and the summary reports their median.
#include "bench/bench_common.h"
#include "bench/bench_fused.h"

#include "kiln/kiln.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <vector>

namespace kiln::bench {

namespace {

constexpr int64_t kStreamFloats = (int64_t{64} << 20) / sizeof(float);

void bm_stream_copy(benchmark::State& st) {
  std::vector<float> src(kStreamFloats, 1.0f), dst(kStreamFloats, 0.0f);
  stream_copy(src.data(), dst.data(), kStreamFloats);  // first touch of both arrays
  for (auto _ : st) {
    stream_copy(src.data(), dst.data(), kStreamFloats);
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(static_cast<int64_t>(stream_copy_bytes() * static_cast<double>(st.iterations())));
}

// The buffer comes from kiln's allocator, as a compiled sum's input does (a std::vector's pages
// read about a third slower here: kiln's large blocks are on transparent huge pages).
void bm_stream_read(benchmark::State& st) {
  const Tensor src = ones({kStreamFloats}, kInt32);
  const auto* words = reinterpret_cast<const uint32_t*>(src.data_ptr<int32_t>());
  for (auto _ : st) benchmark::DoNotOptimize(stream_read(words, kStreamFloats));
  st.SetBytesProcessed(static_cast<int64_t>(stream_read_bytes() * static_cast<double>(st.iterations())));
}

constexpr int64_t kPeakRounds = int64_t{1} << 21;

void bm_peak_fma(benchmark::State& st) {
  float sink = 0.0f;
  double flops = 0.0;
  for (auto _ : st) {
    flops = peak_fma(kPeakRounds, &sink);
    benchmark::DoNotOptimize(sink);
  }
  side().peak_fma_flops = flops;
  st.counters["FLOP/s"] = benchmark::Counter(flops * static_cast<double>(st.iterations()), benchmark::Counter::kIsRate);
}

void bm_compiled_add(benchmark::State& st) {
  auto f = compile([](const Tensor& a, const Tensor& b) { return a + b; });
  Tensor a = ones({1}), b = ones({1});
  Tensor c = f(a, b);  // trace + compile outside the timing
  c = f(a, b);
  for (auto _ : st) {
    c = f(a, b);
    benchmark::DoNotOptimize(c.impl());
  }
}

void bm_eager_add(benchmark::State& st) {
  Tensor a = ones({1}), b = ones({1});
  Tensor c = a + b;
  for (auto _ : st) {
    c = a + b;
    benchmark::DoNotOptimize(c.impl());
  }
}

void bm_eager_view(benchmark::State& st) {
  Tensor x = ones({8, 8});
  Tensor v = x.narrow(0, 1, 4);
  for (auto _ : st) {
    v = x.narrow(0, 1, 4);
    benchmark::DoNotOptimize(v.impl());
  }
}

template <typename Make>
void cold_compile(benchmark::State& st, const char* name, Make make) {
  std::vector<double>& samples = side().samples[name];
  for (auto _ : st) {
    const auto t0 = std::chrono::steady_clock::now();
    make();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    st.SetIterationTime(s);
    samples.push_back(s);
  }
}

void bm_softmax_cold(benchmark::State& st) {
  manual_seed(1);
  Tensor x = randn({64, 128});
  cold_compile(st, "compile/softmax_cold", [&] {
    auto f = compile([](const Tensor& t) { return softmax(t, -1); });
    Tensor y = f(x);
    benchmark::DoNotOptimize(y.impl());
  });
}

void bm_mlp_cold(benchmark::State& st) {
  manual_seed(2);
  Tensor x = randn({64, 512}), w1 = randn({2048, 512}), b1 = randn({2048}), w2 = randn({512, 2048}), b2 = randn({512});
  cold_compile(st, "compile/mlp_cold", [&] {
    auto f = compile([](const Tensor& x0, const Tensor& a, const Tensor& ab, const Tensor& c, const Tensor& cb) {
      return linear(relu(linear(x0, a, ab)), c, cb);
    });
    Tensor y = f(x, w1, b1, w2, b2);
    benchmark::DoNotOptimize(y.impl());
  });
}

}  // namespace

double stream_copy_bytes() { return 2.0 * static_cast<double>(kStreamFloats) * sizeof(float); }
double stream_read_bytes() { return static_cast<double>(kStreamFloats) * sizeof(uint32_t); }

void register_stream_benchmark() {
  benchmark::RegisterBenchmark("limits/stream_copy", bm_stream_copy)->UseRealTime()->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("limits/stream_read", bm_stream_read)->UseRealTime()->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("limits/peak_fma", bm_peak_fma)->UseRealTime()->Unit(benchmark::kMicrosecond);
}

void register_overhead_benchmarks() {
  benchmark::RegisterBenchmark("overhead/compiled_add_1", bm_compiled_add)->UseRealTime();
  benchmark::RegisterBenchmark("overhead/eager_add_1", bm_eager_add)->UseRealTime();
  benchmark::RegisterBenchmark("overhead/eager_view_1", bm_eager_view)->UseRealTime();
  // Fixed sample counts: each sample is a full compilation (milliseconds to tens of them).
  benchmark::RegisterBenchmark("compile/softmax_cold", bm_softmax_cold)
      ->UseManualTime()
      ->Iterations(9)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("compile/mlp_cold", bm_mlp_cold)
      ->UseManualTime()
      ->Iterations(7)
      ->Unit(benchmark::kMillisecond);
}

Side& side() {
  static Side s;
  return s;
}

}  // namespace kiln::bench
