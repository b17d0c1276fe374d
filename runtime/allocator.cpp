// kiln/runtime/allocator.cpp — size classes, per-class free lists and counters.
//
// A free list is intrusive: the first word of a cached block points to the next one, so
// caching never allocates. The cap is enforced by reserving bytes_cached with an atomic add
// before pushing a block (and undoing it when over), so concurrent frees cannot overshoot it.
// Every other counter lives with its class's list, under that list's lock.
#include "runtime/allocator.h"

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

// The block size of class `index` (inverse of size_class).
size_t class_size(int index) {
  if (index < 8) return static_cast<size_t>(index + 1) * 64;
  int j = index - 8;
  size_t p = size_t{1} << (9 + j / 8);
  return p + static_cast<size_t>(j % 8 + 1) * (p / 8);
}

// A class's free list and its counters, all under its mutex: an allocation or a free takes
// that one lock and, for the cache's cap, one atomic (bytes_cached), not a lock and six atomics.
// allocator_stats() adds the classes up.
struct FreeList {
  std::mutex mutex;
  void* head = nullptr;
  uint64_t allocs = 0, cache_hits = 0, frees = 0, system_allocs = 0, system_frees = 0;
  uint64_t blocks_in_use = 0, blocks_cached = 0;
};

struct State {
  std::array<FreeList, kNumClasses> lists;
  std::atomic<uint64_t> bytes_cached{0};  // the cap's reservation (counted before a block is pushed)
  // Requests the caching classes do not describe (the system allocator, caching off):
  std::mutex other_mutex;
  uint64_t other_allocs = 0, other_frees = 0, other_bytes_in_use = 0;
};

State& state() {
  static auto* s = new State();  // never destroyed: tensors may be freed during static destruction
  return *s;
}

bool caching_on() { return kCachingCompiledIn && config().allocator == AllocatorKind::Caching; }

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
  if (!caching_on()) {
    void* p = system_alloc(size);
    if (p == nullptr) return nullptr;
    std::lock_guard<std::mutex> lock(st.other_mutex);
    ++st.other_allocs;
    st.other_bytes_in_use += size;
    return p;
  }
  FreeList& list = st.lists[static_cast<size_t>(size_class(size).index)];
  void* p = nullptr;
  {
    std::lock_guard<std::mutex> lock(list.mutex);
    p = list.head;
    if (p != nullptr) {
      list.head = *static_cast<void**>(p);
      --list.blocks_cached;
      ++list.cache_hits;
      ++list.allocs;
      ++list.blocks_in_use;
    }
  }
  if (p != nullptr) {
    st.bytes_cached.fetch_sub(size, std::memory_order_relaxed);
    return p;
  }
  p = system_alloc(size);
  if (p == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(list.mutex);
  ++list.system_allocs;
  ++list.allocs;
  ++list.blocks_in_use;
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
    std::lock_guard<std::mutex> lock(st.other_mutex);
    ++st.other_frees;
    st.other_bytes_in_use -= size;
    return;
  }
  FreeList& list = st.lists[static_cast<size_t>(size_class(size).index)];
  const uint64_t before = st.bytes_cached.fetch_add(size, std::memory_order_relaxed);
  const bool cache = before + size <= config().allocator_cache_bytes;
  if (!cache) {
    st.bytes_cached.fetch_sub(size, std::memory_order_relaxed);
    std::free(p);
  }
  std::lock_guard<std::mutex> lock(list.mutex);
  ++list.frees;
  --list.blocks_in_use;
  if (!cache) {
    ++list.system_frees;
    return;
  }
  *static_cast<void**>(p) = list.head;
  list.head = p;
  ++list.blocks_cached;
}

AllocatorStats allocator_stats() {
  State& st = state();
  AllocatorStats s;
  for (size_t i = 0; i < st.lists.size(); ++i) {
    FreeList& list = st.lists[i];
    const uint64_t size = class_size(static_cast<int>(i));
    std::lock_guard<std::mutex> lock(list.mutex);
    s.allocs += list.allocs;
    s.cache_hits += list.cache_hits;
    s.frees += list.frees;
    s.system_allocs += list.system_allocs;
    s.system_frees += list.system_frees;
    s.bytes_in_use += list.blocks_in_use * size;
    s.bytes_cached += list.blocks_cached * size;
    s.blocks_cached += list.blocks_cached;
  }
  std::lock_guard<std::mutex> lock(st.other_mutex);
  s.allocs += st.other_allocs;
  s.frees += st.other_frees;
  s.system_allocs += st.other_allocs;
  s.system_frees += st.other_frees;
  s.bytes_in_use += st.other_bytes_in_use;
  s.cache_limit_bytes = config().allocator_cache_bytes;
  return s;
}

void empty_cache() {
  State& st = state();
  for (size_t i = 0; i < st.lists.size(); ++i) {
    FreeList& list = st.lists[i];
    void* head;
    uint64_t blocks;
    {
      std::lock_guard<std::mutex> lock(list.mutex);
      head = std::exchange(list.head, nullptr);
      blocks = std::exchange(list.blocks_cached, 0);
      list.system_frees += blocks;
    }
    st.bytes_cached.fetch_sub(blocks * class_size(static_cast<int>(i)), std::memory_order_relaxed);
    while (head != nullptr) {
      void* next = *static_cast<void**>(head);
      std::free(head);
      head = next;
    }
  }
}

namespace {

// The caching allocator behind base/allocator.h's interface, installed at load.
class CachingCpuAllocator final : public Allocator {
 public:
  void* allocate(size_t bytes) override { return cpu_try_alloc(bytes); }
  void deallocate(void* p, size_t bytes) override { cpu_free(p, bytes); }
};

const bool installed = [] {
  static CachingCpuAllocator* a = new CachingCpuAllocator();  // never destroyed
  set_cpu_allocator(a);
  return true;
}();

}  // namespace

}  // namespace kiln::rt
