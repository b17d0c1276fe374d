// kiln/runtime/interpreter/interp_cast.cpp — the Cast family's reference kernels, and copies.
//
// convert_element_type, clone and copy_into all go through convert<To, From>()
// (runtime/interpreter/interp_math.h), which defines every conversion, NaN and out-of-range
// included.
#include "base/error.h"
#include "runtime/interpreter/interp_kernels.h"
#include "runtime/interpreter/interp_math.h"

namespace kiln::rt::interp {

void copy_into(const Tensor& dst, const Tensor& src) {
  check_same_sizes("copy_", {&dst, &src});
  dispatch_dtype(dst.dtype(), [&](auto dst_tag) {
    using To = decltype(dst_tag);
    dispatch_dtype(src.dtype(), [&](auto src_tag) {
      using From = decltype(src_tag);
      loop1<To, From>(dst, src, [](From v) { return convert<To, From>(v); });
    });
  });
}

Tensor cast(ir::CastOp op, const Tensor& a, const ir::AttrList& attrs) {
  switch (op) {
    case ir::CastOp::convert_element_type: {
      const ScalarType dtype = attrs.get<ScalarType>(ir::OpKind::convert_element_type, "dtype");
      Tensor out = empty_contiguous(sizes_of(a), dtype);
      copy_into(out, a);
      return out;
    }
    case ir::CastOp::clone:
    case ir::CastOp::detach: {
      Tensor out = empty_contiguous(sizes_of(a), a.dtype());
      copy_into(out, a);
      return out;
    }
    case ir::CastOp::no_grad_copy: break;  // a Core op: the interpreter runs its decomposition
  }
  internal_fail("cast: unknown op {}", static_cast<int>(op));
}

}  // namespace kiln::rt::interp
