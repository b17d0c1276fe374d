// kiln/frontend/tensor_methods_library.cpp — more of libtorch's Tensor methods: masked_fill,
// where, lerp, norms, sorting, the vector and matrix products, grids and views, positional
// fills and copies, statistics, and the new_* factories,
// each forwarding to its free function (frontend/ops*.h), so that code written against at::Tensor
// ports by changing the namespace.
#include "frontend/ops.h"
#include "frontend/ops_factory.h"
#include "frontend/ops_linear.h"
#include "frontend/ops_moments.h"
#include "frontend/ops_sort.h"
#include "frontend/ops_moments_statistics.h"
#include "frontend/ops_view.h"
#include "frontend/tensor.h"

#include <tuple>
#include <vector>

namespace kiln {

namespace {

// opts with this tensor's dtype and device where it names none.
TensorOptions like(const Tensor& self, TensorOptions opts) {
  if (!opts.dtype_) opts.dtype_ = self.dtype();
  if (!opts.device_) opts.device_ = self.device();
  return opts;
}

}  // namespace

Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& value) const { return kiln::masked_fill(*this, mask, value); }
Tensor Tensor::masked_fill(const Tensor& mask, const Tensor& value) const { return kiln::masked_fill(*this, mask, value); }
Tensor Tensor::where(const Tensor& condition, const Tensor& other) const { return kiln::where(condition, *this, other); }
Tensor Tensor::where(const Tensor& condition, const Scalar& other) const { return kiln::where(condition, *this, other); }
Tensor Tensor::lerp(const Tensor& end, const Scalar& weight) const { return kiln::lerp(*this, end, weight); }
Tensor Tensor::lerp(const Tensor& end, const Tensor& weight) const { return kiln::lerp(*this, end, weight); }
Tensor Tensor::addcmul(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) const {
  return kiln::addcmul(*this, tensor1, tensor2, value);
}
Tensor Tensor::addcdiv(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) const {
  return kiln::addcdiv(*this, tensor1, tensor2, value);
}
Tensor Tensor::logit(std::optional<double> eps) const { return kiln::logit(*this, eps); }
Tensor Tensor::xlogy(const Tensor& other) const { return kiln::xlogy(*this, other); }
Tensor Tensor::xlogy(const Scalar& other) const { return kiln::xlogy(*this, other); }
Tensor Tensor::logaddexp(const Tensor& other) const { return kiln::logaddexp(*this, other); }
Tensor Tensor::logaddexp2(const Tensor& other) const { return kiln::logaddexp2(*this, other); }
Tensor Tensor::isclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return kiln::isclose(*this, other, rtol, atol, equal_nan);
}
bool Tensor::allclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return kiln::allclose(*this, other, rtol, atol, equal_nan);
}
bool Tensor::equal(const Tensor& other) const { return kiln::equal(*this, other); }

Tensor Tensor::norm(const Scalar& p) const { return kiln::norm(*this, p); }
Tensor Tensor::norm(const std::optional<Scalar>& p, IntArrayRef dims, bool keepdim) const {
  return kiln::norm(*this, p, dims, keepdim);
}
Tensor Tensor::nansum(IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) const {
  return kiln::nansum(*this, dims, keepdim, dtype);
}
Tensor Tensor::nanmean(IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) const {
  return kiln::nanmean(*this, dims, keepdim, dtype);
}
Tensor Tensor::count_nonzero(IntArrayRef dims) const { return kiln::count_nonzero(*this, dims); }
std::tuple<Tensor, Tensor> Tensor::aminmax(std::optional<int64_t> d, bool keepdim) const {
  return kiln::aminmax(*this, d, keepdim);
}
Tensor Tensor::logsumexp(IntArrayRef dims, bool keepdim) const { return kiln::logsumexp(*this, dims, keepdim); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t d, bool keepdim) const { return kiln::max(*this, d, keepdim); }
std::tuple<Tensor, Tensor> Tensor::min(int64_t d, bool keepdim) const { return kiln::min(*this, d, keepdim); }
std::tuple<Tensor, Tensor> Tensor::sort(int64_t d, bool descending) const { return kiln::sort(*this, d, descending); }
Tensor Tensor::argsort(int64_t d, bool descending) const { return kiln::argsort(*this, d, descending); }
std::tuple<Tensor, Tensor> Tensor::topk(int64_t k, int64_t d, bool largest, bool sorted) const {
  return kiln::topk(*this, k, d, largest, sorted);
}

Tensor Tensor::dot(const Tensor& other) const { return kiln::dot(*this, other); }
Tensor Tensor::vdot(const Tensor& other) const { return kiln::vdot(*this, other); }
Tensor Tensor::mv(const Tensor& vec) const { return kiln::mv(*this, vec); }
Tensor Tensor::outer(const Tensor& vec2) const { return kiln::outer(*this, vec2); }
Tensor Tensor::ger(const Tensor& vec2) const { return kiln::ger(*this, vec2); }
Tensor Tensor::addmm(const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha) const {
  return kiln::addmm(*this, mat1, mat2, beta, alpha);
}
Tensor Tensor::addmv(const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) const {
  return kiln::addmv(*this, mat, vec, beta, alpha);
}
Tensor Tensor::addr(const Tensor& vec1, const Tensor& vec2, const Scalar& beta, const Scalar& alpha) const {
  return kiln::addr(*this, vec1, vec2, beta, alpha);
}

