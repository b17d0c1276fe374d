// kiln/optim/plateau.h — ReduceLROnPlateau, as torch.optim.lr_scheduler's.
//
//   optim::ReduceLROnPlateau sched(opt, optim::ReduceLROnPlateauOptions().patience(2));
//   for (...) { train(); sched.step(validation_loss); }     // lr *= factor after a plateau
//
// ReduceLROnPlateau watches a metric instead of counting epochs: when it has not improved by
// `threshold` (relative or absolute) for more than `patience` steps, every group's lr is
// multiplied by `factor` (not below min_lr; a change under eps is skipped), and `cooldown`
// steps follow in which bad steps are not counted. The rules are PyTorch's.
#pragma once

#include "optim/lr_scheduler.h"

#include <string>
#include <vector>

namespace kiln::optim {

struct ReduceLROnPlateauOptions {
  KILN_OPTIM_ARG(std::string, mode) = "min";            // "min" or "max"
  KILN_OPTIM_ARG(double, factor) = 0.1;
  KILN_OPTIM_ARG(int64_t, patience) = 10;
  KILN_OPTIM_ARG(double, threshold) = 1e-4;
  KILN_OPTIM_ARG(std::string, threshold_mode) = "rel";  // "rel" or "abs"
  KILN_OPTIM_ARG(int64_t, cooldown) = 0;
  KILN_OPTIM_ARG(std::vector<double>, min_lr) = {0.0};   // one value, or one per group
  KILN_OPTIM_ARG(double, eps) = 1e-8;
};

class ReduceLROnPlateau {
 public:
  explicit ReduceLROnPlateau(Optimizer& optimizer, ReduceLROnPlateauOptions options = {});
  void step(double metric);
  const std::vector<double>& get_last_lr() const { return last_lrs_; }
  int64_t last_epoch() const { return last_epoch_; }
  int64_t num_bad_epochs() const { return num_bad_epochs_; }
  double best() const { return best_; }

 private:
  bool is_better(double a) const;
  Optimizer& optimizer_;
  ReduceLROnPlateauOptions options_;
  std::vector<double> min_lrs_, last_lrs_;
  double best_;
  int64_t last_epoch_ = 0, num_bad_epochs_ = 0, cooldown_counter_ = 0;
};

}  // namespace kiln::optim
