// kiln/bench/bench_cache.cpp — kiln_bench_cache: the persistent compile cache measured from
// fresh processes (bench/README.md).
//
// Every sample is one new process (kiln_cache_probe) that compiles one workload and calls it
// once, timed inside the process from before compile() to the result (LLVM's start-up and
// the cache lookups included, process start and library loading not). Per workload, in one
// run: cold (KILN_DISABLE_CACHE=1), disk-warm (a directory an earlier process filled),
// Redis-warm (an empty directory and a Redis an earlier process filled; a redis-server of our
// own on a free loopback port, when one is installed), and a fresh process's first 10 eager
// ops with and without a warm disk cache. Prints the medians, the ratios and the issue's
// targets.
#include "test/test_support/files.h"
#include "test/test_support/local_redis.h"

#include <fmt/format.h>


#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Sample {
  std::string code;
  double ms = 0;       // the first call, compile() included
  double warm_ms = 0;  // a second call of the same function
  double process_ms = 0;  // the whole process: start, loading libraries, the workload, exit
};

// Runs the probe on one workload with `env` prefixed; the sample of that workload.
std::optional<Sample> probe(const std::string& env, const std::string& workload) {
  const std::string cmd = env + " exec '" KILN_CACHE_PROBE "' " + workload + " 2>/dev/null";
  const auto t0 = std::chrono::steady_clock::now();
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return std::nullopt;
  char buf[512];
  std::optional<Sample> s;
  while (std::fgets(buf, sizeof buf, p)) {
    char name[64], code[64];
    double ms = 0, warm = 0;
    if (std::sscanf(buf, "%63s code=%63s first_call_ms=%lf second_call_ms=%lf", name, code, &ms, &warm) == 4 &&
        workload == name)
      s = Sample{code, ms, warm, 0};
    if (workload == "none" && std::strncmp(buf, "llvm ", 5) == 0) s = Sample{"-", 0, 0, 0};
  }
  if (::pclose(p) != 0) return std::nullopt;
  if (s) s->process_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

double median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median over `runs` fresh processes; every sample's code must come from `expect` ("" = any).
// *warm: the median of the second calls; *process: of the whole processes.
double measure(int runs, const std::function<std::string()>& env_of_run, const std::string& workload,
               const std::string& expect, std::string& problem, double* warm = nullptr, double* process = nullptr) {
  std::vector<double> ms, warms, processes;
  for (int i = 0; i < runs; ++i) {
    std::optional<Sample> s = probe(env_of_run(), workload);
    if (!s) {
      problem = fmt::format("{}: the probe failed", workload);
      return -1;
    }
    if (!expect.empty() && s->code != expect) problem = fmt::format("{}: code from {}, expected {}", workload, s->code, expect);
    ms.push_back(s->ms);
    warms.push_back(s->warm_ms);
    processes.push_back(s->process_ms);
  }
  if (warm) *warm = median(warms);
  if (process) *process = median(processes);
  return median(ms);
}

std::string cell(double ms) { return ms < 0 ? "—" : fmt::format("{:.2f} ms", ms); }
std::string ratio(double a, double b) { return a < 0 || b <= 0 ? "—" : fmt::format("{:.1f}x", a / b); }
std::string met(double ms, double target) { return ms < 0 ? "—" : ms <= target ? "yes" : "no"; }

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--runs") runs = std::max(1, std::atoi(argv[i + 1]));
  kiln::test::LocalRedis redis;  // test/test_support/local_redis.h
  const bool have_redis = redis.start().empty();
  std::vector<std::string> problems;
  std::vector<std::string> dirs;
  auto fresh = [&] {
    dirs.push_back(kiln::test::make_temp_dir("kiln-bench-cache"));
    return dirs.back();
  };

  struct Row {
    std::string name;
    double cold, disk, remote, warm, process, target_disk, target_remote;
  };
  std::vector<Row> rows;
  for (const char* w : {"softmax", "mlp", "chain20"}) {
    std::string problem;
    const double cold = measure(runs, [] { return std::string("KILN_DISABLE_CACHE=1"); }, w, "compiled", problem);
    const std::string warm = fresh();
    probe("KILN_CACHE_DIR=" + warm, w);  // fills it
    double warm_call = -1, process = -1;
    const double disk = measure(runs, [&] { return "KILN_CACHE_DIR=" + warm; }, w, "disk", problem, &warm_call, &process);
    double remote = -1;
    if (have_redis) {
      probe(fmt::format("KILN_CACHE_DIR={} KILN_REMOTE_CACHE={}", fresh(), redis.url()), w);  // fills Redis
      remote = measure(runs, [&] { return fmt::format("KILN_CACHE_DIR={} KILN_REMOTE_CACHE={}", fresh(), redis.url()); }, w,
                       "remote", problem);
    }
    if (!problem.empty()) problems.push_back(problem);
    const bool small = std::string(w) != "chain20";
    rows.push_back({w, cold, disk, remote, warm_call, process, small ? 2.0 : -1, 5.0});
  }
  std::string problem;
  double bare_process = -1;  // a process that loads kiln and runs nothing
  measure(runs, [] { return std::string("KILN_DISABLE_CACHE=1"); }, "none", "", problem, nullptr, &bare_process);
  const double eager_cold = measure(runs, [] { return std::string("KILN_DISABLE_CACHE=1"); }, "eager10", "", problem);
  const std::string eager_dir = fresh();
  probe("KILN_CACHE_DIR=" + eager_dir, "eager10");
  const double eager_warm = measure(runs, [&] { return "KILN_CACHE_DIR=" + eager_dir; }, "eager10", "", problem);
  if (!problem.empty()) problems.push_back(problem);

  std::printf("## kiln_bench_cache: first call in a fresh process (median of %d processes each)\n\n", runs);
  std::printf("| workload | cold (cache off) | disk warm | Redis warm | 2nd call | disk warm − 2nd call | cold/disk | "
              "whole process, disk warm | disk target | met | Redis target | met |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Row& r : rows)
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.name.c_str(), cell(r.cold).c_str(),
                cell(r.disk).c_str(), cell(r.remote).c_str(), cell(r.warm).c_str(),
                cell(r.disk < 0 || r.warm < 0 ? -1 : r.disk - r.warm).c_str(), ratio(r.cold, r.disk).c_str(),
                cell(r.process).c_str(),
                r.target_disk < 0 ? "—" : fmt::format("≤{:.0f} ms", r.target_disk).c_str(),
                r.target_disk < 0 ? "—" : met(r.disk, r.target_disk).c_str(), fmt::format("≤{:.0f} ms", r.target_remote).c_str(),
                met(r.remote, r.target_remote).c_str());
  std::printf("| first 10 eager ops | %s | %s | — | — | — | %s | — | — | — | — | — |\n", cell(eager_cold).c_str(),
              cell(eager_warm).c_str(), ratio(eager_cold, eager_warm).c_str());
  std::printf("\nFirst compile in a process (cold softmax above): %s, target ≤60 ms: %s\n", cell(rows[0].cold).c_str(),
              met(rows[0].cold, 60).c_str());
  std::printf("A process that loads kiln and runs nothing, start to exit: %s\n", cell(bare_process).c_str());
  std::printf("(first call: from before compile() to the result, in a new process; 2nd call: the same function again, "
              "warm, in the disk-warm processes; whole process: from fork to exit, loading libkiln and its libraries "
              "included)\n");
  if (!have_redis) std::printf("Redis column: no redis-server installed (apt-get install redis-server)\n");
  for (const std::string& p : problems) std::printf("problem: %s\n", p.c_str());
  for (const std::string& d : dirs) fs::remove_all(d);
  return problems.empty() ? 0 : 1;
}
