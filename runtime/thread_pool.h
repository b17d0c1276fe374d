// kiln/runtime/thread_pool.h — rt::parallel_for, on OpenMP's thread team.
//
// num_threads() threads share the work of a parallel_for: the calling thread and num_threads()-1
// workers of libgomp's team, the same threads oneDNN's convolutions run on (one team, so that
// neither spins on the cores the other needs; runtime/thread_pool.cpp). [0, n) is cut into
// k = clamp(n / min_grain, 1, num_threads()) contiguous chunks of nearly equal size (the first
// n % k chunks one element longer), so the split depends only on n, min_grain and the thread
// count: per-chunk partial results (for example reduction partials) are reproducible. Which
// thread runs which chunk is not fixed.
//
// A call runs inline on the caller (still chunk by chunk, in order, with the same split) when
// k == 1, when it is made from inside another parallel_for (no nested parallelism, no
// deadlock), or when another thread is using the team at that moment. The first exception
// thrown by a chunk is rethrown to the caller after the other running chunks finish; chunks
// not yet started are skipped.
//
// Dispatch costs about a microsecond (an `omp parallel` region, no allocation: the body is
// passed as a FunctionRef). libgomp is opened, and its workers start, on the first parallel call;
// they spin for a while after each region (runtime/openmp.h: kiln's choice unless the user sets
// GOMP_SPINCOUNT or OMP_WAIT_POLICY), then sleep, and live until the process exits.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

namespace kiln::rt {

// A non-owning reference to a callable (like C++26 std::function_ref): two pointers, never
// allocates. The referenced callable must outlive the call it is passed to.
template <typename Sig>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename F,
            typename = std::enable_if_t<!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> &&
                                        std::is_invocable_r_v<R, F&, Args...>>>
  FunctionRef(F&& f) noexcept  // NOLINT(google-explicit-constructor): implicit by design
      : obj_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* obj, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(obj))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(obj_, std::forward<Args>(args)...); }

 private:
  void* obj_;
  R (*call_)(void*, Args...);
};

// Threads parallel_for uses, the caller included (KILN_NUM_THREADS, default: hardware
// concurrency, or the last set_num_threads).
int num_threads();

// Changes the thread count (>= 1, like torch::set_num_threads); the pool is resized before the
// next parallel call. Throws kiln::Error for n < 1 or when called inside a parallel_for.
void set_num_threads(int n);

// Number of chunks parallel_for(n, min_grain, ...) uses with the current thread count;
// 0 when n <= 0. min_grain < 1 counts as 1.
int64_t parallel_num_chunks(int64_t n, int64_t min_grain);

// Bounds [begin, end) of chunk i of k for a range of n elements (0 <= i < k, 1 <= k).
struct ChunkBounds {
  int64_t begin;
  int64_t end;
};
ChunkBounds parallel_chunk(int64_t n, int64_t k, int64_t i);

// Runs fn(begin, end) over contiguous chunks that cover [0, n) exactly once (see above).
void parallel_for(int64_t n, int64_t min_grain, FunctionRef<void(int64_t begin, int64_t end)> fn);

// True on a pool worker, or on a caller thread while it runs its chunks of a parallel_for.
bool in_parallel_region();

// While alive, an OpenMP team that a library starts from this thread has `n` threads: oneDNN
// reads the calling thread's OpenMP setting when it creates a primitive and when it runs one,
// and would otherwise use every CPU whatever num_threads() says. Inside an OpenMP region (a
// parallel_for chunk) it changes nothing: the library runs on the calling thread alone.
class LibraryTeam {
 public:
  // The threads a team started from this thread would have now.
  static int current();
  explicit LibraryTeam(int n);
  ~LibraryTeam();
  LibraryTeam(const LibraryTeam&) = delete;
  LibraryTeam& operator=(const LibraryTeam&) = delete;

 private:
  int saved_ = 0;  // the thread's setting before; 0: unchanged
};

}  // namespace kiln::rt
