// kiln/runtime/interpreter/interp_view.cpp — the interpreter's view prims: new metadata, same storage.
//
// Every view prim returns a TensorImpl that shares its input's storage, with sizes, strides
// and offset computed by the view_meta functions of frontend/ops_view.h (the same arithmetic
// eager views use). reshape is a view when the strides can express it and otherwise copies
// the input into a fresh contiguous tensor first (as torch.reshape). as_strided addresses the
// row-major elements of its input value, not the storage (copying a non-contiguous input to
// contiguous memory first), and checks that every element it can reach lies among them.
// Attributes arrive normalized and already checked by the shape functions; symbolic sizes
// cannot reach the interpreter.
#include "base/error.h"
#include "frontend/ops_view.h"
#include "runtime/interpreter/interp_kernels.h"

#include <string>

namespace kiln::rt::interp {

namespace {

using ir::OpKind;

ViewMeta meta_of(const Tensor& t) {
  const TensorImpl& impl = *t.impl();
  return ViewMeta{impl.sizes().vec(), impl.strides().vec(), impl.storage_offset()};
}

// A view of `base`'s storage, which records base as its view base (base/tensor_impl.h).
Tensor make_view(const Tensor& base, ViewMeta m) {
  IntrusivePtr<TensorImpl> v = make_intrusive<TensorImpl>(base.impl()->storage(), base.dtype(), std::move(m.sizes),
                                                          std::move(m.strides), m.offset);
  v->set_view_of(base.impl());
  return Tensor(std::move(v));
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
  return Tensor(make_intrusive<TensorImpl>(c.impl()->storage(), c.dtype(), size));  // a copy, not a view
}

// The prim's semantics: size, stride and offset address the row-major elements of the input
// value (a traced value has no storage to address), so a non-contiguous input is first
// copied into contiguous memory, and the view must stay within the input's numel.
Tensor as_strided(const Tensor& a, const std::vector<int64_t>& size, const std::vector<int64_t>& stride,
                  int64_t offset) {
  if (size.size() != stride.size())
    fail("as_strided", "mismatch in length of strides and shape: {} sizes and {} strides", size.size(), stride.size());
  for (int64_t s : size)
    if (s < 0) fail("as_strided", "Trying to create tensor with negative dimension {}: {}", s, shape_str(size));
  for (int64_t s : stride)
    if (s < 0) fail("as_strided", "Negative strides are not supported at the moment, got strides: {}", shape_str(stride));
  if (offset < 0) fail("as_strided", "Tensor: invalid storage offset {}", offset);
  Tensor src = a;
  if (!a.impl()->is_contiguous()) {
    src = empty_contiguous(a.impl()->sizes(), a.dtype());
    copy_into(src, a);
  }
  const int64_t itemsize = static_cast<int64_t>(element_size(a.dtype()));
  check_as_strided_bounds(size, stride, offset, itemsize, src.impl()->numel() * itemsize);
  int64_t absolute = 0;  // only an empty view can carry an offset this large
  if (__builtin_add_overflow(src.impl()->storage_offset(), offset, &absolute))
    fail("as_strided", "storage offset {} overflows int64 when added to the input's offset {}", offset,
         src.impl()->storage_offset());
  return make_view(src, ViewMeta{size, stride, absolute});
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
