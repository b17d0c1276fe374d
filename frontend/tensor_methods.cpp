// kiln/frontend/tensor_methods.cpp — the Tensor methods that forward to free functions.
//
// Views, conversions, pointwise math, reductions, indexing and matmul as methods
// (x.sum({1}, true), x.add_(y)), each calling the free function of frontend/ops.h or
// frontend/ops_view.h. The in-place forms compute out of place, check that the result fits the
// tensor (shape and can_cast of the dtype, as PyTorch's TensorIterator does) and copy_ it in.
// Metadata, data access, copy_/fill_/contiguous and printing live in tensor.cpp/printing.cpp.
#include "frontend/grad_mode.h"
#include "frontend/autograd_inplace.h"
#include "frontend/dispatch.h"
#include "base/error.h"
#include "frontend/ops.h"
#include "frontend/ops_linear.h"
#include "frontend/promotion.h"
#include "frontend/symbolic.h"
#include "frontend/tensor.h"
#include "frontend/ops_view.h"
#include "ir/shape_env.h"

#include <algorithm>
#include <string_view>
#include <vector>

namespace kiln {

namespace {

// Writes an out-of-place result into `self`: same shape, and a dtype that casts safely.
Tensor& assign_result(std::string_view op, Tensor& self, const Tensor& result) {
  if (is_symbolic(self) || is_symbolic(result)) {
    const std::vector<ir::Expr> a = sym_sizes(self), b = sym_sizes(result);
    bool same = a.size() == b.size();
    for (size_t d = 0; same && d < a.size(); ++d) same = ir::sym_eq(a[d], b[d]);
    if (!same)
      fail(op, "output with shape {} doesn't match the broadcast shape {}", ir::str(a), ir::str(b));
  } else if (!(result.sizes() == self.sizes())) {
    fail(op, "output with shape {} doesn't match the broadcast shape {}", shape_str(self.sizes()),
         shape_str(result.sizes()));
  }
  if (!can_cast(result.dtype(), self.dtype())) {
    fail(op, "result type {} can't be cast to the desired output type {}", c10_type_name(result.dtype()),
         c10_type_name(self.dtype()));
  }
  self.copy_(result);
  return self;
}

// The other operand of a binary in-place op, expanded to self's sizes when it broadcasts to them.
// Under symbolic sizes the broadcast of the pair could otherwise be wider than self by a size
// the trace guarded equal to 1 (self [1, 1, s0], other [1, s0 // 2, s0]): self would be expanded
// to it, and the copy_ back would find self with a view. A pair that does not broadcast to
// self is left for assign_result's error. A 0-dim other stays 0-dim: it broadcasts to anything,
// and with dims it would promote as a dimensioned operand (bf16 self, f32 0-dim other).
Tensor inplace_other(const Tensor& self, const Tensor& other) {
  if (other.dim() == 0 || (!is_symbolic(self) && !is_symbolic(other))) return other;
  const std::vector<ir::Expr> to = sym_sizes(self);
  return sym_expandable(sym_sizes(other), to) ? sym_expand(other, to) : other;
}

// What an in-place op that saves its first operand for the gradient of `other` (mul_, div_) reads
// self as: a clone of it when `other` requires grad under grad mode, since the write is about to
// change self's storage and the saved value would then refuse to be used (PyTorch saves the
// original self the same way).
Tensor inplace_source(const Tensor& self, const Tensor& other) {
  if (self.is_traced() || !GradMode::is_enabled() || !other.requires_grad()) return self;
  return self.clone();
}

}  // namespace

// ---- views ------------------------------------------------------------------------------------------

Tensor Tensor::view_as(const Tensor& o) const {
  if (!is_symbolic(*this) && !is_symbolic(o)) return view(o.sizes());
  if (!ir::sym_eq(sym_numel(*this), sym_numel(o)))
    fail("view_as", "shape {} is invalid for input of shape {}", ir::str(sym_sizes(o)), ir::str(sym_sizes(*this)));
  return sym_reshape(*this, sym_sizes(o));
}
Tensor Tensor::reshape_as(const Tensor& o) const {
  if (!is_symbolic(*this) && !is_symbolic(o)) return reshape(o.sizes());
  return view_as(o);
}
Tensor Tensor::expand_as(const Tensor& o) const {
  if (!is_symbolic(*this) && !is_symbolic(o)) return expand(o.sizes());
  if (!sym_expandable(sym_sizes(*this), sym_sizes(o)))
    fail("expand_as", "the size {} cannot be expanded to {}", ir::str(sym_sizes(*this)), ir::str(sym_sizes(o)));
  return sym_expand(*this, sym_sizes(o));
}

Tensor Tensor::view(IntArrayRef size) const { return kiln::view(*this, size); }
Tensor Tensor::reshape(IntArrayRef size) const { return kiln::reshape(*this, size); }
Tensor Tensor::permute(IntArrayRef dims) const { return kiln::permute(*this, dims); }
Tensor Tensor::transpose(int64_t d0, int64_t d1) const { return kiln::transpose(*this, d0, d1); }
Tensor Tensor::t() const { return kiln::t(*this); }
Tensor Tensor::mT() const {
  if (dim() < 2) fail("mT", "tensor.mT is only supported on matrices or batches of matrices. Got {}-D tensor.", dim());
  return kiln::transpose(*this, -2, -1);
}
Tensor Tensor::movedim(int64_t src, int64_t dst) const { return kiln::movedim(*this, src, dst); }
Tensor Tensor::expand(IntArrayRef size) const { return kiln::expand(*this, size); }
Tensor Tensor::squeeze() const { return kiln::squeeze(*this); }
Tensor Tensor::squeeze(int64_t d) const { return kiln::squeeze(*this, d); }
// Squeezes the listed dims that have size 1 (others are left alone, as torch.squeeze(dims)).
Tensor Tensor::squeeze(IntArrayRef dims) const {
  int64_t rank = dim();
  std::vector<int64_t> norm;
  for (int64_t d : dims) {
    int64_t n = normalize_dim("squeeze", d, rank);
    if (std::find(norm.begin(), norm.end(), n) != norm.end()) {
      fail("squeeze", "dim {} appears multiple times in the list of dims", n);
    }
    norm.push_back(n);
  }
  std::vector<int64_t> squeezed;
  for (int64_t d : norm) {
    if (rank > 0 && ir::sym_eq(sym_size(*this, d), ir::Expr(1))) squeezed.push_back(d);
  }
  std::sort(squeezed.begin(), squeezed.end());
  return dispatch1(ir::OpKind::squeeze, {*this}, {std::move(squeezed)});
}
Tensor Tensor::unsqueeze(int64_t d) const { return kiln::unsqueeze(*this, d); }
Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const { return kiln::flatten(*this, start_dim, end_dim); }
Tensor Tensor::unflatten(int64_t d, IntArrayRef sizes) const { return kiln::unflatten(*this, d, sizes); }
Tensor Tensor::slice(int64_t d, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) const {
  return kiln::slice(*this, d, start, end, step);
}
Tensor Tensor::select(int64_t d, int64_t index) const { return kiln::select(*this, d, index); }
Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const { return kiln::narrow(*this, d, start, length); }
Tensor Tensor::diagonal(int64_t offset, int64_t d1, int64_t d2) const { return kiln::diagonal(*this, offset, d1, d2); }
Tensor Tensor::as_strided(IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset) const {
  return kiln::as_strided(*this, size, stride, storage_offset);
}
std::vector<Tensor> Tensor::split(int64_t split_size, int64_t d) const { return kiln::split(*this, split_size, d); }
std::vector<Tensor> Tensor::split(IntArrayRef split_sizes, int64_t d) const {
  return kiln::split_with_sizes(*this, split_sizes, d);
}
std::vector<Tensor> Tensor::split_with_sizes(IntArrayRef split_sizes, int64_t d) const {
  return kiln::split_with_sizes(*this, split_sizes, d);
}
std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t d) const { return kiln::chunk(*this, chunks, d); }
std::vector<Tensor> Tensor::unbind(int64_t d) const { return kiln::unbind(*this, d); }

