// kiln/frontend/derivatives_reduction.cpp — the Reduction family's derivatives (frontend/derivatives.h).
//
//   sum   g broadcast back over the reduced dims;
//   prod  g times the product of the other elements of each slice, computed without dividing
//         (the exclusive products from both ends, cumprod over the flattened reduced dims), so
//         that zeros in the input give PyTorch's gradients;
//   amax, amin  g shared evenly among the elements equal to the extreme, as PyTorch does.
// any, all, argmax and argmin have none (bool and index results).
#include "frontend/derivatives_detail.h"
#include "ir/shape_env.h"

#include <numeric>

namespace kiln::autograd {

namespace {

using ir::OpKind;

const std::vector<int64_t>& dims_of(const GradArgs& a) { return a.attr<std::vector<int64_t>>("dims"); }
bool keepdim_of(const GradArgs& a) { return a.attr<bool>("keepdim"); }

std::vector<Tensor> d_sum(const GradArgs& a) {
  return one(expand_reduced(a.grad(), a.meta(0), dims_of(a), keepdim_of(a)));
}

std::vector<Tensor> d_extreme(const GradArgs& a) {
  const Tensor& x = a.in(0);
  const std::vector<int64_t>& dims = dims_of(a);
  const Tensor y = expand_reduced(a.out(0), a.meta(0), dims, keepdim_of(a));
  const Tensor hit = eq(x, y).to(x.dtype());
  const Tensor count = dims.empty() ? hit : sum(hit, dims, /*keepdim=*/true);
  return one(expand_reduced(a.grad(), a.meta(0), dims, keepdim_of(a)) * hit / count);
}

// The product of every other element of each slice along the last dim, exclusive of itself
// (slices with no elements have none: x itself, empty).
Tensor exclusive_products(const Tensor& x) {
  const int64_t last = x.dim() - 1;
  if (ir::sym_eq(sym_size(x, last), ir::Expr(0))) return x;  // also s0 - 2 at s0 = 2
  std::vector<ir::Expr> one_size = sym_sizes(x);
  one_size.back() = 1;
  const Tensor ones = sym_full(one_size, 1, x.dtype(), x.device());
  // before[i] = x[0] * ... * x[i-1]; after[i] = x[i+1] * ... * x[n-1] (x[:-1] and x[1:], which
  // keep a symbolic size symbolic)
  const Tensor head = x.slice(last, 0, -1);
  const Tensor before = cat({ones, cumprod(head, last)}, last);
  const Tensor tail = x.slice(last, 1);
  const Tensor after = cat({flip(cumprod(flip(tail, {last}), last), {last}), ones}, last);
  return before * after;
}

std::vector<Tensor> d_prod(const GradArgs& a) {
  const Tensor& x = a.in(0);
  const std::vector<int64_t>& dims = dims_of(a);
  const TensorMeta& m = a.meta(0);
  if (dims.empty() || x.dim() == 0) return one(a.grad());
  // Reduced dims moved last and flattened into one.
  std::vector<int64_t> order, kept;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) kept.push_back(d);
  order = kept;
  order.insert(order.end(), dims.begin(), dims.end());
  std::vector<ir::Expr> flat;
  ir::Expr r = 1;
  for (int64_t d : kept) flat.push_back(m.sizes[static_cast<size_t>(d)]);
  for (int64_t d : dims) r = r * m.sizes[static_cast<size_t>(d)];
  flat.push_back(r);
  const Tensor moved = x.permute(order);
  const Tensor others = sym_reshape(exclusive_products(sym_reshape(moved.contiguous(), flat)), sym_sizes(moved));
  std::vector<int64_t> inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i) inverse[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
  return one(expand_reduced(a.grad(), m, dims, keepdim_of(a)) * others.permute(inverse));
}

}  // namespace

void add_reduction_derivatives(DerivativeTable& t) {
  t.rule(OpKind::sum, d_sum);
  t.rule(OpKind::prod, d_prod, bit(0));
  t.rule(OpKind::amax, d_extreme, bit(0), bit(0));
  t.rule(OpKind::amin, d_extreme, bit(0), bit(0));
  t.none(OpKind::any, "its result is bool");
  t.none(OpKind::all, "its result is bool");
  t.none(OpKind::argmax, "its result is an index");
  t.none(OpKind::argmin, "its result is an index");
}

}  // namespace kiln::autograd
