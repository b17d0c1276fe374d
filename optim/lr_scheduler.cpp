// kiln/optim/lr_scheduler.cpp — StepLR, CosineAnnealingLR, LinearLR and OneCycleLR
// (optim/lr_scheduler.h), with torch.optim.lr_scheduler's formulas.
#include "optim/lr_scheduler.h"

#include "base/error.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace kiln::optim {

LRScheduler::LRScheduler(Optimizer& optimizer, std::string name) : optimizer_(optimizer), name_(std::move(name)) {}

// As PyTorch's: the first scheduler of a group records its lr as the group's initial lr, and
// every scheduler's base lr is that (a warm-up scheduler made first changes the lr, not the base
// of the schedulers made after it).
void LRScheduler::initial_step() {
  base_lrs_.clear();
  for (OptimizerParamGroup& g : optimizer_.param_groups()) {
    if (!g.initial_lr()) g.set_initial_lr(g.options().get_lr());
    base_lrs_.push_back(*g.initial_lr());
  }
  step();
}

std::vector<double> LRScheduler::current_lrs() const {
  std::vector<double> lrs;
  for (const OptimizerParamGroup& g : optimizer_.param_groups()) lrs.push_back(g.options().get_lr());
  return lrs;
}

void LRScheduler::step() {
  ++last_epoch_;
  std::vector<double> lrs = get_lr();
  auto& groups = optimizer_.param_groups();
  if (lrs.size() != groups.size())
    fail(name_, "the optimizer has {} parameter groups, the scheduler was made for {}", groups.size(), lrs.size());
  for (size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(lrs[i]);
  last_lrs_ = std::move(lrs);
}

void LRScheduler::step_to(int64_t epoch) {
  last_epoch_ = epoch;
  std::vector<double> lrs = closed_form_lr();
  if (lrs.empty()) lrs = get_lr();
  auto& groups = optimizer_.param_groups();
  for (size_t i = 0; i < groups.size() && i < lrs.size(); ++i) groups[i].options().set_lr(lrs[i]);
  last_lrs_ = std::move(lrs);
}

void LRScheduler::load_state_dict(const LRSchedulerState& s) {
  if (s.base_lrs.size() != base_lrs_.size())
    fail(name_, "loaded scheduler state has {} base lrs, the optimizer has {} parameter groups", s.base_lrs.size(),
         base_lrs_.size());
  last_epoch_ = s.last_epoch;
  base_lrs_ = s.base_lrs;
  last_lrs_ = s.last_lrs.empty() ? current_lrs() : s.last_lrs;
}

// ---- StepLR

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer, "StepLR"), step_size_(step_size), gamma_(gamma) {
  if (step_size <= 0) fail(name_, "step_size must be positive, got {}", step_size);
  initial_step();
}

std::vector<double> StepLR::get_lr() {
  std::vector<double> lrs = current_lrs();
  if (last_epoch_ == 0 || last_epoch_ % step_size_ != 0) return lrs;
  for (double& lr : lrs) lr *= gamma_;
  return lrs;
}

std::vector<double> StepLR::closed_form_lr() const {
  std::vector<double> lrs = base_lrs_;
  for (double& lr : lrs) lr *= std::pow(gamma_, static_cast<double>(last_epoch_ / step_size_));
  return lrs;
}

// ---- ExponentialLR, MultiStepLR, LambdaLR

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma) : LRScheduler(optimizer, "ExponentialLR"), gamma_(gamma) {
  initial_step();
}

std::vector<double> ExponentialLR::get_lr() {
  std::vector<double> lrs = current_lrs();
  if (last_epoch_ == 0) return lrs;
  for (double& lr : lrs) lr *= gamma_;
  return lrs;
}

std::vector<double> ExponentialLR::closed_form_lr() const {
  std::vector<double> lrs = base_lrs_;
  for (double& lr : lrs) lr *= std::pow(gamma_, static_cast<double>(last_epoch_));
  return lrs;
}

MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma)
    : LRScheduler(optimizer, "MultiStepLR"), milestones_(std::move(milestones)), gamma_(gamma) {
  initial_step();
}

