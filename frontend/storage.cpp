// kiln/frontend/storage.cpp — 64-byte aligned host allocations for tensor storage.
//
// CPU storage comes from the caching allocator (runtime/allocator.h), which keeps freed blocks
// for reuse (KILN_ALLOCATOR=system, or an ASan build, goes straight to the system).
#include "frontend/storage.h"

#include "base/error.h"
#include "runtime/allocator.h"

namespace kiln {

StorageImpl::StorageImpl(size_t nbytes, Device device) : nbytes_(nbytes), device_(device) {
  KILN_CHECK(device.is_cpu(), "empty", "device {} has no allocator yet; tensors live on the CPU", device.str());
  static_assert(kAlignment == rt::kCpuAlignment);
  data_ = rt::cpu_try_alloc(nbytes);  // at least one 64-byte line, even for nbytes == 0
  if (data_ == nullptr) fail("empty", "out of memory allocating {} bytes", nbytes);
}

StorageImpl::~StorageImpl() { rt::cpu_free(data_, nbytes_); }

}  // namespace kiln