// ---- copies and conversion -----------------------------------------------------------------------------

Tensor Tensor::clone() const { return kiln::clone(*this); }
Tensor Tensor::to(ScalarType dtype) const { return kiln::to(*this, dtype); }
Tensor Tensor::to(Device device) const {
  if (device == this->device()) return *this;
  if (DeviceMover move = installed_device_mover()) return autograd::record_device_move(*this, move(*this, device));
  fail("to", "cannot move a tensor from {} to {}: no device runtime is installed", this->device().str(), device.str());
}
Tensor Tensor::cuda(int index) const { return to(Device(kCUDA, index)); }
Tensor Tensor::cpu() const { return to(Device(kCPU)); }
Tensor Tensor::to(const TensorOptions& opts) const {
  Tensor out = *this;
  if (opts.dtype_) out = out.to(*opts.dtype_);
  if (opts.device_) out = out.to(*opts.device_);
  return out;
}

// ---- pointwise ------------------------------------------------------------------------------------------

#define KILN_UNARY_METHOD(name) \
  Tensor Tensor::name() const { return kiln::name(*this); }
KILN_UNARY_METHOD(abs) KILN_UNARY_METHOD(neg) KILN_UNARY_METHOD(exp) KILN_UNARY_METHOD(exp2)
KILN_UNARY_METHOD(expm1) KILN_UNARY_METHOD(log) KILN_UNARY_METHOD(log2) KILN_UNARY_METHOD(log10)
KILN_UNARY_METHOD(log1p) KILN_UNARY_METHOD(sqrt) KILN_UNARY_METHOD(rsqrt) KILN_UNARY_METHOD(reciprocal)
KILN_UNARY_METHOD(sin) KILN_UNARY_METHOD(cos) KILN_UNARY_METHOD(tan) KILN_UNARY_METHOD(asin)
KILN_UNARY_METHOD(acos) KILN_UNARY_METHOD(atan) KILN_UNARY_METHOD(sinh) KILN_UNARY_METHOD(cosh)
KILN_UNARY_METHOD(tanh) KILN_UNARY_METHOD(asinh) KILN_UNARY_METHOD(acosh) KILN_UNARY_METHOD(atanh)
KILN_UNARY_METHOD(erf) KILN_UNARY_METHOD(erfc) KILN_UNARY_METHOD(erfinv) KILN_UNARY_METHOD(lgamma)
KILN_UNARY_METHOD(sigmoid) KILN_UNARY_METHOD(floor) KILN_UNARY_METHOD(ceil) KILN_UNARY_METHOD(round)
KILN_UNARY_METHOD(trunc) KILN_UNARY_METHOD(frac) KILN_UNARY_METHOD(sign) KILN_UNARY_METHOD(signbit)
KILN_UNARY_METHOD(isnan) KILN_UNARY_METHOD(isinf) KILN_UNARY_METHOD(isfinite) KILN_UNARY_METHOD(bitwise_not)
KILN_UNARY_METHOD(logical_not) KILN_UNARY_METHOD(relu) KILN_UNARY_METHOD(square)
#undef KILN_UNARY_METHOD

