// kiln/frontend/symbolic.cpp — symbolic sizes of traced tensors and the decisions on them.
#include "frontend/symbolic.h"
#include "frontend/tracer.h"

#include "frontend/dispatch.h"
#include "base/error.h"
#include "frontend/ops.h"
#include "frontend/ops_view.h"
#include "ir/graph.h"
#include "ir/shape_env.h"

#include <algorithm>

namespace kiln {

namespace {

const std::vector<ir::Expr>* traced_sizes(const Tensor& t) {
  const TensorImpl& impl = *t.impl();
  if (!impl.is_traced()) return nullptr;
  return &impl.value()->type().sizes;
}

}  // namespace

bool is_symbolic(const Tensor& t) {
  const std::vector<ir::Expr>* s = t.defined() ? traced_sizes(t) : nullptr;
  return s && !ir::all_const(*s);
}

std::vector<ir::Expr> sym_sizes(const Tensor& t) {
  if (!t.defined()) fail("sym_sizes", "called on an undefined tensor");
  if (const std::vector<ir::Expr>* s = traced_sizes(t)) return *s;
  return ir::to_exprs(t.impl()->sizes());
}

ir::Expr sym_size(const Tensor& t, int64_t dim) {
  const int64_t d = normalize_dim("size", dim, t.dim(), false);
  if (const std::vector<ir::Expr>* s = traced_sizes(t)) return (*s)[static_cast<size_t>(d)];
  return ir::Expr(t.impl()->sizes()[static_cast<size_t>(d)]);
}

ir::Expr sym_product(const std::vector<ir::Expr>& sizes) {
  ir::Expr n(1);
  for (const ir::Expr& s : sizes) n = n * s;
  return n;
}

ir::Expr sym_numel(const Tensor& t) { return sym_product(sym_sizes(t)); }

void specialize_read(const TensorImpl& impl, int64_t dim) {
  const std::vector<ir::Expr>& sizes = impl.value()->type().sizes;
  ir::ShapeEnv* env = ir::ShapeEnv::current();
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d].is_const() || (dim >= 0 && static_cast<size_t>(dim) != d)) continue;
    if (!env) internal_fail("a traced tensor of type {} has symbolic sizes but no ShapeEnv is active",
                            impl.value()->type().str());
    env->specialize(sizes[d]);
  }
}

std::vector<ir::Expr> sym_broadcast_shapes(std::string_view op, const std::vector<ir::Expr>& a,
                                           const std::vector<ir::Expr>& b) {
  const size_t ndim = std::max(a.size(), b.size());
  std::vector<ir::Expr> out(ndim);
  for (size_t i = ndim; i-- > 0;) {
    const size_t offset = ndim - 1 - i;
    const ir::Expr sa = offset < a.size() ? a[a.size() - 1 - offset] : ir::Expr(1);
    const ir::Expr sb = offset < b.size() ? b[b.size() - 1 - offset] : ir::Expr(1);
    // No size is read as 1 from the guards here (known_one): the shape functions that run a
    // decomposition (ShapeByDecomposition) call this again at verification, under guards recorded
    // later in the trace, and must infer the types the trace recorded.
    if (sa == sb || sb == ir::Expr(1)) {
      out[i] = sa;
    } else if (sa == ir::Expr(1)) {
      out[i] = sb;
    } else if (ir::sym_eq(sa, sb)) {
      out[i] = sa;
    } else if (ir::sym_eq(sa, ir::Expr(1))) {
      out[i] = sb;
    } else if (ir::sym_eq(sb, ir::Expr(1))) {
      out[i] = sa;
    } else {
      const ir::ShapeEnv* env = ir::ShapeEnv::current();
      const int64_t ha = env ? env->hint(sa) : sa.as_const(), hb = env ? env->hint(sb) : sb.as_const();
      fail(op, "The size of tensor a ({}) must match the size of tensor b ({}) at non-singleton dimension {}", ha, hb,
           i);
    }
  }
  return out;
}

bool sym_same_sizes(const std::vector<ir::Expr>& a, const std::vector<ir::Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!ir::sym_eq(a[i], b[i])) return false;
  return true;
}

