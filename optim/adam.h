// kiln/optim/adam.h — Adam and AdamW, as torch::optim's (and torch.optim's update rule):
//   g = grad (-grad with maximize);  Adam: g += weight_decay * p;  AdamW: p *= 1 - lr * weight_decay
//   m = lerp(m, g, 1 - beta1);  v = beta2 v + (1 - beta2) g^2;  (amsgrad: vmax = max(vmax, v))
//   p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
// State per parameter: step, exp_avg, exp_avg_sq (and max_exp_avg_sq with amsgrad).
#pragma once

#include "optim/optimizer.h"

#include <tuple>

namespace kiln::optim {

using Betas = std::tuple<double, double>;

struct AdamOptions : OptimizerOptions {
  AdamOptions(double lr = 1e-3) : lr_(lr) {}
  KILN_OPTIM_ARG(double, lr);
  KILN_OPTIM_ARG(Betas, betas) = std::make_tuple(0.9, 0.999);
  KILN_OPTIM_ARG(double, eps) = 1e-8;
  KILN_OPTIM_ARG(double, weight_decay) = 0;
  KILN_OPTIM_ARG(bool, amsgrad) = false;
  KILN_OPTIM_ARG(bool, maximize) = false;

  KILN_OPTIM_OPTIONS(AdamOptions);

 public:
  bool has_momentum() const override { return true; }
  double get_momentum() const override { return std::get<0>(betas_); }
  void set_momentum(double m) override { std::get<0>(betas_) = m; }
};

// AdamW's options: Adam's, with weight decay 1e-2 by default (AdamW applies it to the
// parameter). The setters return AdamOptions&, which AdamW takes.
struct AdamWOptions : AdamOptions {
  AdamWOptions(double lr = 1e-3) : AdamOptions(lr) { weight_decay(1e-2); }
};

class Adam : public Optimizer {
 public:
  explicit Adam(const std::vector<OptimizerParamGroup>& groups, AdamOptions defaults = {});
  explicit Adam(std::vector<Tensor> params, AdamOptions defaults = {});

  KILN_OPTIMIZER_RULE(8);

 protected:
  Adam(std::string name, bool decoupled, const std::vector<OptimizerParamGroup>& groups,
       std::unique_ptr<AdamOptions> defaults);

 private:
  bool decoupled_;  // AdamW
};

class AdamW : public Adam {
 public:
  explicit AdamW(const std::vector<OptimizerParamGroup>& groups, AdamOptions defaults = AdamWOptions());
  explicit AdamW(std::vector<Tensor> params, AdamOptions defaults = AdamWOptions());
};

}  // namespace kiln::optim
