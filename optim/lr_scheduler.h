// kiln/optim/lr_scheduler.h — learning-rate schedulers, as torch.optim.lr_scheduler's (StepLR,
// ExponentialLR, MultiStepLR, LambdaLR, CosineAnnealingLR, LinearLR, OneCycleLR; ReduceLROnPlateau
// is in optim/plateau.h, ChainedScheduler and SequentialLR in optim/scheduler_chain.h): each sets
// the lr of every parameter group of an optimizer, and step() moves to the next epoch (or
// iteration). The formulas are PyTorch's, in its recursive ("chainable") form where PyTorch
// uses it, so the lr of step n is the same double PyTorch computes.
//
//   optim::SGD opt(params, optim::SGDOptions(0.1).momentum(0.9));
//   optim::CosineAnnealingLR sched(opt, /*T_max=*/100);
//   for (...) { ...; opt.step(); sched.step(); }
//
// A scheduler changes only the options' values (and OneCycleLR the momentum, Adam's beta1), which
// an optimizer's compiled step reads as data: a new lr never recompiles the step.
#pragma once

#include "optim/optimizer.h"

#include <functional>
#include <string>
#include <vector>

namespace kiln::optim {

// What a scheduler keeps between steps (for checkpoints).
struct LRSchedulerState {
  int64_t last_epoch = 0;
  std::vector<double> base_lrs, last_lrs;
};

class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  void step();
  // The lr of each group set by the last step (or the constructor).
  const std::vector<double>& get_last_lr() const { return last_lrs_; }
  int64_t last_epoch() const { return last_epoch_; }
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  Optimizer& optimizer() const { return optimizer_; }

  // PyTorch's step(epoch): jumps to `epoch`, with the closed form where the scheduler has one
  // (SequentialLR restarts a scheduler at epoch 0 so).
  void step_to(int64_t epoch);

  LRSchedulerState state_dict() const { return {last_epoch_, base_lrs_, last_lrs_}; }
  // Restores the epoch count and the base lrs (the optimizer's lrs come from its own state).
  void load_state_dict(const LRSchedulerState& s);

 protected:
  // The constructor of a derived class calls initial_step() once its own members are set: the
  // base lrs are the groups' initial lrs (the lr when a group's first scheduler was made), and
  // epoch 0's lrs are applied (as PyTorch's _initial_step).
  explicit LRScheduler(Optimizer& optimizer, std::string name);
  void initial_step();
  // The lrs of epoch last_epoch_, from the groups' current lrs (chainable form) or base_lrs_.
  virtual std::vector<double> get_lr() = 0;
  // The lrs of epoch last_epoch_ from base_lrs_ alone; empty where there is no closed form.
  virtual std::vector<double> closed_form_lr() const { return {}; }
  friend class SequentialLR;  // undoes a first step (rewind) and redoes it (initial_step)
  void rewind() { --last_epoch_; }
  std::vector<double> current_lrs() const;

  Optimizer& optimizer_;
  std::string name_;
  int64_t last_epoch_ = -1;
  std::vector<double> base_lrs_, last_lrs_;
};

// lr *= gamma every step_size epochs.
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);

 protected:
  std::vector<double> get_lr() override;
  std::vector<double> closed_form_lr() const override;

 private:
  int64_t step_size_;
  double gamma_;
};

// lr *= gamma at every step.
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma);

 protected:
  std::vector<double> get_lr() override;
  std::vector<double> closed_form_lr() const override;

 private:
  double gamma_;
};

// lr *= gamma at each milestone (an epoch listed twice multiplies twice).
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma = 0.1);

 protected:
  std::vector<double> get_lr() override;
  std::vector<double> closed_form_lr() const override;

 private:
  std::vector<int64_t> milestones_;
  double gamma_;
};

// lr = base lr * lambda(epoch), one function for every group.
class LambdaLR : public LRScheduler {
 public:
  LambdaLR(Optimizer& optimizer, std::function<double(int64_t)> lambda);

 protected:
  std::vector<double> get_lr() override;

 private:
  std::function<double(int64_t)> lambda_;
};

// lr follows half a cosine from the base lr down to eta_min over T_max epochs (SGDR without restarts).
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0.0);

 protected:
  std::vector<double> get_lr() override;
  std::vector<double> closed_form_lr() const override;

 private:
  int64_t t_max_;
  double eta_min_;
};

// lr scales linearly from start_factor to end_factor of the base lr over total_iters epochs.
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0, int64_t total_iters = 5);

 protected:
  std::vector<double> get_lr() override;
  std::vector<double> closed_form_lr() const override;

 private:
  double start_factor_, end_factor_;
  int64_t total_iters_;
};

struct OneCycleLROptions {
  OneCycleLROptions(double max_lr, int64_t total_steps) : max_lr_(max_lr), total_steps_(total_steps) {}
  KILN_OPTIM_ARG(double, max_lr);
  KILN_OPTIM_ARG(int64_t, total_steps);
  KILN_OPTIM_ARG(double, pct_start) = 0.3;
  KILN_OPTIM_ARG(std::string, anneal_strategy) = "cos";  // "cos" or "linear"
  KILN_OPTIM_ARG(bool, cycle_momentum) = true;
  KILN_OPTIM_ARG(double, base_momentum) = 0.85;
  KILN_OPTIM_ARG(double, max_momentum) = 0.95;
  KILN_OPTIM_ARG(double, div_factor) = 25.0;
  KILN_OPTIM_ARG(double, final_div_factor) = 1e4;
  KILN_OPTIM_ARG(bool, three_phase) = false;
};

// The 1cycle policy: lr rises from max_lr / div_factor to max_lr over pct_start of the steps, then
// anneals to max_lr / (div_factor * final_div_factor); momentum moves the opposite way. Stepped
// once per batch; stepping past total_steps is an error.
class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& options);

 protected:
  std::vector<double> get_lr() override;

 private:
  enum class Lr { Initial, Max, Min };
  struct Phase {
    double end_step;
    Lr start_lr, end_lr;
    double start_momentum, end_momentum;
  };
  double lr_of(Lr which, size_t group) const;
  double anneal(double start, double end, double pct) const;
  OneCycleLROptions options_;
  std::vector<Phase> phases_;
  std::vector<double> initial_lr_, max_lr_, min_lr_;
};

}  // namespace kiln::optim
