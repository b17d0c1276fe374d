// kiln/frontend/storage.cpp — 64-byte aligned host allocations for tensor storage.
#include "frontend/storage.h"

#include "frontend/error.h"

#include <cstdlib>
#include <new>

namespace kiln {

StorageImpl::StorageImpl(size_t nbytes, Device device) : nbytes_(nbytes), device_(device) {
  KILN_CHECK(device.is_cpu(), "empty", "device {} has no allocator yet; tensors live on the CPU", device.str());
  // aligned_alloc needs a size that is a multiple of the alignment; allocate at least one line.
  size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0) rounded = kAlignment;
  data_ = std::aligned_alloc(kAlignment, rounded);
  if (data_ == nullptr) fail("empty", "out of memory allocating {} bytes", nbytes);
}

StorageImpl::~StorageImpl() { std::free(data_); }

}  // namespace kiln
