// kiln/runtime/cuda/cuda_device.h — CUDA devices as users see them: availability, streams, synchronization, memory.
//
// The driver is loaded at run time (codegen_cuda/driver.h); a machine without one has no
// devices and says why, and every call below that needs a device fails with a kiln::Error
// naming it and the reason. As in PyTorch, each thread has a current stream per device (the
// device's default stream until set_current_stream): kernels and copies run asynchronously
// on it, and item(), .cpu(), printing and synchronize() wait for it. Device memory comes from
// a caching allocator (runtime/cuda/device_memory_pool.h) whose statistics and cache are reachable here.
#pragma once

#include <cstdint>
#include <string>

namespace kiln {
class Tensor;
}

namespace kiln::cuda {

// Whether a CUDA driver is installed and reports at least one device (as torch.cuda.is_available).
bool is_available();
// The reason is_available() is false ("" when it is true).
std::string unavailable_reason();
// Devices the driver reports; 0 without a driver.
int device_count();
// The device's name ("NVIDIA H100 80GB HBM3").
std::string get_device_name(int device = 0);

// A stream of a device. Stream() is the default stream of cuda:0; Stream::create makes a new
// non-blocking stream, which lives until the process ends (streams are few and long-lived).
class Stream {
 public:
  Stream() = default;
  static Stream create(int device = 0);
  static Stream default_stream(int device = 0);
  // A stream created elsewhere (another library's CUstream); kiln does not own it.
  static Stream wrap(int device, void* handle) { return Stream(device, handle); }
  int device() const { return device_; }
  void* handle() const { return handle_; }  // the CUstream (nullptr: the default stream)
  void synchronize() const;
  // Work queued on this stream from now on waits for the work queued on `other` so far (an
  // event recorded on `other`), without blocking the host: how a tensor made on one stream is
  // read on another.
  void wait_stream(const Stream& other) const;
  bool operator==(const Stream& o) const { return device_ == o.device_ && handle_ == o.handle_; }

 private:
  Stream(int device, void* handle) : device_(device), handle_(handle) {}
  int device_ = 0;
  void* handle_ = nullptr;
};

// This thread's current stream of `device`.
Stream current_stream(int device = 0);
// Makes `s` this thread's current stream of its device.
void set_current_stream(const Stream& s);
// Sets the current stream for a scope and restores the previous one.
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& s);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Stream previous_;
};

// Waits for all work on every stream of `device` (-1: every device); a kiln::Error when CUDA
// is not available.
void synchronize(int device = -1);

// The caching allocator's account of one device (runtime/cuda/device_memory_pool.h).
struct MemoryStats {
  int64_t allocated_bytes = 0;       // in live blocks (sizes rounded up to 512 bytes)
  int64_t reserved_bytes = 0;        // held from the driver in segments: live, cached and pending blocks
  int64_t peak_allocated_bytes = 0;  // the most allocated at once since the last reset
  int64_t peak_reserved_bytes = 0;   // the most reserved at once since the last reset
  int64_t inactive_split_bytes = 0;  // free blocks of segments that also hold live ones (fragmentation)
  int64_t pending_free_bytes = 0;    // freed blocks waiting for another stream's work (record_stream)
  int64_t segments = 0;              // held from the driver now
  int64_t limit_bytes = 0;           // the cap set by set_per_process_memory_fraction (0: none)
  int64_t allocations = 0;           // requests served
  int64_t cache_hits = 0;            // of which from memory already held
  int64_t driver_allocations = 0;    // cuMemAlloc calls that succeeded
  int64_t driver_frees = 0;          // segments returned to the driver
  int64_t splits = 0;                // blocks split to serve a smaller request
  int64_t merges = 0;                // freed blocks merged with a free neighbour
  int64_t oom_retries = 0;           // requests that returned the cache and tried again
  int64_t ooms = 0;                  // requests that failed with out of memory
};
MemoryStats memory_stats(int device = 0);
// Sets the peaks to the current values.
void reset_peak_memory_stats(int device = 0);
// Returns every wholly free cached segment of every device to the driver.
void empty_cache();
// Caps the device memory kiln's allocator holds at `fraction` (in (0, 1]) of the device's
// memory, as torch.cuda.set_per_process_memory_fraction: a request past the cap first returns
// the cache, then fails with an out-of-memory error that names the cap.
void set_per_process_memory_fraction(double fraction, int device = 0);
// A table of memory_stats for people (as torch.cuda.memory_summary).
std::string memory_summary(int device = 0);
// Declares that `t`'s memory is used by work queued on `s`, a stream other than the one it was
// allocated on (as Tensor.record_stream): when `t`'s storage is freed, its block is reused only
// after the work queued on `s` up to that moment has finished. Without it, a tensor read on a
// second stream must be synchronized with before it is freed.
void record_stream(const Tensor& t, const Stream& s);

}  // namespace kiln::cuda