#define KILN_BINARY_METHOD(name)                                                               \
  Tensor Tensor::name(const Tensor& other) const { return kiln::name(*this, other); }        \
  Tensor Tensor::name(const Scalar& other) const { return kiln::name(*this, other); }
KILN_BINARY_METHOD(mul) KILN_BINARY_METHOD(div) KILN_BINARY_METHOD(remainder) KILN_BINARY_METHOD(fmod)
KILN_BINARY_METHOD(pow) KILN_BINARY_METHOD(atan2) KILN_BINARY_METHOD(hypot) KILN_BINARY_METHOD(copysign)
KILN_BINARY_METHOD(maximum) KILN_BINARY_METHOD(minimum) KILN_BINARY_METHOD(fmax) KILN_BINARY_METHOD(fmin)
KILN_BINARY_METHOD(eq) KILN_BINARY_METHOD(ne) KILN_BINARY_METHOD(lt) KILN_BINARY_METHOD(le)
KILN_BINARY_METHOD(gt) KILN_BINARY_METHOD(ge) KILN_BINARY_METHOD(logical_and) KILN_BINARY_METHOD(logical_or)
KILN_BINARY_METHOD(logical_xor) KILN_BINARY_METHOD(bitwise_and) KILN_BINARY_METHOD(bitwise_or)
KILN_BINARY_METHOD(bitwise_xor) KILN_BINARY_METHOD(bitwise_left_shift) KILN_BINARY_METHOD(bitwise_right_shift)
KILN_BINARY_METHOD(floor_divide)
#undef KILN_BINARY_METHOD

