// kiln/bench/bench_nvrtc.cpp — kiln_bench_nvrtc: what a cuda compilation costs on the host, no GPU needed.
//
// Two parts, each printed with its ratios, measured in one run:
// - The cache key of a cached module in a fresh process (kiln_cache_probe cubin_key): with the
//   disk cache's NVRTC record (runtime/cuda/cubin_key.h), against without a cache, where the
//   key needs NVRTC's version and so loads NVRTC. Medians of 11 processes each.
// - NVRTC compiling the kernels of every fusion-corpus plan (test/fusion_corpus, planned by the
//   cpu backend's passes and scheduled for a GPU) for sm_90: each kernel its own module, one
//   after another, on every core, and a plan's kernels on a thread each (the cuda backend
//   before 396c289); each plan one module (cuda::emit_program_module, what the cuda backend
//   compiles); and one module with --split-compile=0 (what it passes).
#include "codegen_cuda/cuda_emitter.h"
#include "codegen_cuda/nvrtc.h"
#include "ir/text.h"
#include "passes/schedule.h"
#include "runtime/backend.h"
#include "runtime/pipeline.h"
#include "test/test_support/files.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace kiln;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? -1 : v[v.size() / 2];
}

// One fresh probe process: (ms to make the key, whether NVRTC was loaded), or nothing.
std::optional<std::pair<double, int>> key_probe(const std::string& env) {
  const std::string cmd = env + " exec '" KILN_CACHE_PROBE "' cubin_key 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return std::nullopt;
  char buf[512];
  std::optional<std::pair<double, int>> out;
  while (std::fgets(buf, sizeof buf, p)) {
    char key[80];
    int loaded = 0;
    double ms = 0;
    if (std::sscanf(buf, "cubin_key key=%79s nvrtc_loaded=%d ms=%lf", key, &loaded, &ms) == 3) out = {ms, loaded};
  }
  if (::pclose(p) != 0) return std::nullopt;
  return out;
}

// Each corpus plan's kernels, scheduled as the cuda backend schedules them.
std::vector<std::vector<ir::Kernel>> corpus_plans() {
  std::vector<std::vector<ir::Kernel>> plans;
  for (const fs::path& f : test::files_with_extension(fs::path(KILN_CORPUS_DIR), ".kir")) {
    std::ifstream in(f);
    std::stringstream text;
    text << in.rdbuf();
    std::shared_ptr<ir::Graph> g = ir::parse_graph(text.str());
    rt::DriverOptions o;
    o.name = "bench_nvrtc";
    rt::Compilation c = rt::compile_graph(g, *rt::find_backend("cpu"), o);
    if (!c.status.ok() || c.plan.kernels().empty()) continue;
    std::vector<ir::Kernel> ks;
    for (const ir::Kernel* k : c.plan.kernels()) {
      ks.push_back(*k);
      passes::ScheduleTarget t;
      t.sms = 132;
      passes::schedule_launch(ks.back(), t);
    }
    plans.push_back(std::move(ks));
  }
  return plans;
}

}  // namespace

int main() {
  std::string why;
  if (!cuda::nvrtc_available(&why)) {
    std::printf("kiln_bench_nvrtc: skipped: %s\n", why.c_str());
    return 0;
  }
  std::printf("## kiln_bench_nvrtc: a cuda compilation's host costs (no GPU needed); NVRTC %s\n\n",
              cuda::nvrtc_version().c_str());

  // Part 1: the key of a cached module in a fresh process.
  const std::string dir = test::make_temp_dir("kiln-bench-nvrtc");
  const std::string env = "KILN_CACHE_DIR='" + dir + "'";
  (void)key_probe(env);  // writes the record
  std::vector<double> with_record, without;
  int loads_with = 0, loads_without = 0;
  for (int i = 0; i < 11; ++i) {
    if (auto r = key_probe(env)) with_record.push_back(r->first), loads_with += r->second;
    if (auto r = key_probe("KILN_DISABLE_CACHE=1")) without.push_back(r->first), loads_without += r->second;
  }
  fs::remove_all(dir);
  const double a = median(with_record), b = median(without);
  std::printf("| the key of a cached module, fresh process (median of 11) | ms | NVRTC loaded |\n|---|---|---|\n");
  std::printf("| from the disk cache's NVRTC record | %.3f | %d of %zu |\n", a, loads_with, with_record.size());
  std::printf("| without a record (NVRTC loaded for its version) | %.3f | %d of %zu |\n", b, loads_without, without.size());
  std::printf("| ratio | %.1fx less | |\n\n", a > 0 ? b / a : 0.0);

  // Part 2: NVRTC over the corpus.
  const std::vector<std::vector<ir::Kernel>> plans = corpus_plans();
  std::vector<std::string> per_kernel, per_plan;
  size_t kernels = 0;
  for (const auto& plan : plans) {
    std::vector<const ir::Kernel*> ptrs;
    for (const ir::Kernel& k : plan) {
      per_kernel.push_back(cuda::emit_module(k));
      ptrs.push_back(&k);
    }
    kernels += plan.size();
    per_plan.push_back(cuda::emit_program_module(ptrs));
  }
  bool ok = true;
  const auto compile_all = [&](const std::vector<std::string>& sources, std::vector<std::string> options, int threads) {
    const auto t0 = Clock::now();
    std::vector<std::future<bool>> jobs;
    for (int t = 0; t < threads; ++t)
      jobs.push_back(std::async(std::launch::async, [&, t] {
        bool all = true;
        for (size_t i = static_cast<size_t>(t); i < sources.size(); i += static_cast<size_t>(threads))
          all = cuda::compile_for_device(sources[i], 90, options).ok && all;
        return all;
      }));
    for (auto& j : jobs) ok = j.get() && ok;
    return ms_since(t0);
  };
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const double serial = compile_all(per_kernel, {}, 1);
  const double parallel = compile_all(per_kernel, {}, cores);
  // The cuda backend before one module per compilation: a plan's kernels on a thread each.
  double plan_parallel = 0;
  {
    size_t at = 0;
    for (const auto& plan : plans) {
      const std::vector<std::string> mine(per_kernel.begin() + static_cast<std::ptrdiff_t>(at),
                                          per_kernel.begin() + static_cast<std::ptrdiff_t>(at + plan.size()));
      plan_parallel += compile_all(mine, {}, static_cast<int>(plan.size()));
      at += plan.size();
    }
  }
  const double module = compile_all(per_plan, {}, 1);
  const double split = compile_all(per_plan, {"--split-compile=0"}, 1);
  std::printf("| NVRTC, %zu kernels of %zu corpus plans, sm_90 | ms | vs one module each, serial |\n|---|---|---|\n",
              kernels, plans.size());
  std::printf("| a module per kernel, one after another | %.0f | 1.00x |\n", serial);
  std::printf("| a module per kernel, on %d threads | %.0f | %.2fx |\n", cores, parallel, serial / parallel);
  std::printf("| a module per kernel, a plan's kernels on a thread each (the cuda backend before) | %.0f | %.2fx |\n",
              plan_parallel, serial / plan_parallel);
  std::printf("| a module per plan | %.0f | %.2fx |\n", module, serial / module);
  std::printf("| a module per plan, --split-compile=0 (the cuda backend) | %.0f | %.2fx |\n", split, serial / split);
  if (!ok) {
    std::printf("\nkiln_bench_nvrtc: a compile failed\n");
    return 1;
  }
  return 0;
}
