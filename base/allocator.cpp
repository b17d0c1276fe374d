// kiln/base/allocator.cpp — the system allocator and the installed CPU allocator.
#include "base/allocator.h"

#include <atomic>
#include <cstdlib>

namespace kiln {

namespace {

class SystemAllocator final : public Allocator {
 public:
  void* allocate(size_t bytes) override {
    const size_t rounded = (bytes + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
    return std::aligned_alloc(kCpuAlignment, rounded == 0 ? kCpuAlignment : rounded);
  }
  void deallocate(void* p, size_t) override { std::free(p); }
};

Allocator* system_allocator() {
  static SystemAllocator* a = new SystemAllocator();  // never destroyed: blocks may outlive main
  return a;
}

std::atomic<Allocator*> g_cpu{nullptr};
std::atomic<DeviceAllocator*> g_cuda{nullptr};

}  // namespace

Allocator& cpu_allocator() {
  Allocator* a = g_cpu.load(std::memory_order_acquire);
  return a ? *a : *system_allocator();
}

void set_cpu_allocator(Allocator* a) { g_cpu.store(a, std::memory_order_release); }

DeviceAllocator* cuda_allocator() { return g_cuda.load(std::memory_order_acquire); }
void set_cuda_allocator(DeviceAllocator* a) { g_cuda.store(a, std::memory_order_release); }

}  // namespace kiln
