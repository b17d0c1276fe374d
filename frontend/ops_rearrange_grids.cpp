// kiln/frontend/ops_rearrange_grids.cpp — libtorch's rearrangements into and out of grids
// (frontend/ops.h): diag, diag_embed, rot90, meshgrid, pixel_shuffle and pixel_unshuffle; and
// tile, fliplr, flipud, concat and concatenate, other spellings of repeat, flip and cat; and the
// matrices built from pieces: block_diag, diagflat and vander. Each records views, pads, flips,
// cats, a select or a running product: nothing new to lower or differentiate.
//
// Checks, their order and wording are PyTorch 2.15's (measured). Sizes are read as integers (a
// symbolic size is pinned by a guard).
//   diag_embed  the last dim of self on the offset diagonal of a new pair of dims (dim1, dim2),
//               n = size + |offset| each: a [n, n] mask picks x[i] (offset >= 0) or x[j];
//   rot90       k quarter turns from dims[0] towards dims[1]: flip, then transpose;
//   meshgrid    each 0-D or 1-D input expanded along its own dim ("xy" swaps the first two);
//   pixel_shuffle [..., C r^2, H, W] <-> [..., C, H r, W r] (pixel_unshuffle the inverse);
//   block_diag  each operand as a 2-D block (0-D [1, 1], 1-D one row), padded with zeros to the
//               result's width at its column offset, the rows concatenated;
//   vander      the columns 1, x, x^2, ... as ATen makes them: a running product of x (so an
//               integer x gives int64), highest power first unless increasing.
#include "base/error.h"
#include "frontend/ops.h"
#include "frontend/ops_factory.h"
#include "frontend/ops_view.h"
#include "frontend/promotion.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace kiln {

Tensor diag_embed(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  constexpr std::string_view op = "diag_embed";
  const int64_t rank = self.dim() + 1;
  const int64_t d1 = normalize_dim(op, dim1, rank), d2 = normalize_dim(op, dim2, rank);
  if (d1 == d2) fail(op, "diagonal dimensions cannot be identical {}, {}", dim1, dim2);
  int64_t n = 0;
  if (offset == INT64_MIN || __builtin_add_overflow(self.size(-1), std::abs(offset), &n))
    fail(op, "offset {} makes a diagonal of more than 2^63 elements", offset);
  const Tensor padded = constant_pad_nd(self, {0, n - self.size(-1)}, 0);
  const TensorOptions index = TensorOptions(ScalarType::Int64).device(self.device());
  const Tensor rows = arange(n, index).unsqueeze(1), cols = arange(n, index).unsqueeze(0);
  const Tensor on_diagonal = eq(sub(cols, rows), offset);
  const Tensor value = offset >= 0 ? padded.unsqueeze(-1) : padded.unsqueeze(-2);
  const Tensor grid = where(on_diagonal, value, zeros({}, self.options()));  // [..., n, n]
  // The batch dims keep their order around the new pair at d1 (rows) and d2 (columns).
  std::vector<int64_t> perm(static_cast<size_t>(rank), -1);
  perm[static_cast<size_t>(d1)] = rank - 2;
  perm[static_cast<size_t>(d2)] = rank - 1;
  int64_t next = 0;
  for (int64_t& p : perm)
    if (p < 0) p = next++;
  return permute(grid, perm);
}

Tensor diag(const Tensor& self, int64_t diagonal) {
  if (self.dim() == 1) return diag_embed(self, diagonal, 0, 1);
  if (self.dim() == 2) return kiln::diagonal(self, diagonal, 0, 1).clone();
  fail("diag", "diag(): Supports 1D or 2D tensors. Got {}D", self.dim());
}

