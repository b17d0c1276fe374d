// kiln/optim/adagrad.h — Adagrad, as torch::optim::Adagrad:
//   g = grad (-grad with maximize) + weight_decay * p;  clr = lr / (1 + (t - 1) lr_decay)
//   sum += g^2;  p -= clr g / (sqrt(sum) + eps)
// State per parameter: step, sum (initial_accumulator_value at first).
#pragma once

#include "optim/optimizer.h"

namespace kiln::optim {

struct AdagradOptions : OptimizerOptions {
  AdagradOptions(double lr = 1e-2) : lr_(lr) {}
  KILN_OPTIM_ARG(double, lr);
  KILN_OPTIM_ARG(double, lr_decay) = 0;
  KILN_OPTIM_ARG(double, weight_decay) = 0;
  KILN_OPTIM_ARG(double, initial_accumulator_value) = 0;
  KILN_OPTIM_ARG(double, eps) = 1e-10;
  KILN_OPTIM_ARG(bool, maximize) = false;

  KILN_OPTIM_OPTIONS(AdagradOptions);
};

class Adagrad : public Optimizer {
 public:
  explicit Adagrad(const std::vector<OptimizerParamGroup>& groups, AdagradOptions defaults = {});
  explicit Adagrad(std::vector<Tensor> params, AdagradOptions defaults = {});

  KILN_OPTIMIZER_RULE(3);
};

}  // namespace kiln::optim
