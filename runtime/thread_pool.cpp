// kiln/runtime/thread_pool.cpp — rt::parallel_for on libgomp's thread team.
//
// The team is OpenMP's: the same threads oneDNN's convolutions run on (Debian's oneDNN is built
// on OpenMP). With a pool of kiln's own beside it, libgomp's workers spun for a while after
// every convolution while kiln's workers ran the next kernel on the same cores; on 2 cores the
// ResNet training step lost a fifth of its time to that (docs/decisions/fusion-and-kernels.md). A
// parallel_for is one `omp parallel` region of k threads, thread i running chunk i; the first
// exception a chunk throws is kept and rethrown to the caller once the region ends (running
// chunks finish, as a region cannot be left early; chunks not yet started are skipped).
#include "runtime/thread_pool.h"

#include "base/error.h"
#include "runtime/config.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>

namespace kiln::rt {

namespace {

thread_local bool t_in_region = false;

std::atomic<int> g_num_threads_override{0};

// One parallel_for at a time uses the team; a concurrent caller runs its chunks inline rather
// than start a second team on the same cores.
std::mutex g_dispatch;

int64_t chunks_for(int64_t n, int64_t min_grain, int threads) {
  if (n <= 0) return 0;
  int64_t grain = std::max<int64_t>(min_grain, 1);
  return std::clamp<int64_t>(n / grain, 1, threads);
}

void run_inline(int64_t n, int64_t k, FunctionRef<void(int64_t, int64_t)> fn) {
  for (int64_t i = 0; i < k; ++i) {
    ChunkBounds b = parallel_chunk(n, k, i);
    fn(b.begin, b.end);
  }
}

void run_team(int64_t n, int64_t k, FunctionRef<void(int64_t, int64_t)> fn) {
  std::exception_ptr error;
  std::mutex error_mutex;
  std::atomic<bool> failed{false};
#pragma omp parallel num_threads(static_cast<int>(k))
  {
    const bool was_in_region = t_in_region;
    t_in_region = true;
    // A team may be smaller than asked (OMP_THREAD_LIMIT): its threads share the chunks.
    for (int64_t i = omp_get_thread_num(); i < k && !failed.load(std::memory_order_relaxed); i += omp_get_num_threads()) {
      try {
        ChunkBounds b = parallel_chunk(n, k, i);
        fn(b.begin, b.end);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        failed.store(true, std::memory_order_relaxed);
      }
    }
    t_in_region = was_in_region;
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace

int num_threads() {
  int o = g_num_threads_override.load(std::memory_order_relaxed);
  return o > 0 ? o : config().num_threads;
}

void set_num_threads(int n) {
  KILN_CHECK(n >= 1 && n <= 1024, "set_num_threads", "thread count must be in [1, 1024], got {}", n);
  KILN_CHECK(!t_in_region, "set_num_threads", "cannot change the thread count inside a parallel_for");
  g_num_threads_override.store(n, std::memory_order_relaxed);
}

int64_t parallel_num_chunks(int64_t n, int64_t min_grain) { return chunks_for(n, min_grain, num_threads()); }

ChunkBounds parallel_chunk(int64_t n, int64_t k, int64_t i) {
  int64_t q = n / k;
  int64_t r = n % k;
  int64_t begin = i * q + std::min(i, r);
  return {begin, begin + q + (i < r ? 1 : 0)};
}

bool in_parallel_region() { return t_in_region; }

LibraryTeam::LibraryTeam(int n) {
  if (omp_in_parallel()) return;
  saved_ = omp_get_max_threads();
  omp_set_num_threads(std::max(n, 1));
}

int LibraryTeam::current() { return omp_in_parallel() ? 1 : omp_get_max_threads(); }

LibraryTeam::~LibraryTeam() {
  if (saved_ > 0) omp_set_num_threads(saved_);
}

void parallel_for(int64_t n, int64_t min_grain, FunctionRef<void(int64_t begin, int64_t end)> fn) {
  int64_t k = chunks_for(n, min_grain, num_threads());
  if (k == 0) return;
  if (k == 1) {
    fn(0, n);
    return;
  }
  if (t_in_region) {
    run_inline(n, k, fn);
    return;
  }
  std::unique_lock<std::mutex> lock(g_dispatch, std::try_to_lock);
  if (!lock.owns_lock()) {  // another thread is using the team: do not wait for it
    run_inline(n, k, fn);
    return;
  }
  run_team(n, k, fn);
}

}  // namespace kiln::rt
