// kiln/frontend/from_blob.cpp — tensors over memory kiln does not own (frontend/from_blob.h).
#include "frontend/from_blob.h"

#include "base/error.h"
#include "base/storage.h"
#include "frontend/ops_factory.h"

#include <cstdint>
#include <utility>

namespace kiln {

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, std::function<void(void*)> deleter,
                 TensorOptions options) {
  const std::string_view op = "from_blob";
  const int64_t extent = checked_extent(op, sizes, strides);
  const ScalarType dtype = options.dtype_or(get_default_dtype());
  const size_t size = element_size(dtype);
  if (data == nullptr && extent > 0) fail(op, "data is a null pointer for a tensor of sizes {}", shape_str(sizes));
  if (reinterpret_cast<uintptr_t>(data) % size != 0)
    fail(op, "data {} is not aligned to the {}-byte elements of {}", data, size, dtype_name(dtype));
  int64_t nbytes = 0;
  if (__builtin_mul_overflow(extent, static_cast<int64_t>(size), &nbytes))
    fail(op, "storage size calculation overflowed with sizes={} and strides={}", shape_str(sizes), shape_str(strides));
  auto storage = make_intrusive<StorageImpl>(data, static_cast<size_t>(nbytes), options.device_or(), std::move(deleter));
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), dtype, sizes, strides, 0));
}

Tensor from_blob(void* data, IntArrayRef sizes, std::function<void(void*)> deleter, TensorOptions options) {
  return from_blob(data, sizes, contiguous_strides(sizes), std::move(deleter), options);
}

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, TensorOptions options) {
  return from_blob(data, sizes, strides, std::function<void(void*)>(), options);
}

Tensor from_blob(void* data, IntArrayRef sizes, TensorOptions options) {
  return from_blob(data, sizes, contiguous_strides(sizes), std::function<void(void*)>(), options);
}

}  // namespace kiln