Tensor rot90(const Tensor& self, int64_t k, IntArrayRef dims) {
  constexpr std::string_view op = "rot90";
  if (dims.size() != 2) fail(op, "expected total rotation dims == 2, but got dims = {}", dims.size());
  const int64_t rank = self.dim();
  if (rank < 2) fail(op, "expected total dims >= 2, but got total dims = {}", rank);
  int64_t apart = 0;  // dims rank apart name the same dim (d and d - rank)
  const bool same = dims[0] == dims[1] || (!__builtin_sub_overflow(dims[0], dims[1], &apart) && (apart == rank || apart == -rank));
  if (same)
    fail(op, "expected rotation dims to be different, but got dim0 = {} and dim1 = {}", dims[0], dims[1]);
  const int64_t d0 = normalize_dim(op, dims[0], rank), d1 = normalize_dim(op, dims[1], rank);
  switch (((k % 4) + 4) % 4) {
    case 1: return flip(self, {d1}).transpose(d0, d1);
    case 2: return flip(self, {d0, d1});
    case 3: return flip(self, {d0}).transpose(d0, d1);
    default: return self.clone();
  }
}

std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, std::string_view indexing) {
  constexpr std::string_view op = "meshgrid";
  if (tensors.empty()) fail(op, "meshgrid expects a non-empty TensorList");
  for (const Tensor& t : tensors) {  // PyTorch's order: dtypes and devices, the indexing, the ranks
    if (t.dtype() != tensors[0].dtype()) fail(op, "meshgrid expects all tensors to have the same dtype");
    if (t.device() != tensors[0].device()) fail(op, "meshgrid expects all tensors to have the same device");
  }
  if (indexing != "ij" && indexing != "xy")
    fail(op, "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {}", indexing);
  for (const Tensor& t : tensors)
    if (t.dim() > 1) fail(op, "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a {}D tensor", t.dim());
  // Cartesian indexing: the grid of the first two inputs swapped, its outputs swapped back.
  const bool swap = indexing == "xy" && tensors.size() >= 2;
  std::vector<Tensor> in = tensors;
  if (swap) std::swap(in[0], in[1]);
  std::vector<int64_t> shape;
  for (const Tensor& t : in) shape.push_back(t.numel());
  std::vector<Tensor> out;
  for (size_t i = 0; i < in.size(); ++i) {
    std::vector<int64_t> view(in.size(), 1);
    view[i] = -1;
    out.push_back(in[i].reshape(view).expand(shape));
  }
  if (swap) std::swap(out[0], out[1]);
  return out;
}

namespace {

void check_pixel_shapes(std::string_view op, const Tensor& self, int64_t factor, const char* factor_name) {
  if (self.dim() < 3)
    fail(op, "{} expects input to have at least 3 dimensions, but got input with {} dimension(s)", op, self.dim());
  if (factor <= 0) fail(op, "{} expects a positive {}, but got {}", op, factor_name, factor);
}

// self's sizes without its last three dims.
std::vector<int64_t> batch_sizes(const Tensor& self) {
  return std::vector<int64_t>(self.sizes().begin(), self.sizes().end() - 3);
}

// The permutation that keeps the first `batch` dims and then takes `tail` (indices past them).
std::vector<int64_t> keep_batch(size_t batch, std::vector<int64_t> tail) {
  std::vector<int64_t> perm;
  for (size_t d = 0; d < batch; ++d) perm.push_back(static_cast<int64_t>(d));
  for (int64_t t : tail) perm.push_back(static_cast<int64_t>(batch) + t);
  return perm;
}

std::vector<int64_t> with_batch(std::vector<int64_t> batch, std::initializer_list<int64_t> tail) {
  batch.insert(batch.end(), tail);
  return batch;
}

}  // namespace

Tensor pixel_shuffle(const Tensor& self, int64_t upscale_factor) {
  constexpr std::string_view op = "pixel_shuffle";
  check_pixel_shapes(op, self, upscale_factor, "upscale_factor");
  const int64_t r = upscale_factor, c = self.size(-3), h = self.size(-2), w = self.size(-1);
  if (c % (r * r) != 0)
    fail(op, "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, but "
             "input.size(-3)={} is not divisible by {}",
         c, r * r);
  const std::vector<int64_t> batch = batch_sizes(self);
  const Tensor split = self.reshape(with_batch(batch, {c / (r * r), r, r, h, w}));
  return split.permute(keep_batch(batch.size(), {0, 3, 1, 4, 2})).reshape(with_batch(batch, {c / (r * r), h * r, w * r}));
}

