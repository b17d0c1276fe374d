// kiln/base/storage.cpp — tensor storage: 64-byte aligned host blocks or device blocks, or
// memory another owner lent (freed by its deleter).
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

StorageImpl::StorageImpl(void* data, size_t nbytes, Device device, std::function<void(void*)> deleter)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(std::move(deleter)), foreign_(true) {}

int64_t checked_numel(std::string_view op, IntArrayRef sizes) {
  for (int64_t s : sizes)
    if (s < 0) fail(op, "Trying to create tensor with negative dimension {}: {}", s, shape_str(sizes));
  int64_t n = 1;  // the running product must fit, as in TensorImpl (a later 0 does not excuse it)
  for (int64_t s : sizes)
    if (__builtin_mul_overflow(n, s, &n))
      fail(op, "the number of elements of a tensor of shape {} overflows int64", shape_str(sizes));
  return n;
}

int64_t checked_extent(std::string_view op, IntArrayRef sizes, IntArrayRef strides) {
  if (sizes.size() != strides.size())
    fail(op, "mismatch in length of strides and shape: {} sizes and {} strides", sizes.size(), strides.size());
  checked_numel(op, sizes);
  int64_t extent = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (strides[i] < 0)
      fail(op, "Negative strides are not supported at the moment, got strides: {}", shape_str(strides));
    if (sizes[i] == 0) return 0;
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    int64_t reach = 0;
    if (__builtin_mul_overflow(sizes[i] - 1, strides[i], &reach) || __builtin_add_overflow(extent, reach, &extent))
      fail(op, "storage size calculation overflowed with sizes={} and strides={}", shape_str(sizes), shape_str(strides));
  }
  return extent;
}

size_t checked_nbytes(std::string_view op, IntArrayRef sizes, ScalarType dtype) {
  int64_t bytes = 0;
  if (__builtin_mul_overflow(checked_numel(op, sizes), static_cast<int64_t>(element_size(dtype)), &bytes))
    fail(op, "storage size calculation overflowed with sizes={} and dtype {} ({} bytes per element)", shape_str(sizes),
         dtype_name(dtype), element_size(dtype));
  return static_cast<size_t>(bytes);
}

StorageImpl::~StorageImpl() {
  if (foreign_) {
    if (deleter_) deleter_(data_);
  } else if (device_allocator_)
    device_allocator_->deallocate(data_, nbytes_, device_.index);
  else
    allocator_->deallocate(data_, nbytes_);
}

}  // namespace kiln
