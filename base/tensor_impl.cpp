// kiln/base/tensor_impl.cpp — TensorImpl construction and layout helpers.
#include "base/tensor_impl.h"

#include "base/error.h"
#include "base/int_array_ref.h"

namespace kiln {

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    s *= sizes[i] > 0 ? sizes[i] : 1;
  }
  return strides;
}

bool is_contiguous_layout(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  int64_t expected = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 0) return true;
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

TensorImpl::TensorImpl(Storage storage, ScalarType dtype, std::vector<int64_t> sizes, std::vector<int64_t> strides,
                       int64_t offset)
    : storage_(std::move(storage)), dtype_(dtype), sizes_(std::move(sizes)), strides_(std::move(strides)), offset_(offset) {
  KILN_INTERNAL_ASSERT(sizes_.size() == strides_.size());
  if (storage_) device_ = storage_->device();
  refresh();
}

TensorImpl::TensorImpl(Tracer* tracer, ir::Value* value, ScalarType dtype, Device device, std::vector<int64_t> sizes)
    : dtype_(dtype), device_(device), sizes_(std::move(sizes)), tracer_(tracer), value_(value) {
  strides_ = contiguous_strides(sizes_);
  refresh();
}

void TensorImpl::refresh() {
  numel_ = 1;
  for (int64_t s : sizes_) {
    if (s < 0) fail("tensor", "negative size {} in shape {}", s, shape_str(sizes_));
    if (__builtin_mul_overflow(numel_, s, &numel_))
      fail("tensor", "the number of elements of a tensor of shape {} overflows int64", shape_str(sizes_));
  }
  contiguous_ = is_contiguous_layout(sizes_, strides_);
}

void* TensorImpl::data() const {
  if (!storage_) return nullptr;
  return static_cast<char*>(storage_->data()) + offset_ * static_cast<int64_t>(element_size(dtype_));
}

}  // namespace kiln