Tensor pixel_unshuffle(const Tensor& self, int64_t downscale_factor) {
  constexpr std::string_view op = "pixel_unshuffle";
  check_pixel_shapes(op, self, downscale_factor, "downscale_factor");
  const int64_t r = downscale_factor, c = self.size(-3), h = self.size(-2), w = self.size(-1);
  if (h % r != 0)
    fail(op, "pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)={} is not "
             "divisible by {}",
         h, r);
  if (w % r != 0)
    fail(op, "pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)={} is not "
             "divisible by {}",
         w, r);
  const std::vector<int64_t> batch = batch_sizes(self);
  const Tensor split = self.reshape(with_batch(batch, {c, h / r, r, w / r, r}));
  return split.permute(keep_batch(batch.size(), {0, 2, 4, 1, 3})).reshape(with_batch(batch, {c * r * r, h / r, w / r}));
}

Tensor tile(const Tensor& self, IntArrayRef reps) {
  std::vector<int64_t> full(static_cast<size_t>(std::max<int64_t>(self.dim() - static_cast<int64_t>(reps.size()), 0)), 1);
  full.insert(full.end(), reps.begin(), reps.end());
  return repeat(self, full);
}

Tensor fliplr(const Tensor& self) {
  if (self.dim() < 2) fail("fliplr", "Input must be >= 2-d.");
  return flip(self, {1});
}

Tensor flipud(const Tensor& self) {
  if (self.dim() < 1) fail("flipud", "Input must be >= 1-d.");
  return flip(self, {0});
}

Tensor concat(const std::vector<Tensor>& tensors, int64_t dim) { return cat(tensors, dim); }
Tensor concatenate(const std::vector<Tensor>& tensors, int64_t dim) { return cat(tensors, dim); }

Tensor block_diag(const std::vector<Tensor>& tensors) {
  constexpr std::string_view op = "block_diag";
  if (tensors.empty()) return empty({1, 0});
  for (const Tensor& t : tensors)
    if (t.device() != tensors[0].device())
      fail(op, "torch.block_diag: input tensors must all be on the same device. Input 0 is on device {} and input {} "
               "is on device {}",
           tensors[0].device().str(), &t - tensors.data(), t.device().str());
  std::vector<TensorOrScalar> operands(tensors.begin(), tensors.end());
  const ScalarType dtype = result_type(operands);
  std::vector<Tensor> blocks;
  int64_t width = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (t.dim() > 2)
      fail(op, "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {} has {} dimensions", i, t.dim());
    blocks.push_back(t.dim() == 2 ? t : t.reshape({1, t.dim() == 1 ? t.size(0) : 1}));
    if (__builtin_add_overflow(width, blocks.back().size(1), &width))
      fail(op, "torch.block_diag: the result has more than 2^63 columns");
  }
  int64_t left = 0;
  for (Tensor& b : blocks) {
    const int64_t w = b.size(1);
    b = constant_pad_nd(b.to(dtype), {left, width - left - w}, 0);
    left += w;
  }
  return cat(blocks, 0);
}

Tensor diagflat(const Tensor& self, int64_t offset) { return diag(self.reshape({-1}), offset); }

Tensor vander(const Tensor& x, std::optional<int64_t> N, bool increasing) {
  constexpr std::string_view op = "vander";
  if (x.dim() != 1) fail(op, "x must be a one-dimensional tensor.");
  const int64_t n = N.value_or(x.size(0));
  if (n < 0) fail(op, "N must be non-negative.");
  const ScalarType dtype = promote_types(x.dtype(), ScalarType::Int64);  // cumprod's integer result
  const int64_t rows = x.size(0);
  Tensor result = ones({rows, std::min<int64_t>(n, 1)}, x.options().dtype(dtype));
  if (n > 1) result = cat({result, cumprod(x.unsqueeze(1).expand({rows, n - 1}), 1, dtype)}, 1);
  return increasing ? result : flip(result, {1});
}

}  // namespace kiln
