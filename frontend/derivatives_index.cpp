// kiln/frontend/derivatives_index.cpp — the Index family's derivatives (frontend/derivatives.h).
//
//   gather        g added into zeros of self at the gathered positions (scatter_add);
//   scatter       self: g with the written positions zeroed; src: g read at them (gather);
//   scatter_add   self: g; src: g gathered;
//   index_select  g added into zeros at the selected rows (index_add);
//   scatter_reduce  by reduction, as PyTorch: sum passes g on; mean divides it by each
//                 position's count; amax/amin share it among the contributors equal to the
//                 result; prod gives each contributor the product of the others (counting zeros,
//                 so that no division by zero happens).
//   embedding     the embedding_dense_backward node (frontend/ops.h), which sums g by index.
// Index tensors get none. The other composite index ops (index, index_put, embedding_bag, ...)
// are differentiated through their decompositions onto these.
#include "frontend/derivatives_detail.h"
#include "frontend/symbolic.h"

namespace kiln::autograd {

namespace {

using ir::OpKind;

int64_t dim_of(const GradArgs& a) { return a.attr<int64_t>("dim"); }

std::vector<Tensor> d_gather(const GradArgs& a) {
  return {a.meta(0).zeros().scatter_add(dim_of(a), a.in(1), a.grad()), Tensor()};
}

std::vector<Tensor> d_scatter(const GradArgs& a) {
  const Tensor& idx = a.in(1);
  return {a.need(0) ? a.grad().scatter(dim_of(a), idx, Scalar(0.0)) : Tensor(), Tensor(),
          a.need(2) ? a.grad().gather(dim_of(a), idx) : Tensor()};
}

std::vector<Tensor> d_scatter_add(const GradArgs& a) {
  return {a.grad(), Tensor(), a.need(2) ? a.grad().gather(dim_of(a), a.in(1)) : Tensor()};
}

std::vector<Tensor> d_index_select(const GradArgs& a) {
  return {index_add(a.meta(0).zeros(), dim_of(a), a.in(1), a.grad()), Tensor()};
}

std::vector<Tensor> d_scatter_reduce(const GradArgs& a) {
  const int64_t d = dim_of(a);
  const Tensor& self = a.in(0);
  const Tensor& idx = a.in(1);
  const Tensor& src = a.in(2);
  const Tensor& y = a.out(0);
  const std::string& reduce = a.attr<std::string>("reduce");
  const bool include_self = a.attr<bool>("include_self");
  const Tensor g = a.grad();
  // Positions that received a value from src (self is excluded there when !include_self).
  const Tensor hit = a.meta(0).zeros().scatter(d, idx, Scalar(1.0));
  const Tensor self_counts = include_self ? ones_like(self) : (-hit + 1);
  Tensor gs, gsrc;
  if (reduce == "sum") {
    gs = g * self_counts;
    gsrc = g.gather(d, idx);
  } else if (reduce == "mean") {
    const Tensor count = self_counts.scatter_add(d, idx, ones_like(src));
    const Tensor per = g / where(eq(count, 0), Scalar(1.0), count);
    gs = per * self_counts;
    gsrc = per.gather(d, idx);
  } else if (reduce == "amax" || reduce == "amin") {
    const Tensor self_hit = eq(self, y).to(self.dtype()) * self_counts;
    const Tensor src_hit = eq(src, y.gather(d, idx)).to(src.dtype());
    const Tensor ties = self_hit.scatter_add(d, idx, src_hit);
    const Tensor per = g / where(eq(ties, 0), Scalar(1.0), ties);
    gs = per * self_hit;
    gsrc = per.gather(d, idx) * src_hit;
  } else if (reduce == "prod") {
    // Per position: the contributors' zero count and the product of their nonzero values.
    const Tensor self_zero = eq(self, 0).to(self.dtype()) * self_counts;
    const Tensor zeros_at = self_zero.scatter_add(d, idx, eq(src, 0).to(src.dtype()));
    const Tensor self_nz = where(logical_and(gt(self_counts, 0), ne(self, 0)), self, Scalar(1.0));
    const Tensor nz_prod = scatter_reduce(self_nz, d, idx, where(eq(src, 0), Scalar(1.0), src), "prod", true);
    // The product of the others: y / x without zeros; the nonzero product for the one zero; else 0.
    auto others = [&](const Tensor& x, const Tensor& zeros, const Tensor& nzp, const Tensor& yy) {
      return where(eq(zeros, 0), yy / where(eq(x, 0), Scalar(1.0), x),
                   where(logical_and(eq(zeros, 1), eq(x, 0)), nzp, Scalar(0.0)));
    };
    gs = g * others(self, zeros_at, nz_prod, y) * self_counts;
    gsrc = g.gather(d, idx) * others(src, zeros_at.gather(d, idx), nz_prod.gather(d, idx), y.gather(d, idx));
  } else {
    internal_fail("scatter_reduce derivative: reduce '{}'", reduce);
  }
  return {a.need(0) ? gs : Tensor(), Tensor(), a.need(2) ? gsrc : Tensor()};
}

std::vector<Tensor> d_embedding(const GradArgs& a) {
  return {sym_embedding_dense_backward(a.grad(), a.in(1), a.meta(0).sizes.at(0), a.attr<int64_t>("padding_idx"),
                                       a.attr<bool>("scale_grad_by_freq"))
              .to(a.meta(0).dtype),
          Tensor()};
}

}  // namespace

void add_index_derivatives(DerivativeTable& t) {
  t.rule(OpKind::gather, d_gather, bit(1));
  t.rule(OpKind::scatter, d_scatter, bit(1));
  t.rule(OpKind::scatter_add, d_scatter_add, bit(1));
  t.rule(OpKind::index_select, d_index_select, bit(1));
  t.rule(OpKind::scatter_reduce, d_scatter_reduce, bit(0) | bit(1) | bit(2), bit(0));
  t.rule(OpKind::embedding, d_embedding, bit(1));
}

}  // namespace kiln::autograd