Tensor Tensor::diag(int64_t diagonal) const { return kiln::diag(*this, diagonal); }
Tensor Tensor::diag_embed(int64_t offset, int64_t d1, int64_t d2) const { return kiln::diag_embed(*this, offset, d1, d2); }
Tensor Tensor::tril(int64_t diagonal) const { return kiln::tril(*this, diagonal); }
Tensor Tensor::triu(int64_t diagonal) const { return kiln::triu(*this, diagonal); }
Tensor Tensor::rot90(int64_t k, IntArrayRef dims) const { return kiln::rot90(*this, k, dims); }
Tensor Tensor::flip(IntArrayRef dims) const { return kiln::flip(*this, dims); }
Tensor Tensor::roll(IntArrayRef shifts, IntArrayRef dims) const { return kiln::roll(*this, shifts, dims); }
Tensor Tensor::repeat(IntArrayRef repeats) const { return kiln::repeat(*this, repeats); }
Tensor Tensor::swapaxes(int64_t axis0, int64_t axis1) const { return kiln::swapaxes(*this, axis0, axis1); }
Tensor Tensor::swapdims(int64_t dim0, int64_t dim1) const { return kiln::swapdims(*this, dim0, dim1); }
Tensor Tensor::moveaxis(int64_t source, int64_t destination) const { return kiln::moveaxis(*this, source, destination); }
std::vector<Tensor> Tensor::tensor_split(int64_t sections, int64_t d) const { return kiln::tensor_split(*this, sections, d); }
std::vector<Tensor> Tensor::tensor_split(IntArrayRef indices, int64_t d) const { return kiln::tensor_split(*this, indices, d); }
Tensor Tensor::nonzero() const { return kiln::nonzero(*this); }
Tensor Tensor::masked_select(const Tensor& mask) const { return kiln::masked_select(*this, mask); }
Tensor Tensor::index_add(int64_t d, const Tensor& index, const Tensor& source, const Scalar& alpha) const {
  return kiln::index_add(*this, d, index, source, alpha);
}
Tensor Tensor::type_as(const Tensor& other) const { return to(other.options()); }

Tensor Tensor::new_zeros(IntArrayRef size, TensorOptions opts) const { return kiln::zeros(size, like(*this, opts)); }
Tensor Tensor::new_ones(IntArrayRef size, TensorOptions opts) const { return kiln::ones(size, like(*this, opts)); }
Tensor Tensor::new_full(IntArrayRef size, const Scalar& value, TensorOptions opts) const {
  return kiln::full(size, value, like(*this, opts));
}
Tensor Tensor::new_empty(IntArrayRef size, TensorOptions opts) const { return kiln::empty(size, like(*this, opts)); }

Tensor Tensor::index_fill(int64_t d, const Tensor& index, const Scalar& value) const {
  return kiln::index_fill(*this, d, index, value);
}
Tensor Tensor::index_fill(int64_t d, const Tensor& index, const Tensor& value) const {
  return kiln::index_fill(*this, d, index, value);
}
Tensor Tensor::index_copy(int64_t d, const Tensor& index, const Tensor& source) const {
  return kiln::index_copy(*this, d, index, source);
}
Tensor Tensor::index_reduce(int64_t d, const Tensor& index, const Tensor& source, std::string_view reduce,
                            bool include_self) const {
  return kiln::index_reduce(*this, d, index, source, reduce, include_self);
}
Tensor Tensor::take(const Tensor& index) const { return kiln::take(*this, index); }
Tensor Tensor::put(const Tensor& index, const Tensor& source, bool accumulate) const {
  return kiln::put(*this, index, source, accumulate);
}
Tensor Tensor::cross(const Tensor& other, std::optional<int64_t> d) const { return kiln::cross(*this, other, d); }
Tensor Tensor::diagflat(int64_t offset) const { return kiln::diagflat(*this, offset); }
Tensor Tensor::matrix_power(int64_t n) const { return kiln::matrix_power(*this, n); }
Tensor Tensor::addbmm(const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) const {
  return kiln::addbmm(*this, batch1, batch2, beta, alpha);
}
Tensor Tensor::cov(int64_t correction, const std::optional<Tensor>& fweights, const std::optional<Tensor>& aweights) const {
  return kiln::cov(*this, correction, fweights, aweights);
}
Tensor Tensor::corrcoef() const { return kiln::corrcoef(*this); }
Tensor Tensor::quantile(const Tensor& q, std::optional<int64_t> d, bool keepdim, std::string_view interpolation) const {
  return kiln::quantile(*this, q, d, keepdim, interpolation);
}
Tensor Tensor::quantile(double q, std::optional<int64_t> d, bool keepdim, std::string_view interpolation) const {
  return kiln::quantile(*this, q, d, keepdim, interpolation);
}
Tensor Tensor::nanquantile(const Tensor& q, std::optional<int64_t> d, bool keepdim, std::string_view interpolation) const {
  return kiln::nanquantile(*this, q, d, keepdim, interpolation);
}
Tensor Tensor::nanquantile(double q, std::optional<int64_t> d, bool keepdim, std::string_view interpolation) const {
  return kiln::nanquantile(*this, q, d, keepdim, interpolation);
}
Tensor Tensor::histc(int64_t bins, const Scalar& min, const Scalar& max) const { return kiln::histc(*this, bins, min, max); }
Tensor Tensor::bincount(const std::optional<Tensor>& weights, int64_t minlength) const {
  return kiln::bincount(*this, weights, minlength);
}
Tensor Tensor::renorm(const Scalar& p, int64_t d, const Scalar& maxnorm) const { return kiln::renorm(*this, p, d, maxnorm); }
Tensor Tensor::ldexp(const Tensor& other) const { return kiln::ldexp(*this, other); }

}  // namespace kiln
