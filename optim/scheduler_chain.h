// kiln/optim/scheduler_chain.h — schedulers made of schedulers, as torch.optim.lr_scheduler's:
//
//   optim::LinearLR warmup(opt, 0.1, 1.0, 5);
//   optim::CosineAnnealingLR decay(opt, 95);
//   optim::SequentialLR sched(opt, {&warmup, &decay}, {5});   // warm-up, then cosine from step 5
//
//   optim::StepLR a(opt, 10);  optim::ExponentialLR b(opt, 0.99);
//   optim::ChainedScheduler both({&a, &b});                   // a.step(), then b.step()
//
// The schedulers are the caller's and must outlive the composite; all must belong to one
// optimizer.
#pragma once

#include "optim/lr_scheduler.h"

#include <vector>

namespace kiln::optim {

// Steps several schedulers together, in order; each sees the lr the one before it set.
class ChainedScheduler {
 public:
  explicit ChainedScheduler(std::vector<LRScheduler*> schedulers);
  void step();
  const std::vector<double>& get_last_lr() const { return schedulers_.back()->get_last_lr(); }

 private:
  std::vector<LRScheduler*> schedulers_;
};

// Runs schedulers one after another: schedulers[i] from milestones[i - 1] on, restarted at its
// epoch 0 (its closed form, where it has one) when its milestone is reached. As PyTorch's, the
// constructor restores the groups' initial lrs and undoes the other schedulers' first steps.
class SequentialLR {
 public:
  SequentialLR(Optimizer& optimizer, std::vector<LRScheduler*> schedulers, std::vector<int64_t> milestones);
  void step();
  const std::vector<double>& get_last_lr() const { return last_lrs_; }
  int64_t last_epoch() const { return last_epoch_; }

 private:
  std::vector<LRScheduler*> schedulers_;
  std::vector<int64_t> milestones_;
  std::vector<double> last_lrs_;
  int64_t last_epoch_ = 0;
};

}  // namespace kiln::optim
