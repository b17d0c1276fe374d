// kiln/frontend/ops_resample.h — resampling: interpolate (nearest, linear, bilinear, trilinear,
// area), upsample_nearest2d and upsample_bilinear2d, and the index-based modes of pad
// (reflect, replicate, circular).
//
// Names, argument order, defaults and semantics follow PyTorch (torch.nn.functional.interpolate,
// at::upsample_nearest2d, at::upsample_bilinear2d, torch.nn.functional.pad): the input is
// [N, C, *spatial]; source positions are computed as PyTorch's CPU kernels compute them
// (nearest: floor(dst * scale) in f32; linear: (dst + 0.5) * scale - 0.5 clamped at 0, or
// dst * (in - 1) / (out - 1) with align_corners), where scale is 1 / scale_factor when a
// scale factor is given and in / out otherwise.
//
// They record prims (frontend/ops_resample.cpp says how): nearest upsampling by an integer
// factor and every pad mode are views and cat (one fused kernel); other nearest sizes are an
// index_select; linear modes multiply each resampled dim by an interpolation matrix (BLAS;
// f32 for f16/bf16), as adaptive_avg_pool does. The resampled spatial sizes are static (a
// symbolic one is pinned by a guard).
#pragma once

#include "frontend/tensor.h"

#include <optional>
#include <string_view>
#include <vector>

namespace kiln {

// Exactly one of size and scale_factor (one entry applies to every spatial dim).
// mode: "nearest", "linear" (3-D input), "bilinear" (4-D), "trilinear" (5-D), "area".
Tensor interpolate(const Tensor& input, std::optional<std::vector<int64_t>> size,
                   std::optional<std::vector<double>> scale_factor = std::nullopt, std::string_view mode = "nearest",
                   std::optional<bool> align_corners = std::nullopt,
                   std::optional<bool> recompute_scale_factor = std::nullopt);

Tensor upsample_nearest2d(const Tensor& input, IntArrayRef output_size, std::optional<double> scales_h = std::nullopt,
                          std::optional<double> scales_w = std::nullopt);
Tensor upsample_bilinear2d(const Tensor& input, IntArrayRef output_size, bool align_corners,
                           std::optional<double> scales_h = std::nullopt, std::optional<double> scales_w = std::nullopt);

// pad() for mode "reflect", "replicate" or "circular": `pad` lists (left, right) pairs from the
// last dim backwards, for 1 to 3 dims of an input with one or two more dims than that.
Tensor pad_by_mode(const Tensor& self, IntArrayRef pad, std::string_view mode);
// libtorch's per-mode entry points (at::reflection_pad2d, ...): pad_by_mode for 1, 2 or 3 dims.
Tensor reflection_pad1d(const Tensor& self, IntArrayRef padding);
Tensor reflection_pad2d(const Tensor& self, IntArrayRef padding);
Tensor reflection_pad3d(const Tensor& self, IntArrayRef padding);
Tensor replication_pad1d(const Tensor& self, IntArrayRef padding);
Tensor replication_pad2d(const Tensor& self, IntArrayRef padding);
Tensor replication_pad3d(const Tensor& self, IntArrayRef padding);

// Samples input [N, C, H, W] at grid [N, H_out, W_out, 2] (x, y in [-1, 1]), or [N, C, D, H, W]
// at [N, D_out, H_out, W_out, 3] (x, y, z): mode "bilinear" (trilinear for 5-D), "nearest" or
// "bicubic" (tricubic for 5-D), padding_mode "zeros", "border" or "reflection", as
// torch.nn.functional.grid_sample. Each tap is a gather from the flattened planes.
Tensor grid_sample(const Tensor& input, const Tensor& grid, std::string_view mode = "bilinear",
                   std::string_view padding_mode = "zeros", std::optional<bool> align_corners = std::nullopt);

}  // namespace kiln
