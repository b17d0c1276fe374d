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

 public:
  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<AdagradOptions>(*this); }
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  std::vector<HyperParam> hyperparams() const override;
  void set(const HyperParam& h) override;
};

class Adagrad : public Optimizer {
 public:
  explicit Adagrad(const std::vector<OptimizerParamGroup>& groups, AdagradOptions defaults = {});
  explicit Adagrad(std::vector<Tensor> params, AdagradOptions defaults = {});

 protected:
  std::vector<std::string> buffer_names(const OptimizerOptions& o, const ParamState& st) const override;
  void init_state(const OptimizerOptions& o, const Tensor& param, ParamState& st) const override;
  uint64_t structure(const OptimizerOptions& o, const ParamState& st) const override;
  size_t num_scalars() const override { return 3; }
  void scalars(const OptimizerOptions& o, const ParamState& st, double* out) const override;
  void update(const OptimizerOptions& o, const ParamState& st, Tensor& param, const Tensor& grad,
              std::vector<Tensor>& buffers, const std::vector<Tensor>& s) const override;
  void check_options(const OptimizerOptions& o) const override;
};

}  // namespace kiln::optim
