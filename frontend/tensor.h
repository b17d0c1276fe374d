// kiln/frontend/tensor.h — Tensor: a handle to a TensorImpl, with libtorch's method names.
//
// Copying a Tensor copies the handle (both name the same data), as in libtorch. Methods
// forward to the free functions of frontend/ops.h and frontend/ops_view.h.
#pragma once

#include "base/int_array_ref.h"
#include "base/scalar.h"
#include "base/tensor_impl.h"
#include "frontend/tensor_options.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

namespace kiln {

namespace autograd {
class Node;
}

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(IntrusivePtr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return static_cast<bool>(impl_); }
  TensorImpl* impl() const { return impl_.get(); }
  const IntrusivePtr<TensorImpl>& impl_ptr() const { return impl_; }
  // Whether both handles name the same TensorImpl.
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }

  // ---- metadata -------------------------------------------------------------------------
  int64_t dim() const;
  int64_t ndimension() const { return dim(); }
  IntArrayRef sizes() const;
  IntArrayRef strides() const;
  int64_t size(int64_t d) const;    // negative d counts from the end
  int64_t stride(int64_t d) const;
  int64_t numel() const;
  int64_t storage_offset() const;
  ScalarType dtype() const;
  ScalarType scalar_type() const { return dtype(); }
  Device device() const;
  bool is_cpu() const { return device().is_cpu(); }
  bool is_cuda() const { return device().is_cuda(); }
  bool is_contiguous() const;
  bool is_floating_point() const { return kiln::is_floating_point(dtype()); }
  size_t element_size() const { return kiln::element_size(dtype()); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(); }
  bool is_traced() const;
  TensorOptions options() const { return TensorOptions(dtype()).device(device()); }
  // Whether this tensor shares storage with `o`.
  bool is_alias_of(const Tensor& o) const;

  // ---- data access (eager tensors only; a traced tensor throws naming the op) -------------
  void* data_ptr() const;
  template <typename T> T* data_ptr() const;
  template <typename T> T item() const;
  Scalar item() const;
  // Copies the elements out in row-major order (converted to T).
  template <typename T> std::vector<T> to_vector() const;

  // ---- views ------------------------------------------------------------------------------
  Tensor view(IntArrayRef size) const;
  Tensor reshape(IntArrayRef size) const;
  Tensor view_as(const Tensor& o) const;
  Tensor reshape_as(const Tensor& o) const;
  Tensor permute(IntArrayRef dims) const;
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor t() const;
  Tensor mT() const;
  Tensor movedim(int64_t src, int64_t dst) const;
  Tensor expand(IntArrayRef size) const;
  Tensor expand_as(const Tensor& o) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t d) const;
  Tensor squeeze(IntArrayRef dims) const;
  Tensor unsqueeze(int64_t d) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor unflatten(int64_t d, IntArrayRef sizes) const;
  Tensor slice(int64_t d = 0, std::optional<int64_t> start = std::nullopt, std::optional<int64_t> end = std::nullopt,
               int64_t step = 1) const;
  Tensor select(int64_t d, int64_t index) const;
  Tensor operator[](int64_t index) const { return select(0, index); }
  Tensor narrow(int64_t d, int64_t start, int64_t length) const;
  Tensor diagonal(int64_t offset = 0, int64_t d1 = 0, int64_t d2 = 1) const;
  Tensor as_strided(IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset = std::nullopt) const;
  std::vector<Tensor> split(int64_t split_size, int64_t d = 0) const;
  std::vector<Tensor> split(IntArrayRef split_sizes, int64_t d = 0) const;
  std::vector<Tensor> split_with_sizes(IntArrayRef split_sizes, int64_t d = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t d = 0) const;
  std::vector<Tensor> unbind(int64_t d = 0) const;

  // ---- copies and conversion -------------------------------------------------------------
  Tensor contiguous() const;
  Tensor clone() const;
  Tensor& copy_(const Tensor& src);
  Tensor to(ScalarType dtype) const;
  Tensor to(Device device) const;
  Tensor cuda(int index = 0) const;  // to(cuda:index)
  Tensor cpu() const;                // to(cpu)
  Tensor to(const TensorOptions& opts) const;
  Tensor& fill_(const Scalar& v);
  Tensor& fill_(const Tensor& value);  // a 0-dim value
  Tensor& zero_() { return fill_(0); }

  // ---- autograd (frontend/autograd.h) ------------------------------------------------------
  // Marks a floating leaf as requiring grad (or not); a non-leaf cannot be unmarked.
  Tensor& requires_grad_(bool requires_grad = true);
  bool requires_grad() const;
  // A leaf's accumulated gradient (or a non-leaf's with retain_grad()); undefined when none.
  const Tensor& grad() const;
  Tensor& mutable_grad();
  bool is_leaf() const;
  // The node that made this tensor (name(): "MulBackward0"); null for a leaf.
  std::shared_ptr<autograd::Node> grad_fn() const;
  uint32_t output_nr() const;
  void retain_grad() const;
  bool retains_grad() const;
  // Makes this tensor hold src's data (memory, dtype, device, sizes) in place, keeping its
  // identity, requires_grad and history: every handle to it sees the change (PyTorch's
  // set_data; nn::Module::to uses it). Neither may be traced.
  void set_data(const Tensor& src) const;
  // The same data with no history; detach_() drops this tensor's own.
  Tensor detach() const;
  Tensor& detach_();
  // Runs hook on this tensor's gradient during backward (its result, when defined, replaces the
  // gradient); returns a handle for remove_hook.
  unsigned register_hook(std::function<Tensor(const Tensor&)> hook) const;
  void remove_hook(unsigned handle) const;
  // autograd::backward({*this}, {gradient}, ...).
  void backward(const Tensor& gradient = {}, std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false, const std::vector<Tensor>& inputs = {}) const;
  // In-place writes into this tensor's storage so far (PyTorch's _version).
  int64_t _version() const;

  // ---- pointwise --------------------------------------------------------------------------
