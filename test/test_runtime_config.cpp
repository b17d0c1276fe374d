// kiln/test/test_runtime_config.cpp — environment parsing, log channels and sinks, warn_once, dumps.
//
// parse_config is tested on fake environments; the process path (setenv + reload) once per
// variable family. Logging is captured through set_log_sink_for_testing.
#include "runtime/config.h"
#include "runtime/log.h"
#include "test_support/scoped_env.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace kiln::rt {
namespace {

using Env = std::map<std::string, std::string>;

Config parse(const Env& env, std::vector<std::string>& warnings) {
  return parse_config(
      [&](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      warnings);
}

// Captures every log line while alive.
class Capture {
 public:
  Capture() {
    set_log_sink_for_testing([this](std::string_view line) {
      std::lock_guard<std::mutex> lock(mutex_);
      lines_.emplace_back(line);
    });
  }
  ~Capture() { set_log_sink_for_testing({}); }
  std::vector<std::string> lines() {
    std::lock_guard<std::mutex> lock(mutex_);
    return lines_;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> lines_;
};

using test::ScopedEnv;

TEST(RuntimeConfig, Defaults) {
  std::vector<std::string> w;
  Config c = parse({{"HOME", "/home/u"}}, w);
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(c.log_channels, 0u);
  EXPECT_EQ(c.debug_dir, "");
  EXPECT_EQ(c.num_threads, default_num_threads());
  EXPECT_GE(c.num_threads, 1);
  EXPECT_EQ(c.cache_dir, "/home/u/.cache/kiln");
  EXPECT_FALSE(c.disable_cache);
  EXPECT_TRUE(c.disk_cache_enabled());
  EXPECT_EQ(c.allocator, AllocatorKind::Caching);
  EXPECT_EQ(c.allocator_cache_bytes, size_t{2048} << 20);
}

TEST(RuntimeConfig, LogChannels) {
  std::vector<std::string> w;
  Config c = parse({{"KILN_LOG", "graph, Fusion,,perf"}}, w);
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(c.log_channels, log_channel_bit(LogChannel::Graph) | log_channel_bit(LogChannel::Fusion) |
                                log_channel_bit(LogChannel::Perf));
  c = parse({{"KILN_LOG", "all"}}, w);
  EXPECT_EQ(c.log_channels, 0x1ffu);
  EXPECT_TRUE(w.empty());
}

TEST(RuntimeConfig, UnknownLogChannelsWarnOnceListingValidNames) {
  std::vector<std::string> w;
  Config c = parse({{"KILN_LOG", "graph,grpah,kernel"}}, w);
  EXPECT_EQ(c.log_channels, log_channel_bit(LogChannel::Graph));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("'grpah', 'kernel'"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("graph, decomp, fusion, kernels, guards, recompiles, cache, perf, repro, all"), std::string::npos)
      << w[0];
}

TEST(RuntimeConfig, NumThreads) {
  std::vector<std::string> w;
  EXPECT_EQ(parse({{"KILN_NUM_THREADS", "3"}}, w).num_threads, 3);
  EXPECT_EQ(parse({{"KILN_NUM_THREADS", " 7 "}}, w).num_threads, 7);
  EXPECT_TRUE(w.empty());
  for (const char* bad : {"0", "-2", "abc", "4x", "100000", "2.5"}) {
    w.clear();
    EXPECT_EQ(parse({{"KILN_NUM_THREADS", bad}}, w).num_threads, default_num_threads()) << bad;
    ASSERT_EQ(w.size(), 1u) << bad;
    EXPECT_NE(w[0].find("KILN_NUM_THREADS"), std::string::npos);
  }
}

TEST(RuntimeConfig, CacheDirectory) {
  std::vector<std::string> w;
  EXPECT_EQ(parse({{"HOME", "/h"}, {"XDG_CACHE_HOME", "/x/cache"}}, w).cache_dir, "/x/cache/kiln");
  EXPECT_EQ(parse({{"HOME", "/h"}, {"XDG_CACHE_HOME", "relative"}}, w).cache_dir, "/h/.cache/kiln");
  EXPECT_EQ(parse({{"HOME", "/h"}, {"KILN_CACHE_DIR", "/my/cache"}}, w).cache_dir, "/my/cache");
  EXPECT_TRUE(w.empty());
  Config c = parse({{"HOME", "/h"}, {"KILN_DISABLE_CACHE", "1"}}, w);
  EXPECT_TRUE(c.disable_cache);
  EXPECT_FALSE(c.disk_cache_enabled());
  EXPECT_FALSE(parse({{"HOME", "/h"}, {"KILN_DISABLE_CACHE", "0"}}, w).disable_cache);
  EXPECT_TRUE(parse({{"HOME", "/h"}, {"KILN_DISABLE_CACHE", "true"}}, w).disable_cache);
  EXPECT_TRUE(w.empty());
  EXPECT_FALSE(parse({{"HOME", "/h"}, {"KILN_DISABLE_CACHE", "maybe"}}, w).disable_cache);
  EXPECT_EQ(w.size(), 1u);
}

TEST(RuntimeConfig, CacheSizeAndRemoteCache) {
  std::vector<std::string> w;
  EXPECT_EQ(parse({}, w).cache_size_bytes, int64_t{1} << 30);
  EXPECT_EQ(parse({{"KILN_CACHE_SIZE", "500M"}}, w).cache_size_bytes, int64_t{500} << 20);
  EXPECT_EQ(parse({{"KILN_CACHE_SIZE", "2g"}}, w).cache_size_bytes, int64_t{2} << 30);
  EXPECT_EQ(parse({{"KILN_CACHE_SIZE", "64k"}}, w).cache_size_bytes, int64_t{64} << 10);
  EXPECT_EQ(parse({{"KILN_CACHE_SIZE", "12345"}}, w).cache_size_bytes, 12345);
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(parse({{"KILN_CACHE_SIZE", "lots"}}, w).cache_size_bytes, int64_t{1} << 30);
  EXPECT_EQ(parse({{"KILN_CACHE_SIZE", "-5M"}}, w).cache_size_bytes, int64_t{1} << 30);
  EXPECT_EQ(w.size(), 2u);
  EXPECT_EQ(parse({{"KILN_REMOTE_CACHE", " redis://h:1/2 "}}, w).remote_cache, "redis://h:1/2");
  EXPECT_EQ(parse({}, w).remote_cache, "");
}

TEST(RuntimeConfig, Allocator) {
  std::vector<std::string> w;
  EXPECT_EQ(parse({{"KILN_ALLOCATOR", "system"}}, w).allocator, AllocatorKind::System);
  EXPECT_EQ(parse({{"KILN_ALLOCATOR", "caching"}}, w).allocator, AllocatorKind::Caching);
  EXPECT_EQ(parse({{"KILN_ALLOCATOR_CACHE_MB", "16"}}, w).allocator_cache_bytes, size_t{16} << 20);
  EXPECT_EQ(parse({{"KILN_ALLOCATOR_CACHE_MB", "0"}}, w).allocator_cache_bytes, 0u);
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(parse({{"KILN_ALLOCATOR", "jemalloc"}}, w).allocator, AllocatorKind::Caching);
  EXPECT_EQ(parse({{"KILN_ALLOCATOR_CACHE_MB", "-1"}}, w).allocator_cache_bytes, size_t{2048} << 20);
  EXPECT_EQ(w.size(), 2u);
}

TEST(RuntimeConfig, Sgemm) {
  std::vector<std::string> w;
  EXPECT_EQ(parse({}, w).sgemm, SgemmChoice::OneDnn);
  EXPECT_EQ(parse({{"KILN_SGEMM", " Kiln "}}, w).sgemm, SgemmChoice::Kiln);
  EXPECT_EQ(parse({{"KILN_SGEMM", "onednn"}}, w).sgemm, SgemmChoice::OneDnn);
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(parse({{"KILN_SGEMM", "mkl"}}, w).sgemm, SgemmChoice::OneDnn);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("KILN_SGEMM='mkl'"), std::string::npos) << w[0];
}

TEST(RuntimeConfig, CudaRowKernelKnobs) {
  std::vector<std::string> w;
  EXPECT_EQ(parse({}, w).cuda_row_threads, 0);
  EXPECT_TRUE(parse({}, w).cuda_row_cache);
  EXPECT_EQ(parse({{"KILN_CUDA_ROW_THREADS", "256"}}, w).cuda_row_threads, 256);
  EXPECT_EQ(parse({{"KILN_CUDA_ROW_THREADS", "0"}}, w).cuda_row_threads, 0);
  EXPECT_FALSE(parse({{"KILN_CUDA_ROW_CACHE", "0"}}, w).cuda_row_cache);
  EXPECT_TRUE(w.empty());
  for (const char* bad : {"48", "2048", "-32", "many"}) {
    w.clear();
    EXPECT_EQ(parse({{"KILN_CUDA_ROW_THREADS", bad}}, w).cuda_row_threads, 0) << bad;
    ASSERT_EQ(w.size(), 1u) << bad;
    EXPECT_NE(w[0].find("is not 0 or a multiple of 32 in [32, 1024]"), std::string::npos) << w[0];
  }
}

TEST(RuntimeConfig, PerfMap) {
  std::vector<std::string> w;
  EXPECT_FALSE(parse({}, w).perf_map);
  EXPECT_TRUE(parse({{"KILN_PERF_MAP", "1"}}, w).perf_map);
  EXPECT_FALSE(parse({{"KILN_PERF_MAP", "off"}}, w).perf_map);
  EXPECT_TRUE(w.empty());
  EXPECT_FALSE(parse({{"KILN_PERF_MAP", "maybe"}}, w).perf_map);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("KILN_PERF_MAP='maybe'"), std::string::npos) << w[0];
}

TEST(RuntimeConfig, SetenvAndReloadPrintWarningsOnce) {
  Capture cap;
  {
    ScopedEnv e1("KILN_NUM_THREADS", "5");
    ScopedEnv e2("KILN_LOG", "guards,nonsense");
    EXPECT_EQ(config().num_threads, 5);
    EXPECT_TRUE(log_enabled(LogChannel::Guards));
    EXPECT_FALSE(log_enabled(LogChannel::Graph));
  }
  EXPECT_FALSE(log_enabled(LogChannel::Guards));
  auto lines = cap.lines();
  // The reload after setting KILN_LOG warned exactly once about 'nonsense'.
  int n = 0;
  for (const auto& l : lines) n += l.find("'nonsense'") != std::string::npos;
  EXPECT_EQ(n, 1);
  EXPECT_EQ(lines.at(0).rfind("[kiln:warning] KILN_LOG: unknown channel 'nonsense'", 0), 0u) << lines.at(0);
}

TEST(RuntimeConfig, VariableNamesAreTheDocumentedOnes) {
  std::ifstream in(std::string(KILN_TEST_DATA_DIR) + "/../docs/env.md");
  ASSERT_TRUE(in) << "docs/env.md is missing";
  std::stringstream ss;
  ss << in.rdbuf();
  for (auto name : config_variable_names())
    EXPECT_NE(ss.str().find("| `" + std::string(name) + "`"), std::string::npos) << name << " not in docs/env.md";
}

TEST(RuntimeLog, FormatAndChannelFiltering) {
  Capture cap;
  ScopedEnv e("KILN_LOG", "recompiles,cache");
  int evaluated = 0;
  auto count = [&] { return ++evaluated; };
  KILN_LOG_IF(LogChannel::Recompiles, "f: guard {} failed", "x.size(0) == 4");
  KILN_LOG_IF(LogChannel::Graph, "never {}", count());
  KILN_LOG_IF(LogChannel::Cache, "hit {}", count());
  log(LogChannel::Perf, "direct");  // log() itself does not filter
  EXPECT_EQ(evaluated, 1);  // the Graph message's arguments were not evaluated
  auto lines = cap.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "[kiln:recompiles] f: guard x.size(0) == 4 failed\n");
  EXPECT_EQ(lines[1], "[kiln:cache] hit 1\n");
  EXPECT_EQ(lines[2], "[kiln:perf] direct\n");
}

