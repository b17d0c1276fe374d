// kiln/optim/rmsprop.cpp — RMSprop's update (optim/rmsprop.h), as torch.optim's single-tensor rule.
#include "optim/rmsprop.h"

#include "base/error.h"
#include "frontend/ops.h"
#include "frontend/ops_factory.h"

namespace kiln::optim {

namespace {
constexpr const char* kRMSprop = "RMSprop";
constexpr uint64_t kWeightDecay = 1;
constexpr uint64_t kMomentum = 2;
constexpr uint64_t kCentered = 4;
constexpr uint64_t kMaximize = 8;
}  // namespace

std::vector<HyperParam> RMSpropOptions::hyperparams() const {
  return {number("lr", lr_),         number("momentum", momentum_),   number("alpha", alpha_),
          number("eps", eps_),       flag("centered", centered_),     number("weight_decay", weight_decay_),
          flag("maximize", maximize_)};
}

void RMSpropOptions::set(const HyperParam& h) {
  if (h.name == "lr") lr_ = number_of(h, kRMSprop);
  else if (h.name == "momentum") momentum_ = number_of(h, kRMSprop);
  else if (h.name == "alpha") alpha_ = number_of(h, kRMSprop);
  else if (h.name == "eps") eps_ = number_of(h, kRMSprop);
  else if (h.name == "centered") centered_ = flag_of(h, kRMSprop);
  else if (h.name == "weight_decay") weight_decay_ = number_of(h, kRMSprop);
  else if (h.name == "maximize") maximize_ = flag_of(h, kRMSprop);
  else fail(kRMSprop, "unknown hyperparameter '{}'", h.name);
}

RMSprop::RMSprop(const std::vector<OptimizerParamGroup>& groups, RMSpropOptions defaults)
    : Optimizer(kRMSprop, std::make_unique<RMSpropOptions>(defaults)) {
  add_param_groups(groups);
}
RMSprop::RMSprop(std::vector<Tensor> params, RMSpropOptions defaults)
    : RMSprop({OptimizerParamGroup(std::move(params))}, defaults) {}

void RMSprop::check_options(const OptimizerOptions& options) const {
  const auto* o = dynamic_cast<const RMSpropOptions*>(&options);
  if (!o) fail(kRMSprop, "a parameter group's options are not RMSpropOptions");
  if (!(o->lr() >= 0)) fail(kRMSprop, "Invalid learning rate: {}", o->lr());
  if (!(o->eps() >= 0)) fail(kRMSprop, "Invalid epsilon value: {}", o->eps());
  if (!(o->momentum() >= 0)) fail(kRMSprop, "Invalid momentum value: {}", o->momentum());
  if (!(o->weight_decay() >= 0)) fail(kRMSprop, "Invalid weight_decay value: {}", o->weight_decay());
  if (!(o->alpha() >= 0)) fail(kRMSprop, "Invalid alpha value: {}", o->alpha());
}

std::vector<std::string> RMSprop::buffer_names(const OptimizerOptions& options, const ParamState&) const {
  const auto& o = static_cast<const RMSpropOptions&>(options);
  std::vector<std::string> names{"square_avg"};
  if (o.momentum() > 0) names.push_back("momentum_buffer");
  if (o.centered()) names.push_back("grad_avg");
  return names;
}

void RMSprop::init_state(const OptimizerOptions& options, const Tensor& param, ParamState& st) const {
  for (const std::string& n : buffer_names(options, st)) st.buffers[n] = zeros_like(param);
}

uint64_t RMSprop::structure(const OptimizerOptions& options, const ParamState&) const {
  const auto& o = static_cast<const RMSpropOptions&>(options);
  return (o.weight_decay() != 0 ? kWeightDecay : 0) | (o.momentum() > 0 ? kMomentum : 0) |
         (o.centered() ? kCentered : 0) | (o.maximize() ? kMaximize : 0);
}

// 0: weight_decay, 1: alpha, 2: 1 - alpha, 3: eps, 4: momentum, 5: -lr.
void RMSprop::scalars(const OptimizerOptions& options, const ParamState&, double* out) const {
  const auto& o = static_cast<const RMSpropOptions&>(options);
  out[0] = o.weight_decay();
  out[1] = o.alpha();
  out[2] = 1 - o.alpha();
  out[3] = o.eps();
  out[4] = o.momentum();
  out[5] = -o.lr();
}

void RMSprop::update(const OptimizerOptions& options, const ParamState&, Tensor& param, const Tensor& grad,
                     std::vector<Tensor>& buffers, const std::vector<Tensor>& s) const {
  const auto& o = static_cast<const RMSpropOptions&>(options);
  Tensor g = o.maximize() ? neg(grad) : grad;
  if (o.weight_decay() != 0) g = g + s[0] * param;
  Tensor& square_avg = buffers[0];
  square_avg.copy_(square_avg * s[1] + s[2] * g * g);
  Tensor avg;
  if (o.centered()) {
    Tensor& grad_avg = buffers.back();
    grad_avg.copy_(grad_avg + s[2] * (g - grad_avg));
    avg = sqrt(square_avg - grad_avg * grad_avg) + s[3];
  } else {
    avg = sqrt(square_avg) + s[3];
  }
  if (o.momentum() > 0) {
    Tensor& buf = buffers[1];
    buf.copy_(buf * s[4] + g / avg);
    param.copy_(param + s[5] * buf);
  } else {
    param.copy_(param + s[5] * g / avg);
  }
}

}  // namespace kiln::optim
