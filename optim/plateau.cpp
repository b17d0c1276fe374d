// kiln/optim/plateau.cpp — ReduceLROnPlateau (optim/plateau.h).
#include "optim/plateau.h"

#include "base/error.h"

#include <cmath>
#include <limits>

namespace kiln::optim {

namespace {
constexpr const char* kPlateau = "ReduceLROnPlateau";
}  // namespace

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, ReduceLROnPlateauOptions options)
    : optimizer_(optimizer), options_(std::move(options)) {
  const ReduceLROnPlateauOptions& o = options_;
  if (!(o.factor() < 1.0)) fail(kPlateau, "Factor should be < 1.0, got {}", o.factor());
  if (o.mode() != "min" && o.mode() != "max") fail(kPlateau, "mode {} is unknown!", o.mode());
  if (o.threshold_mode() != "rel" && o.threshold_mode() != "abs")
    fail(kPlateau, "threshold mode {} is unknown!", o.threshold_mode());
  const size_t groups = optimizer.param_groups().size();
  if (o.min_lr().size() == 1) {
    min_lrs_.assign(groups, o.min_lr()[0]);
  } else if (o.min_lr().size() == groups) {
    min_lrs_ = o.min_lr();
  } else {
    fail(kPlateau, "expected {} min_lrs, got {}", groups, o.min_lr().size());
  }
  best_ = o.mode() == "min" ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  for (const OptimizerParamGroup& g : optimizer.param_groups()) last_lrs_.push_back(g.options().get_lr());
}

bool ReduceLROnPlateau::is_better(double a) const {
  const double t = options_.threshold();
  const bool rel = options_.threshold_mode() == "rel";
  if (options_.mode() == "min") return rel ? a < best_ * (1.0 - t) : a < best_ - t;
  return rel ? a > best_ * (t + 1.0) : a > best_ + t;
}

void ReduceLROnPlateau::step(double metric) {
  ++last_epoch_;
  if (is_better(metric)) {
    best_ = metric;
    num_bad_epochs_ = 0;
  } else {
    ++num_bad_epochs_;
  }
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
    num_bad_epochs_ = 0;  // bad steps in cooldown are not counted
  }
  auto& groups = optimizer_.param_groups();
  if (num_bad_epochs_ > options_.patience()) {
    for (size_t i = 0; i < groups.size(); ++i) {
      const double old_lr = groups[i].options().get_lr();
      const double new_lr = std::max(old_lr * options_.factor(), min_lrs_[i]);
      if (old_lr - new_lr > options_.eps()) groups[i].options().set_lr(new_lr);
    }
    cooldown_counter_ = options_.cooldown();
    num_bad_epochs_ = 0;
  }
  last_lrs_.clear();
  for (const OptimizerParamGroup& g : groups) last_lrs_.push_back(g.options().get_lr());
}

}  // namespace kiln::optim
