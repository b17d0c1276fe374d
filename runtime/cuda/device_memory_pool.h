// kiln/runtime/cuda/device_memory_pool.h — the caching allocator's bookkeeping: segments, split and coalesced blocks, streams.
//
// cuMemAlloc and cuMemFree synchronize and cost tens of microseconds, so a device's memory is
// taken from the driver in segments and handed out as blocks carved from them, as PyTorch's
// CUDA caching allocator does. This file is that bookkeeping, with the device behind a small
// interface (PoolDevice) so that it is tested everywhere with a fake device; the cuda
// allocator (cuda_allocator.cpp) gives it the driver.
//
// - A request is rounded up to a multiple of 512 bytes. Requests up to 1 MiB come from 2 MiB
//   segments; larger ones from segments of 20 MiB when under 10 MiB, else of the request's
//   size rounded up to 2 MiB. The two kinds never share a segment, so small tensors do not
//   pin large segments.
// - A request takes the smallest free block of its kind and stream that fits (best fit) and
//   splits off the rest as a free block when the rest is at least 512 bytes (small) or over
//   1 MiB (large). A freed block merges with free neighbours of its segment.
// - Every segment belongs to the stream current when it was taken, and its blocks are reused
//   only on that stream, whose work runs in order. A block used on another stream is declared
//   with record_stream(); its free then waits, without blocking the host, until an event
//   recorded on each such stream at the free has completed (checked on later allocations).
// - A limit (set_limit, from cuda::set_per_process_memory_fraction) caps the memory held from
//   the driver. When a new segment would pass it or the driver is out of memory, the pool
//   synchronizes, returns every wholly free segment and retries once; then it raises
//   "[cuda] out of memory on cuda:N: ..." with what it holds and why it failed.
// - empty_cache() returns every wholly free segment; segments with a live block stay.
// - Without caching (KILN_ALLOCATOR=system) every request is its own exact-size segment,
//   returned at its free after synchronizing, so compute-sanitizer sees accesses past a
//   tensor's end and reports no cached block as a leak.
#pragma once

#include "runtime/cuda/cuda_device.h"

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

namespace kiln::rt {

// What the pool asks of a device.
class PoolDevice {
 public:
  virtual ~PoolDevice() = default;
  virtual void* try_alloc(size_t bytes) = 0;  // nullptr when out of memory
  virtual void free(void* p) = 0;
  virtual void synchronize() = 0;  // waits for every stream of the device
  // An event marking the work queued on `stream` so far, whether it has completed, release.
  virtual void* record_event(void* stream) = 0;
  virtual bool event_done(void* event) = 0;
  virtual void release_event(void* event) = 0;
  // Free and total bytes of the device, for the out-of-memory message.
  virtual void memory_info(size_t* free_bytes, size_t* total_bytes) = 0;
};

class DeviceMemoryPool {
 public:
  static constexpr size_t kRound = 512;
  static constexpr size_t kSmallRequest = size_t{1} << 20;   // at most this: a small block
  static constexpr size_t kSmallSegment = size_t{2} << 20;
  static constexpr size_t kMidRequest = size_t{10} << 20;     // under this: a 20 MiB segment
  static constexpr size_t kMidSegment = size_t{20} << 20;
  static constexpr size_t kLargeRound = size_t{2} << 20;

  // `device` outlives the pool; `index` names the device in messages.
  DeviceMemoryPool(PoolDevice& device, int index);
  ~DeviceMemoryPool();
  DeviceMemoryPool(const DeviceMemoryPool&) = delete;
  DeviceMemoryPool& operator=(const DeviceMemoryPool&) = delete;

  // A block of at least `bytes` for use on `stream`; kiln::Error when it cannot be had.
  // `caching` false: an exact-size segment of its own (KILN_ALLOCATOR=system).
  void* allocate(size_t bytes, void* stream, bool caching = true);
  // Frees a block allocate() returned; a pointer the pool does not know is ignored.
  void free(void* p);
  // Declares that the live block at `p` is used on `stream` too: its free waits for that work.
  // False when `p` is not the start of a live block of this pool (memory kiln did not allocate).
  bool record_stream(void* p, void* stream);
  // Returns every wholly free segment to the device.
  void empty_cache();
  // The most bytes held from the device (0: no limit but the device's memory).
  void set_limit(size_t bytes);

  cuda::MemoryStats stats() const;
  void reset_peak();
  // Checks that the segments' blocks tile them, that the free sets and statistics agree with
  // the blocks, and that no two live blocks overlap; an internal error says what does not.
  void verify() const;

 private:
  struct Block;
  struct State;
  void* allocate_locked(size_t bytes, void* stream, bool caching);
  void release_block(Block* b);
  void process_events(bool all);
  void release_free_segments();
  [[noreturn]] void out_of_memory(size_t bytes, size_t segment, bool over_limit);

  PoolDevice& device_;
  const int index_;
  mutable std::mutex mu_;
  std::unique_ptr<State> s_;
};

}  // namespace kiln::rt
