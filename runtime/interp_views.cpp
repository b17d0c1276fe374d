// kiln/runtime/interp_views.cpp — the interpreter's view prims: new metadata, same storage.
//
// Every view prim returns a TensorImpl that shares its input's storage, with sizes, strides
// and offset computed by the view_meta functions of frontend/views.h (the same arithmetic
// eager views use). reshape is a view when the strides can express it and otherwise copies
// the input into a fresh contiguous tensor first (as torch.reshape). as_strided checks that
// every element it can address lies inside the storage. Attributes arrive normalized and
// already checked by the shape functions; symbolic sizes cannot reach the interpreter.
#include "frontend/error.h"
#include "frontend/views.h"
#include "runtime/interp_kernels.h"

#include <string>

namespace kiln::rt::interp {

namespace {

using ir::OpKind;

ViewMeta meta_of(const Tensor& t) {
  const TensorImpl& impl = *t.impl();
  return ViewMeta{impl.sizes(), impl.strides(), impl.storage_offset()};
}

Tensor make_view(const Tensor& base, ViewMeta m) {
  return Tensor(make_intrusive<TensorImpl>(base.impl()->storage(), base.dtype(), std::move(m.sizes),
                                           std::move(m.strides), m.offset));
}

std::vector<int64_t> ints(const ir::AttrList& attrs, OpKind k, std::string_view name) {
  return ir::to_ints(attrs.get<std::vector<ir::Expr>>(k, name));
}
int64_t cint(const ir::AttrList& attrs, OpKind k, std::string_view name) {
  return attrs.get<ir::Expr>(k, name).as_const();
}

Tensor reshape(const Tensor& a, const std::vector<int64_t>& size) {
  if (auto strides = compute_view_strides(a.impl()->sizes(), a.impl()->strides(), size))
    return make_view(a, ViewMeta{size, std::move(*strides), a.impl()->storage_offset()});
  Tensor c = empty_contiguous(a.impl()->sizes(), a.dtype());
  copy_into(c, a);
  return make_view(c, ViewMeta{size, contiguous_strides(size), c.impl()->storage_offset()});
}

Tensor as_strided(const Tensor& a, const std::vector<int64_t>& size, const std::vector<int64_t>& stride,
                  int64_t offset) {
  // Bytes the view can reach (torch's computeStorageNbytes): none when it has no elements.
  const int64_t itemsize = static_cast<int64_t>(element_size(a.dtype()));
  int64_t span = 1;
  bool empty = false;
  for (size_t d = 0; d < size.size(); ++d) {
    if (size[d] == 0)
      empty = true;
    else
      span += stride[d] * (size[d] - 1);
  }
  const int64_t storage_bytes = a.impl()->storage() ? static_cast<int64_t>(a.impl()->storage()->nbytes()) : 0;
  if (!empty) {
    const int64_t need = itemsize * (span + offset);
    if (need > storage_bytes)
      fail(
          "as_strided",
          "setStorage: sizes {}, strides {}, storage offset {}, and itemsize {} requiring a storage size of {} are out "
          "of bounds for storage of size {}",
          shape_str(size), shape_str(stride), offset, itemsize, need, storage_bytes);
  }
  return make_view(a, ViewMeta{size, stride, offset});
}

}  // namespace

Tensor view(ir::ViewOp op, const Tensor& a, const ir::AttrList& attrs) {
  switch (op) {
    case ir::ViewOp::reshape: return reshape(a, ints(attrs, OpKind::reshape, "size"));
    case ir::ViewOp::expand: return make_view(a, view_meta::expand(meta_of(a), ints(attrs, OpKind::expand, "size")));
    case ir::ViewOp::permute:
      return make_view(a, view_meta::permute(meta_of(a), attrs.get<std::vector<int64_t>>(OpKind::permute, "dims")));
    case ir::ViewOp::slice:
      return make_view(
          a, view_meta::slice(meta_of(a), attrs.get<int64_t>(OpKind::slice, "dim"), cint(attrs, OpKind::slice, "start"),
                              cint(attrs, OpKind::slice, "end"), cint(attrs, OpKind::slice, "step")));
    case ir::ViewOp::squeeze:
      return make_view(a, view_meta::squeeze(meta_of(a), attrs.get<std::vector<int64_t>>(OpKind::squeeze, "dims")));
    case ir::ViewOp::unsqueeze:
      return make_view(a, view_meta::unsqueeze(meta_of(a), attrs.get<int64_t>(OpKind::unsqueeze, "dim")));
    case ir::ViewOp::diagonal:
      return make_view(a, view_meta::diagonal(meta_of(a), attrs.get<int64_t>(OpKind::diagonal, "offset"),
                                              attrs.get<int64_t>(OpKind::diagonal, "dim1"),
                                              attrs.get<int64_t>(OpKind::diagonal, "dim2")));
    case ir::ViewOp::as_strided:
      return as_strided(a, ints(attrs, OpKind::as_strided, "size"), ints(attrs, OpKind::as_strided, "stride"),
                        cint(attrs, OpKind::as_strided, "storage_offset"));
  }
  internal_fail("interp::view: unhandled view op {}", static_cast<int>(op));
}

}  // namespace kiln::rt::interp
