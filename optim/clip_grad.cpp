// kiln/optim/clip_grad.cpp — clip_grad_norm_ and clip_grad_value_ (optim/clip_grad.h), each one
// compiled function shared by every caller in the process.
#include "optim/clip_grad.h"

#include "base/error.h"
#include "frontend/grad_mode.h"
#include "frontend/ops.h"
#include "frontend/ops_factory.h"
#include "runtime/compile/compile.h"

#include <cmath>
#include <map>
#include <mutex>
#include <memory>
#include <string>

namespace kiln::optim {

namespace {

// ||x||_p over all elements, as torch.linalg.vector_norm.
Tensor vector_norm(const Tensor& x, double p) {
  if (std::isinf(p)) return p > 0 ? amax(abs(x)) : amin(abs(x));
  if (p == 0) return (x != 0).to(x.scalar_type()).sum();
  if (p == 1) return abs(x).sum();
  if (p == 2) return sqrt((x * x).sum());
  return pow(pow(abs(x), p).sum(), 1.0 / p);
}

std::vector<Tensor> gradients(const std::vector<Tensor>& parameters) {
  std::vector<Tensor> grads;
  for (const Tensor& p : parameters)
    if (p.defined() && p.grad().defined()) grads.push_back(p.grad());
  return grads;
}

// One compiled state per function, its entries keyed by the gradients' layouts; the norm type
// and limits are guarded by value (they rarely change).
detail::CompiledState& state_for(const char* name) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<detail::CompiledState>> states;
  std::lock_guard<std::mutex> lock(mu);
  auto& s = states[name];
  if (!s) {
    CompileOptions o;
    o.name = name;
    o.dynamic = Dynamic::False;
    o.cache_size_limit = 64;
    s = detail::make_compiled_state(std::move(o));
  }
  return *s;
}

std::vector<detail::ArgValue> args_of(const std::vector<Tensor>& grads) {
  return std::vector<detail::ArgValue>(grads.begin(), grads.end());
}

bool one_device(const std::vector<Tensor>& grads) {
  for (const Tensor& g : grads)
    if (g.device() != grads.front().device()) return false;
  return true;
}

}  // namespace

Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  if (!(norm_type >= 0)) fail("clip_grad_norm_", "norm_type must be >= 0 or inf, got {}", norm_type);
  const std::vector<Tensor> grads = gradients(parameters);
  if (grads.empty()) return zeros({});
  NoGradGuard ng;
  // grads..., max_norm, norm_type -> the total norm; every gradient scaled in place.
  auto rule = [](const std::vector<detail::ArgValue>& a) {
    const size_t n = a.size() - 2;
    const double max = std::get<double>(a[n]), p = std::get<double>(a[n + 1]);
    std::vector<Tensor> norms;
    for (size_t i = 0; i < n; ++i) norms.push_back(vector_norm(std::get<Tensor>(a[i]), p).to(kFloat32));
    Tensor total = vector_norm(stack(norms), p);
    const Tensor scale = clamp(max / (total + 1e-6), std::nullopt, 1.0);
    for (size_t i = 0; i < n; ++i) {
      Tensor g = std::get<Tensor>(a[i]);
      g.mul_(scale.to(g.scalar_type()));
    }
    return std::vector<Tensor>{total};
  };
  std::vector<detail::ArgValue> args = args_of(grads);
  args.push_back(max_norm);
  args.push_back(norm_type);
  const Tensor total = one_device(grads) ? detail::call_compiled(state_for("clip_grad_norm_"), args, rule).at(0)
                                         : rule(args).at(0);
  if (error_if_nonfinite && !std::isfinite(total.item<double>()))
    fail("clip_grad_norm_", "the total norm of order {} for gradients from `parameters` is non-finite, so it cannot "
                            "be clipped. To disable this error and scale the gradients by the non-finite norm "
                            "anyway, set error_if_nonfinite=false", norm_type);
  return total;
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  const std::vector<Tensor> grads = gradients(parameters);
  if (grads.empty()) return;
  NoGradGuard ng;
  auto rule = [](const std::vector<detail::ArgValue>& a) {
    const double v = std::get<double>(a.back());
    for (size_t i = 0; i + 1 < a.size(); ++i) {
      Tensor g = std::get<Tensor>(a[i]);
      g.copy_(g.clamp(-v, v));
    }
    return std::vector<Tensor>{};
  };
  std::vector<detail::ArgValue> args = args_of(grads);
  args.push_back(clip_value);
  if (one_device(grads)) detail::call_compiled(state_for("clip_grad_value_"), args, rule);
  else rule(args);
}

}  // namespace kiln::optim
