// kiln/frontend/ops_dropout.h — the Dropout family: dropout, native_dropout and channel-wise
// (feature) dropout.
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

// at::feature_dropout: whole channels zeroed with probability p and the rest scaled by
// 1 / (1 - p), one draw per (dim 0, dim 1) pair of an input of at least 2 dims (the mask is
// dropout's, drawn over [N, C, 1, ...], so it follows the same seed and offsets). The input itself
// when !train, p = 0 or the input is empty; p = 1 gives input * 0.
Tensor feature_dropout(const Tensor& input, double p, bool train);
// torch.nn.functional.dropout1d/2d/3d: feature dropout over channels of [N, C, L] (or an
// unbatched [C, L]), [N, C, H, W] and [N, C, D, H, W] (or an unbatched [C, D, H, W]). As in
// PyTorch 2.15, dropout1d refuses other ranks; dropout2d reads a 3-D input as [N, C, L] and
// dropout3d anything but 5-D as unbatched, where PyTorch warns (kiln prints nothing).
Tensor dropout1d(const Tensor& input, double p = 0.5, bool train = true);
Tensor dropout2d(const Tensor& input, double p = 0.5, bool train = true);
Tensor dropout3d(const Tensor& input, double p = 0.5, bool train = true);

}  // namespace kiln
