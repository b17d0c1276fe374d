// kiln/runtime/cuda/cuda_device.h — CUDA devices as users see them: availability, streams, synchronization, memory.
//
// The driver is loaded at run time (codegen_cuda/driver.h); a machine without one has no
// devices and says why, and every call below that needs a device fails with a kiln::Error
// naming it and the reason. As in PyTorch, each thread has a current stream per device (the
// device's default stream until set_current_stream): kernels and copies run asynchronously
// on it, and item(), .cpu(), printing and synchronize() wait for it. Device memory comes from
// a caching allocator (runtime/cuda/cuda_allocator.h) whose statistics and cache are reachable here.
#pragma once

#include <cstdint>
#include <string>

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

struct MemoryStats {
  int64_t allocated_bytes = 0;       // in live tensors (block sizes)
  int64_t reserved_bytes = 0;        // held from the driver: allocated plus cached
  int64_t peak_allocated_bytes = 0;  // the most allocated at once since the last reset
  int64_t allocations = 0;           // requests served
  int64_t cache_hits = 0;            // of which from a free list
  int64_t driver_allocations = 0;    // cuMemAlloc calls
  int64_t oom_retries = 0;           // requests that emptied the cache and tried again
};
MemoryStats memory_stats(int device = 0);
void reset_peak_memory_stats(int device = 0);
// Returns every cached (unused) block of every device to the driver.
void empty_cache();

}  // namespace kiln::cuda
