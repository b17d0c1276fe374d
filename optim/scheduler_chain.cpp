// kiln/optim/scheduler_chain.cpp — ChainedScheduler and SequentialLR (optim/scheduler_chain.h).
#include "optim/scheduler_chain.h"

#include "base/error.h"

#include <algorithm>

namespace kiln::optim {

namespace {
void check_one_optimizer(const char* name, const std::vector<LRScheduler*>& schedulers, const Optimizer* optimizer) {
  if (schedulers.empty()) fail(name, "expects at least one scheduler");
  for (const LRScheduler* s : schedulers) {
    if (!s) fail(name, "got a null scheduler");
    if (&s->optimizer() != (optimizer ? optimizer : &schedulers.front()->optimizer()))
      fail(name, "expects all schedulers to belong to the same optimizer");
  }
}
}  // namespace

ChainedScheduler::ChainedScheduler(std::vector<LRScheduler*> schedulers) : schedulers_(std::move(schedulers)) {
  check_one_optimizer("ChainedScheduler", schedulers_, nullptr);
}

void ChainedScheduler::step() {
  for (LRScheduler* s : schedulers_) s->step();
}

SequentialLR::SequentialLR(Optimizer& optimizer, std::vector<LRScheduler*> schedulers, std::vector<int64_t> milestones)
    : schedulers_(std::move(schedulers)), milestones_(std::move(milestones)) {
  check_one_optimizer("SequentialLR", schedulers_, &optimizer);
  if (milestones_.size() + 1 != schedulers_.size())
    fail("SequentialLR", "Sequential Schedulers expects number of schedulers provided to be one more than the "
                         "number of milestone points, but got number of schedulers {} and the number of milestones {}",
         schedulers_.size(), milestones_.size());
  for (OptimizerParamGroup& g : optimizer.param_groups())
    if (g.initial_lr()) g.options().set_lr(*g.initial_lr());
  for (LRScheduler* s : schedulers_) s->rewind();
  schedulers_.front()->initial_step();
  last_lrs_ = schedulers_.front()->get_last_lr();
}

void SequentialLR::step() {
  ++last_epoch_;
  const auto idx = static_cast<size_t>(std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) -
                                       milestones_.begin());
  LRScheduler* s = schedulers_[idx];
  if (idx > 0 && milestones_[idx - 1] == last_epoch_) s->step_to(0);
  else s->step();
  last_lrs_ = s->get_last_lr();
}

}  // namespace kiln::optim
