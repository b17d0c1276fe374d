// kiln/frontend/ops_fold.h — sliding blocks: unfold (im2col) and fold (col2im).
//
// As torch.nn.functional.unfold / fold: unfold takes input [N, C, H, W] (or [C, H, W]) to
// [N, C * kh * kw, L], one column per sliding block, rows ordered by channel, then kernel row,
// then kernel column, blocks row-major; fold sums such columns back into [N, C, H, W]
// (overlapping blocks add up). A one-entry list applies to both spatial dims.
#pragma once

#include "frontend/tensor.h"

namespace kiln {

Tensor unfold(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation = 1, IntArrayRef padding = 0,
              IntArrayRef stride = 1);
Tensor fold(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation = 1,
            IntArrayRef padding = 0, IntArrayRef stride = 1);

}  // namespace kiln
