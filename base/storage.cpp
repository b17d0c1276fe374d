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

int64_t checked_numel(std::string_view op, IntArrayRef sizes) {
  for (int64_t s : sizes)
    if (s < 0) fail(op, "Trying to create tensor with negative dimension {}: {}", s, shape_str(sizes));
  int64_t n = 1;  // the running product must fit, as in TensorImpl (a later 0 does not excuse it)
  for (int64_t s : sizes)
    if (__builtin_mul_overflow(n, s, &n))
      fail(op, "the number of elements of a tensor of shape {} overflows int64", shape_str(sizes));
  return n;
}

size_t checked_nbytes(std::string_view op, IntArrayRef sizes, ScalarType dtype) {
  int64_t bytes = 0;
  if (__builtin_mul_overflow(checked_numel(op, sizes), static_cast<int64_t>(element_size(dtype)), &bytes))
    fail(op, "storage size calculation overflowed with sizes={} and dtype {} ({} bytes per element)", shape_str(sizes),
         dtype_name(dtype), element_size(dtype));
  return static_cast<size_t>(bytes);
}

StorageImpl::~StorageImpl() {
  if (device_allocator_)
    device_allocator_->deallocate(data_, nbytes_, device_.index);
  else
    allocator_->deallocate(data_, nbytes_);
}

}  // namespace kiln
