// kiln/optim/rmsprop.h — RMSprop, as torch::optim::RMSprop:
//   g = grad (-grad with maximize) + weight_decay * p
//   v = alpha v + (1 - alpha) g^2;  centered: a = lerp(a, g, 1 - alpha), avg = sqrt(v - a^2) + eps,
//   else avg = sqrt(v) + eps
//   momentum: buf = momentum buf + g / avg, p -= lr buf;  else p -= lr g / avg
// State per parameter: step, square_avg, momentum_buffer (momentum > 0), grad_avg (centered).
#pragma once

#include "optim/optimizer.h"

namespace kiln::optim {

struct RMSpropOptions : OptimizerOptions {
  RMSpropOptions(double lr = 1e-2) : lr_(lr) {}
  KILN_OPTIM_ARG(double, lr);
  KILN_OPTIM_ARG(double, alpha) = 0.99;
  KILN_OPTIM_ARG(double, eps) = 1e-8;
  KILN_OPTIM_ARG(double, weight_decay) = 0;
  KILN_OPTIM_ARG(double, momentum) = 0;
  KILN_OPTIM_ARG(bool, centered) = false;
  KILN_OPTIM_ARG(bool, maximize) = false;

 public:
  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<RMSpropOptions>(*this); }
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  bool has_momentum() const override { return true; }
  double get_momentum() const override { return momentum_; }
  void set_momentum(double m) override { momentum_ = m; }
  std::vector<HyperParam> hyperparams() const override;
  void set(const HyperParam& h) override;
};

class RMSprop : public Optimizer {
 public:
  explicit RMSprop(const std::vector<OptimizerParamGroup>& groups, RMSpropOptions defaults = {});
  explicit RMSprop(std::vector<Tensor> params, RMSpropOptions defaults = {});

 protected:
  std::vector<std::string> buffer_names(const OptimizerOptions& o, const ParamState& st) const override;
  void init_state(const OptimizerOptions& o, const Tensor& param, ParamState& st) const override;
  uint64_t structure(const OptimizerOptions& o, const ParamState& st) const override;
  size_t num_scalars() const override { return 6; }
  void scalars(const OptimizerOptions& o, const ParamState& st, double* out) const override;
  void update(const OptimizerOptions& o, const ParamState& st, Tensor& param, const Tensor& grad,
              std::vector<Tensor>& buffers, const std::vector<Tensor>& s) const override;
  void check_options(const OptimizerOptions& o) const override;
};

}  // namespace kiln::optim
