// kiln/frontend/ops_linear_products.cpp — the vector and tensor products of libtorch that record
// other ops (frontend/ops_linear.h): dot, vdot, mv, addmv, outer (ger), addr, tensordot, inner, kron,
// linalg_cross (cross).
//
// Each checks what PyTorch 2.15 checks, in its order and with its wording (measured against
// torch), then records ops that already exist: dot and mv are one matrix product, addmv is an
// addmm of a column, outer and kron are broadcast multiplies, tensordot is a permute, reshape
// and mm, and the cross product is three differences of products of its operands' components,
// stacked. So each is traced, compiled and differentiated through ops that have their own rules.
// Sizes are read as integers (a symbolic size is pinned by a guard), as einsum reads them.
#include "frontend/ops_linear.h"

#include "base/error.h"
#include "frontend/arg_checks.h"
#include "frontend/ops.h"
#include "frontend/ops_factory.h"
#include "frontend/ops_matmul.h"
#include "frontend/ops_view.h"
#include "frontend/promotion.h"

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <utility>
#include <string>
#include <vector>

namespace kiln {

namespace {

// dot and vdot: two 1-D tensors of one dtype and length.
void check_dot(std::string_view op, const Tensor& a, const Tensor& b) {
  if (a.dim() != 1 || b.dim() != 1)
    fail(op, "1D tensors expected, but got {}D and {}D tensors", a.dim(), b.dim());
  if (a.dtype() != b.dtype())
    fail(op, "dot : expected both vectors to have same dtype, but found {} and {}", c10_type_name(a.dtype()),
         c10_type_name(b.dtype()));
  if (a.size(0) != b.size(0))
    fail(op, "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of elements, but got "
             "{} and {} elements respectively",
         a.size(0), b.size(0), a.size(0), b.size(0));
  if (a.dtype() == ScalarType::Bool) fail(op, "\"dot\" not implemented for 'Bool'");  // vdot's too
}

// mv and addmv: self (the addend; mv's is the vector's dtype) of at most one dim, a matrix and a
// vector of one dtype whose sizes fit.
void check_mv(std::string_view op, const Tensor* self, const Tensor& mat, const Tensor& vec) {
  const int64_t self_dim = self ? self->dim() : 1;
  if (mat.dim() != 2 || vec.dim() != 1 || self_dim > 1)
    fail(op, "vector + matrix @ vector expected, got {}, {}, {}", self_dim, mat.dim(), vec.dim());
  const int64_t rows = mat.size(0), cols = mat.size(1);
  const bool self_fits = !self || self->dim() == 0 || self->size(0) == rows || self->size(0) == 1;
  if (cols != vec.size(0) || !self_fits)
    fail(op, "size mismatch, got input ({}), mat ({}x{}), vec ({})", self && self->dim() == 1 ? self->size(0) : rows,
         rows, cols, vec.size(0));
  const ScalarType self_dt = self ? self->dtype() : vec.dtype();
  if (self_dt != mat.dtype() || mat.dtype() != vec.dtype())
    fail(op, "addmv input tensors must have the same dtype, but got {}, {}, and {}", c10_type_name(self_dt),
         c10_type_name(mat.dtype()), c10_type_name(vec.dtype()));
  if (mat.dtype() == ScalarType::Bool) fail(op, "\"addmv_impl_cpu\" not implemented for 'Bool'");
}

void check_vector(std::string_view op, const char* name, const Tensor& v) {
  if (v.dim() != 1) fail(op, "{}: Expected 1-D argument {}, but got {}-D", op, name, v.dim());
}

// The dims of `t`, normalized.
std::vector<int64_t> contracted_dims(std::string_view op, const Tensor& t, IntArrayRef dims) {
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(normalize_dim(op, d, t.dim()));
  return out;
}

// Each dim at most once (checked after the sizes, as PyTorch does).
void check_distinct(std::string_view op, const std::vector<int64_t>& dims) {
  for (size_t i = 0; i < dims.size(); ++i)
    if (std::find(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(i), dims[i]) != dims.begin() + static_cast<std::ptrdiff_t>(i))
      fail(op, "dim {} appears multiple times in the list of dims", dims[i]);
}

}  // namespace

Tensor dot(const Tensor& self, const Tensor& other) {
  check_dot("dot", self, other);
  return mm(self.unsqueeze(0), other.unsqueeze(1)).reshape({});
}

Tensor vdot(const Tensor& self, const Tensor& other) {
  check_dot("vdot", self, other);
  return mm(self.unsqueeze(0), other.unsqueeze(1)).reshape({});  // real tensors: no conjugate
}

Tensor mv(const Tensor& self, const Tensor& vec) {
  // PyTorch sizes the result from self.size(0) before its checks.
  if (self.dim() == 0) fail("mv", "Dimension specified as 0 but tensor has no dimensions");
  check_mv("mv", nullptr, self, vec);
  return mm(self, vec.unsqueeze(1)).squeeze(1);
}

Tensor addmv(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) {
  check_mv("addmv", &self, mat, vec);
  const Tensor column = (self.dim() == 0 ? self.reshape({1}) : self).unsqueeze(1);
  return addmm(column, mat, vec.unsqueeze(1), beta, alpha).squeeze(1);
}

Tensor outer(const Tensor& self, const Tensor& vec2) {
  check_vector("outer", "self", self);
  check_vector("outer", "vec2", vec2);
  return mul(self.unsqueeze(1), vec2);
}

Tensor ger(const Tensor& self, const Tensor& vec2) { return outer(self, vec2); }

// beta * self + alpha * outer(vec1, vec2) in the three operands' promoted dtype; beta = 0 drops
// self (NaN included); for bool, beta and alpha are truth values and + is `or`, as at::addr.
Tensor addr(const Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta, const Scalar& alpha) {
  check_vector("addr", "vec1", vec1);
  check_vector("addr", "vec2", vec2);
  const ScalarType dt = result_type({self, vec1, vec2});
  const Tensor addend = self.to(dt).expand({vec1.size(0), vec2.size(0)});
  // ATen's check of each scalar against the result's dtype, beta first.
  for (const auto& [value, name] : {std::pair<const Scalar&, const char*>{beta, "beta"}, {alpha, "alpha"}}) {
    if (value.is_bool() && dt != ScalarType::Bool) fail("addr", "Boolean {} only supported for Boolean results.", name);
    if (!is_floating_point(dt) && value.is_floating_point())
      fail("addr", "For integral input tensors, argument {} must not be a floating point number.", name);
  }
  const Tensor product = outer(vec1.to(dt), vec2.to(dt));
  if (dt == ScalarType::Bool) {
    const Tensor scaled = alpha.to_double() != 0 ? product : zeros_like(product);
    return beta.to_double() != 0 ? logical_or(addend, scaled) : scaled;
  }
  const Tensor scaled = alpha.to_double() == 1 ? product : mul(product, alpha);
  if (beta.to_double() == 0) return scaled;
  return add(beta.to_double() == 1 ? addend : mul(addend, beta), scaled);
}

// Contracts dims_self of self with dims_other of other (pairwise): the free dims of self, then
// those of other. A contracted size of 1 against a larger one sums the larger first, as PyTorch does.
Tensor tensordot(const Tensor& self, const Tensor& other, IntArrayRef dims_self, IntArrayRef dims_other) {
  constexpr std::string_view op = "tensordot";
  if (dims_self.size() != dims_other.size()) fail(op, "both dimension lists should have same length");
  if (self.dtype() != other.dtype()) fail(op, "both inputs should have same dtype");
  const std::vector<int64_t> ca = contracted_dims(op, self, dims_self), cb = contracted_dims(op, other, dims_other);
  Tensor a = self, b = other;
  for (size_t i = 0; i < ca.size(); ++i) {
    const int64_t sa = a.size(ca[i]), sb = b.size(cb[i]);
    if (sa == sb) continue;
    if (sa != 1 && sb != 1)
      fail(op, "contracted dimensions need to match, but first has size {} in dim {} and second has size {} in dim {}",
           sa, dims_self[i], sb, dims_other[i]);
    if (sa == 1) b = b.sum({cb[i]}, /*keepdim=*/true, b.dtype());  // in the operand's dtype, as ATen sums
    else a = a.sum({ca[i]}, /*keepdim=*/true, a.dtype());
  }
  check_distinct(op, ca);
  check_distinct(op, cb);
  std::vector<int64_t> perm_a, perm_b, out_sizes;
  int64_t free_a = 1, free_b = 1, inner = 1;
  for (int64_t d = 0; d < a.dim(); ++d)
    if (std::find(ca.begin(), ca.end(), d) == ca.end()) {
      perm_a.push_back(d);
      out_sizes.push_back(a.size(d));
      free_a *= a.size(d);
    }
  for (int64_t d : ca) {
    perm_a.push_back(d);
    inner *= a.size(d);
  }
  perm_b = cb;
  for (int64_t d = 0; d < b.dim(); ++d)
    if (std::find(cb.begin(), cb.end(), d) == cb.end()) {
      perm_b.push_back(d);
      out_sizes.push_back(b.size(d));
      free_b *= b.size(d);
    }
  const Tensor lhs = a.permute(perm_a).reshape({free_a, inner}), rhs = b.permute(perm_b).reshape({inner, free_b});
  return mm(lhs, rhs).reshape(out_sizes);
}

Tensor tensordot(const Tensor& self, const Tensor& other, int64_t dims) {
  if (dims < 0) fail("tensordot", "tensordot expects dims >= 0, but got dims={}", dims);
  if (dims > self.dim() || dims > other.dim())
    fail("tensordot", "tensordot expects dims < ndim_a or ndim_b, but got dims={}", dims);
  std::vector<int64_t> da(static_cast<size_t>(dims)), db(static_cast<size_t>(dims));
  std::iota(da.begin(), da.end(), -dims);  // self's last dims, named from the end as PyTorch names them
  std::iota(db.begin(), db.end(), 0);
  return tensordot(self, other, da, db);
}

Tensor inner(const Tensor& self, const Tensor& other) {
  if (self.dim() == 0 || other.dim() == 0) return mul(self, other);
  if (self.size(-1) != other.size(-1))
    fail("inner", "inner() the last dimension must match on both input tensors but got shapes {} and {}",
         shape_str(self.sizes()), shape_str(other.sizes()));
  return tensordot(self, other, {-1}, {-1});
}

// The Kronecker product: the operands' dims right-aligned (leading 1s), each pair of sizes
// (a, b) becoming a * b, a's index the slower.
Tensor kron(const Tensor& self, const Tensor& other) {
  const int64_t rank = std::max(self.dim(), other.dim());
  std::vector<int64_t> sa(static_cast<size_t>(rank - self.dim()), 1), sb(static_cast<size_t>(rank - other.dim()), 1);
  for (int64_t s : self.sizes()) sa.push_back(s);
  for (int64_t s : other.sizes()) sb.push_back(s);
  std::vector<int64_t> a_shape, b_shape, out;
  for (size_t d = 0; d < static_cast<size_t>(rank); ++d) {
    a_shape.insert(a_shape.end(), {sa[d], 1});
    b_shape.insert(b_shape.end(), {1, sb[d]});
    int64_t both = 0;
    if (__builtin_mul_overflow(sa[d], sb[d], &both))
      fail("kron", "the result's size {} x {} in dim {} does not fit in int64", sa[d], sb[d], d);
    out.push_back(both);
  }
  return mul(self.reshape(a_shape), other.reshape(b_shape)).reshape(out);
}

// The cross product along `dim`, whose size is 3 in both operands; the other dims broadcast.
// Component i is a[i+1] b[i+2] - a[i+2] b[i+1] (indices mod 3), in the operands' dtype. (ATen's
// f32/f64 kernel fuses the first product into the subtraction, so a result that cancels can
// differ from it by an ulp of the products.)
Tensor linalg_cross(const Tensor& self, const Tensor& other, int64_t dim) {
  constexpr std::string_view op = "linalg.cross";
  if (self.dim() != other.dim()) fail(op, "linalg.cross: inputs must have the same number of dimensions.");
  const int64_t d = normalize_dim(op, dim, self.dim(), /*allow_scalar=*/false);
  if (self.size(d) != 3 || other.size(d) != 3)
    fail(op, "linalg.cross: inputs dimension {} must have length 3. Got {} and {}", dim, self.size(d), other.size(d));
  const std::vector<int64_t> shape = broadcast_shapes(op, self.sizes(), other.sizes());
  if (self.dtype() != other.dtype())
    fail(op, "expected scalar type {} but found {}", c10_type_name(self.dtype()), c10_type_name(other.dtype()));
  if (self.dtype() == ScalarType::Bool) fail(op, "\"cross\" not implemented for 'Bool'");
  const Tensor a = self.expand(shape), b = other.expand(shape);
  std::vector<Tensor> parts;
  for (int64_t i = 0; i < 3; ++i) {
    const int64_t j = (i + 1) % 3, k = (i + 2) % 3;
    parts.push_back(sub(mul(a.select(d, j), b.select(d, k)), mul(a.select(d, k), b.select(d, j))));
  }
  return stack(parts, d);
}

// linalg_cross along `dim`, or along the first dim of size 3 when none is named.
Tensor cross(const Tensor& self, const Tensor& other, std::optional<int64_t> dim) {
  if (dim) return linalg_cross(self, other, *dim);
  for (int64_t d = 0; d < self.dim(); ++d)
    if (self.size(d) == 3) return linalg_cross(self, other, d);
  fail("cross", "no dimension of size 3 in input");
}

}  // namespace kiln
