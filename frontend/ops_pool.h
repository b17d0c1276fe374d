// kiln/frontend/ops_pool.h — pooling: max_pool1d/2d/3d (with indices), avg_pool1d/2d/3d and
// adaptive_avg_pool1d/2d/3d.
//
// Names, argument order, defaults and semantics follow libtorch (at::max_pool2d,
// at::max_pool2d_with_indices, at::avg_pool2d, at::adaptive_avg_pool2d): the pooled dims are
// the last 1, 2 or 3 of an input with or without a batch dim; an empty stride means the
// kernel size; one-entry lists apply to every pooled dim; ceil_mode lets the last window
// start past the end as long as it starts inside the input or its left padding. Indices are
// flat positions within each input plane, as PyTorch returns them.
//
// They record prims (frontend/ops_pool.cpp says how): the windows are strided slices of the
// padded input stacked on a new last dim and reduced, which the CPU backend fuses into one
// generated kernel per pooling; adaptive average pooling is a product with a pooling matrix
// per dim. docs/decisions/ops-nn.md "Pooling records prims" and the Core-nodes entry explain
// which pooling ops became nodes of their own (max_pool2d_with_indices, avg_pool2d, ...).
#pragma once

#include "frontend/tensor.h"

#include <optional>
#include <tuple>

namespace kiln {

Tensor max_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  IntArrayRef dilation = 1, bool ceil_mode = false);
Tensor max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  IntArrayRef dilation = 1, bool ceil_mode = false);
Tensor max_pool3d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  IntArrayRef dilation = 1, bool ceil_mode = false);
// (values, int64 indices into each flattened input plane).
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {},
                                                   IntArrayRef padding = 0, IntArrayRef dilation = 1,
                                                   bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {},
                                                   IntArrayRef padding = 0, IntArrayRef dilation = 1,
                                                   bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {},
                                                   IntArrayRef padding = 0, IntArrayRef dilation = 1,
                                                   bool ceil_mode = false);

Tensor avg_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true);
Tensor avg_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
Tensor avg_pool3d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);

Tensor adaptive_avg_pool1d(const Tensor& self, IntArrayRef output_size);
Tensor adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size);
Tensor adaptive_avg_pool3d(const Tensor& self, IntArrayRef output_size);
// (values, int64 indices into each flattened input plane) over PyTorch's adaptive windows
// [floor(i * in / out), ceil((i + 1) * in / out)); floating inputs.
std::tuple<Tensor, Tensor> adaptive_max_pool1d(const Tensor& self, IntArrayRef output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& self, IntArrayRef output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool3d(const Tensor& self, IntArrayRef output_size);

// ---- gradients (at::max_pool2d_with_indices_backward, at::avg_pool2d_backward,
// at::_adaptive_avg_pool2d_backward): the input gradient of the pooling with these arguments,
// given grad_output; self is read for its shape. The 2-D ones record Core nodes (ir/ops.def),
// which the Pool family's derivative rules record; max_pool3d_with_indices_backward records
// its decomposition (a scatter-add of grad_output at `indices`).
Tensor max_pool2d_with_indices_backward(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                                        const Tensor& indices);
Tensor max_pool3d_with_indices_backward(const Tensor& grad_output, const Tensor& self, const Tensor& indices);
Tensor avg_pool2d_backward(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                           IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override);
Tensor adaptive_avg_pool2d_backward(const Tensor& grad_output, const Tensor& self);

// ---- sliding blocks (frontend/ops_pool_fold.cpp) ----
// unfold (im2col) and fold (col2im).
//
// As torch.nn.functional.unfold / fold: unfold takes input [N, C, H, W] (or [C, H, W]) to
// [N, C * kh * kw, L], one column per sliding block, rows ordered by channel, then kernel row,
// then kernel column, blocks row-major; fold sums such columns back into [N, C, H, W]
// (overlapping blocks add up). A one-entry list applies to both spatial dims.
Tensor unfold(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation = 1, IntArrayRef padding = 0,
              IntArrayRef stride = 1);
Tensor fold(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation = 1,
            IntArrayRef padding = 0, IntArrayRef stride = 1);

}  // namespace kiln
