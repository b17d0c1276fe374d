// kiln/runtime/thread_pool.cpp — rt::parallel_for on libgomp's thread team (opened at run time,
// runtime/openmp.h).
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
#include "runtime/openmp.h"

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

// One region: the state its threads share. Thread t runs chunks t, t + team size, ...
struct Region {
  Region(const OpenMp* omp, int64_t n, int64_t k, FunctionRef<void(int64_t, int64_t)> fn) : omp(omp), n(n), k(k), fn(fn) {}
  const OpenMp* omp;
  int64_t n, k;
  FunctionRef<void(int64_t, int64_t)> fn;
  std::exception_ptr error;
  std::mutex error_mutex;
  std::atomic<bool> failed{false};
};

void region_body(void* data) noexcept {  // (nothing may unwind through libgomp)
  Region& r = *static_cast<Region*>(data);
  const bool was_in_region = t_in_region;
  t_in_region = true;
  // A team may be smaller than asked (OMP_THREAD_LIMIT): its threads share the chunks.
  const int64_t team = r.omp->team_size();
  for (int64_t i = r.omp->thread_num(); i < r.k && !r.failed.load(std::memory_order_relaxed); i += team) {
    try {
      ChunkBounds b = parallel_chunk(r.n, r.k, i);
      r.fn(b.begin, b.end);
    } catch (...) {
      std::lock_guard<std::mutex> lock(r.error_mutex);
      if (!r.error) r.error = std::current_exception();
      r.failed.store(true, std::memory_order_relaxed);
    }
  }
  t_in_region = was_in_region;
}

// `#pragma omp parallel num_threads(k)` over region_body, through libgomp opened at run time.
void run_team(const OpenMp& omp, int64_t n, int64_t k, FunctionRef<void(int64_t, int64_t)> fn) {
  Region r(&omp, n, k, fn);
  omp.parallel(&region_body, &r, static_cast<unsigned>(k), 0);
  if (r.error) std::rethrow_exception(r.error);
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
  const OpenMp* omp = openmp();
  if (!omp || omp->in_parallel()) return;
  saved_ = omp->max_threads();
  omp->set_num_threads(std::max(n, 1));
}

int LibraryTeam::current() {
  const OpenMp* omp = openmp();
  return !omp || omp->in_parallel() ? 1 : omp->max_threads();
}

LibraryTeam::~LibraryTeam() {
  if (saved_ > 0) openmp()->set_num_threads(saved_);
}

void parallel_for(int64_t n, int64_t min_grain, FunctionRef<void(int64_t begin, int64_t end)> fn) {
  int64_t k = chunks_for(n, min_grain, num_threads());
  if (k == 0) return;
  if (k == 1) {
    fn(0, n);
    return;
  }
  const OpenMp* omp = openmp();
  if (t_in_region || !omp) {
    run_inline(n, k, fn);
    return;
  }
  std::unique_lock<std::mutex> lock(g_dispatch, std::try_to_lock);
  if (!lock.owns_lock()) {  // another thread is using the team: do not wait for it
    run_inline(n, k, fn);
    return;
  }
  run_team(*omp, n, k, fn);
}

}  // namespace kiln::rt