#define KILN_TENSOR_UNARY_METHOD(name) Tensor name() const;
  KILN_TENSOR_UNARY_METHOD(abs) KILN_TENSOR_UNARY_METHOD(neg) KILN_TENSOR_UNARY_METHOD(exp)
  KILN_TENSOR_UNARY_METHOD(exp2) KILN_TENSOR_UNARY_METHOD(expm1) KILN_TENSOR_UNARY_METHOD(log)
  KILN_TENSOR_UNARY_METHOD(log2) KILN_TENSOR_UNARY_METHOD(log10) KILN_TENSOR_UNARY_METHOD(log1p)
  KILN_TENSOR_UNARY_METHOD(sqrt) KILN_TENSOR_UNARY_METHOD(rsqrt) KILN_TENSOR_UNARY_METHOD(reciprocal)
  KILN_TENSOR_UNARY_METHOD(sin) KILN_TENSOR_UNARY_METHOD(cos) KILN_TENSOR_UNARY_METHOD(tan)
  KILN_TENSOR_UNARY_METHOD(asin) KILN_TENSOR_UNARY_METHOD(acos) KILN_TENSOR_UNARY_METHOD(atan)
  KILN_TENSOR_UNARY_METHOD(sinh) KILN_TENSOR_UNARY_METHOD(cosh) KILN_TENSOR_UNARY_METHOD(tanh)
  KILN_TENSOR_UNARY_METHOD(asinh) KILN_TENSOR_UNARY_METHOD(acosh) KILN_TENSOR_UNARY_METHOD(atanh)
  KILN_TENSOR_UNARY_METHOD(erf) KILN_TENSOR_UNARY_METHOD(erfc) KILN_TENSOR_UNARY_METHOD(erfinv)
  KILN_TENSOR_UNARY_METHOD(lgamma) KILN_TENSOR_UNARY_METHOD(sigmoid) KILN_TENSOR_UNARY_METHOD(floor)
  KILN_TENSOR_UNARY_METHOD(ceil) KILN_TENSOR_UNARY_METHOD(round) KILN_TENSOR_UNARY_METHOD(trunc)
  KILN_TENSOR_UNARY_METHOD(frac) KILN_TENSOR_UNARY_METHOD(sign) KILN_TENSOR_UNARY_METHOD(signbit)
  KILN_TENSOR_UNARY_METHOD(isnan) KILN_TENSOR_UNARY_METHOD(isinf) KILN_TENSOR_UNARY_METHOD(isfinite)
  KILN_TENSOR_UNARY_METHOD(bitwise_not) KILN_TENSOR_UNARY_METHOD(logical_not) KILN_TENSOR_UNARY_METHOD(relu)
  KILN_TENSOR_UNARY_METHOD(square)
