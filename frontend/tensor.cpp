// kiln/frontend/tensor.cpp — Tensor metadata, data access, and the eager mutations
// (copy_, fill_) that write into existing storage.
#include "frontend/autograd_inplace.h"
#include "frontend/grad_mode.h"
#include "frontend/tensor.h"

#include "frontend/dispatch.h"
#include "base/error.h"
#include "frontend/arg_checks.h"
#include "frontend/ops.h"
#include "frontend/symbolic.h"
#include "frontend/tracer.h"
#include "frontend/ops_view.h"
#include "ir/graph.h"

namespace kiln {

namespace {

const TensorImpl& checked(const Tensor& t, std::string_view op) {
  if (!t.defined()) fail(op, "called on an undefined tensor");
  return *t.impl();
}

void require_eager(const Tensor& t, std::string_view op) {
  if (checked(t, op).is_traced())
    fail_data_dependent(op, "cannot read the data of a traced tensor inside a traced or compiled function; "
             "express data-dependent choices with tensor ops such as kiln::where");
}

}  // namespace

int64_t Tensor::dim() const { return static_cast<int64_t>(checked(*this, "dim").sizes().size()); }
// Reading the sizes of a traced tensor as integers specializes its symbolic dims (guards
// them to their hints): user code may compute anything from the numbers.
IntArrayRef Tensor::sizes() const {
  const TensorImpl& impl = checked(*this, "sizes");
  if (impl.is_traced()) specialize_read(impl, -1);
  return impl.sizes();
}
IntArrayRef Tensor::strides() const {
  const TensorImpl& impl = checked(*this, "strides");
  if (impl.is_traced()) specialize_read(impl, -1);
  return impl.strides();
}
int64_t Tensor::size(int64_t d) const {
  const TensorImpl& impl = checked(*this, "size");
  const int64_t n = normalize_dim("size", d, static_cast<int64_t>(impl.sizes().size()), false);
  if (impl.is_traced()) specialize_read(impl, n);
  return impl.sizes()[static_cast<size_t>(n)];
}
int64_t Tensor::stride(int64_t d) const {
  return strides()[static_cast<size_t>(normalize_dim("stride", d, dim(), false))];
}
int64_t Tensor::numel() const {
  const TensorImpl& impl = checked(*this, "numel");
  if (impl.is_traced()) specialize_read(impl, -1);
  return impl.numel();
}
int64_t Tensor::storage_offset() const { return checked(*this, "storage_offset").storage_offset(); }
ScalarType Tensor::dtype() const { return checked(*this, "dtype").dtype(); }
Device Tensor::device() const { return checked(*this, "device").device(); }
bool Tensor::is_contiguous() const { return checked(*this, "is_contiguous").is_contiguous(); }
bool Tensor::is_traced() const { return checked(*this, "is_traced").is_traced(); }

bool Tensor::is_alias_of(const Tensor& o) const {
  if (!defined() || !o.defined()) return false;
  const Storage& a = impl()->storage();
  return a && a == o.impl()->storage();
}

void* Tensor::data_ptr() const {
  require_eager(*this, "data_ptr");
  return impl()->data();
}

template <typename T> T* Tensor::data_ptr() const {
  require_eager(*this, "data_ptr");
  if (dtype() != scalar_type_of<T>)
    fail("data_ptr", "expected a tensor of dtype {}, but it has dtype {}", dtype_name(scalar_type_of<T>),
         dtype_name(dtype()));
  return static_cast<T*>(impl()->data());
}

Scalar Tensor::item() const {
  require_eager(*this, "item");
  if (numel() != 1) fail("item", "a Tensor with {} elements cannot be converted to Scalar", numel());
  if (!is_cpu()) return cpu().item();  // copies and waits for the device
  const void* p = impl()->data();
  return dispatch_dtype(dtype(), [&](auto tag) -> Scalar {
    using T = decltype(tag);
    return Scalar(*static_cast<const T*>(p));
  });
}

template <typename T> T Tensor::item() const {
  Scalar v = item();
  check_scalar_fits("item", v, scalar_type_of<T>);
  return v.to<T>();
}

template <typename T> std::vector<T> Tensor::to_vector() const {
  require_eager(*this, "to_vector");
  if (!is_cpu()) return cpu().to_vector<T>();
  std::vector<T> out;
  out.reserve(static_cast<size_t>(numel()));
  const auto& sz = impl()->sizes();
  const auto& st = impl()->strides();
  const char* base = static_cast<const char*>(impl()->data());
  dispatch_dtype(dtype(), [&](auto tag) {
    using S = decltype(tag);
    const S* p = reinterpret_cast<const S*>(base);
    std::vector<int64_t> idx(sz.size(), 0);
    for (int64_t i = 0; i < numel(); ++i) {
      int64_t off = 0;
      for (size_t d = 0; d < sz.size(); ++d) off += idx[d] * st[d];
      if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) {
        out.push_back(static_cast<T>(static_cast<float>(p[off])));
      } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
        out.push_back(T(static_cast<float>(p[off])));
      } else {
        out.push_back(static_cast<T>(p[off]));
      }
      for (size_t d = sz.size(); d-- > 0;) {
        if (++idx[d] < sz[d]) break;
        idx[d] = 0;
      }
    }
  });
  return out;
}

