// kiln/frontend/decompositions_norm.cpp — the Norm family's layer_norm and rms_norm
// decompositions (the batch and group norms, which share helpers with their frontend, are
// frontend/ops_norm.cpp). f16/bf16 compute in f32 and cast back; layer_norm's statistics come
// from moments() (frontend/decompositions_moments.cpp); rms_norm multiplies by its weight after
// casting back, as at::rms_norm does.
#include "frontend/decompositions_detail.h"
#include "frontend/ops.h"
#include "frontend/symbolic.h"

#include <vector>

namespace kiln::decomp {

namespace {

// The trailing dims that normalized_shape covers.
std::vector<int64_t> trailing_dims(const Tensor& x, size_t k) {
  std::vector<int64_t> dims;
  for (int64_t d = x.dim() - static_cast<int64_t>(k); d < x.dim(); ++d) dims.push_back(d);
  return dims;
}

}  // namespace

// layer_norm(x) = (x - E[x]) / sqrt(Var[x] + eps) * weight + bias over the trailing dims.
Tensor layer_norm(const DecompArgs& a) {
  const Tensor& x = a.in(0);
  const std::vector<int64_t> dims = trailing_dims(x, a.attr<std::vector<int64_t>>("normalized_shape").size());
  const double eps = a.attr<double>("eps");
  Tensor xc = x.to(opmath_dtype(x.dtype()));
  const Moments m = moments(xc, dims);
  Tensor out = (xc - m.mean) * rsqrt(m.var + eps);
  if (const Tensor* w = a.opt(1)) out = out * *w;
  if (const Tensor* b = a.opt(2)) out = out + *b;
  return out.to(x.dtype());
}

// rms_norm(x) = x / sqrt(E[x^2] + eps) * weight over the trailing dims.
Tensor rms_norm(const DecompArgs& a) {
  const Tensor& x = a.in(0);
  const std::vector<int64_t> dims = trailing_dims(x, a.attr<std::vector<int64_t>>("normalized_shape").size());
  const double eps = a.attr<double>("eps");
  Tensor xc = x.to(opmath_dtype(x.dtype()));
  Tensor out = (xc * rsqrt(mean_dims(xc * xc, dims, /*keepdim=*/true) + eps)).to(x.dtype());
  if (const Tensor* w = a.opt(1)) out = (out * *w).to(out.dtype());
  return out;
}

}  // namespace kiln::decomp
