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

  KILN_OPTIM_OPTIONS(RMSpropOptions);

 public:
  bool has_momentum() const override { return true; }
  double get_momentum() const override { return momentum_; }
  void set_momentum(double m) override { momentum_ = m; }
};

class RMSprop : public Optimizer {
 public:
  explicit RMSprop(const std::vector<OptimizerParamGroup>& groups, RMSpropOptions defaults = {});
  explicit RMSprop(std::vector<Tensor> params, RMSpropOptions defaults = {});

  KILN_OPTIMIZER_RULE(6);
};

}  // namespace kiln::optim