std::vector<double> MultiStepLR::get_lr() {
  std::vector<double> lrs = current_lrs();
  const auto times = std::count(milestones_.begin(), milestones_.end(), last_epoch_);
  if (times == 0) return lrs;
  for (double& lr : lrs) lr *= std::pow(gamma_, static_cast<double>(times));
  return lrs;
}

std::vector<double> MultiStepLR::closed_form_lr() const {
  // gamma to the number of milestones at or before the epoch (bisect_right of the sorted list).
  std::vector<int64_t> sorted = milestones_;
  std::sort(sorted.begin(), sorted.end());
  const auto passed = std::upper_bound(sorted.begin(), sorted.end(), last_epoch_) - sorted.begin();
  std::vector<double> lrs = base_lrs_;
  for (double& lr : lrs) lr *= std::pow(gamma_, static_cast<double>(passed));
  return lrs;
}

LambdaLR::LambdaLR(Optimizer& optimizer, std::function<double(int64_t)> lambda)
    : LRScheduler(optimizer, "LambdaLR"), lambda_(std::move(lambda)) {
  if (!lambda_) fail(name_, "lr_lambda is empty");
  initial_step();
}

std::vector<double> LambdaLR::get_lr() {
  std::vector<double> lrs = base_lrs_;
  for (double& lr : lrs) lr *= lambda_(last_epoch_);
  return lrs;
}

// ---- CosineAnnealingLR

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer, "CosineAnnealingLR"), t_max_(T_max), eta_min_(eta_min) {
  if (T_max <= 0) fail(name_, "T_max must be positive, got {}", T_max);
  initial_step();
}

namespace {
// Python's a % b for b > 0 (never negative).
int64_t py_mod(int64_t a, int64_t b) { return ((a % b) + b) % b; }
}  // namespace

std::vector<double> CosineAnnealingLR::get_lr() {
  constexpr double pi = std::numbers::pi;
  std::vector<double> lrs = current_lrs();
  if (last_epoch_ == 0) return lrs;
  const double T = static_cast<double>(t_max_), e = static_cast<double>(last_epoch_);
  for (size_t i = 0; i < lrs.size(); ++i) {
    if (py_mod(last_epoch_ - 1 - t_max_, 2 * t_max_) == 0)
      lrs[i] = lrs[i] + (base_lrs_[i] - eta_min_) * (1 - std::cos(pi / T)) / 2;
    else
      lrs[i] = (1 + std::cos(pi * e / T)) / (1 + std::cos(pi * (e - 1) / T)) * (lrs[i] - eta_min_) + eta_min_;
  }
  return lrs;
}

std::vector<double> CosineAnnealingLR::closed_form_lr() const {
  std::vector<double> lrs = base_lrs_;
  for (double& lr : lrs)
    lr = eta_min_ + (lr - eta_min_) * (1 + std::cos(std::numbers::pi * static_cast<double>(last_epoch_) /
                                                    static_cast<double>(t_max_))) / 2;
  return lrs;
}

// ---- LinearLR

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor, int64_t total_iters)
    : LRScheduler(optimizer, "LinearLR"), start_factor_(start_factor), end_factor_(end_factor), total_iters_(total_iters) {
  if (!(start_factor > 0 && start_factor <= 1))
    fail(name_, "Starting multiplicative factor expected to be greater than 0 and less or equal to 1, got {}",
         start_factor);
  if (!(end_factor >= 0 && end_factor <= 1))
    fail(name_, "Ending multiplicative factor expected to be between 0 and 1, got {}", end_factor);
  initial_step();
}

std::vector<double> LinearLR::get_lr() {
  std::vector<double> lrs = current_lrs();
  if (last_epoch_ == 0) {
    for (double& lr : lrs) lr *= start_factor_;
    return lrs;
  }
  if (last_epoch_ > total_iters_) return lrs;
  const double d = end_factor_ - start_factor_;
  for (double& lr : lrs)
    lr *= 1.0 + d / (static_cast<double>(total_iters_) * start_factor_ + static_cast<double>(last_epoch_ - 1) * d);
  return lrs;
}

