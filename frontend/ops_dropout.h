// kiln/frontend/ops_dropout.h — the Dropout family: dropout and native_dropout.
#pragma once

#include "frontend/tensor.h"
#include <optional>
#include <tuple>

namespace kiln {

// Zeroes each element with probability p (Philox draws, frontend/ops_random.h) and scales the rest
// by 1 / (1 - p) when `train`; the input itself otherwise. Floating inputs only.
Tensor dropout(const Tensor& input, double p, bool train);
// (output, bool keep-mask) as at::native_dropout; train false (or p = 0): the input and all-true.
std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, std::optional<bool> train);

}  // namespace kiln
