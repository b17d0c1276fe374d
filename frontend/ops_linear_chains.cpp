// kiln/frontend/ops_linear_chains.cpp — products of several matrices (frontend/ops_linear.h):
// linalg_multi_dot and chain_matmul, linalg_matrix_power (matrix_power), and addbmm.
//
// Each checks what PyTorch 2.15 checks, in its order and with its wording (measured against
// torch), then records matrix products that already exist, in the order ATen multiplies:
//   multi_dot     the cheapest parenthesization by the classic dynamic program over the chain's
//                 sizes (ATen's matrix_chain_order, ties to the first split), a 1-D first or last
//                 operand read as a row or a column;
//   matrix_power  n = 0 is the identity, 1 a copy, 2 and 3 products from the left, and past that
//                 ATen's binary ladder (squares from the lowest bit, each set bit multiplied into
//                 the result). A negative n needs the inverse, which kiln does not have: an error;
//   addbmm        beta * self + alpha * sum_b batch1[b] @ batch2[b], one addmm whose inner dim
//                 runs over the batches and K together (ATen accumulates one addmm per batch,
//                 so the sums round differently: about 1e-6 relative in f32).
// Sizes are read as integers (a symbolic size is pinned by a guard).
#include "frontend/ops_linear.h"

#include "base/error.h"
#include "frontend/arg_checks.h"
#include "frontend/ops.h"
#include "frontend/ops_factory.h"
#include "frontend/ops_view.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace kiln {

namespace {

// a * b, or INT64_MAX past it (a cost only compares).
int64_t saturating_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max() : r;
}

int64_t saturating_add(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max() : r;
}

// split[i][j]: where the cheapest product of matrices i..j splits (ATen's matrix_chain_order).
std::vector<std::vector<size_t>> chain_order(const std::vector<Tensor>& m) {
  const size_t n = m.size();
  std::vector<int64_t> p(n + 1);  // matrix i is p[i] x p[i + 1]
  for (size_t i = 0; i < n; ++i) p[i] = m[i].size(0);
  p[n] = m[n - 1].size(1);
  std::vector<std::vector<int64_t>> cost(n, std::vector<int64_t>(n, 0));
  std::vector<std::vector<size_t>> split(n, std::vector<size_t>(n, 0));
  for (size_t len = 1; len < n; ++len)
    for (size_t i = 0; i + len < n; ++i) {
      const size_t j = i + len;
      cost[i][j] = std::numeric_limits<int64_t>::max();
      for (size_t k = i; k < j; ++k) {
        const int64_t q = saturating_add(saturating_add(cost[i][k], cost[k + 1][j]),
                                         saturating_mul(saturating_mul(p[i], p[k + 1]), p[j + 1]));
        if (q < cost[i][j]) {
          cost[i][j] = q;
          split[i][j] = k;
        }
      }
    }
  return split;
}

Tensor chain_product(const std::vector<Tensor>& m, const std::vector<std::vector<size_t>>& split, size_t i, size_t j) {
  if (i == j) return m[i];
  return mm(chain_product(m, split, i, split[i][j]), chain_product(m, split, split[i][j] + 1, j));
}

}  // namespace

Tensor linalg_multi_dot(const std::vector<Tensor>& tensors) {
  constexpr std::string_view op = "multi_dot";
  const size_t n = tensors.size();
  if (n < 2) fail(op, "multi_dot(): expected at least 2 tensors but got {}", n);
  std::vector<Tensor> m(tensors);
  std::vector<int64_t> out_shape;
  const Tensor &first = tensors.front(), &last = tensors.back();
  if (first.dim() == 1)
    m.front() = first.unsqueeze(0);
  else if (first.dim() == 2)
    out_shape.push_back(first.size(0));
  else
    fail(op, "multi_dot(): the first tensor must be 1D or 2D but got {}D", first.dim());
  if (last.dim() == 1)
    m.back() = last.unsqueeze(-1);
  else if (last.dim() == 2)
    out_shape.push_back(last.size(1));
  else
    fail(op, "multi_dot(): the last tensor must be 1D or 2D but got {}D", last.dim());
  for (size_t i = 1; i + 1 < n; ++i)
    if (tensors[i].dim() != 2) fail(op, "multi_dot(): tensor {} must be 2D but got {}D", i, tensors[i].dim());
  for (size_t i = 1; i < n; ++i) {
    if (m[i].dtype() != m[0].dtype())
      fail(op, "multi_dot(): all tensors must have be the same dtype but tensor 0 is {} and tensor {} {}",
           cpp_type_name(m[0].dtype()), i, cpp_type_name(m[i].dtype()));
    if (m[i].device() != m[0].device())
      fail(op, "multi_dot(): all tensors must be on the same device but tensor 0 is on {} and tensor {} on {}",
           m[0].device().str(), i, m[i].device().str());
    if (m[i - 1].size(-1) != m[i].size(0))
      fail(op, "multi_dot(): tensors {} and {} with shapes {} and {} cannot be multiplied", i - 1, i,
           shape_str(tensors[i - 1].sizes()), shape_str(tensors[i].sizes()));
  }
  Tensor result;
  if (n == 2) {
    result = mm(m[0], m[1]);
  } else if (n == 3) {  // ATen's closed form for three: (a x b)(b x c)(c x d)
    const int64_t a = m[0].size(0), b = m[1].size(0), c = m[2].size(0), d = m[2].size(1);
    const int64_t left = saturating_mul(saturating_mul(a, c), saturating_add(b, d));
    const int64_t right = saturating_mul(saturating_mul(b, d), saturating_add(a, c));
    result = left > right ? mm(m[0], mm(m[1], m[2])) : mm(mm(m[0], m[1]), m[2]);
  } else {
    result = chain_product(m, chain_order(m), 0, n - 1);
  }
  return result.reshape(out_shape);
}