Tensor Tensor::add(const Tensor& other, const Scalar& alpha) const { return kiln::add(*this, other, alpha); }
Tensor Tensor::add(const Scalar& other, const Scalar& alpha) const { return kiln::add(*this, other, alpha); }
Tensor Tensor::sub(const Tensor& other, const Scalar& alpha) const { return kiln::sub(*this, other, alpha); }
Tensor Tensor::sub(const Scalar& other, const Scalar& alpha) const { return kiln::sub(*this, other, alpha); }
Tensor Tensor::div(const Tensor& other, std::optional<std::string_view> rounding_mode) const {
  return kiln::div(*this, other, rounding_mode);
}
Tensor Tensor::div(const Scalar& other, std::optional<std::string_view> rounding_mode) const {
  return kiln::div(*this, other, rounding_mode);
}
Tensor Tensor::clamp(std::optional<Scalar> min, std::optional<Scalar> max) const { return kiln::clamp(*this, min, max); }
Tensor Tensor::clamp(const std::optional<Tensor>& min, const std::optional<Tensor>& max) const {
  return kiln::clamp(*this, min, max);
}

Tensor& Tensor::add_(const Tensor& other, const Scalar& alpha) { return assign_result("add_", *this, add(inplace_other(*this, other), alpha)); }
Tensor& Tensor::add_(const Scalar& other, const Scalar& alpha) { return assign_result("add_", *this, add(other, alpha)); }
Tensor& Tensor::sub_(const Tensor& other, const Scalar& alpha) { return assign_result("sub_", *this, sub(inplace_other(*this, other), alpha)); }
Tensor& Tensor::sub_(const Scalar& other, const Scalar& alpha) { return assign_result("sub_", *this, sub(other, alpha)); }
Tensor& Tensor::mul_(const Tensor& other) { return assign_result("mul_", *this, kiln::mul(inplace_source(*this, other), inplace_other(*this, other))); }
Tensor& Tensor::mul_(const Scalar& other) { return assign_result("mul_", *this, mul(other)); }
Tensor& Tensor::div_(const Tensor& other) { return assign_result("div_", *this, kiln::div(inplace_source(*this, other), inplace_other(*this, other))); }
Tensor& Tensor::div_(const Scalar& other) { return assign_result("div_", *this, div(other)); }

#define KILN_UNARY_INPLACE_METHOD(name) \
  Tensor& Tensor::name##_() { return assign_result(#name "_", *this, kiln::name(*this)); }
KILN_UNARY_INPLACE_METHOD(abs) KILN_UNARY_INPLACE_METHOD(neg) KILN_UNARY_INPLACE_METHOD(exp)
KILN_UNARY_INPLACE_METHOD(log) KILN_UNARY_INPLACE_METHOD(log1p) KILN_UNARY_INPLACE_METHOD(expm1)
KILN_UNARY_INPLACE_METHOD(sqrt) KILN_UNARY_INPLACE_METHOD(rsqrt) KILN_UNARY_INPLACE_METHOD(reciprocal)
KILN_UNARY_INPLACE_METHOD(sin) KILN_UNARY_INPLACE_METHOD(cos) KILN_UNARY_INPLACE_METHOD(tanh)
KILN_UNARY_INPLACE_METHOD(sigmoid) KILN_UNARY_INPLACE_METHOD(relu) KILN_UNARY_INPLACE_METHOD(erf)
KILN_UNARY_INPLACE_METHOD(floor) KILN_UNARY_INPLACE_METHOD(ceil) KILN_UNARY_INPLACE_METHOD(round)
KILN_UNARY_INPLACE_METHOD(trunc) KILN_UNARY_INPLACE_METHOD(square)
#undef KILN_UNARY_INPLACE_METHOD
Tensor& Tensor::clamp_(std::optional<Scalar> min, std::optional<Scalar> max) {
  return assign_result("clamp_", *this, kiln::clamp(*this, min, max));
}
Tensor& Tensor::clamp_min_(const Scalar& min) { return assign_result("clamp_min_", *this, kiln::clamp_min(*this, min)); }
Tensor& Tensor::clamp_max_(const Scalar& max) { return assign_result("clamp_max_", *this, kiln::clamp_max(*this, max)); }
Tensor& Tensor::pow_(const Scalar& exponent) { return assign_result("pow_", *this, kiln::pow(*this, exponent)); }
Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& value) {
  return assign_result("masked_fill_", *this, kiln::masked_fill(*this, mask, value));
}
Tensor& Tensor::masked_fill_(const Tensor& mask, const Tensor& value) {
  return assign_result("masked_fill_", *this, kiln::masked_fill(*this, mask, value));
}
Tensor& Tensor::index_fill_(int64_t d, const Tensor& index, const Scalar& value) {
  return assign_result("index_fill_", *this, kiln::index_fill(*this, d, index, value));
}
Tensor& Tensor::index_fill_(int64_t d, const Tensor& index, const Tensor& value) {
  return assign_result("index_fill_", *this, kiln::index_fill(*this, d, index, value));
}
Tensor& Tensor::index_copy_(int64_t d, const Tensor& index, const Tensor& source) {
  return assign_result("index_copy_", *this, kiln::index_copy(*this, d, index, source));
}
Tensor& Tensor::index_reduce_(int64_t d, const Tensor& index, const Tensor& source, std::string_view reduce,
                              bool include_self) {
  return assign_result("index_reduce_", *this, kiln::index_reduce(*this, d, index, source, reduce, include_self));
}
Tensor& Tensor::put_(const Tensor& index, const Tensor& source, bool accumulate) {
  return assign_result("put_", *this, kiln::put(*this, index, source, accumulate));
}
Tensor& Tensor::addbmm_(const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) {
  return assign_result("addbmm_", *this, kiln::addbmm(*this, batch1, batch2, beta, alpha));
}
Tensor& Tensor::renorm_(const Scalar& p, int64_t d, const Scalar& maxnorm) {
  return assign_result("renorm_", *this, kiln::renorm(*this, p, d, maxnorm));
}
Tensor& Tensor::ldexp_(const Tensor& other) { return assign_result("ldexp_", *this, kiln::ldexp(*this, other)); }

