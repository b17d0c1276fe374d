// kiln/base/storage.cpp — tensor storage: 64-byte aligned host blocks or device blocks.
//
// CPU storage comes from the installed CPU allocator (base/allocator.h): the runtime's caching
// allocator once the library has loaded (KILN_ALLOCATOR=system, or an ASan build, goes
// straight to the system). Each block is freed by the allocator that gave it.
#include "base/storage.h"

#include "base/error.h"
#include "base/allocator.h"

namespace kiln {

StorageImpl::StorageImpl(size_t nbytes, Device device) : nbytes_(nbytes), device_(device) {
  if (device.is_cuda()) {
    device_allocator_ = cuda_allocator();
    KILN_CHECK(device_allocator_ != nullptr, "empty", "cannot allocate on {}: no CUDA runtime is installed",
               device.str());
    data_ = device_allocator_->allocate(nbytes, device.index);  // throws when out of memory
    return;
  }
  static_assert(kAlignment == kCpuAlignment);
  allocator_ = &cpu_allocator();
  data_ = allocator_->allocate(nbytes);  // at least one 64-byte line, even for nbytes == 0
  if (data_ == nullptr) fail("empty", "out of memory allocating {} bytes", nbytes);
}

StorageImpl::~StorageImpl() {
  if (device_allocator_)
    device_allocator_->deallocate(data_, nbytes_, device_.index);
  else
    allocator_->deallocate(data_, nbytes_);
}

}  // namespace kiln
