// kiln/runtime/allocator.cpp — size classes, per-class free lists and counters.
//
// A free list is intrusive: the first word of a cached block points to the next one, so
// caching never allocates. The cap is enforced by reserving bytes_cached with an atomic add
// before pushing a block (and undoing it when over), so concurrent frees cannot overshoot it.
// Every other counter lives with its class's list, under that list's lock.
#include "runtime/allocator.h"
#include "runtime/wiring.h"

#include "base/error.h"
#include "runtime/config.h"

#include <array>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <mutex>
#include <utility>

#if defined(__SANITIZE_ADDRESS__)
#define KILN_ALLOCATOR_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_ALLOCATOR_ASAN 1
#endif
#endif

namespace kiln::rt {

namespace {

#if defined(KILN_ALLOCATOR_ASAN)
constexpr bool kCachingCompiledIn = false;
#else
constexpr bool kCachingCompiledIn = true;
#endif

constexpr size_t kMaxRequest = size_t{1} << 62;
// Classes 0..7: 64..512 bytes; then 8 per power of two from (512, 1024] up to (2^61, 2^62].
constexpr int kNumClasses = 8 + (62 - 9) * 8;

struct ClassOf {
  size_t size;  // the block size
  int index;    // the free list
};

// Requires 0 < bytes <= kMaxRequest.
ClassOf size_class(size_t bytes) {
  if (bytes <= 512) {
    size_t s = (bytes + 63) / 64 * 64;
    return {s, static_cast<int>(s / 64) - 1};
  }
  size_t p = std::bit_floor(bytes - 1);  // bytes in (p, 2p], p >= 512
  size_t step = p / 8;
  size_t s = (bytes + step - 1) / step * step;
  int log2p = std::countr_zero(p);
  return {s, 8 + (log2p - 9) * 8 + static_cast<int>((s - p) / step) - 1};
}

// Counters (the fields of AllocatorStats) under their own mutex: one per size class,
// kept with its free list, so that an allocation or a free takes that one lock and, for the
// cache's cap, one atomic (bytes_cached), not a lock and six atomics; and one for requests no
// class describes (the system allocator, caching off). allocator_stats() adds them up.
struct Counted {
  std::mutex mutex;
  AllocatorStats c;
};

struct FreeList : Counted {
  void* head = nullptr;
};

struct State {
  std::array<FreeList, kNumClasses> lists;
  Counted other;
  std::atomic<uint64_t> bytes_cached{0};  // the cap's reservation (counted before a block is pushed)
};

State& state() {
  static auto* s = new State();  // never destroyed: tensors may be freed during static destruction
  return *s;
}

bool caching_on() { return kCachingCompiledIn && config().allocator == AllocatorKind::Caching; }

// A block that comes from or goes back to the system.
void count_system_alloc(Counted& k, size_t size) {
  std::lock_guard<std::mutex> lock(k.mutex);
  ++k.c.allocs;
  ++k.c.system_allocs;
  k.c.bytes_in_use += size;
}
void count_system_free(Counted& k, size_t size) {
  std::lock_guard<std::mutex> lock(k.mutex);
  ++k.c.frees;
  ++k.c.system_frees;
  k.c.bytes_in_use -= size;
}

void* system_alloc(size_t size) {
  void* p = std::aligned_alloc(kCpuAlignment, size);
  if (p == nullptr) {  // out of memory: give the cache back and try once more
    empty_cache();
    p = std::aligned_alloc(kCpuAlignment, size);
  }
  return p;
}

}  // namespace

size_t cpu_alloc_size(size_t bytes) {
  if (bytes > kMaxRequest) return 0;
  if (bytes == 0) bytes = 1;
  if (!kCachingCompiledIn) return (bytes + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
  return size_class(bytes).size;
}

bool cpu_allocator_caching_available() { return kCachingCompiledIn; }

void* cpu_try_alloc(size_t bytes) {
  size_t size = cpu_alloc_size(bytes);
  if (size == 0) return nullptr;
  State& st = state();
  Counted* counters = &st.other;
  if (caching_on()) {
    FreeList& list = st.lists[static_cast<size_t>(size_class(size).index)];
    void* p = nullptr;
    {
      std::lock_guard<std::mutex> lock(list.mutex);
      p = list.head;
      if (p != nullptr) {
        list.head = *static_cast<void**>(p);
        ++list.c.allocs;
        ++list.c.cache_hits;
        list.c.bytes_in_use += size;
        list.c.bytes_cached -= size;
        --list.c.blocks_cached;
      }
    }
    if (p != nullptr) {
      st.bytes_cached.fetch_sub(size, std::memory_order_relaxed);
      return p;
    }
    counters = &list;
  }
  void* p = system_alloc(size);
  if (p != nullptr) count_system_alloc(*counters, size);
  return p;
}

void* cpu_alloc(size_t bytes) {
  void* p = cpu_try_alloc(bytes);
  if (p == nullptr) fail("cpu_alloc", "out of memory allocating {} bytes", bytes);
  return p;
}

void cpu_free(void* p, size_t bytes) {
  if (p == nullptr) return;
  size_t size = cpu_alloc_size(bytes);
  KILN_INTERNAL_ASSERT(size != 0);
  State& st = state();
  if (!caching_on()) {
    std::free(p);
    count_system_free(st.other, size);
    return;
  }
  FreeList& list = st.lists[static_cast<size_t>(size_class(size).index)];
  if (st.bytes_cached.fetch_add(size, std::memory_order_relaxed) + size > config().allocator_cache_bytes) {
    st.bytes_cached.fetch_sub(size, std::memory_order_relaxed);  // over the cap
    std::free(p);
    count_system_free(list, size);
    return;
  }
  std::lock_guard<std::mutex> lock(list.mutex);
  *static_cast<void**>(p) = list.head;
  list.head = p;
  ++list.c.frees;
  list.c.bytes_in_use -= size;
  list.c.bytes_cached += size;
  ++list.c.blocks_cached;
}

AllocatorStats allocator_stats() {
  State& st = state();
  AllocatorStats s;
  auto add = [&s](Counted& k) {
    std::lock_guard<std::mutex> lock(k.mutex);
    s.allocs += k.c.allocs;
    s.cache_hits += k.c.cache_hits;
    s.frees += k.c.frees;
    s.system_allocs += k.c.system_allocs;
    s.system_frees += k.c.system_frees;
    s.bytes_in_use += k.c.bytes_in_use;
    s.bytes_cached += k.c.bytes_cached;
    s.blocks_cached += k.c.blocks_cached;
  };
  for (FreeList& list : st.lists) add(list);
  add(st.other);
  s.cache_limit_bytes = config().allocator_cache_bytes;
  return s;
}

void empty_cache() {
  State& st = state();
  for (FreeList& list : st.lists) {
    void* head;
    uint64_t bytes;
    {
      std::lock_guard<std::mutex> lock(list.mutex);
      head = std::exchange(list.head, nullptr);
      bytes = std::exchange(list.c.bytes_cached, 0);
      list.c.system_frees += std::exchange(list.c.blocks_cached, 0);
    }
    st.bytes_cached.fetch_sub(bytes, std::memory_order_relaxed);
    while (head != nullptr) std::free(std::exchange(head, *static_cast<void**>(head)));
  }
}

namespace {

// The caching allocator behind base/allocator.h's interface (runtime/wiring.cpp installs it).
class CachingCpuAllocator final : public Allocator {
 public:
  void* allocate(size_t bytes) override { return cpu_try_alloc(bytes); }
  void deallocate(void* p, size_t bytes) override { cpu_free(p, bytes); }
};

}  // namespace

void wire_cpu_allocator() {
  static CachingCpuAllocator* a = new CachingCpuAllocator();  // never destroyed
  set_cpu_allocator(a);
}

}  // namespace kiln::rt