#define KILN_INSTANTIATE(T)                            \
  template T* Tensor::data_ptr<T>() const;             \
  template T Tensor::item<T>() const;                  \
  template std::vector<T> Tensor::to_vector<T>() const;
KILN_INSTANTIATE(bool)
KILN_INSTANTIATE(uint8_t)
KILN_INSTANTIATE(int8_t)
KILN_INSTANTIATE(int16_t)
KILN_INSTANTIATE(int32_t)
KILN_INSTANTIATE(int64_t)
KILN_INSTANTIATE(Half)
KILN_INSTANTIATE(BFloat16)
KILN_INSTANTIATE(float)
KILN_INSTANTIATE(double)
#undef KILN_INSTANTIATE

Tensor Tensor::contiguous() const {
  checked(*this, "contiguous");
  if (is_traced() || is_contiguous()) return *this;
  return clone();
}

namespace {

// Whether two elements of `t` share one memory location (a zero stride on a dim of size > 1),
// as PyTorch's has_internal_overlap decides it.
bool has_internal_overlap(const Tensor& t) {
  const auto& sz = t.impl()->sizes();
  const auto& st = t.impl()->strides();
  for (size_t d = 0; d < sz.size(); ++d)
    if (sz[d] > 1 && st[d] == 0) return true;
  return false;
}

// Whether traced value t is computed from v within `depth` nodes through floating values, the
// ones a gradient flows through (add_: add(x, y); mul_ of a cloned x: mul(clone(x), y); not
// copy_(x > 0): a comparison passes no gradient back to x).
bool computed_from(const ir::Value* t, const ir::Value* v, int depth) {
  const ir::Node* p = t->producer();
  if (!p || depth == 0) return false;
  for (const ir::Value* in : p->inputs()) {
    if (!is_floating_point(in->type().dtype)) continue;
    if (in == v || computed_from(in, v, depth - 1)) return true;
  }
  return false;
}

}  // namespace

Tensor& Tensor::copy_(const Tensor& src) {
  checked(*this, "copy_");
  if (!is_traced() && has_internal_overlap(*this))
    fail("copy_", "unsupported operation: more than one element of the written-to tensor refers to a single "
                  "memory location. Please clone() the tensor before performing the operation.");
  return assign_(src);
}

