// kiln/optim/adam.cpp — Adam's and AdamW's update (optim/adam.h), as torch.optim's
// single-tensor rule: the same operations in the same order, with the per-step values
// (bias corrections, step size) computed in double on the host.
#include "optim/adam.h"

#include "base/error.h"
#include "frontend/ops.h"
#include "frontend/ops_factory.h"

#include <cmath>

namespace kiln::optim {

namespace {
constexpr const char* kAdam = "Adam";
constexpr uint64_t kWeightDecay = 1;
constexpr uint64_t kAmsgrad = 2;
constexpr uint64_t kMaximize = 4;
}  // namespace

std::vector<HyperParam> AdamOptions::hyperparams() const {
  return {number("lr", lr_),
          pair("betas", std::get<0>(betas_), std::get<1>(betas_)),
          number("eps", eps_),
          number("weight_decay", weight_decay_),
          flag("amsgrad", amsgrad_),
          flag("maximize", maximize_)};
}

void AdamOptions::set(const HyperParam& h) {
  if (h.name == "lr") lr_ = number_of(h, kAdam);
  else if (h.name == "betas") betas_ = pair_of(h, kAdam);
  else if (h.name == "eps") eps_ = number_of(h, kAdam);
  else if (h.name == "weight_decay") weight_decay_ = number_of(h, kAdam);
  else if (h.name == "amsgrad") amsgrad_ = flag_of(h, kAdam);
  else if (h.name == "maximize") maximize_ = flag_of(h, kAdam);
  else fail(kAdam, "unknown hyperparameter '{}'", h.name);
}

Adam::Adam(std::string name, bool decoupled, const std::vector<OptimizerParamGroup>& groups,
           std::unique_ptr<AdamOptions> defaults)
    : Optimizer(std::move(name), std::move(defaults)), decoupled_(decoupled) {
  add_param_groups(groups);
}
Adam::Adam(const std::vector<OptimizerParamGroup>& groups, AdamOptions defaults)
    : Adam("Adam", false, groups, std::make_unique<AdamOptions>(defaults)) {}
Adam::Adam(std::vector<Tensor> params, AdamOptions defaults)
    : Adam({OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}
AdamW::AdamW(const std::vector<OptimizerParamGroup>& groups, AdamOptions defaults)
    : Adam("AdamW", true, groups, std::make_unique<AdamOptions>(defaults)) {}
AdamW::AdamW(std::vector<Tensor> params, AdamOptions defaults)
    : AdamW({OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}

void Adam::check_options(const OptimizerOptions& options) const {
  const auto* o = dynamic_cast<const AdamOptions*>(&options);
  if (!o) fail(name(), "a parameter group's options are not AdamOptions");
  const auto [b1, b2] = o->betas();
  if (!(o->lr() >= 0)) fail(name(), "Invalid learning rate: {}", o->lr());
  if (!(o->eps() >= 0)) fail(name(), "Invalid epsilon value: {}", o->eps());
  if (!(b1 >= 0 && b1 < 1)) fail(name(), "Invalid beta parameter at index 0: {}", b1);
  if (!(b2 >= 0 && b2 < 1)) fail(name(), "Invalid beta parameter at index 1: {}", b2);
  if (!(o->weight_decay() >= 0)) fail(name(), "Invalid weight_decay value: {}", o->weight_decay());
}

std::vector<std::string> Adam::buffer_names(const OptimizerOptions& options, const ParamState&) const {
  const auto& o = static_cast<const AdamOptions&>(options);
  if (o.amsgrad()) return {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
  return {"exp_avg", "exp_avg_sq"};
}

void Adam::init_state(const OptimizerOptions& options, const Tensor& param, ParamState& st) const {
  for (const std::string& n : buffer_names(options, st)) st.buffers[n] = zeros_like(param);
}

uint64_t Adam::structure(const OptimizerOptions& options, const ParamState&) const {
  const auto& o = static_cast<const AdamOptions&>(options);
  return (o.weight_decay() != 0 ? kWeightDecay : 0) | (o.amsgrad() ? kAmsgrad : 0) | (o.maximize() ? kMaximize : 0);
}

// 0: 1 - beta1, 1: beta2, 2: 1 - beta2, 3: sqrt(1 - beta2^t), 4: eps, 5: -lr / (1 - beta1^t),
// 6: weight_decay (Adam), 7: 1 - lr * weight_decay (AdamW).
void Adam::scalars(const OptimizerOptions& options, const ParamState& st, double* out) const {
  const auto& o = static_cast<const AdamOptions&>(options);
  const auto [beta1, beta2] = o.betas();
  const double t = static_cast<double>(st.step);
  const double bias_correction1 = 1 - std::pow(beta1, t);
  const double bias_correction2 = 1 - std::pow(beta2, t);
  out[0] = 1 - beta1;
  out[1] = beta2;
  out[2] = 1 - beta2;
  out[3] = std::sqrt(bias_correction2);
  out[4] = o.eps();
  out[5] = -(o.lr() / bias_correction1);
  out[6] = o.weight_decay();
  out[7] = 1 - o.lr() * o.weight_decay();
}

void Adam::update(const OptimizerOptions& options, const ParamState&, Tensor& param, const Tensor& grad, std::vector<Tensor>& buffers,
                  const std::vector<Tensor>& s) const {
  const auto& o = static_cast<const AdamOptions&>(options);
  Tensor g = o.maximize() ? neg(grad) : grad;
  if (o.weight_decay() != 0) {
    if (decoupled_) param.mul_(s[7]);
    else g = g + s[6] * param;
  }
  Tensor& exp_avg = buffers[0];
  Tensor& exp_avg_sq = buffers[1];
  exp_avg.copy_(exp_avg + s[0] * (g - exp_avg));
  exp_avg_sq.copy_(exp_avg_sq * s[1] + s[2] * g * g);
  Tensor second = exp_avg_sq;
  if (o.amsgrad()) {
    buffers[2].copy_(maximum(buffers[2], exp_avg_sq));
    second = buffers[2];
  }
  const Tensor denom = sqrt(second) / s[3] + s[4];
  param.copy_(param + s[5] * exp_avg / denom);
}

}  // namespace kiln::optim