Tensor chain_matmul(const std::vector<Tensor>& matrices) {
  for (const Tensor& m : matrices)
    if (m.dim() != 2) fail("chain_matmul", "Tensor dimension is {}, expected 2 instead.", m.dim());
  if (matrices.empty()) fail("chain_matmul", "chain_matmul(): Expected one or more matrices");
  if (matrices.size() == 1) return matrices[0].clone();
  return linalg_multi_dot(matrices);
}

Tensor linalg_matrix_power(const Tensor& self, int64_t n) {
  constexpr std::string_view op = "linalg.matrix_power";
  if (self.dim() < 2) fail(op, "linalg.matrix_power: The input tensor A must have at least 2 dimensions.");
  if (self.size(-1) != self.size(-2))
    fail(op, "linalg.matrix_power: A must be batches of square matrices, but they are {} by {} matrices", self.size(-2),
         self.size(-1));
  if (n == 0) {  // the identity, selected over self so that self's gradient is 0, not missing
    const Tensor identity = eye(self.size(-2), self.size(-1), self.options());
    return where(zeros({}, TensorOptions(ScalarType::Bool).device(self.device())), self, identity);
  }
  if (n < 0)
    fail(op,
         "linalg.matrix_power: a negative power ({}) needs the matrix inverse (linalg.inv), which kiln does not "
         "have; raise the inverse to -n yourself",
         n);
  if (n == 1) return self.clone();
  if (n == 2) return matmul(self, self);
  if (n == 3) return matmul(matmul(self, self), self);
  // The binary ladder from the lowest bit: z runs through A, A^2, A^4, ...; a set bit multiplies
  // z into the result.
  Tensor z, result;
  for (uint64_t rest = static_cast<uint64_t>(n); rest > 0; rest >>= 1) {
    z = z.defined() ? matmul(z, z) : self;
    if (rest & 1) result = result.defined() ? matmul(result, z) : z;
  }
  return result;
}

Tensor matrix_power(const Tensor& self, int64_t n) { return linalg_matrix_power(self, n); }

Tensor addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) {
  constexpr std::string_view op = "addbmm";
  // PyTorch expands self to the result's shape first, so its errors come before the checks.
  const Tensor addend = self.expand({batch1.size(1), batch2.size(2)});
  if (batch1.dim() != 3) fail(op, "batch1 must be a 3D tensor");
  if (batch2.dim() != 3) fail(op, "batch2 must be a 3D tensor");
  if (batch1.size(0) != batch2.size(0))
    fail(op, "batch1 and batch2 must have same number of batches, got {} and {}", batch1.size(0), batch2.size(0));
  if (batch1.size(2) != batch2.size(1))
    fail(op, "Incompatible matrix sizes for bmm ({}x{} and {}x{})", batch1.size(1), batch1.size(2), batch2.size(1),
         batch2.size(2));
  const int64_t batches = batch1.size(0), rows = batch1.size(1), inner = batch1.size(2), cols = batch2.size(2);
  int64_t k = 0;
  if (__builtin_mul_overflow(batches, inner, &k))
    fail(op, "{} batches of inner size {} make more than 2^63 products", batches, inner);
  // [B, n, K] -> [n, B K] and [B, K, m] -> [B K, m]: the batches and K are one inner dim.
  const Tensor lhs = batch1.permute({1, 0, 2}).reshape({rows, k}), rhs = batch2.reshape({k, cols});
  return addmm(addend, lhs, rhs, beta, alpha);
}

}  // namespace kiln