#undef KILN_TENSOR_UNARY_METHOD

#define KILN_TENSOR_BINARY_METHOD(name)          \
  Tensor name(const Tensor& other) const;        \
  Tensor name(const Scalar& other) const;
  KILN_TENSOR_BINARY_METHOD(mul) KILN_TENSOR_BINARY_METHOD(div) KILN_TENSOR_BINARY_METHOD(remainder)
  KILN_TENSOR_BINARY_METHOD(fmod) KILN_TENSOR_BINARY_METHOD(pow) KILN_TENSOR_BINARY_METHOD(atan2)
  KILN_TENSOR_BINARY_METHOD(hypot) KILN_TENSOR_BINARY_METHOD(copysign) KILN_TENSOR_BINARY_METHOD(maximum)
  KILN_TENSOR_BINARY_METHOD(minimum) KILN_TENSOR_BINARY_METHOD(fmax) KILN_TENSOR_BINARY_METHOD(fmin)
  KILN_TENSOR_BINARY_METHOD(eq) KILN_TENSOR_BINARY_METHOD(ne) KILN_TENSOR_BINARY_METHOD(lt)
  KILN_TENSOR_BINARY_METHOD(le) KILN_TENSOR_BINARY_METHOD(gt) KILN_TENSOR_BINARY_METHOD(ge)
  KILN_TENSOR_BINARY_METHOD(logical_and) KILN_TENSOR_BINARY_METHOD(logical_or)
  KILN_TENSOR_BINARY_METHOD(logical_xor) KILN_TENSOR_BINARY_METHOD(bitwise_and)
  KILN_TENSOR_BINARY_METHOD(bitwise_or) KILN_TENSOR_BINARY_METHOD(bitwise_xor)
  KILN_TENSOR_BINARY_METHOD(bitwise_left_shift) KILN_TENSOR_BINARY_METHOD(bitwise_right_shift)
  KILN_TENSOR_BINARY_METHOD(floor_divide)
