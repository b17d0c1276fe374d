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

 public:
  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<SGDOptions>(*this); }
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  bool has_momentum() const override { return true; }
  double get_momentum() const override { return momentum_; }
  void set_momentum(double m) override { momentum_ = m; }
  std::vector<HyperParam> hyperparams() const override;
  void set(const HyperParam& h) override;
};

class SGD : public Optimizer {
 public:
  explicit SGD(const std::vector<OptimizerParamGroup>& groups, SGDOptions defaults = {});
  explicit SGD(std::vector<Tensor> params, SGDOptions defaults = {});

 protected:
  std::vector<std::string> buffer_names(const OptimizerOptions& o, const ParamState& st) const override;
  void init_state(const OptimizerOptions& o, const Tensor& param, ParamState& st) const override;
  uint64_t structure(const OptimizerOptions& o, const ParamState& st) const override;
  size_t num_scalars() const override { return 4; }
  void scalars(const OptimizerOptions& o, const ParamState& st, double* out) const override;
  void update(const OptimizerOptions& o, const ParamState& st, Tensor& param, const Tensor& grad, std::vector<Tensor>& buffers,
              const std::vector<Tensor>& s) const override;
  bool counts_steps() const override { return false; }
  void check_options(const OptimizerOptions& o) const override;
};

}  // namespace kiln::optim