TEST(RuntimeLog, ChannelNamesRoundTrip) {
  for (int i = 0; i < kNumLogChannels; ++i) {
    auto c = static_cast<LogChannel>(i);
    EXPECT_EQ(parse_log_channel(log_channel_name(c)), c);
  }
  EXPECT_EQ(log_channel_name(LogChannel::Kernels), "kernels");
  EXPECT_FALSE(parse_log_channel("all").has_value());
}

TEST(RuntimeLog, WarnOncePerKey) {
  static int run = 0;  // keys are per process: fresh ones on every --gtest_repeat
  std::string a = "test.key.a." + std::to_string(run), b = "test.key.b." + std::to_string(run++);
  Capture cap;
  warn_once(a, "first a");
  warn_once(a, "second a");
  warn_once(b, "first b");
  warn("plain");
  warn("plain");
  auto lines = cap.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "[kiln:warning] first a\n");
  EXPECT_EQ(lines[1], "[kiln:warning] first b\n");
  EXPECT_EQ(lines[2], "[kiln:warning] plain\n");
}

TEST(RuntimeLog, ConcurrentMessagesStayWhole) {
  Capture cap;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t] {
      for (int i = 0; i < 200; ++i) log(LogChannel::Perf, std::string(50, static_cast<char>('a' + t)));
    });
  for (auto& th : threads) th.join();
  auto lines = cap.lines();
  ASSERT_EQ(lines.size(), 800u);
  for (const auto& l : lines) {
    ASSERT_EQ(l.size(), std::string("[kiln:perf] ").size() + 51);
    EXPECT_EQ(l.substr(12, 50), std::string(50, l[12]));
  }
}

