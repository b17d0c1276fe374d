// kiln/frontend/derivatives_view.cpp — the View family's derivatives (frontend/derivatives.h).
//
// A view's gradient puts g back where the view read from: reshape, squeeze and unsqueeze reshape
// it, permute permutes it back, expand sums it over the broadcast dims, a unit-step slice pads it
// with zeros (which fuses). Any other view (a strided slice, diagonal, as_strided) scatters g
// into zeros of the input at the positions the same view reads from the input's positions
// (derivatives_detail.h unview), adding where as_strided reads one element twice.
#include "frontend/derivatives_detail.h"

#include "frontend/dispatch.h"

namespace kiln::autograd {

namespace {

using ir::OpKind;

std::vector<Tensor> d_reshape(const GradArgs& a) { return one(sym_reshape(a.grad(), a.meta(0).sizes)); }
std::vector<Tensor> d_expand(const GradArgs& a) { return one(sum_to(a.grad(), a.meta(0).sizes)); }
std::vector<Tensor> d_permute(const GradArgs& a) {
  const std::vector<int64_t>& dims = a.attr<std::vector<int64_t>>("dims");
  std::vector<int64_t> inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) inverse[static_cast<size_t>(dims[i])] = static_cast<int64_t>(i);
  return one(a.grad().permute(inverse));
}

// Replays the op's own view (same attributes) on another tensor of the input's shape.
std::function<Tensor(const Tensor&)> same_view(const GradArgs& a) {
  return [&a](const Tensor& t) { return dispatch1(a.op, {t}, a.attrs.values()); };
}

std::vector<Tensor> d_slice(const GradArgs& a) {
  const int64_t d = a.attr<int64_t>("dim");
  const ir::Expr start = a.attr<ir::Expr>("start"), end = a.attr<ir::Expr>("end"), step = a.attr<ir::Expr>("step");
  if (step.maybe_const() == std::optional<int64_t>(1) && start.is_const() && end.is_const() &&
      a.meta(0).sizes[static_cast<size_t>(d)].is_const()) {
    // Zeros before and after the slice along d: constant_pad lists (before, after) from the last dim.
    const int64_t n = a.meta(0).sizes[static_cast<size_t>(d)].as_const();
    const int64_t s = std::clamp<int64_t>(start.as_const(), 0, n), e = std::clamp<int64_t>(end.as_const(), s, n);
    std::vector<int64_t> pad(2 * static_cast<size_t>(a.meta(0).sizes.size() - static_cast<size_t>(d)), 0);
    pad[pad.size() - 2] = s;
    pad[pad.size() - 1] = n - e;
    return one(constant_pad_nd(a.grad(), pad, 0));
  }
  return one(unview(a.grad(), a.meta(0), same_view(a), /*may_overlap=*/false));
}

std::vector<Tensor> d_diagonal(const GradArgs& a) {
  return one(unview(a.grad(), a.meta(0), same_view(a), /*may_overlap=*/false));
}
std::vector<Tensor> d_as_strided(const GradArgs& a) {
  return one(unview(a.grad(), a.meta(0), same_view(a), /*may_overlap=*/true));
}

}  // namespace

void add_view_derivatives(DerivativeTable& t) {
  t.rule(OpKind::reshape, d_reshape);
  t.rule(OpKind::expand, d_expand);
  t.rule(OpKind::permute, d_permute);
  t.rule(OpKind::slice, d_slice);
  t.rule(OpKind::squeeze, d_reshape);
  t.rule(OpKind::unsqueeze, d_reshape);
  t.rule(OpKind::diagonal, d_diagonal);
  t.rule(OpKind::as_strided, d_as_strided);
}

}  // namespace kiln::autograd
