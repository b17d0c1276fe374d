// kiln/test/test_runtime_thread_pool.cpp — parallel_for: coverage, deterministic chunks, errors, nesting.
//
// Each test sets the thread count explicitly (rt::set_num_threads) and restores the default.
#include "runtime/thread_pool.h"

#include "base/error.h"
#include "runtime/openmp.h"
#include "kiln/kiln.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include <unistd.h>

namespace kiln::rt {
namespace {

class ThreadCount {
 public:
  explicit ThreadCount(int n) : old_(num_threads()) { set_num_threads(n); }
  ~ThreadCount() { set_num_threads(old_); }

 private:
  int old_;
};

using Chunks = std::vector<std::pair<int64_t, int64_t>>;

// Runs parallel_for and returns its chunks sorted, checking every index is visited once.
Chunks run_and_check(int64_t n, int64_t grain) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(std::max<int64_t>(n, 0)));
  std::mutex m;
  Chunks chunks;
  parallel_for(n, grain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
    std::lock_guard<std::mutex> lock(m);
    chunks.emplace_back(b, e);
  });
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "index " << i << " of " << n;
  std::sort(chunks.begin(), chunks.end());
  return chunks;
}

TEST(RuntimeThreadPool, ChunkSplitIsBalancedAndContiguous) {
  // 10 over 4 chunks: the first 10 % 4 = 2 chunks get one more element.
  EXPECT_EQ(parallel_chunk(10, 4, 0).begin, 0);
  EXPECT_EQ(parallel_chunk(10, 4, 0).end, 3);
  EXPECT_EQ(parallel_chunk(10, 4, 1).end, 6);
  EXPECT_EQ(parallel_chunk(10, 4, 2).end, 8);
  EXPECT_EQ(parallel_chunk(10, 4, 3).end, 10);
  ThreadCount tc(4);
  EXPECT_EQ(parallel_num_chunks(0, 1), 0);
  EXPECT_EQ(parallel_num_chunks(100, 1), 4);
  EXPECT_EQ(parallel_num_chunks(100, 40), 2);   // 100 / 40 = 2
  EXPECT_EQ(parallel_num_chunks(100, 60), 1);   // below 2 * grain: inline
  EXPECT_EQ(parallel_num_chunks(3, 0), 3);      // grain < 1 counts as 1
}

TEST(RuntimeThreadPool, CoversRangeExactlyOnceWithDeterministicChunks) {
  for (int threads : {1, 2, 3, 4, 7}) {
    ThreadCount tc(threads);
    for (int64_t n : {0, 1, 2, 5, 7, 64, 1000, 100003}) {
      for (int64_t grain : {1, 16, 1000}) {
        Chunks first = run_and_check(n, grain);
        int64_t k = parallel_num_chunks(n, grain);
        ASSERT_EQ(static_cast<int64_t>(first.size()), k) << n << " " << grain << " " << threads;
        for (int64_t i = 0; i < k; ++i) {
          ChunkBounds b = parallel_chunk(n, k, i);
          EXPECT_EQ(first[static_cast<size_t>(i)], std::make_pair(b.begin, b.end));
        }
        EXPECT_LE(k, threads);
        EXPECT_EQ(run_and_check(n, grain), first);  // same split on a second run
      }
    }
  }
}

TEST(RuntimeThreadPool, UsesSeveralThreads) {
  ThreadCount tc(3);
  std::mutex m;
  std::set<std::thread::id> ids;
  std::atomic<int> arrived{0};
  parallel_for(3, 1, [&](int64_t, int64_t) {
    {
      std::lock_guard<std::mutex> lock(m);
      ids.insert(std::this_thread::get_id());
    }
    // Every chunk waits until all three have started: passes only if three threads run them.
    arrived.fetch_add(1);
    while (arrived.load() < 3) std::this_thread::yield();
  });
  EXPECT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids.count(std::this_thread::get_id()), 1u);  // the caller took part
}

// libgomp is opened on the first parallel call, with kiln's idle wait (runtime/openmp.h): this
// test binary, run again as a fresh process that makes one parallel call, shows libgomp's
// settings (OMP_DISPLAY_ENV=verbose): 10,000 spins unless the user chose; the user's
// GOMP_SPINCOUNT wins. The choice is gone from the environment afterwards, and cannot change
// once libgomp is loaded.
std::string run_self(const std::string& env) {
  std::string out;
  const std::string cmd = "env -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY OMP_DISPLAY_ENV=verbose " + env +
                          " /proc/" + std::to_string(::getpid()) + "/exe --gtest_filter=RuntimeThreadPool.UsesSeveralThreads 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return "popen failed";
  std::array<char, 4096> buf{};
  for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;) out.append(buf.data(), n);
  ::pclose(p);
  return out;
}

TEST(RuntimeThreadPool, IdleWorkersWaitAsKilnChoosesUnlessTheUserChose) {
  const std::string ours = run_self(""), theirs = run_self("GOMP_SPINCOUNT=777"), suffixed = run_self("OMP_WAIT_POLICY_ALL=active");
  EXPECT_NE(ours.find("GOMP_SPINCOUNT = '10000'"), std::string::npos) << ours;
  EXPECT_NE(ours.find("[  PASSED  ] 1 test"), std::string::npos) << ours;
  EXPECT_NE(theirs.find("GOMP_SPINCOUNT = '777'"), std::string::npos) << theirs;
  // GCC 13's libgomp reads OMP_WAIT_POLICY_ALL (Debian 12's ignores it): the user chose either way.
  EXPECT_EQ(suffixed.find("GOMP_SPINCOUNT = '10000'"), std::string::npos) << suffixed;
  EXPECT_NE(suffixed.find("[  PASSED  ] 1 test"), std::string::npos) << suffixed;
  EXPECT_EQ(ours.find("OMP_PROC_BIND = 'TRUE'"), std::string::npos) << "the library binds no thread unless asked\n" << ours;

  const bool user_set = std::getenv("GOMP_SPINCOUNT") != nullptr;
  ThreadCount tc(2);
  parallel_for(2, 1, [](int64_t, int64_t) {});
  ASSERT_NE(openmp(), nullptr);
  EXPECT_EQ(std::getenv("GOMP_SPINCOUNT") != nullptr, user_set) << "kiln's choice must not leak into child processes";
  EXPECT_FALSE(set_openmp_policy({.spin_count = 0, .bind_threads = true}));
}