Tensor& Tensor::assign_(const Tensor& src) {
  checked(*this, "copy_");
  checked(src, "copy_");
  Tensor value;
  if (is_symbolic(*this) || is_symbolic(src)) {
    const std::vector<ir::Expr> dst = sym_sizes(*this);
    (void)sym_broadcast_shapes("copy_", dst, sym_sizes(src));
    if (src.dim() > dim() || !sym_expandable(sym_sizes(src), dst))
      fail("copy_", "source of shape {} cannot be broadcast to the destination shape {}", ir::str(sym_sizes(src)),
           ir::str(dst));
    value = sym_expand(src.to(dtype()), dst);
  } else {
    std::vector<int64_t> bshape = broadcast_shapes("copy_", sizes(), src.sizes());
    if (IntArrayRef(bshape) != sizes())
      fail("copy_", "source of shape {} cannot be broadcast to the destination shape {}", shape_str(src.sizes()),
           shape_str(sizes()));
    value = src.to(dtype());
    // Expanded only when the shapes differ: an in-place op's value is then its op's own result,
    // which the write's history recognizes as reading the old contents (autograd_inplace.cpp).
    if (value.sizes() != sizes()) value = value.expand(sizes());
  }
  Tracer* tracer = is_traced() ? impl()->tracer() : Tracer::current();
  if (tracer) {
    // Functionalized: the tensor now stands for the new value. A traced view would also need
    // its base updated, which recording cannot express; refuse rather than be silently wrong.
    // A captured eager tensor (running statistics) stands for its lifted input, and its new
    // value is written back after every run of the compiled function.
    const Tensor old = tracer->lift(*this);
    ir::Value* v = old.impl()->value();
    // A detached view (detach() of one, or one taken under NoGradGuard) shares its base's memory too.
    ir::Value* viewed = v;
    while (viewed->producer() && viewed->producer()->op() == ir::OpKind::detach) viewed = viewed->producer()->input(0);
    if (viewed->producer() && viewed->producer()->info().has(ir::traits::View))
      fail("copy_", "in-place update of a view ({}) of a traced tensor cannot be recorded; "
                    "compute the new tensor out of place instead", op_name(viewed->producer()->op()));
    // Views taken earlier alias this tensor; rebinding it would leave them with the old value.
    for (const ir::Use& u : v->uses())
      if (u.user && u.user->info().has(ir::traits::View))
        fail("copy_", "in-place update of a traced tensor that has views ({}) cannot be recorded; "
                      "compute the new tensor out of place instead", op_name(u.user->op()));
    // Under NoGradGuard in a function being differentiated, the tensor keeps its place for the
    // gradient across the write (frontend/grad_mode.h). Otherwise, when the value was not
    // computed from the old one (copy_ of another tensor, fill_), the old value is overwritten
    // and its gradient is zeros, as eager mode gives it (frontend/autograd_inplace.cpp):
    // where(true, value, old) keeps it in the function being differentiated, and the
    // simplifier folds the where away after differentiation (passes/simplify.cpp).
    const Tensor lifted = tracer->lift(value);
    Tensor fresh;
    if (TracingForGrad::stops_gradients()) {
      fresh = dispatch1(ir::OpKind::no_grad_copy, {old, lifted});
    } else if (TracingForGrad::is_enabled() && is_floating_point() && !computed_from(lifted.impl()->value(), v, 2)) {
      const Tensor yes = dispatch1(ir::OpKind::full, {}, {std::vector<ir::Expr>{}, Scalar(true), ScalarType::Bool, device()});
      fresh = kiln::where(yes, lifted, old);
    } else {
      fresh = lifted.clone();
    }
    if (is_traced()) impl()->rebind(fresh.impl()->value());
    else tracer->update_lifted(*this, fresh);
    return *this;
  }
  if (value.is_traced()) fail("copy_", "cannot copy a traced tensor into an eager tensor");
  autograd::check_inplace(*this);
  if (value.is_alias_of(*this)) value = value.clone();  // the source may overlap the destination
  {
    NoGradGuard no_grad;  // the write itself; its history is recorded after it
    run_copy_kernel(*this, value);
  }
  autograd::after_inplace(*this, value);
  return *this;
}

Tensor& Tensor::fill_(const Scalar& v) {
  checked(*this, "fill_");
  check_fill_fits("fill_", v, dtype(), is_symbolic(*this) ? -1 : numel());
  Tensor value = dispatch1(ir::OpKind::full, {}, {std::vector<ir::Expr>{}, v, dtype(), device()});
  return assign_(value);  // filling an expanded tensor is allowed: every alias gets the same value
}

// PyTorch converts a tensor's value unchecked (300 into uint8 is 44), as `to` does.
Tensor& Tensor::fill_(const Tensor& value) {
  checked(*this, "fill_");
  checked(value, "fill_");
  if (value.dim() != 0)
    fail("fill_", "fill_ only supports 0-dimension value tensor but got tensor with {} dimensions.", value.dim());
  return assign_(value.to(options()));
}

}  // namespace kiln
