// kiln/runtime/thread_pool.cpp — the worker pool behind rt::parallel_for.
//
// One job at a time. The dispatcher writes the job (body, n, k), then publishes a 64-bit
// word epoch(32) | k(16) | next(16). Every thread, the caller included, claims chunk indices by
// CAS on that word; the epoch in the word means a slow worker can only ever claim a chunk of
// the job that is current, and the job's fields stay unchanged until its last claimed chunk
// has finished (the `pending` count reaches 0). Idle workers spin ~50 us, then sleep on a
// futex (`wake_epoch`); the caller, once out of chunks, spins and then sleeps on `pending`.
// Sleeping and waking use the usual store-then-check order on both sides (seq_cst), so a
// wake-up is never lost. The pool is allocated once and never destroyed: workers may still be
// asleep when the process exits.
#include "runtime/thread_pool.h"

#include "base/error.h"
#include "runtime/config.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace kiln::rt {

namespace {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) && std::atomic<uint32_t>::is_always_lock_free);

void futex_wait(std::atomic<uint32_t>& word, uint32_t expected) {
#if defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
#else
  word.wait(expected);
#endif
}

void futex_wake(std::atomic<uint32_t>& word, int count) {
#if defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0);
#else
  (void)count;
  word.notify_all();
#endif
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins until pred() holds or about `budget` has passed; returns pred(). After the first
// microseconds each round also yields: when the machine is busy, a woken worker often lands on
// the CPU of the thread that woke it, and a pure spin would keep that thread off its CPU (and
// the job unfinished) for the whole budget.
template <typename Pred>
bool spin_until(Pred pred, std::chrono::nanoseconds budget) {
  auto start = std::chrono::steady_clock::now();
  auto yield_after = start + std::chrono::microseconds(2);
  auto deadline = start + budget;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (pred()) return true;
      cpu_relax();
    }
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return pred();
    if (now >= yield_after) std::this_thread::yield();
  }
}

constexpr std::chrono::microseconds kSpin{50};

thread_local bool t_in_region = false;

std::atomic<int> g_num_threads_override{0};

using Body = FunctionRef<void(int64_t, int64_t)>;

int64_t chunks_for(int64_t n, int64_t min_grain, int threads) {
  if (n <= 0) return 0;
  int64_t grain = std::max<int64_t>(min_grain, 1);
  return std::clamp<int64_t>(n / grain, 1, threads);
}

class Pool {
 public:
  // Runs the job; the caller holds dispatch_mutex and has set the pool to `threads` threads.
  void run(int64_t n, int64_t k, const Body& fn) {
    n_ = n;
    k_ = k;
    fn_ = &fn;
    error_ = nullptr;
    failed_.store(false, std::memory_order_relaxed);
    caller_sleeping_.store(0, std::memory_order_relaxed);
    pending_.store(static_cast<uint32_t>(k), std::memory_order_relaxed);
    ++epoch_;
    word_.store((uint64_t{epoch_} << 32) | (static_cast<uint64_t>(k) << 16), std::memory_order_release);
    wake_epoch_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) futex_wake(wake_epoch_, static_cast<int>(k - 1));

    t_in_region = true;
    int64_t idx;
    while (try_claim(idx)) run_chunk(idx);
    if (!spin_until([&] { return pending_.load(std::memory_order_acquire) == 0; }, kSpin)) {
      caller_sleeping_.store(1, std::memory_order_seq_cst);
      for (uint32_t v; (v = pending_.load(std::memory_order_seq_cst)) != 0;) futex_wait(pending_, v);
    }
    t_in_region = false;
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

  // Makes the pool `threads` threads in all (threads - 1 workers). Caller holds dispatch_mutex.
  void resize(int threads) {
    if (static_cast<int>(workers_.size()) == threads - 1) return;
    stop_.store(true, std::memory_order_seq_cst);
    wake_epoch_.fetch_add(1, std::memory_order_seq_cst);
    futex_wake(wake_epoch_, INT_MAX);
    for (auto& w : workers_) w.join();
    workers_.clear();
    stop_.store(false, std::memory_order_seq_cst);
    for (int i = 0; i + 1 < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
  }

  std::mutex dispatch_mutex;

 private:
  bool try_claim(int64_t& idx) {
    uint64_t w = word_.load(std::memory_order_acquire);
    for (;;) {
      uint64_t next = w & 0xffff;
      uint64_t k = (w >> 16) & 0xffff;
      if (next >= k) return false;
      if (word_.compare_exchange_weak(w, w + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
        idx = static_cast<int64_t>(next);
        return true;
      }
    }
  }

  void run_chunk(int64_t idx) {
    if (!failed_.load(std::memory_order_relaxed)) {
      ChunkBounds b = parallel_chunk(n_, k_, idx);
      try {
        (*fn_)(b.begin, b.end);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex_);
        if (!error_) error_ = std::current_exception();
        failed_.store(true, std::memory_order_relaxed);
      }
    }
    // After this decrement the job may be over and replaced: touch no job field below.
    if (pending_.fetch_sub(1, std::memory_order_seq_cst) == 1 && caller_sleeping_.load(std::memory_order_seq_cst))
      futex_wake(pending_, 1);
  }

  void worker_loop() {
    t_in_region = true;
    while (!stop_.load(std::memory_order_acquire)) {
      uint32_t seen = wake_epoch_.load(std::memory_order_seq_cst);
      int64_t idx;
      while (try_claim(idx)) run_chunk(idx);
      auto woken = [&] {
        return wake_epoch_.load(std::memory_order_acquire) != seen || stop_.load(std::memory_order_relaxed);
      };
      if (spin_until(woken, kSpin)) continue;
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      if (wake_epoch_.load(std::memory_order_seq_cst) == seen) futex_wait(wake_epoch_, seen);
      sleepers_.fetch_sub(1, std::memory_order_seq_cst);
    }
  }

  // The current job (valid while pending_ > 0).
  int64_t n_ = 0;
  int64_t k_ = 0;
  const Body* fn_ = nullptr;
  std::exception_ptr error_;
  std::mutex error_mutex_;
  std::atomic<bool> failed_{false};

  uint32_t epoch_ = 0;
  alignas(64) std::atomic<uint64_t> word_{0};
  alignas(64) std::atomic<uint32_t> pending_{0};
  std::atomic<uint32_t> caller_sleeping_{0};
  alignas(64) std::atomic<uint32_t> wake_epoch_{0};
  std::atomic<uint32_t> sleepers_{0};
  std::atomic<bool> stop_{false};
  std::vector<std::thread> workers_;
};

Pool& pool() {
  static Pool* p = new Pool();  // never destroyed (see the file comment)
  return *p;
}

void run_inline(int64_t n, int64_t k, const Body& fn) {
  for (int64_t i = 0; i < k; ++i) {
    ChunkBounds b = parallel_chunk(n, k, i);
    fn(b.begin, b.end);
  }
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

void parallel_for(int64_t n, int64_t min_grain, FunctionRef<void(int64_t begin, int64_t end)> fn) {
  int threads = num_threads();
  int64_t k = chunks_for(n, min_grain, threads);
  if (k == 0) return;
  if (k == 1) {
    fn(0, n);
    return;
  }
  if (t_in_region) {
    run_inline(n, k, fn);
    return;
  }
  Pool& p = pool();
  std::unique_lock<std::mutex> lock(p.dispatch_mutex, std::try_to_lock);
  if (!lock.owns_lock()) {  // another thread is using the pool: do not wait for it
    run_inline(n, k, fn);
    return;
  }
  p.resize(threads);
  p.run(n, k, fn);
}

}  // namespace kiln::rt
