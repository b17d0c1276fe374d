// kiln/base/storage.cpp — 64-byte aligned host allocations for tensor storage.
//
// CPU storage comes from the installed CPU allocator (base/allocator.h): the runtime's caching
// allocator once the library has loaded (KILN_ALLOCATOR=system, or an ASan build, goes
// straight to the system). Each block is freed by the allocator that gave it.
#include "base/storage.h"

#include "base/error.h"
#include "base/allocator.h"

namespace kiln {

StorageImpl::StorageImpl(size_t nbytes, Device device) : nbytes_(nbytes), device_(device) {
  KILN_CHECK(device.is_cpu(), "empty", "device {} has no allocator yet; tensors live on the CPU", device.str());
  static_assert(kAlignment == kCpuAlignment);
  allocator_ = &cpu_allocator();
  data_ = allocator_->allocate(nbytes);  // at least one 64-byte line, even for nbytes == 0
  if (data_ == nullptr) fail("empty", "out of memory allocating {} bytes", nbytes);
}

StorageImpl::~StorageImpl() { allocator_->deallocate(data_, nbytes_); }

}  // namespace kiln