std::vector<double> LinearLR::closed_form_lr() const {
  std::vector<double> lrs = base_lrs_;
  const double done = static_cast<double>(std::min(total_iters_, last_epoch_)) / static_cast<double>(total_iters_);
  for (double& lr : lrs) lr *= start_factor_ + (end_factor_ - start_factor_) * done;
  return lrs;
}

// ---- OneCycleLR

OneCycleLR::OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& o)
    : LRScheduler(optimizer, "OneCycleLR"), options_(o) {
  if (o.total_steps() <= 0) fail(name_, "Expected positive integer total_steps, but got {}", o.total_steps());
  if (!(o.pct_start() >= 0 && o.pct_start() <= 1))
    fail(name_, "Expected float between 0 and 1 pct_start, but got {}", o.pct_start());
  if (o.anneal_strategy() != "cos" && o.anneal_strategy() != "linear")
    fail(name_, "anneal_strategy must be one of 'cos' or 'linear', instead got {}", o.anneal_strategy());
  const double total = static_cast<double>(o.total_steps());
  const double up = o.pct_start() * total - 1;
  if (o.three_phase()) {
    phases_ = {{up, Lr::Initial, Lr::Max, o.max_momentum(), o.base_momentum()},
               {2 * o.pct_start() * total - 2, Lr::Max, Lr::Initial, o.base_momentum(), o.max_momentum()},
               {total - 1, Lr::Initial, Lr::Min, o.max_momentum(), o.max_momentum()}};
  } else {
    phases_ = {{up, Lr::Initial, Lr::Max, o.max_momentum(), o.base_momentum()},
               {total - 1, Lr::Max, Lr::Min, o.base_momentum(), o.max_momentum()}};
  }
  for (OptimizerParamGroup& g : optimizer.param_groups()) {
    const double initial = o.max_lr() / o.div_factor();
    initial_lr_.push_back(initial);
    max_lr_.push_back(o.max_lr());
    min_lr_.push_back(initial / o.final_div_factor());
    g.options().set_lr(initial);
    g.set_initial_lr(initial);  // PyTorch sets group["initial_lr"] here, whatever came before
    if (o.cycle_momentum()) {
      if (!g.options().has_momentum())
        fail(name_, "optimizer must support momentum or beta1 with `cycle_momentum` option enabled");
      g.options().set_momentum(o.max_momentum());
    }
  }
  initial_step();
}

double OneCycleLR::lr_of(Lr which, size_t group) const {
  switch (which) {
    case Lr::Initial: return initial_lr_[group];
    case Lr::Max: return max_lr_[group];
    case Lr::Min: return min_lr_[group];
  }
  return 0;
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (options_.anneal_strategy() == "linear") return (end - start) * pct + start;
  return end + (start - end) / 2.0 * (std::cos(std::numbers::pi * pct) + 1);
}

std::vector<double> OneCycleLR::get_lr() {
  if (last_epoch_ > options_.total_steps())
    fail(name_, "Tried to step {} times. The specified number of total steps is {}", last_epoch_,
         options_.total_steps());
  const double step = static_cast<double>(last_epoch_);
  auto& groups = optimizer_.param_groups();
  std::vector<double> lrs;
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    double start = 0, lr = 0, momentum = 0;
    for (size_t i = 0; i < phases_.size(); ++i) {
      const Phase& ph = phases_[i];
      if (step <= ph.end_step || i + 1 == phases_.size()) {
        const double pct = (step - start) / (ph.end_step - start);
        lr = anneal(lr_of(ph.start_lr, gi), lr_of(ph.end_lr, gi), pct);
        momentum = anneal(ph.start_momentum, ph.end_momentum, pct);
        break;
      }
      start = ph.end_step;
    }
    lrs.push_back(lr);
    if (options_.cycle_momentum()) groups[gi].options().set_momentum(momentum);
  }
  return lrs;
}

}  // namespace kiln::optim
