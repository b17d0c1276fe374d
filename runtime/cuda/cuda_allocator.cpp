// kiln/runtime/cuda/cuda_allocator.cpp — the caching allocator of CUDA device memory.
//
// Device memory comes from one DeviceMemoryPool per device (runtime/cuda/device_memory_pool.h:
// segments carved into split and coalesced blocks, reused per stream, cross-stream frees
// deferred by record_stream, a cap, statistics), driven here through the CUDA driver. The pool
// takes the stream current on the allocating thread, and KILN_ALLOCATOR=system turns caching
// off (exact-size segments returned at each free, for compute-sanitizer). It is installed as
// base's CUDA allocator when the library loads; cuda_device.h has its user-facing functions
// (memory_stats, memory_summary, empty_cache, set_per_process_memory_fraction, record_stream).
#include "runtime/wiring.h"

#include "base/allocator.h"
#include "base/error.h"
#include "base/tensor_impl.h"
#include "codegen_cuda/driver.h"
#include "frontend/tensor.h"
#include "runtime/config.h"
#include "runtime/log.h"
#include "runtime/cuda/capture_pool.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/device_memory_pool.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <vector>

namespace kiln::rt {

namespace {

// The pool's view of one device through the driver.
class DriverDevice final : public PoolDevice {
 public:
  explicit DriverDevice(int device) : d_(device) {}
  void* try_alloc(size_t bytes) override { return cuda::try_mem_alloc(d_, bytes); }
  void free(void* p) override { cuda::mem_free(d_, p); }
  void synchronize() override { cuda::device_synchronize(d_); }
  void* record_event(void* stream) override {
    cuda::EventHandle e = cuda::event_create(d_, /*timing=*/false);
    try {
      cuda::event_record(d_, e, stream);
    } catch (...) {
      cuda::event_destroy(d_, e);
      throw;
    }
    return e;
  }
  bool event_done(void* event) override { return cuda::event_query(d_, event); }
  void release_event(void* event) override { cuda::event_destroy(d_, event); }
  void memory_info(size_t* free_bytes, size_t* total_bytes) override { cuda::memory_info(d_, free_bytes, total_bytes); }

 private:
  int d_;
};

struct DevicePool {
  explicit DevicePool(int device) : driver(device), pool(driver, device) {}
  DriverDevice driver;
  DeviceMemoryPool pool;
};

class CudaCachingAllocator final : public DeviceAllocator {
 public:
  static constexpr int kMaxDevices = 64;
  // A device's pool: made once under mu_, read without a lock on every allocation.
  DeviceMemoryPool& pool(int device) {
    if (device < 0 || device >= kMaxDevices)
      fail("cuda", "device index {} is out of range: kiln's allocator serves cuda:0 to cuda:{}", device, kMaxDevices - 1);
    std::atomic<DevicePool*>& slot = pools_[static_cast<size_t>(device)];
    if (DevicePool* p = slot.load(std::memory_order_acquire)) return p->pool;
    std::lock_guard lock(mu_);
    if (!slot.load(std::memory_order_relaxed)) slot.store(new DevicePool(device), std::memory_order_release);  // never freed
    return slot.load(std::memory_order_relaxed)->pool;
  }
  std::vector<DeviceMemoryPool*> pools() {
    std::vector<DeviceMemoryPool*> out;
    for (auto& slot : pools_)
      if (DevicePool* p = slot.load(std::memory_order_acquire)) out.push_back(&p->pool);
    return out;
  }

