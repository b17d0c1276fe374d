// kiln/test/test_support/grad_run.cpp — test_support/grad_run.h.
#include "test_support/grad_run.h"

#include "test_support/make.h"

#include <cmath>

namespace kiln::opdb {

const std::vector<std::string>& families() {
  static const std::vector<std::string> f = {
      "activation", "attention", "binary",    "cast",   "conv",      "dropout",   "factory", "index",   "linear",
      "matmul",     "model",     "moments",   "norm",   "pointwise", "pool",      "random",  "rearrange",
      "reduction",  "resample",  "scan",      "shape",  "softmax",   "sort",      "ternary", "unary",   "view"};
  return f;
}

namespace {

bool all_finite(const Tensor& t) { return t.numel() == 0 || isfinite(t.detach()).all().item<bool>(); }

std::vector<Tensor> fresh(const std::vector<Tensor>& in) {
  std::vector<Tensor> r;
  for (const Tensor& t : in) r.push_back(t.defined() && is_floating_point(t.dtype()) ? t.clone() : t);
  return r;
}

}  // namespace

Tensor cotangent(IntArrayRef sizes, size_t j) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k)
    v[static_cast<size_t>(k)] = static_cast<double>((7 * k + 5 * static_cast<int64_t>(j)) % 13 - 6) / 4.0;
  return test::make<double>(v, sizes.vec());
}

std::optional<GradRun> grad_run(const OpEntry& e, const Sample& s, Mode m, std::string* error) {
  GradRun r;
  r.mode = m;
  for (size_t i = 0; i < s.size(); ++i) {
    const Tensor& t = s[i];
    if (t.defined() && is_floating_point(t.dtype())) {
      if (!all_finite(t)) return std::nullopt;
      r.leaves.push_back(t.to(kDouble).contiguous().clone().requires_grad_());
      r.inputs.push_back(i);
    } else {
      r.leaves.push_back(t);
    }
  }
  if (r.inputs.empty()) return std::nullopt;
  try {
    r.fn = runner(e, s.size(), m);
    r.outputs = r.fn(fresh(r.leaves));
  } catch (const Error& err) {
    if (error) *error = err.what();
    return std::nullopt;
  }
  for (size_t j = 0; j < r.outputs.size(); ++j) {
    const Tensor& o = r.outputs[j];
    if (o.defined() && is_floating_point(o.dtype()) && o.requires_grad()) r.diff_outputs.push_back(j);
  }
  return r;
}

Tensor contract(const std::vector<Tensor>& outs, const GradRun& like) {
  Tensor l = zeros({}, TensorOptions(kDouble));
  for (size_t j : like.diff_outputs) {
    const Tensor& o = outs.at(j);
    if (o.sizes() != like.outputs[j].sizes()) return full({}, std::nan(""), TensorOptions(kDouble));
    l = l + (o.to(kDouble) * cotangent(o.sizes(), j)).sum();
  }
  return l;
}

std::vector<Tensor> grads_of(const GradRun& r) {
  std::vector<Tensor> wrt;
  for (size_t i : r.inputs) wrt.push_back(r.leaves[i]);
  return autograd::grad({contract(r.outputs, r)}, wrt, {}, std::nullopt, false, /*allow_unused=*/true);
}

}  // namespace kiln::opdb
