// kiln/runtime/cuda/cuda_allocator.cpp — size classes, per-(stream, class) free lists and the statistics of device memory.
#include "runtime/cuda/cuda_allocator.h"
#include "runtime/wiring.h"

#include "base/allocator.h"
#include "base/error.h"
#include "codegen_cuda/driver.h"
#include "runtime/config.h"
#include "runtime/cuda/cuda_device.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln::rt {

size_t cuda_block_size(size_t bytes) {
  if (bytes <= 4096) return std::max<size_t>(512, (bytes + 511) / 512 * 512);
  const size_t p = std::bit_floor(bytes - 1);  // bytes in (p, 2p], p >= 4096
  const size_t step = p / 8;
  return (bytes + step - 1) / step * step;
}

namespace {

std::string mib(int64_t bytes) { return fmt::format("{:.2f} MiB", static_cast<double>(bytes) / (1 << 20)); }

struct Block {
  size_t size = 0;
  void* stream = nullptr;
};

// One device's blocks and counters, under one mutex.
struct DevicePool {
  std::mutex mu;
  std::map<std::pair<void*, size_t>, std::vector<void*>> free;  // (stream, block size) -> blocks
  std::unordered_map<void*, Block> live;
  int64_t cached_bytes = 0;
  cuda::MemoryStats stats;

  // Returns every cached block to the driver (the caller holds mu).
  void release_cached(int device) {
    if (free.empty()) return;
    cuda::device_synchronize(device);  // a queued kernel may still read a cached block
    for (auto& [key, blocks] : free)
      for (void* p : blocks) cuda::mem_free(device, p);
    free.clear();
    stats.reserved_bytes -= cached_bytes;
    cached_bytes = 0;
  }
};

class CudaCachingAllocator final : public DeviceAllocator {
 public:
  static constexpr int kMaxDevices = 64;
  // A device's pool: made once under mu_, read without a lock on every allocation.
  DevicePool& pool(int device) {
    if (device < 0 || device >= kMaxDevices)
      fail("cuda", "device index {} is out of range: kiln's allocator serves cuda:0 to cuda:{}", device, kMaxDevices - 1);
    std::atomic<DevicePool*>& slot = pools_[static_cast<size_t>(device)];
    if (DevicePool* p = slot.load(std::memory_order_acquire)) return *p;
    std::lock_guard lock(mu_);
    if (!slot.load(std::memory_order_relaxed)) slot.store(new DevicePool(), std::memory_order_release);  // never freed
    return *slot.load(std::memory_order_relaxed);
  }
  std::vector<std::pair<int, DevicePool*>> pools() {
    std::vector<std::pair<int, DevicePool*>> out;
    for (int d = 0; d < kMaxDevices; ++d)
      if (DevicePool* p = pools_[static_cast<size_t>(d)].load(std::memory_order_acquire)) out.emplace_back(d, p);
    return out;
  }

  void* allocate(size_t bytes, int device) override {
    // KILN_ALLOCATOR=system: the exact size from the driver, freed at once, so that
    // compute-sanitizer sees an access past a tensor's end and reports no cached block as a leak.
    const bool cache = config().allocator == AllocatorKind::Caching;
    const size_t size = cache ? cuda_block_size(bytes) : std::max<size_t>(bytes, 1);
    void* stream = cuda::current_stream(device).handle();
    DevicePool& p = pool(device);
    std::lock_guard lock(p.mu);
    ++p.stats.allocations;
    void* ptr = nullptr;
    auto it = p.free.find({stream, size});
    if (cache && it != p.free.end() && !it->second.empty()) {
      ptr = it->second.back();
      it->second.pop_back();
      p.cached_bytes -= static_cast<int64_t>(size);
      ++p.stats.cache_hits;
    } else {
      ptr = cuda::try_mem_alloc(device, size);
      if (!ptr) {
        ++p.stats.oom_retries;
        p.release_cached(device);
        ptr = cuda::try_mem_alloc(device, size);
      }
      if (!ptr) {
        size_t free_b = 0, total_b = 0;
        cuda::memory_info(device, &free_b, &total_b);
        fail("cuda", "out of memory on cuda:{}: tried to allocate {} ({} bytes); {} allocated by kiln, {} cached "
             "(returned to the driver before retrying), {} free of {}",
             device, mib(static_cast<int64_t>(size)), bytes, mib(p.stats.allocated_bytes), mib(p.cached_bytes),
             mib(static_cast<int64_t>(free_b)), mib(static_cast<int64_t>(total_b)));
      }
      ++p.stats.driver_allocations;
      p.stats.reserved_bytes += static_cast<int64_t>(size);
    }
    p.live[ptr] = Block{size, stream};
    p.stats.allocated_bytes += static_cast<int64_t>(size);
    p.stats.peak_allocated_bytes = std::max(p.stats.peak_allocated_bytes, p.stats.allocated_bytes);
    return ptr;
  }

  void deallocate(void* ptr, size_t /*bytes*/, int device) override {
    if (!ptr) return;
    DevicePool& p = pool(device);
    std::lock_guard lock(p.mu);
    auto it = p.live.find(ptr);
    if (it == p.live.end()) return;  // not ours: nothing to do (never happens for kiln's storage)
    const Block b = it->second;
    p.live.erase(it);
    p.stats.allocated_bytes -= static_cast<int64_t>(b.size);
    if (config().allocator != AllocatorKind::Caching) {
      cuda::device_synchronize(device);  // a queued kernel may still use the block
      cuda::mem_free(device, ptr);
      p.stats.reserved_bytes -= static_cast<int64_t>(b.size);
      return;
    }
    p.free[{b.stream, b.size}].push_back(ptr);
    p.cached_bytes += static_cast<int64_t>(b.size);
  }

 private:
  std::mutex mu_;
  std::array<std::atomic<DevicePool*>, kMaxDevices> pools_{};
};

CudaCachingAllocator& the_allocator() {
  static auto* a = new CudaCachingAllocator();  // never destroyed: storage may outlive main
  return *a;
}

}  // namespace

void wire_cuda_allocator() { set_cuda_allocator(&the_allocator()); }

}  // namespace kiln::rt

namespace kiln::cuda {

MemoryStats memory_stats(int device) {
  rt::DevicePool& p = rt::the_allocator().pool(device);
  std::lock_guard lock(p.mu);
  return p.stats;
}

void reset_peak_memory_stats(int device) {
  rt::DevicePool& p = rt::the_allocator().pool(device);
  std::lock_guard lock(p.mu);
  p.stats.peak_allocated_bytes = p.stats.allocated_bytes;
}

void empty_cache() {
  for (auto& [device, pool] : rt::the_allocator().pools()) {
    std::lock_guard lock(pool->mu);
    pool->release_cached(device);
  }
}

}  // namespace kiln::cuda
