// kiln/bench/cache_probe.cpp — a fresh process that compiles a few functions and
// runs a few eager ops, for the compile cache tests and benchmarks (test_cache_disk.cpp,
// bench/bench_cache.cpp). Prints one line per workload:
//   <name> code=<compiled|memory|disk|remote|none> first_call_ms=<t> second_call_ms=<t> sum=<checksum>
// and last a line `llvm compiler_started=<0|1>`: whether LLVM was loaded into the process at all.
// `cubin_key` (only when named) prints `cubin_key key=<k> nvrtc_loaded=<0|1> ms=<t>`: the cache
// key of a small CUDA module for sm_90 (no device needed), whether NVRTC was loaded to make it,
// and how long making it took;
// `cubin_confirm` the key after confirm_nvrtc_version, as a compilation computes it.
// Usage: kiln_cache_probe [softmax] [mlp] [chain20] [eager10] [cubin_key | cubin_confirm] (default:
// all but those two) or none. The cache is
// configured by the environment (KILN_CACHE_DIR, KILN_REMOTE_CACHE, KILN_DISABLE_CACHE).
#include "base/dl_symbol.h"
#include "codegen_cpu/module_compiler.h"
#include "codegen_cuda/nvrtc.h"
#include "kiln/kiln.h"
#include "runtime/cache/compile_cache.h"
#include "runtime/cuda/cubin_key.h"

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using namespace kiln;

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string source_of(const CompileStats& s) {
  if (s.kernels == 0) return "none";  // library calls only (the MLP: two products with their epilogues)
  if (s.code_from_remote) return "remote";
  if (s.code_from_disk) return "disk";
  if (s.code_from_memory) return "memory";
  return "compiled";
}

// The first call (compile() included) and a second, warm one: their difference is what
// compiling, or loading from the cache, cost.
template <typename F, typename... Args> void first_call(const char* name, F fn, const Args&... args) {
  const auto t0 = std::chrono::steady_clock::now();
  auto f = compile(fn);
  Tensor r = f(args...);
  const double first = ms_since(t0);
  const auto t1 = std::chrono::steady_clock::now();
  f(args...);
  const double second = ms_since(t1);
  std::printf("%s code=%s first_call_ms=%.3f second_call_ms=%.3f sum=%.6f\n", name, source_of(f.stats()).c_str(), first,
              second, r.sum().item().to_double());
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> want(argv + 1, argv + argc);
  auto wants = [&](const char* w) { return want.empty() || std::find(want.begin(), want.end(), w) != want.end(); };
  manual_seed(3);
  if (wants("softmax")) {
    Tensor x = randn({64, 128});
    first_call("softmax", [](const Tensor& a) { return softmax(a, -1); }, x);
  }
  if (wants("mlp")) {
    Tensor x = randn({64, 512}), w1 = randn({2048, 512}), b1 = randn({2048}), w2 = randn({512, 2048}), b2 = randn({512});
    first_call("mlp", [&](const Tensor& a) { return linear(relu(linear(a, w1, b1)), w2, b2); }, x);
  }
  if (wants("chain20")) {  // 20 ops: pointwise chains around two reductions
    Tensor x = randn({256, 256}), y = randn({256});
    first_call("chain20",
               [](const Tensor& a, const Tensor& b) {
                 Tensor t = a * b + 1;
                 t = exp(-abs(t)) * 0.5 + sigmoid(t);
                 t = t - t.mean({1}, true);
                 t = t / sqrt((t * t).mean({1}, true) + 1e-5);
                 t = tanh(t) * b - relu(t - 0.1);
                 return (t * t + a).sum({0});
               },
               x, y);
  }
  if (wants("eager10")) {  // a fresh process's first 10 eager ops
    const auto t0 = std::chrono::steady_clock::now();
    Tensor a = randn({1000}), b = randn({1000});
    Tensor r = a + b;
    r = r * a;
    r = exp(r);
    r = r - b;
    r = abs(r);
    r = sqrt(r);
    r = r / (b * b + 1);
    r = tanh(r);
    const double ms = ms_since(t0);
    std::printf("eager10 code=- first_call_ms=%.3f second_call_ms=0 sum=%.6f\n", ms, r.sum().item().to_double());
  }
  std::string key;
  double key_ms = 0;
  const bool confirm = std::find(want.begin(), want.end(), "cubin_confirm") != want.end();
  if (confirm || std::find(want.begin(), want.end(), "cubin_key") != want.end()) {
    rt::CompileCache* cache = rt::compile_cache();
    rt::DiskCache* disk = cache ? cache->disk() : nullptr;
    const std::string source = "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] += 1.0f; }\n";
    const auto t0 = std::chrono::steady_clock::now();
    key = rt::cubin_key(source, 90, disk);
    if (confirm && rt::confirm_nvrtc_version(disk)) key = rt::cubin_key(source, 90, disk);
    key_ms = ms_since(t0);
  }
  // Whether libLLVM is in this process at all (libkiln opens it only to compile).
  if (!key.empty())
    std::printf("cubin_key key=%s nvrtc_loaded=%d ms=%.3f\n", key.c_str(),
                cuda::nvrtc_loaded() || library_loaded("libnvrtc") ? 1 : 0, key_ms);
  const bool llvm = cpu::module_compiler_loaded() || library_loaded("libLLVM");
  std::printf("llvm compiler_started=%d\n", llvm ? 1 : 0);
  return 0;
}