#undef KILN_TENSOR_BINARY_METHOD
  Tensor add(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor add(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor sub(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor sub(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor div(const Tensor& other, std::optional<std::string_view> rounding_mode) const;
  Tensor div(const Scalar& other, std::optional<std::string_view> rounding_mode) const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor clamp(const std::optional<Tensor>& min, const std::optional<Tensor>& max = std::nullopt) const;
  Tensor clamp_min(const Scalar& min) const { return clamp(min, std::nullopt); }
  Tensor clamp_max(const Scalar& max) const { return clamp(std::nullopt, max); }

  // In-place forms: compute out of place, then copy into this tensor (dtype must hold it).
  Tensor& add_(const Tensor& other, const Scalar& alpha = 1);
  Tensor& add_(const Scalar& other, const Scalar& alpha = 1);
  Tensor& sub_(const Tensor& other, const Scalar& alpha = 1);
  Tensor& sub_(const Scalar& other, const Scalar& alpha = 1);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(const Scalar& other);
  Tensor& div_(const Tensor& other);
  Tensor& div_(const Scalar& other);

  // In-place unary forms (x.relu_(), x.exp_()): computed out of place and copied in (the result's
  // dtype must cast to this tensor's).
#define KILN_TENSOR_UNARY_INPLACE_METHOD(name) Tensor& name##_();
  KILN_TENSOR_UNARY_INPLACE_METHOD(abs) KILN_TENSOR_UNARY_INPLACE_METHOD(neg) KILN_TENSOR_UNARY_INPLACE_METHOD(exp)
  KILN_TENSOR_UNARY_INPLACE_METHOD(log) KILN_TENSOR_UNARY_INPLACE_METHOD(log1p) KILN_TENSOR_UNARY_INPLACE_METHOD(expm1)
  KILN_TENSOR_UNARY_INPLACE_METHOD(sqrt) KILN_TENSOR_UNARY_INPLACE_METHOD(rsqrt) KILN_TENSOR_UNARY_INPLACE_METHOD(reciprocal)
  KILN_TENSOR_UNARY_INPLACE_METHOD(sin) KILN_TENSOR_UNARY_INPLACE_METHOD(cos) KILN_TENSOR_UNARY_INPLACE_METHOD(tanh)
  KILN_TENSOR_UNARY_INPLACE_METHOD(sigmoid) KILN_TENSOR_UNARY_INPLACE_METHOD(relu) KILN_TENSOR_UNARY_INPLACE_METHOD(erf)
  KILN_TENSOR_UNARY_INPLACE_METHOD(floor) KILN_TENSOR_UNARY_INPLACE_METHOD(ceil) KILN_TENSOR_UNARY_INPLACE_METHOD(round)
  KILN_TENSOR_UNARY_INPLACE_METHOD(trunc) KILN_TENSOR_UNARY_INPLACE_METHOD(square)
#undef KILN_TENSOR_UNARY_INPLACE_METHOD
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
  Tensor& clamp_min_(const Scalar& min);
  Tensor& clamp_max_(const Scalar& max);
  Tensor& pow_(const Scalar& exponent);
  Tensor& masked_fill_(const Tensor& mask, const Scalar& value);
  Tensor& masked_fill_(const Tensor& mask, const Tensor& value);
  Tensor& index_fill_(int64_t d, const Tensor& index, const Scalar& value);
  Tensor& index_fill_(int64_t d, const Tensor& index, const Tensor& value);
  Tensor& index_copy_(int64_t d, const Tensor& index, const Tensor& source);
  Tensor& index_reduce_(int64_t d, const Tensor& index, const Tensor& source, std::string_view reduce,
                        bool include_self = true);
  Tensor& put_(const Tensor& index, const Tensor& source, bool accumulate = false);
  Tensor& addbmm_(const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1, const Scalar& alpha = 1);
  Tensor& renorm_(const Scalar& p, int64_t d, const Scalar& maxnorm);
  Tensor& ldexp_(const Tensor& other);

  // ---- more of libtorch's methods, forwarding to the free functions (tensor_methods_library.cpp)
  Tensor masked_fill(const Tensor& mask, const Scalar& value) const;
  Tensor masked_fill(const Tensor& mask, const Tensor& value) const;
  Tensor where(const Tensor& condition, const Tensor& other) const;  // where(condition, *this, other)
  Tensor where(const Tensor& condition, const Scalar& other) const;
  Tensor lerp(const Tensor& end, const Scalar& weight) const;
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor addcmul(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1) const;
  Tensor addcdiv(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1) const;
  Tensor logit(std::optional<double> eps = std::nullopt) const;
  Tensor xlogy(const Tensor& other) const;
  Tensor xlogy(const Scalar& other) const;
  Tensor logaddexp(const Tensor& other) const;
  Tensor logaddexp2(const Tensor& other) const;
  Tensor isclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false) const;
  bool allclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false) const;
  bool equal(const Tensor& other) const;
  Tensor norm(const Scalar& p = 2) const;
  Tensor norm(const std::optional<Scalar>& p, IntArrayRef dims, bool keepdim = false) const;
  Tensor nansum(IntArrayRef dims = {}, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor nanmean(IntArrayRef dims = {}, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor count_nonzero(IntArrayRef dims = {}) const;
  std::tuple<Tensor, Tensor> aminmax(std::optional<int64_t> d = std::nullopt, bool keepdim = false) const;
  Tensor logsumexp(IntArrayRef dims, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> max(int64_t d, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> min(int64_t d, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> sort(int64_t d = -1, bool descending = false) const;
  Tensor argsort(int64_t d = -1, bool descending = false) const;
  std::tuple<Tensor, Tensor> topk(int64_t k, int64_t d = -1, bool largest = true, bool sorted = true) const;
  Tensor dot(const Tensor& other) const;
  Tensor vdot(const Tensor& other) const;
  Tensor mv(const Tensor& vec) const;
  Tensor outer(const Tensor& vec2) const;
  Tensor ger(const Tensor& vec2) const;
  Tensor addmm(const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor addmv(const Tensor& mat, const Tensor& vec, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor addr(const Tensor& vec1, const Tensor& vec2, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor diag(int64_t diagonal = 0) const;
  Tensor diag_embed(int64_t offset = 0, int64_t d1 = -2, int64_t d2 = -1) const;
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;
  Tensor rot90(int64_t k = 1, IntArrayRef dims = {0, 1}) const;
  Tensor flip(IntArrayRef dims) const;
  Tensor roll(IntArrayRef shifts, IntArrayRef dims = {}) const;
  Tensor repeat(IntArrayRef repeats) const;
  Tensor swapaxes(int64_t axis0, int64_t axis1) const;
  Tensor swapdims(int64_t dim0, int64_t dim1) const;
  Tensor moveaxis(int64_t source, int64_t destination) const;
  std::vector<Tensor> tensor_split(int64_t sections, int64_t d = 0) const;
  std::vector<Tensor> tensor_split(IntArrayRef indices, int64_t d = 0) const;
  Tensor nonzero() const;
  Tensor masked_select(const Tensor& mask) const;
  Tensor index_add(int64_t d, const Tensor& index, const Tensor& source, const Scalar& alpha = 1) const;
  Tensor index_fill(int64_t d, const Tensor& index, const Scalar& value) const;
  Tensor index_fill(int64_t d, const Tensor& index, const Tensor& value) const;
  Tensor index_copy(int64_t d, const Tensor& index, const Tensor& source) const;
  Tensor index_reduce(int64_t d, const Tensor& index, const Tensor& source, std::string_view reduce,
                      bool include_self = true) const;
  Tensor take(const Tensor& index) const;
  Tensor put(const Tensor& index, const Tensor& source, bool accumulate = false) const;
  Tensor cross(const Tensor& other, std::optional<int64_t> d = std::nullopt) const;
  Tensor diagflat(int64_t offset = 0) const;
  Tensor matrix_power(int64_t n) const;
  Tensor addbmm(const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor cov(int64_t correction = 1, const std::optional<Tensor>& fweights = std::nullopt,
             const std::optional<Tensor>& aweights = std::nullopt) const;
  Tensor corrcoef() const;
  Tensor quantile(const Tensor& q, std::optional<int64_t> d = std::nullopt, bool keepdim = false,
                  std::string_view interpolation = "linear") const;
  Tensor quantile(double q, std::optional<int64_t> d = std::nullopt, bool keepdim = false,
                  std::string_view interpolation = "linear") const;
  Tensor nanquantile(const Tensor& q, std::optional<int64_t> d = std::nullopt, bool keepdim = false,
                     std::string_view interpolation = "linear") const;
  Tensor nanquantile(double q, std::optional<int64_t> d = std::nullopt, bool keepdim = false,
                     std::string_view interpolation = "linear") const;
  Tensor histc(int64_t bins = 100, const Scalar& min = 0, const Scalar& max = 0) const;
  Tensor bincount(const std::optional<Tensor>& weights = std::nullopt, int64_t minlength = 0) const;
  Tensor renorm(const Scalar& p, int64_t d, const Scalar& maxnorm) const;
  Tensor ldexp(const Tensor& other) const;
  Tensor type_as(const Tensor& other) const;  // to(other's dtype and device)
  // New tensors with this one's dtype and device unless `opts` says otherwise.
  Tensor new_zeros(IntArrayRef size, TensorOptions opts = {}) const;
  Tensor new_ones(IntArrayRef size, TensorOptions opts = {}) const;
  Tensor new_full(IntArrayRef size, const Scalar& value, TensorOptions opts = {}) const;
  Tensor new_empty(IntArrayRef size, TensorOptions opts = {}) const;

  // ---- reductions, scans ------------------------------------------------------------------
  Tensor sum(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor sum(IntArrayRef dims, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor prod(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor prod(int64_t d, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(IntArrayRef dims, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor amax(IntArrayRef dims = {}, bool keepdim = false) const;
  Tensor amin(IntArrayRef dims = {}, bool keepdim = false) const;
  Tensor max() const;
  Tensor min() const;
  Tensor argmax(std::optional<int64_t> d = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> d = std::nullopt, bool keepdim = false) const;
  Tensor any() const;
  Tensor any(int64_t d, bool keepdim = false) const;
  Tensor all() const;
  Tensor all(int64_t d, bool keepdim = false) const;
  // var/std over every dim take exactly `bool` (a template), so that a braced dim list
  // (`x.var({1})`) selects the dims overload instead of converting 1 to `unbiased`.
  // (No default template argument: it would be used when {1} leaves Bool undeduced.)
  Tensor var() const { return var(true); }
  template <typename Bool, std::enable_if_t<std::is_same_v<Bool, bool>, int> = 0>
  Tensor var(Bool unbiased) const {
    return var(IntArrayRef{}, Scalar(int64_t{unbiased ? 1 : 0}));
  }
  Tensor var(IntArrayRef dims, const std::optional<Scalar>& correction = std::nullopt, bool keepdim = false) const;
  Tensor std() const { return std(true); }
  template <typename Bool, std::enable_if_t<std::is_same_v<Bool, bool>, int> = 0>
  Tensor std(Bool unbiased) const {
    return std(IntArrayRef{}, Scalar(int64_t{unbiased ? 1 : 0}));
  }
  Tensor std(IntArrayRef dims, const std::optional<Scalar>& correction = std::nullopt, bool keepdim = false) const;
  Tensor softmax(int64_t d, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor log_softmax(int64_t d, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor cumsum(int64_t d, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor cumprod(int64_t d, std::optional<ScalarType> dtype = std::nullopt) const;

  // ---- indexing, matmul -------------------------------------------------------------------
  Tensor gather(int64_t d, const Tensor& index) const;
  Tensor scatter(int64_t d, const Tensor& index, const Tensor& src) const;
  Tensor scatter(int64_t d, const Tensor& index, const Scalar& value) const;
  Tensor scatter_add(int64_t d, const Tensor& index, const Tensor& src) const;
  Tensor index_select(int64_t d, const Tensor& index) const;
  Tensor mm(const Tensor& other) const;
  Tensor bmm(const Tensor& other) const;
  Tensor matmul(const Tensor& other) const;

  // ---- printing -----------------------------------------------------------------------------
  std::string str() const;  // PyTorch's repr: tensor([1., 2.], dtype=torch.float64)
  std::string toString() const;  // "CPUFloatType" as libtorch names the type

 private:
  // copy_ without the internal-overlap check (fill_ may write into expanded tensors).
  Tensor& assign_(const Tensor& src);
  IntrusivePtr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

using TensorList = std::vector<Tensor>;

}  // namespace kiln
