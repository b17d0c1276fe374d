// kiln/base/allocator.h — the allocator interface behind tensor storage.
//
// Storage (base/storage.h) allocates through the process's CPU allocator and remembers
// which allocator gave each block, so it is freed by the same one whichever is installed
// later. The default is the system's aligned allocator; the runtime installs its caching
// allocator (runtime/allocator.h) when the library loads. Device storage comes from the
// DeviceAllocator installed for its device type (the CUDA runtime installs one when the
// library loads: runtime/cuda/cuda_allocator.cpp). Blocks are 64-byte aligned; 0 bytes gives a valid block.
#pragma once

#include <cstddef>

namespace kiln {

inline constexpr size_t kCpuAlignment = 64;

class Allocator {
 public:
  virtual ~Allocator() = default;
  // A block of at least `bytes`, 64-byte aligned and uninitialized, or nullptr when the
  // memory cannot be had.
  virtual void* allocate(size_t bytes) = 0;
  // Returns a block this allocator gave for `bytes`; nullptr is a no-op.
  virtual void deallocate(void* p, size_t bytes) = 0;
};

// The allocator new CPU storage comes from.
Allocator& cpu_allocator();
// Installs `a` (it must outlive every block it gives; the runtime's is never destroyed).
void set_cpu_allocator(Allocator* a);

// Memory of an accelerator: blocks of device `index`, addressed in the process's unified
// address space (a device pointer is never dereferenced on the host).
class DeviceAllocator {
 public:
  virtual ~DeviceAllocator() = default;
  // A block of at least `bytes` on device `index`; throws kiln::Error when it cannot be had.
  virtual void* allocate(size_t bytes, int index) = 0;
  virtual void deallocate(void* p, size_t bytes, int index) = 0;
};

// The allocator of CUDA storage; nullptr until a CUDA runtime is installed.
DeviceAllocator* cuda_allocator();
void set_cuda_allocator(DeviceAllocator* a);

}  // namespace kiln