// ---- reductions, scans ------------------------------------------------------------------------------------

Tensor Tensor::sum(std::optional<ScalarType> dtype) const { return kiln::sum(*this, dtype); }
Tensor Tensor::sum(IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) const {
  return kiln::sum(*this, dims, keepdim, dtype);
}
Tensor Tensor::prod(std::optional<ScalarType> dtype) const { return kiln::prod(*this, dtype); }
Tensor Tensor::prod(int64_t d, bool keepdim, std::optional<ScalarType> dtype) const {
  return kiln::prod(*this, d, keepdim, dtype);
}
Tensor Tensor::mean(std::optional<ScalarType> dtype) const { return kiln::mean(*this, dtype); }
Tensor Tensor::mean(IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) const {
  return kiln::mean(*this, dims, keepdim, dtype);
}
Tensor Tensor::amax(IntArrayRef dims, bool keepdim) const { return kiln::amax(*this, dims, keepdim); }
Tensor Tensor::amin(IntArrayRef dims, bool keepdim) const { return kiln::amin(*this, dims, keepdim); }
Tensor Tensor::max() const { return kiln::max(*this); }
Tensor Tensor::min() const { return kiln::min(*this); }
Tensor Tensor::argmax(std::optional<int64_t> d, bool keepdim) const { return kiln::argmax(*this, d, keepdim); }
Tensor Tensor::argmin(std::optional<int64_t> d, bool keepdim) const { return kiln::argmin(*this, d, keepdim); }
Tensor Tensor::any() const { return kiln::any(*this); }
Tensor Tensor::any(int64_t d, bool keepdim) const { return kiln::any(*this, d, keepdim); }
Tensor Tensor::all() const { return kiln::all(*this); }
Tensor Tensor::all(int64_t d, bool keepdim) const { return kiln::all(*this, d, keepdim); }
Tensor Tensor::cumsum(int64_t d, std::optional<ScalarType> dtype) const { return kiln::cumsum(*this, d, dtype); }
Tensor Tensor::cumprod(int64_t d, std::optional<ScalarType> dtype) const { return kiln::cumprod(*this, d, dtype); }

// ---- indexing, matmul -------------------------------------------------------------------------------------

Tensor Tensor::gather(int64_t d, const Tensor& index) const { return kiln::gather(*this, d, index); }
Tensor Tensor::scatter(int64_t d, const Tensor& index, const Tensor& src) const {
  return kiln::scatter(*this, d, index, src);
}
Tensor Tensor::scatter(int64_t d, const Tensor& index, const Scalar& value) const {
  return kiln::scatter(*this, d, index, value);
}
Tensor Tensor::scatter_add(int64_t d, const Tensor& index, const Tensor& src) const {
  return kiln::scatter_add(*this, d, index, src);
}
Tensor Tensor::index_select(int64_t d, const Tensor& index) const { return kiln::index_select(*this, d, index); }
Tensor Tensor::mm(const Tensor& other) const { return kiln::mm(*this, other); }
Tensor Tensor::bmm(const Tensor& other) const { return kiln::bmm(*this, other); }
Tensor Tensor::matmul(const Tensor& other) const { return kiln::matmul(*this, other); }

}  // namespace kiln
