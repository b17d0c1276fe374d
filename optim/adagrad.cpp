// kiln/optim/adagrad.cpp — Adagrad's update (optim/adagrad.h), as torch.optim's single-tensor rule.
#include "optim/adagrad.h"

#include "base/error.h"
#include "frontend/ops.h"
#include "frontend/ops_factory.h"

namespace kiln::optim {

namespace {
constexpr const char* kAdagrad = "Adagrad";
constexpr uint64_t kWeightDecay = 1;
constexpr uint64_t kMaximize = 2;
}  // namespace

std::vector<HyperParam> AdagradOptions::hyperparams() const {
  return {number("lr", lr_),
          number("lr_decay", lr_decay_),
          number("eps", eps_),
          number("weight_decay", weight_decay_),
          number("initial_accumulator_value", initial_accumulator_value_),
          flag("maximize", maximize_)};
}

void AdagradOptions::set(const HyperParam& h) {
  if (h.name == "lr") lr_ = number_of(h, kAdagrad);
  else if (h.name == "lr_decay") lr_decay_ = number_of(h, kAdagrad);
  else if (h.name == "eps") eps_ = number_of(h, kAdagrad);
  else if (h.name == "weight_decay") weight_decay_ = number_of(h, kAdagrad);
  else if (h.name == "initial_accumulator_value") initial_accumulator_value_ = number_of(h, kAdagrad);
  else if (h.name == "maximize") maximize_ = flag_of(h, kAdagrad);
  else fail(kAdagrad, "unknown hyperparameter '{}'", h.name);
}

Adagrad::Adagrad(const std::vector<OptimizerParamGroup>& groups, AdagradOptions defaults)
    : Optimizer(kAdagrad, std::make_unique<AdagradOptions>(defaults)) {
  add_param_groups(groups);
}
Adagrad::Adagrad(std::vector<Tensor> params, AdagradOptions defaults)
    : Adagrad({OptimizerParamGroup(std::move(params))}, defaults) {}

void Adagrad::check_options(const OptimizerOptions& options) const {
  const auto* o = dynamic_cast<const AdagradOptions*>(&options);
  if (!o) fail(kAdagrad, "a parameter group's options are not AdagradOptions");
  if (!(o->lr() >= 0)) fail(kAdagrad, "Invalid learning rate: {}", o->lr());
  if (!(o->lr_decay() >= 0)) fail(kAdagrad, "Invalid lr_decay value: {}", o->lr_decay());
  if (!(o->weight_decay() >= 0)) fail(kAdagrad, "Invalid weight_decay value: {}", o->weight_decay());
  if (!(o->initial_accumulator_value() >= 0))
    fail(kAdagrad, "Invalid initial_accumulator_value value: {}", o->initial_accumulator_value());
  if (!(o->eps() >= 0)) fail(kAdagrad, "Invalid epsilon value: {}", o->eps());
}

std::vector<std::string> Adagrad::buffer_names(const OptimizerOptions&, const ParamState&) const { return {"sum"}; }

void Adagrad::init_state(const OptimizerOptions& options, const Tensor& param, ParamState& st) const {
  st.buffers["sum"] = full_like(param, static_cast<const AdagradOptions&>(options).initial_accumulator_value());
}

uint64_t Adagrad::structure(const OptimizerOptions& options, const ParamState&) const {
  const auto& o = static_cast<const AdagradOptions&>(options);
  return (o.weight_decay() != 0 ? kWeightDecay : 0) | (o.maximize() ? kMaximize : 0);
}

// 0: weight_decay, 1: eps, 2: -lr / (1 + (t - 1) lr_decay).
void Adagrad::scalars(const OptimizerOptions& options, const ParamState& st, double* out) const {
  const auto& o = static_cast<const AdagradOptions&>(options);
  out[0] = o.weight_decay();
  out[1] = o.eps();
  out[2] = -(o.lr() / (1 + static_cast<double>(st.step - 1) * o.lr_decay()));
}

void Adagrad::update(const OptimizerOptions& options, const ParamState&, Tensor& param, const Tensor& grad,
                     std::vector<Tensor>& buffers, const std::vector<Tensor>& s) const {
  const auto& o = static_cast<const AdagradOptions&>(options);
  Tensor g = o.maximize() ? neg(grad) : grad;
  if (o.weight_decay() != 0) g = g + s[0] * param;
  Tensor& sum = buffers[0];
  sum.copy_(sum + g * g);
  param.copy_(param + s[2] * g / (sqrt(sum) + s[1]));
}

}  // namespace kiln::optim
