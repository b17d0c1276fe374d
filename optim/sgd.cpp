// kiln/optim/sgd.cpp — SGD's update (optim/sgd.h), as torch.optim's single-tensor rule.
#include "optim/sgd.h"

#include "base/error.h"
#include "frontend/ops.h"
#include "frontend/ops_factory.h"

namespace kiln::optim {

namespace {
constexpr const char* kSGD = "SGD";
constexpr uint64_t kWeightDecay = 1;
constexpr uint64_t kMomentum = 2;
constexpr uint64_t kNesterov = 4;
constexpr uint64_t kMaximize = 8;
constexpr uint64_t kFirst = 16;
}  // namespace

std::vector<HyperParam> SGDOptions::hyperparams() const {
  return {number("lr", lr_), number("momentum", momentum_), number("dampening", dampening_),
          number("weight_decay", weight_decay_), flag("nesterov", nesterov_), flag("maximize", maximize_)};
}

void SGDOptions::set(const HyperParam& h) {
  if (h.name == "lr") lr_ = number_of(h, kSGD);
  else if (h.name == "momentum") momentum_ = number_of(h, kSGD);
  else if (h.name == "dampening") dampening_ = number_of(h, kSGD);
  else if (h.name == "weight_decay") weight_decay_ = number_of(h, kSGD);
  else if (h.name == "nesterov") nesterov_ = flag_of(h, kSGD);
  else if (h.name == "maximize") maximize_ = flag_of(h, kSGD);
  else fail(kSGD, "unknown hyperparameter '{}'", h.name);
}

SGD::SGD(const std::vector<OptimizerParamGroup>& groups, SGDOptions defaults)
    : Optimizer(kSGD, std::make_unique<SGDOptions>(defaults)) {
  add_param_groups(groups);
}
SGD::SGD(std::vector<Tensor> params, SGDOptions defaults) : SGD({OptimizerParamGroup(std::move(params))}, defaults) {}

void SGD::check_options(const OptimizerOptions& options) const {
  const auto* o = dynamic_cast<const SGDOptions*>(&options);
  if (!o) fail(kSGD, "a parameter group's options are not SGDOptions");
  if (!(o->lr() >= 0)) fail(kSGD, "Invalid learning rate: {}", o->lr());
  if (!(o->momentum() >= 0)) fail(kSGD, "Invalid momentum value: {}", o->momentum());
  if (!(o->weight_decay() >= 0)) fail(kSGD, "Invalid weight_decay value: {}", o->weight_decay());
  if (o->nesterov() && (o->momentum() <= 0 || o->dampening() != 0))
    fail(kSGD, "Nesterov momentum requires a momentum and zero dampening (momentum={}, dampening={})", o->momentum(),
         o->dampening());
}

std::vector<std::string> SGD::buffer_names(const OptimizerOptions& options, const ParamState&) const {
  if (static_cast<const SGDOptions&>(options).momentum() == 0) return {};
  return {"momentum_buffer"};
}

// The buffer is created empty and takes the first gradient (`fresh`), as PyTorch's clone.
void SGD::init_state(const OptimizerOptions& options, const Tensor& param, ParamState& st) const {
  if (static_cast<const SGDOptions&>(options).momentum() != 0) st.buffers["momentum_buffer"] = empty_like(param);
}

uint64_t SGD::structure(const OptimizerOptions& options, const ParamState& st) const {
  const auto& o = static_cast<const SGDOptions&>(options);
  return (o.weight_decay() != 0 ? kWeightDecay : 0) | (o.momentum() != 0 ? kMomentum : 0) |
         (o.nesterov() ? kNesterov : 0) | (o.maximize() ? kMaximize : 0) | (st.fresh ? kFirst : 0);
}

// 0: weight_decay, 1: momentum, 2: 1 - dampening, 3: -lr.
void SGD::scalars(const OptimizerOptions& options, const ParamState&, double* out) const {
  const auto& o = static_cast<const SGDOptions&>(options);
  out[0] = o.weight_decay();
  out[1] = o.momentum();
  out[2] = 1 - o.dampening();
  out[3] = -o.lr();
}

void SGD::update(const OptimizerOptions& options, const ParamState& st, Tensor& param, const Tensor& grad, std::vector<Tensor>& buffers,
                 const std::vector<Tensor>& s) const {
  const auto& o = static_cast<const SGDOptions&>(options);
  Tensor g = o.maximize() ? neg(grad) : grad;
  if (o.weight_decay() != 0) g = g + s[0] * param;
  if (o.momentum() != 0) {
    Tensor& buf = buffers[0];
    // At the first update the buffer is the gradient itself (structure's kFirst).
    if (st.fresh) buf.copy_(g);
    else buf.copy_(buf * s[1] + s[2] * g);
    g = o.nesterov() ? g + s[1] * buf : buf;
  }
  param.copy_(param + s[3] * g);
}

}  // namespace kiln::optim