TEST(RuntimeThreadPool, ExceptionsPropagateToTheCaller) {
  for (int threads : {1, 4}) {
    ThreadCount tc(threads);
    for (int rep = 0; rep < 20; ++rep) {
      std::atomic<int> ran{0};
      try {
        parallel_for(400, 1, [&](int64_t b, int64_t) {
          ran.fetch_add(1);
          if (b == 0) throw std::runtime_error("chunk zero failed");
        });
        FAIL() << "no exception";
      } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "chunk zero failed");
      }
      EXPECT_GE(ran.load(), 1);
    }
    // The pool still works afterwards.
    EXPECT_EQ(run_and_check(1000, 1).size(), static_cast<size_t>(threads));
  }
}

TEST(RuntimeThreadPool, NestedCallsRunInlineWithTheSameSplit) {
  ThreadCount tc(4);
  std::atomic<int> outer_in_region{0};
  std::vector<Chunks> inner(4);
  parallel_for(4, 1, [&](int64_t b, int64_t) {
    outer_in_region += in_parallel_region();
    auto self = std::this_thread::get_id();
    parallel_for(10, 1, [&](int64_t ib, int64_t ie) {
      EXPECT_EQ(std::this_thread::get_id(), self);  // inline on the same thread
      inner[static_cast<size_t>(b)].emplace_back(ib, ie);
    });
  });
  EXPECT_EQ(outer_in_region.load(), 4);
  EXPECT_FALSE(in_parallel_region());
  Chunks expected = {{0, 3}, {3, 6}, {6, 8}, {8, 10}};  // in order, same 4-way split
  for (const auto& c : inner) EXPECT_EQ(c, expected);
}

TEST(RuntimeThreadPool, ConcurrentCallersBothComplete) {
  ThreadCount tc(2);
  std::atomic<int64_t> total{0};
  auto work = [&] {
    for (int rep = 0; rep < 200; ++rep)
      parallel_for(1000, 1, [&](int64_t b, int64_t e) { total.fetch_add(e - b); });
  };
  std::thread a(work), b(work);
  a.join();
  b.join();
  EXPECT_EQ(total.load(), 2 * 200 * 1000);
}

TEST(RuntimeThreadPool, ManySmallJobs) {
  ThreadCount tc(2);
  int64_t sum = 0;
  std::vector<int64_t> partial(2);
  for (int rep = 0; rep < 20000; ++rep) {
    parallel_for(2, 1, [&](int64_t b, int64_t e) { partial[static_cast<size_t>(b)] = e; });
    sum += partial[0] + partial[1];
  }
  EXPECT_EQ(sum, 20000 * 3);
}

TEST(RuntimeThreadPool, SetNumThreadsValidates) {
  EXPECT_THROW(set_num_threads(0), Error);
  ThreadCount tc(2);
  parallel_for(2, 1, [&](int64_t, int64_t) { EXPECT_THROW(set_num_threads(3), Error); });
  EXPECT_EQ(num_threads(), 2);
}

// A library's OpenMP team (oneDNN's products and convolutions) follows the scope's count, and
// the thread's own setting comes back after; inside a parallel_for chunk nothing changes (the
// library runs on that thread). Convolutions under one and two threads agree.
TEST(RuntimeThreadPool, LibraryTeamsFollowKilnsThreadCount) {
  const int before = LibraryTeam::current();
  {
    const LibraryTeam one(1);
    EXPECT_EQ(LibraryTeam::current(), 1);
    {
      const LibraryTeam three(3);
      EXPECT_EQ(LibraryTeam::current(), 3);
    }
    EXPECT_EQ(LibraryTeam::current(), 1);
  }
  EXPECT_EQ(LibraryTeam::current(), before);
  ThreadCount tc(2);
  parallel_for(2, 1, [&](int64_t, int64_t) {
    const LibraryTeam four(4);
    EXPECT_EQ(LibraryTeam::current(), 1);
  });
  const Tensor x = randn({2, 8, 12, 12}), w = randn({16, 8, 3, 3});
  Tensor y2 = conv2d(x, w, std::nullopt, 1, 1), y1;
  {
    ThreadCount single(1);
    y1 = conv2d(x, w, std::nullopt, 1, 1);
  }
  EXPECT_TRUE(allclose(y1, y2, 1e-5, 1e-5));
  EXPECT_EQ(LibraryTeam::current(), before);
}

TEST(RuntimeThreadPool, FunctionRefCallsWithoutCopying) {
  int calls = 0;
  auto f = [&calls](int64_t b, int64_t e) { calls += static_cast<int>(e - b); };
  FunctionRef<void(int64_t, int64_t)> r = f;
  r(2, 5);
  r(0, 1);
  EXPECT_EQ(calls, 4);
  static_assert(sizeof(r) == 2 * sizeof(void*));
}

}  // namespace
}  // namespace kiln::rt
