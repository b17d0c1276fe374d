// kiln/optim/sgd.h — stochastic gradient descent, as torch::optim::SGD:
//   g = grad (-grad with maximize) + weight_decay * p
//   momentum: buf = g at the first step, else momentum * buf + (1 - dampening) g;
//             g = g + momentum * buf with nesterov, else buf
//   p -= lr * g
// State per parameter: momentum_buffer (with momentum only). SGD counts no steps.
#pragma once

#include "optim/optimizer.h"

namespace kiln::optim {

struct SGDOptions : OptimizerOptions {
  SGDOptions(double lr = 1e-3) : lr_(lr) {}
  KILN_OPTIM_ARG(double, lr);
  KILN_OPTIM_ARG(double, momentum) = 0;
  KILN_OPTIM_ARG(double, dampening) = 0;
  KILN_OPTIM_ARG(double, weight_decay) = 0;
  KILN_OPTIM_ARG(bool, nesterov) = false;
  KILN_OPTIM_ARG(bool, maximize) = false;

  KILN_OPTIM_OPTIONS(SGDOptions);

 public:
  bool has_momentum() const override { return true; }
  double get_momentum() const override { return momentum_; }
  void set_momentum(double m) override { momentum_ = m; }
};

class SGD : public Optimizer {
 public:
  explicit SGD(const std::vector<OptimizerParamGroup>& groups, SGDOptions defaults = {});
  explicit SGD(std::vector<Tensor> params, SGDOptions defaults = {});

  KILN_OPTIMIZER_RULE(4);

 protected:
  bool counts_steps() const override { return false; }
};

}  // namespace kiln::optim