  void* allocate(size_t bytes, int device) override {
    void* ptr = CapturePool::reuse(bytes, device);
    if (!ptr) ptr = pool(device).allocate(bytes, cuda::current_stream(device).handle(), config().allocator == AllocatorKind::Caching);
    CapturePool::note_alloc(ptr, bytes, device);
    return ptr;
  }
  // Called from a storage's destructor, which must not throw: a device error here (a sticky
  // fault the synchronization reports, a failed event) is a warning, and the block stays live.
  void deallocate(void* ptr, size_t /*bytes*/, int device) override {
    if (CapturePool::keep_free(ptr, device)) return;  // a captured graph still uses it
    try {
      pool(device).free(ptr);
    } catch (const std::exception& e) {
      warn(fmt::format("cuda:{}: a tensor's memory could not be freed: {}", device, e.what()));
    }
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

namespace {
thread_local CapturePool* t_capture = nullptr;
}  // namespace

CapturePool::Active::Active(CapturePool& pool) : previous_(t_capture) { t_capture = &pool; }
CapturePool::Active::~Active() { t_capture = previous_; }

bool CapturePool::capturing() { return t_capture != nullptr; }

void* CapturePool::reuse(size_t bytes, int device) {
  if (!t_capture || t_capture->device_ != device) return nullptr;
  // The smallest idle block that fits, unless it is more than twice the request.
  auto it = t_capture->idle_.lower_bound(bytes);
  if (it == t_capture->idle_.end() || it->first / 2 > bytes) return nullptr;
  const auto [size, p] = *it;
  t_capture->idle_.erase(it);
  t_capture->kept_.erase(p);  // live again: its tensor holds it now
  t_capture->allocated_[p] = size;
  return p;
}

void CapturePool::note_alloc(void* p, size_t bytes, int device) {
  if (!t_capture || t_capture->device_ != device || !p) return;
  if (t_capture->allocated_.try_emplace(p, bytes).second) t_capture->fresh_.insert(p);  // not a kept block
}

bool CapturePool::keep_free(void* p, int device) {
  if (!t_capture || t_capture->device_ != device) return false;
  auto it = t_capture->allocated_.find(p);
  if (it == t_capture->allocated_.end()) return false;
  t_capture->idle_.emplace(it->second, p);
  t_capture->kept_.emplace(p, it->second);
  t_capture->allocated_.erase(it);
  return true;
}

void CapturePool::begin() {
  idle_.clear();
  for (const auto& [p, size] : kept_) idle_.emplace(size, p);
  allocated_.clear();
  fresh_.clear();
}

void CapturePool::release_fresh() {
  for (void* p : fresh_) {
    auto it = kept_.find(p);
    if (it == kept_.end()) continue;  // live: its tensor frees it
    kept_.erase(it);
    the_allocator().deallocate(p, 0, device_);
  }
  idle_.clear();
  allocated_.clear();
  fresh_.clear();
}

void CapturePool::release() {
  std::unordered_map<void*, size_t> blocks;
  blocks.swap(kept_);
  idle_.clear();
  allocated_.clear();
  fresh_.clear();
  for (const auto& [p, size] : blocks) the_allocator().deallocate(p, 0, device_);
}

}  // namespace kiln::rt

namespace kiln::cuda {

MemoryStats memory_stats(int device) { return rt::the_allocator().pool(device).stats(); }

void reset_peak_memory_stats(int device) { rt::the_allocator().pool(device).reset_peak(); }

void empty_cache() {
  for (rt::DeviceMemoryPool* pool : rt::the_allocator().pools()) pool->empty_cache();
}

void set_per_process_memory_fraction(double fraction, int device) {
  if (!(fraction > 0.0 && fraction <= 1.0))
    fail("set_per_process_memory_fraction", "fraction={} for cuda:{}: expected a fraction in (0, 1]", fraction, device);
  size_t free_b = 0, total_b = 0;
  memory_info(device, &free_b, &total_b);
  rt::the_allocator().pool(device).set_limit(static_cast<size_t>(fraction * static_cast<double>(total_b)));
}

namespace {
std::string mib(int64_t bytes) { return fmt::format("{:.2f} MiB", static_cast<double>(bytes) / (1 << 20)); }
}  // namespace

std::string memory_summary(int device) {
  const MemoryStats s = memory_stats(device);
  std::string out = fmt::format("kiln's cuda:{} memory\n", device);
  const auto bytes = [&](std::string_view what, int64_t b) { out += fmt::format("  {:<22} {:>14}\n", what, mib(b)); };
  const auto count = [&](std::string_view what, int64_t n) { out += fmt::format("  {:<22} {:>14}\n", what, n); };
  bytes("allocated", s.allocated_bytes);
  bytes("peak allocated", s.peak_allocated_bytes);
  bytes("reserved", s.reserved_bytes);
  bytes("peak reserved", s.peak_reserved_bytes);
  bytes("cached", s.reserved_bytes - s.allocated_bytes - s.pending_free_bytes);
  bytes("inactive split", s.inactive_split_bytes);
  bytes("pending frees", s.pending_free_bytes);
  if (s.limit_bytes) bytes("limit", s.limit_bytes);
  count("segments", s.segments);
  count("allocations", s.allocations);
  count("cache hits", s.cache_hits);
  count("driver allocations", s.driver_allocations);
  count("driver frees", s.driver_frees);
  count("splits", s.splits);
  count("merges", s.merges);
  count("oom retries", s.oom_retries);
  count("ooms", s.ooms);
  return out;
}

void record_stream(const Tensor& t, const Stream& s) {
  if (!t.defined() || !t.is_cuda())
    fail("record_stream", "expected a cuda tensor, got {}", t.defined() ? t.device().str() : "an undefined tensor");
  if (t.device().index != s.device())
    fail("record_stream", "the tensor is on cuda:{} and the stream on cuda:{}: a stream orders work of one device",
         t.device().index, s.device());
  // Memory kiln did not allocate (from_blob, DLPack) is not freed by kiln: nothing to defer.
  (void)rt::the_allocator().pool(s.device()).record_stream(t.impl()->storage()->data(), s.handle());
}

}  // namespace kiln::cuda
