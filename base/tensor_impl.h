// kiln/base/tensor_impl.h — the refcounted body of a Tensor.
//
// An eager tensor has storage, sizes, strides (in elements) and an offset. A traced tensor
// (recorded into a graph by a Tracer) has no storage: it names an ir::Value instead, and its
// sizes are the value's static sizes.
#pragma once

#include "base/device.h"
#include "base/dim_vector.h"
#include "base/dtype.h"
#include "base/int_array_ref.h"
#include "base/storage.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace kiln {

namespace ir {
class Value;
}
class Tracer;

// What autograd keeps on a tensor (frontend/autograd_meta.h defines it). base knows only that
// there may be some, and whether the tensor requires grad: the check every eager op makes is
// one load.
struct AutogradMetaInterface {
  virtual ~AutogradMetaInterface() = default;
  bool requires_grad = false;
};

class TensorImpl : public RefCounted {
 public:
  TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides, int64_t offset);
  // A contiguous tensor at offset 0.
  TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes);
  // A traced tensor.
  TensorImpl(Tracer* tracer, ir::Value* value, ScalarType dtype, Device device, IntArrayRef sizes);

  const Storage& storage() const { return storage_; }
  ScalarType dtype() const { return dtype_; }
  Device device() const { return device_; }
  IntArrayRef sizes() const { return sizes_; }
  IntArrayRef strides() const { return strides_; }
  int64_t storage_offset() const { return offset_; }
  int64_t numel() const { return numel_; }
  bool is_contiguous() const { return contiguous_; }

  bool is_traced() const { return value_ != nullptr; }
  ir::Value* value() const { return value_; }
  Tracer* tracer() const { return tracer_; }
  // In-place ops under tracing rebind the tensor to the value that holds its new contents.
  void rebind(ir::Value* v) { value_ = v; }

  // Dims marked by kiln::mark_dynamic / mark_static (bit d: dim d), read by compile().
  uint64_t marked_dynamic() const { return marked_dynamic_; }
  uint64_t marked_static() const { return marked_static_; }
  void mark(int64_t dim, bool dynamic) {
    const uint64_t bit = uint64_t{1} << dim;
    marked_dynamic_ = dynamic ? (marked_dynamic_ | bit) : (marked_dynamic_ & ~bit);
    marked_static_ = dynamic ? (marked_static_ & ~bit) : (marked_static_ | bit);
  }

  // Takes src's memory and layout (storage, dtype, device, sizes, strides, offset) and keeps
  // this tensor's identity and autograd state: nn::Module::to converts parameters this way, so
  // that every handle to one sees the converted tensor (PyTorch's set_data). Neither may be traced.
  void set_data(const TensorImpl& src);

  // Address of element 0 (storage data + offset * element size); null for traced tensors.
  void* data() const;

  // Autograd's state of this tensor (null: never took part in autograd).
  AutogradMetaInterface* autograd_meta() const { return autograd_.get(); }
  void set_autograd_meta(std::unique_ptr<AutogradMetaInterface> m) { autograd_ = std::move(m); }
  bool requires_grad() const { return autograd_ && autograd_->requires_grad; }

  // For a tensor an eager view op made: the tensor whose storage it shares (the root: a view of
  // a view has its base's base), which it keeps alive, as PyTorch's _base; null otherwise. An
  // in-place write of a value that requires grad into a view gives the base that history too
  // (frontend/autograd_inplace.cpp).
  TensorImpl* view_base() const { return view_base_.get(); }
  // Makes this a view of `of` (of's own base when `of` is a view).
  void set_view_of(TensorImpl* of) { view_base_ = IntrusivePtr<TensorImpl>(of->view_base_ ? of->view_base_.get() : of); }

 private:
  void refresh();
  Storage storage_;
  ScalarType dtype_;
  Device device_;
  DimVector sizes_;
  DimVector strides_;
  int64_t offset_ = 0;
  int64_t numel_ = 1;
  bool contiguous_ = true;
  Tracer* tracer_ = nullptr;
  ir::Value* value_ = nullptr;
  uint64_t marked_dynamic_ = 0;
  uint64_t marked_static_ = 0;
  std::unique_ptr<AutogradMetaInterface> autograd_;
  IntrusivePtr<TensorImpl> view_base_;
};

// Contiguous (row-major) strides for `sizes`.
std::vector<int64_t> contiguous_strides(IntArrayRef sizes);
// Whether sizes/strides describe a row-major contiguous layout (size-1 dims ignored).
bool is_contiguous_layout(IntArrayRef sizes, IntArrayRef strides);
// Whether two elements of the layout share a place: a stride 0 under a size above 1, or strides
// that interleave (false says every element has its own place; size-1 dims ignored).
bool overlaps_itself(IntArrayRef sizes, IntArrayRef strides);

}  // namespace kiln
