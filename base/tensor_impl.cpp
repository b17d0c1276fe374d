// kiln/base/tensor_impl.cpp — TensorImpl construction and layout helpers.
#include "base/tensor_impl.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/int_array_ref.h"

namespace kiln {

namespace {

void fill_contiguous_strides(IntArrayRef sizes, int64_t* strides) {
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    s *= sizes[i] > 0 ? sizes[i] : 1;
  }
}

}  // namespace

std::vector<int64_t> contiguous_strides(IntArrayRef sizes) {
  std::vector<int64_t> strides(sizes.size());
  fill_contiguous_strides(sizes, strides.data());
  return strides;
}

bool overlaps_itself(IntArrayRef sizes, IntArrayRef strides) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size) of the dims of size above 1
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] > 1) dims.emplace_back(strides[d], sizes[d]);
  std::sort(dims.begin(), dims.end());
  int64_t span = 1;  // elements the smaller dims cover
  for (const auto& [stride, size] : dims) {
    if (stride < span) return true;
    span = stride * size;
  }
  return false;
}

bool is_contiguous_layout(IntArrayRef sizes, IntArrayRef strides) {
  int64_t expected = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 0) return true;
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

TensorImpl::TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides, int64_t offset)
    : storage_(std::move(storage)), dtype_(dtype), sizes_(sizes), strides_(strides), offset_(offset) {
  KILN_INTERNAL_ASSERT(sizes_.size() == strides_.size());
  if (storage_) device_ = storage_->device();
  refresh();
}

TensorImpl::TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes)
    : storage_(std::move(storage)), dtype_(dtype), sizes_(sizes), strides_(sizes) {
  fill_contiguous_strides(sizes_, strides_.data());
  if (storage_) device_ = storage_->device();
  refresh();
}

TensorImpl::TensorImpl(Tracer* tracer, ir::Value* value, ScalarType dtype, Device device, IntArrayRef sizes)
    : dtype_(dtype), device_(device), sizes_(sizes), strides_(sizes), tracer_(tracer), value_(value) {
  fill_contiguous_strides(sizes_, strides_.data());
  refresh();
}

void TensorImpl::set_data(const TensorImpl& src) {
  KILN_INTERNAL_ASSERT(!is_traced() && !src.is_traced());
  storage_ = src.storage_;
  dtype_ = src.dtype_;
  device_ = src.device_;
  sizes_ = src.sizes_;
  strides_ = src.strides_;
  offset_ = src.offset_;
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