TEST(RuntimeLog, DebugDumpDirectoriesAreFreshAndNumbered) {
  namespace fs = std::filesystem;
  fs::path base = fs::temp_directory_path() / ("kiln_test_dump_" + std::to_string(::getpid()));
  fs::remove_all(base);
  {
    ScopedEnv off("KILN_DEBUG_DIR", nullptr);
    EXPECT_FALSE(debug_dir_enabled());
    EXPECT_EQ(debug_dump_dir("f"), "");
  }
  ScopedEnv e("KILN_DEBUG_DIR", base.c_str());
  EXPECT_TRUE(debug_dir_enabled());
  // Counters are per process and function name: a fresh name on every --gtest_repeat.
  static int run = 0;
  std::string fn = "my fn" + std::to_string(run), sane = "my_fn" + std::to_string(run);
  std::string evil = "../evil" + std::to_string(run++);
  fs::create_directories(base / (sane + "_1"));  // left by an earlier run: must be skipped
  std::string d0 = debug_dump_dir(fn);
  std::string d1 = debug_dump_dir(fn);
  std::string d2 = debug_dump_dir(fn);
  std::string other = debug_dump_dir(evil);
  EXPECT_EQ(d0, (base / (sane + "_0")).string());
  EXPECT_EQ(d1, (base / (sane + "_2")).string());
  EXPECT_EQ(d2, (base / (sane + "_3")).string());
  EXPECT_EQ(other, (base / (".._" + evil.substr(3) + "_0")).string());
  debug_dump(d0, "000_traced.kir", "graph text\n");
  std::ifstream in(d0 + "/000_traced.kir");
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "graph text\n");
  debug_dump("", "x.txt", "ignored");  // no directory: a no-op
  fs::remove_all(base);
}

}  // namespace
}  // namespace kiln::rt
