// kiln/optim/clip_grad.h — gradient clipping, as torch::nn::utils::clip_grad_norm_ and
// clip_grad_value_. Each is one compiled program over all the gradients (kiln::compile), with
// no host synchronization: the scale is computed and applied on the device.
//
//   Tensor norm = optim::clip_grad_norm_(model->parameters(), 1.0);  // 0-d, the norm before clipping
//   optim::clip_grad_value_(model->parameters(), 0.5);
#pragma once

#include "frontend/tensor.h"

#include <limits>
#include <vector>

namespace kiln::optim {

// The norm of all gradients together, as if concatenated (norm_type: a p >= 0, or
// infinity); each gradient is scaled by min(1, max_norm / (norm + 1e-6)). Parameters without a
// gradient are skipped; with none, the result is 0. error_if_nonfinite: a NaN or infinite norm
// raises an error (this reads the norm on the host).
Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
// Clamps every gradient into [-clip_value, clip_value] in place.
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);

constexpr double kInfNorm = std::numeric_limits<double>::infinity();

}  // namespace kiln::optim