bool sym_expandable(const std::vector<ir::Expr>& from, const std::vector<ir::Expr>& to) {
  if (from.size() > to.size()) return false;
  for (size_t k = 1; k <= from.size(); ++k) {
    const ir::Expr& f = from[from.size() - k];
    if (!ir::sym_eq(f, to[to.size() - k]) && !ir::sym_eq(f, ir::Expr(1))) return false;
  }
  return true;
}

namespace {

// An eager tensor (a captured constant) given a symbolic target shape is lifted into the
// trace first: the view must be recorded, it cannot run eagerly without integer sizes.
Tensor lift_for(const Tensor& t, const std::vector<ir::Expr>& shape) {
  if (t.is_traced() || !Tracer::current()) return t;
  for (const ir::Expr& e : shape)
    if (!e.is_const()) return Tracer::current()->lift(t);
  return t;
}

}  // namespace

Tensor sym_expand(const Tensor& t_in, const std::vector<ir::Expr>& shape) {
  const Tensor t = lift_for(t_in, shape);
  std::vector<ir::Expr> from = sym_sizes(t);
  if (from == shape) return t;
  // A symbolic size that is 1 at the hints (s0//3, s2-1) and is broadcast to another size is
  // specialized to 1, as PyTorch's ShapeEnv does: guarded `== 1` and reshaped to a literal 1,
  // so that expand, and the lowering's index mapping, see a broadcast dim.
  ir::ShapeEnv* env = ir::ShapeEnv::current();
  bool pinned = false;
  const size_t lead = shape.size() - std::min(shape.size(), from.size());
  for (size_t d = 0; d < from.size() && env; ++d) {
    const ir::Expr& target = shape[lead + d];
    if (from[d].is_const() || from[d] == target || env->hint(from[d]) != 1 || env->hint(target) == 1) continue;
    env->specialize(from[d]);
    from[d] = ir::Expr(1);
    pinned = true;
  }
  const Tensor src = pinned ? sym_reshape(t, from) : t;
  if (from == shape) return src;
  return dispatch1(ir::OpKind::expand, {src}, {shape});
}

Tensor sym_reshape(const Tensor& t, const std::vector<ir::Expr>& shape) {
  return dispatch1(ir::OpKind::reshape, {lift_for(t, shape)}, {shape});
}

Tensor sym_full(const std::vector<ir::Expr>& shape, const Scalar& value, ScalarType dtype, Device device) {
  return dispatch1(ir::OpKind::full, {}, {shape, value, dtype, device});
}

Tensor sym_iota(const ir::Expr& length, ScalarType dtype, Device device) {
  return dispatch1(ir::OpKind::iota, {}, {length, Scalar(int64_t{0}), Scalar(int64_t{1}), dtype, device});
}

Tensor sym_positions(const Tensor& t, int64_t dim) {
  std::vector<ir::Expr> along(static_cast<size_t>(t.dim()), ir::Expr(1));
  along.at(static_cast<size_t>(dim)) = sym_size(t, dim);
  return sym_reshape(sym_iota(along[static_cast<size_t>(dim)], ScalarType::Int64, t.device()), along);
}

Tensor sym_scalar_tensor(const ir::Expr& value, ScalarType dtype, Device device) {
  if (auto c = value.maybe_const()) return sym_full({}, Scalar(*c), dtype, device);
  // iota(value + 1)[value]: element `value` of 0, 1, 2, ... is the value itself, computed from
  // the sizes the kernel reads at run time. Fused, it costs one index expression.
  Tensor ramp = sym_iota(value + 1, dtype, device);
  Tensor one = dispatch1(ir::OpKind::slice, {ramp}, {int64_t{0}, value, value + 1, ir::Expr(1)});
  return sym_reshape(one, {});
}

Tensor sym_div(const Tensor& t, const ir::Expr& n) {
  if (const std::optional<int64_t> c = n.maybe_const()) return div(t, Scalar(*c));
  return div(t, sym_scalar_tensor(n, t.dtype(), t.device()));
}

}  // namespace kiln
