// kiln/frontend/derivatives_detail.cpp — helpers of the derivative rules (frontend/derivatives_detail.h).
#include "frontend/derivatives_detail.h"


namespace kiln::autograd {

Tensor sum_to(const Tensor& g, const std::vector<ir::Expr>& sizes) {
  const std::vector<ir::Expr> gs = sym_sizes(g);
  if (gs == sizes) return g;
  const int64_t lead = static_cast<int64_t>(gs.size()) - static_cast<int64_t>(sizes.size());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < lead; ++d) dims.push_back(d);
  for (size_t d = 0; d < sizes.size(); ++d) {
    const std::optional<int64_t> s = sizes[d].maybe_const();
    if (s && *s == 1 && !(gs[static_cast<size_t>(lead) + d].maybe_const() == std::optional<int64_t>(1)))
      dims.push_back(lead + static_cast<int64_t>(d));
  }
  Tensor r = dims.empty() ? g : sum(g, dims, /*keepdim=*/true);
  return sym_reshape(r, sizes);
}

Tensor unview(const Tensor& g, const TensorMeta& input, const std::function<Tensor(const Tensor&)>& view_of,
              bool may_overlap) {
  const ir::Expr n = sym_product(input.sizes);
  const Tensor positions = view_of(sym_reshape(sym_iota(n, ScalarType::Int64, input.device), input.sizes));
  const Tensor flat_pos = sym_reshape(positions, {sym_numel(positions)});
  const Tensor flat_g = sym_reshape(g.contiguous(), {sym_numel(g)});
  const Tensor zero = sym_full({n}, 0, g.dtype(), g.device());
  const Tensor out = may_overlap ? zero.scatter_add(0, flat_pos, flat_g) : zero.scatter(0, flat_pos, flat_g);
  return sym_reshape(out, input.sizes);
}

Tensor expand_reduced(const Tensor& g, const TensorMeta& input, const std::vector<int64_t>& dims, bool keepdim) {
  Tensor r = g;
  if (!keepdim && !input.sizes.empty()) {
    std::vector<ir::Expr> kept = input.sizes;
    for (int64_t d : dims) kept[static_cast<size_t>(d)] = 1;
    r = sym_reshape(r, kept);
  }
  return sym_expand(r, input.sizes);
}

}  // namespace kiln::autograd
