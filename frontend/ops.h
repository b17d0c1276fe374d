// kiln/frontend/ops.h — the tensor operations, named and ordered as libtorch's torch:: functions.
//
// Each section is one op family (ir/ops.def) and is defined in that family's files:
// pointwise (Unary, Binary, Ternary, Pointwise) frontend/ops_pointwise.cpp; reductions and
// scans frontend/ops_reduction.cpp, mean frontend/ops_moments.cpp, logsumexp
// frontend/ops_softmax.cpp; cat, stack and pad frontend/ops_shape.cpp; indexing
// frontend/ops_index*.cpp; rearranging frontend/ops_rearrange.cpp; mm and bmm
// frontend/ops_matmul.cpp, matmul, addmm and baddbmm frontend/ops_linear.cpp; to and clone
// frontend/ops_cast.cpp. The other families have a header of their own (frontend/ops_<family>.h).
//
// Each op validates its arguments, applies PyTorch's type promotion and broadcasting, and
// then dispatches prims (frontend/dispatch.h): eagerly, or recorded when an input is traced.
#pragma once

#include "frontend/tensor.h"

#include <optional>
#include <tuple>
#include <string_view>
#include <vector>

namespace kiln {

// ---- unary pointwise ----------------------------------------------------------------------
#define KILN_DECLARE_UNARY(name) Tensor name(const Tensor& self);
KILN_DECLARE_UNARY(abs) KILN_DECLARE_UNARY(neg) KILN_DECLARE_UNARY(exp) KILN_DECLARE_UNARY(exp2)
KILN_DECLARE_UNARY(expm1) KILN_DECLARE_UNARY(log) KILN_DECLARE_UNARY(log2) KILN_DECLARE_UNARY(log10)
KILN_DECLARE_UNARY(log1p) KILN_DECLARE_UNARY(sqrt) KILN_DECLARE_UNARY(rsqrt) KILN_DECLARE_UNARY(reciprocal)
KILN_DECLARE_UNARY(sin) KILN_DECLARE_UNARY(cos) KILN_DECLARE_UNARY(tan) KILN_DECLARE_UNARY(asin)
KILN_DECLARE_UNARY(acos) KILN_DECLARE_UNARY(atan) KILN_DECLARE_UNARY(sinh) KILN_DECLARE_UNARY(cosh)
KILN_DECLARE_UNARY(tanh) KILN_DECLARE_UNARY(asinh) KILN_DECLARE_UNARY(acosh) KILN_DECLARE_UNARY(atanh)
KILN_DECLARE_UNARY(erf) KILN_DECLARE_UNARY(erfc) KILN_DECLARE_UNARY(erfinv) KILN_DECLARE_UNARY(lgamma)
KILN_DECLARE_UNARY(sigmoid) KILN_DECLARE_UNARY(floor) KILN_DECLARE_UNARY(ceil) KILN_DECLARE_UNARY(round)
KILN_DECLARE_UNARY(trunc) KILN_DECLARE_UNARY(frac) KILN_DECLARE_UNARY(sign) KILN_DECLARE_UNARY(signbit)
KILN_DECLARE_UNARY(isnan) KILN_DECLARE_UNARY(isinf) KILN_DECLARE_UNARY(isfinite)
KILN_DECLARE_UNARY(bitwise_not) KILN_DECLARE_UNARY(logical_not) KILN_DECLARE_UNARY(relu)
KILN_DECLARE_UNARY(square)
#undef KILN_DECLARE_UNARY
Tensor negative(const Tensor& self);
Tensor round(const Tensor& self, int64_t decimals);  // half to even at 10^-decimals

// ---- binary pointwise (tensor-tensor, tensor-scalar and scalar-tensor) ----------------------
#define KILN_DECLARE_BINARY(name)                        \
  Tensor name(const Tensor& self, const Tensor& other);  \
  Tensor name(const Tensor& self, const Scalar& other);  \
  Tensor name(const Scalar& self, const Tensor& other);
KILN_DECLARE_BINARY(mul) KILN_DECLARE_BINARY(div) KILN_DECLARE_BINARY(true_divide)
KILN_DECLARE_BINARY(floor_divide) KILN_DECLARE_BINARY(remainder) KILN_DECLARE_BINARY(fmod)
KILN_DECLARE_BINARY(pow) KILN_DECLARE_BINARY(atan2) KILN_DECLARE_BINARY(hypot) KILN_DECLARE_BINARY(copysign)
KILN_DECLARE_BINARY(maximum) KILN_DECLARE_BINARY(minimum) KILN_DECLARE_BINARY(fmax) KILN_DECLARE_BINARY(fmin)
KILN_DECLARE_BINARY(eq) KILN_DECLARE_BINARY(ne) KILN_DECLARE_BINARY(lt) KILN_DECLARE_BINARY(le)
KILN_DECLARE_BINARY(gt) KILN_DECLARE_BINARY(ge) KILN_DECLARE_BINARY(logical_and)
KILN_DECLARE_BINARY(logical_or) KILN_DECLARE_BINARY(logical_xor) KILN_DECLARE_BINARY(bitwise_and)
KILN_DECLARE_BINARY(bitwise_or) KILN_DECLARE_BINARY(bitwise_xor) KILN_DECLARE_BINARY(bitwise_left_shift)
KILN_DECLARE_BINARY(bitwise_right_shift)
#undef KILN_DECLARE_BINARY
// alpha scales `other`: self + alpha * other.
Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor add(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);
Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor sub(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);
Tensor rsub(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);  // other - alpha * self
// rounding_mode: nullopt (true division), "trunc" or "floor".
Tensor div(const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode);
Tensor div(const Tensor& self, const Scalar& other, std::optional<std::string_view> rounding_mode);

// libtorch's other names (frontend/ops_unary_aliases.cpp, ops_binary_aliases.cpp): the NumPy
// spellings arccos ... arctanh and arctan2; absolute, negative, positive (self; bool refused),
// fix (trunc), sgn (sign); isposinf / isneginf; divide, multiply, subtract, greater,
// greater_equal, less, less_equal, not_equal.
Tensor arccos(const Tensor& self);
Tensor arcsin(const Tensor& self);
Tensor arctan(const Tensor& self);
Tensor arccosh(const Tensor& self);
Tensor arcsinh(const Tensor& self);
Tensor arctanh(const Tensor& self);
Tensor absolute(const Tensor& self);
Tensor positive(const Tensor& self);
Tensor fix(const Tensor& self);
Tensor sgn(const Tensor& self);
Tensor isposinf(const Tensor& self);
Tensor isneginf(const Tensor& self);
Tensor divide(const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode = std::nullopt);
Tensor divide(const Tensor& self, const Scalar& other, std::optional<std::string_view> rounding_mode = std::nullopt);
Tensor subtract(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor subtract(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);
#define KILN_DECLARE_BINARY_ALIAS(name)                  \
  Tensor name(const Tensor& self, const Tensor& other);  \
  Tensor name(const Tensor& self, const Scalar& other);
KILN_DECLARE_BINARY_ALIAS(multiply) KILN_DECLARE_BINARY_ALIAS(greater) KILN_DECLARE_BINARY_ALIAS(greater_equal)
KILN_DECLARE_BINARY_ALIAS(less) KILN_DECLARE_BINARY_ALIAS(less_equal) KILN_DECLARE_BINARY_ALIAS(not_equal)
KILN_DECLARE_BINARY_ALIAS(arctan2)
#undef KILN_DECLARE_BINARY_ALIAS

// ---- ternary --------------------------------------------------------------------------------
Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other);
Tensor where(const Tensor& condition, const Scalar& self, const Tensor& other);
Tensor where(const Tensor& condition, const Tensor& self, const Scalar& other);
Tensor where(const Tensor& condition, const Scalar& self, const Scalar& other);
Tensor clamp(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt);
Tensor clamp(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max = std::nullopt);
Tensor clamp_min(const Tensor& self, const Scalar& min);
Tensor clamp_max(const Tensor& self, const Scalar& max);
// torch.clip: clamp by its NumPy name.
Tensor clip(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt);
Tensor clip(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max = std::nullopt);
// self + weight * (end - self), computed exactly at weight 0 and 1 (floating dtypes only).
Tensor lerp(const Tensor& self, const Tensor& end, const Scalar& weight);
Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight);
// self + value * tensor1 * tensor2 and self + value * tensor1 / tensor2 (addcdiv: floating only).
Tensor addcmul(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1);
Tensor addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1);
// NaN, +inf, -inf replaced by nan (default 0) and posinf / neginf (default the dtype's largest
// and lowest finite values); integer and bool tensors are returned as a copy.
Tensor nan_to_num(const Tensor& self, std::optional<double> nan = std::nullopt, std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt);

// Pointwise functions that record other ops (frontend/ops_pointwise_math.cpp). logaddexp and
// logaddexp2: log(exp(a) + exp(b)) and log2(2^a + 2^b), floating dtypes only. xlogy: x * log(y),
// 0 where x is 0 (NaN where y is NaN). logit: log(x / (1 - x)), x clamped to [eps, 1 - eps]
// when eps is given. sinc: sin(pi x) / (pi x), 1 at 0. deg2rad, rad2deg: integer and bool
// inputs give the default float dtype, as do xlogy, logit and sinc. heaviside: values where
// self is 0, else self > 0 (one dtype). float_power: pow in f64.
Tensor logaddexp(const Tensor& self, const Tensor& other);
Tensor logaddexp2(const Tensor& self, const Tensor& other);
Tensor xlogy(const Tensor& self, const Tensor& other);
Tensor xlogy(const Scalar& self, const Tensor& other);
Tensor xlogy(const Tensor& self, const Scalar& other);
Tensor logit(const Tensor& self, std::optional<double> eps = std::nullopt);
Tensor sinc(const Tensor& self);
Tensor deg2rad(const Tensor& self);
Tensor rad2deg(const Tensor& self);
Tensor heaviside(const Tensor& self, const Tensor& values);
Tensor float_power(const Tensor& self, const Tensor& exponent);
Tensor float_power(const Tensor& self, const Scalar& exponent);
Tensor float_power(const Scalar& self, const Tensor& exponent);
// self * 2^other (torch.ldexp: pow(2., other) times self, so integers give the default float).
Tensor ldexp(const Tensor& self, const Tensor& other);
// |self - other| <= atol + |rtol * other| elementwise, or equal (bool result; torch.isclose).
Tensor isclose(const Tensor& self, const Tensor& other, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);

// ---- reductions ------------------------------------------------------------------------------
// Integer and bool inputs sum/prod to int64 (PyTorch); `dtype` casts the input first.
Tensor sum(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);
Tensor sum(const Tensor& self, IntArrayRef dims, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
Tensor prod(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);
Tensor prod(const Tensor& self, int64_t dim, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& self, IntArrayRef dims, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
// dims {} reduces every dim (as torch.amax with dim=()).
Tensor amax(const Tensor& self, IntArrayRef dims = {}, bool keepdim = false);
Tensor amin(const Tensor& self, IntArrayRef dims = {}, bool keepdim = false);
Tensor max(const Tensor& self);
Tensor min(const Tensor& self);
Tensor argmax(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
// The largest / smallest value along dim and its index (the first, or the first NaN).
std::tuple<Tensor, Tensor> max(const Tensor& self, int64_t dim, bool keepdim = false);
std::tuple<Tensor, Tensor> min(const Tensor& self, int64_t dim, bool keepdim = false);
// log(sum(exp(x))) over dims ({}: every dim), without overflow; integer inputs give the default float dtype.
Tensor logsumexp(const Tensor& self, IntArrayRef dims, bool keepdim = false);
Tensor any(const Tensor& self);
Tensor any(const Tensor& self, IntArrayRef dims, bool keepdim = false);
Tensor all(const Tensor& self, IntArrayRef dims, bool keepdim = false);
Tensor any(const Tensor& self, int64_t dim, bool keepdim = false);
Tensor all(const Tensor& self);
Tensor all(const Tensor& self, int64_t dim, bool keepdim = false);
// Reductions that record other ops (frontend/ops_reduction_counts.cpp). nansum: sum with NaN
// as 0. count_nonzero: the int64 number of nonzero elements over dims ({}: every dim).
// aminmax: (amin, amax) over dim or every dim; an empty reduction raises.
Tensor nansum(const Tensor& self, IntArrayRef dims = {}, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
Tensor count_nonzero(const Tensor& self, IntArrayRef dims = {});
std::tuple<Tensor, Tensor> aminmax(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
// Vector norms over dims ({}: every dim; frontend/ops_reduction_norms.cpp): ord 2 (Euclidean), 1,
// inf (max |x|), -inf, 0 (the number of nonzeros) or any other p; floating inputs only, `dtype`
// converting first. norm(self, p, dims) is torch.norm's vector form (p default 2).
Tensor linalg_vector_norm(const Tensor& self, const Scalar& ord = 2, IntArrayRef dims = {}, bool keepdim = false,
                          std::optional<ScalarType> dtype = std::nullopt);
Tensor norm(const Tensor& self, const std::optional<Scalar>& p, IntArrayRef dims, bool keepdim = false);
Tensor norm(const Tensor& self, const Scalar& p = 2);
// Each slice self.select(dim, i) whose p-norm exceeds maxnorm scaled to norm maxnorm (the norm
// plus 1e-7 in the divisor, as torch's).
Tensor renorm(const Tensor& self, const Scalar& p, int64_t dim, const Scalar& maxnorm);

// ---- scans -------------------------------------------------------------------------------------
Tensor cumsum(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor cumprod(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
// (running maximum / minimum, int64 position where it was last reached); NaN propagates.
std::tuple<Tensor, Tensor> cummax(const Tensor& self, int64_t dim);
std::tuple<Tensor, Tensor> cummin(const Tensor& self, int64_t dim);
Tensor logcumsumexp(const Tensor& self, int64_t dim);

// ---- joining, padding, indexing ----------------------------------------------------------------
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
// NumPy's stacks (frontend/ops_shape.cpp): hstack cats along dim 1 (dim 0 when the first
// tensor, made at least 1-D, is 1-D), vstack (row_stack) at least 2-D along 0, dstack at least 3-D along 2,
// column_stack 0-dim and 1-D tensors as columns [n, 1] along 1. An empty list is refused.
Tensor hstack(const std::vector<Tensor>& tensors);
Tensor vstack(const std::vector<Tensor>& tensors);
Tensor row_stack(const std::vector<Tensor>& tensors);
Tensor dstack(const std::vector<Tensor>& tensors);
Tensor column_stack(const std::vector<Tensor>& tensors);
// pad lists (before, after) pairs starting from the last dim; negative values crop.
Tensor constant_pad_nd(const Tensor& self, IntArrayRef pad, const Scalar& value = 0);
Tensor pad(const Tensor& self, IntArrayRef pad, std::string_view mode = "constant", std::optional<double> value = std::nullopt);
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value);
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index);
// frontend/ops_index.cpp. value where mask (bool, broadcast) is true, else self.
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value);
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value);  // a 0-dim value
// int64 [..., num_classes] with a 1 at each class; num_classes -1 reads the largest value (eager only).
Tensor one_hot(const Tensor& self, int64_t num_classes = -1);
// int64 [n, dim()] coordinates of the nonzero (true) elements in row-major order; argwhere is
// the same. masked_select: the elements of self where mask (bool) is true, broadcast, as 1-D.
// Their result's size depends on the values: traced, they raise DataDependentError.
Tensor nonzero(const Tensor& self);
Tensor argwhere(const Tensor& self);
Tensor masked_select(const Tensor& self, const Tensor& mask);
// frontend/ops_index_scatter.cpp. reduce: "sum", "prod", "mean", "amax", "amin"; include_self false
// folds only the scattered values into the positions that receive some.
Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                      bool include_self = true);
// self with source's slices (times alpha) added at the positions index (1-D) names along dim.
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1);
// index_reduce: scatter_reduce ("prod", "mean", "amax", "amin") of source's slices into the
// positions index names along dim; index_copy writes them (scatter; each index in [0, size)).
Tensor index_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, std::string_view reduce,
                    bool include_self = true);
Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source);
// self with src written over self.slice(dim, start, end, step) / self.select(dim, index).
Tensor slice_scatter(const Tensor& self, const Tensor& src, int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
                     std::optional<int64_t> end = std::nullopt, int64_t step = 1);
Tensor select_scatter(const Tensor& self, const Tensor& src, int64_t dim, int64_t index);
// self where mask (broadcast) is false; the k-th true position takes source's k-th element.
Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source);
// Advanced indexing, as self[i0, i1, ...] with tensors: an empty optional is a full slice ":",
// int tensors broadcast together (negative positions count from the end), a bool mask selects
// its nonzero() coordinates (eager only). Indexed dims that are consecutive keep their place
// in the result; otherwise the index dims come first.
Tensor index(const Tensor& self, const std::vector<std::optional<Tensor>>& indices);
// self with values (broadcast to index()'s result) written (accumulate: added) at those positions.
Tensor index_put(const Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                 bool accumulate = false);
Tensor& index_put_(Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                   bool accumulate = false);
// Rows of weight [num_embeddings, dim] picked by indices (int64 or int32): [*indices.shape, dim]
// (at::embedding). padding_idx (-1: none; else in [0, num_embeddings)) and scale_grad_by_freq
// change only the weight's gradient: the padding row gets none, and each row is divided by its
// index's count in `indices` (embedding_dense_backward below). A negative padding_idx counted
// from the end, as torch.nn.functional.embedding takes it, is resolved by the caller.
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1, bool scale_grad_by_freq = false);
// The weight's gradient [num_weights, D] of embedding from grad_output [*indices.shape, D]
// (at::embedding_dense_backward): rows summed by index; padding_idx (-1: none) gets none;
// scale_grad_by_freq divides each row by its index's count in `indices`. Records a Core node,
// which embedding's derivative rule records (with a symbolic num_weights: frontend/symbolic.h).
Tensor embedding_dense_backward(const Tensor& grad_output, const Tensor& indices, int64_t num_weights,
                                int64_t padding_idx = -1, bool scale_grad_by_freq = false);
// torch.nn.functional.embedding_bag with the weight first (as at::embedding_bag): the rows of
// each bag reduced by mode "sum", "mean" or "max" ([B, dim]; an empty bag gives zeros). A 2-D
// input is B bags of equal length; a 1-D input starts bag b at offsets[b] (include_last_offset:
// offsets has B + 1 entries, the last one the end). Indices equal to padding_idx are left out.
Tensor embedding_bag(const Tensor& weight, const Tensor& input, const std::optional<Tensor>& offsets = std::nullopt,
                     std::string_view mode = "mean", const std::optional<Tensor>& per_sample_weights = std::nullopt,
                     bool include_last_offset = false, std::optional<int64_t> padding_idx = std::nullopt);
// self with value at the positions index (1-D or 0-dim; negative counts from the end) names
// along dim (frontend/ops_index.cpp, as the next three).
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value);
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value);  // a 0-dim value
// The elements of the flattened self at index (int64, any shape; negative from the end), and the
// flattened self with source's elements written (accumulate: added) there, in self's shape.
Tensor take(const Tensor& self, const Tensor& index);
Tensor put(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate = false);
// gather with the non-dim dims broadcast between self and indices; no dim: over the flattened self.
Tensor take_along_dim(const Tensor& self, const Tensor& indices, std::optional<int64_t> dim = std::nullopt);
// frontend/ops_rearrange.cpp, as torch's: Tensor.repeat, roll, flip, diff.
Tensor repeat(const Tensor& self, IntArrayRef repeats);
// Each element (each slice along dim; the flattened input without dim) `repeats` times in a row.
// A tensor of repeats (one per slice, or one for all) decides the output size by its values:
// traced, it raises DataDependentError (a compiled function runs eagerly). The repeats-only form
// gives the indices [0] * repeats[0] + [1] * repeats[1] + ...
Tensor repeat_interleave(const Tensor& self, int64_t repeats, std::optional<int64_t> dim = std::nullopt,
                         std::optional<int64_t> output_size = std::nullopt);
Tensor repeat_interleave(const Tensor& self, const Tensor& repeats, std::optional<int64_t> dim = std::nullopt,
                         std::optional<int64_t> output_size = std::nullopt);
Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> output_size = std::nullopt);
Tensor roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims = {});
Tensor flip(const Tensor& self, IntArrayRef dims);
Tensor diff(const Tensor& self, int64_t n = 1, int64_t dim = -1, const std::optional<Tensor>& prepend = std::nullopt,
            const std::optional<Tensor>& append = std::nullopt);
// Grids (frontend/ops_rearrange_grids.cpp). diag: a 1-D tensor onto the given diagonal of a
// square matrix, or a 2-D tensor's diagonal (a copy). diag_embed: the last dim onto the offset
// diagonal of a new pair of dims (dim1, dim2). rot90: k quarter turns in the plane of dims, from
// the first towards the second. meshgrid: the inputs (0-D or 1-D) expanded to the grid of their
// lengths, indexing "ij" (matrix) or "xy" (Cartesian: the first two dims swapped).
// pixel_shuffle: [..., C r^2, H, W] -> [..., C, H r, W r]; pixel_unshuffle: the inverse.
Tensor diag(const Tensor& self, int64_t diagonal = 0);
Tensor diag_embed(const Tensor& self, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1);
Tensor rot90(const Tensor& self, int64_t k = 1, IntArrayRef dims = {0, 1});
std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, std::string_view indexing = "ij");
Tensor pixel_shuffle(const Tensor& self, int64_t upscale_factor);
Tensor pixel_unshuffle(const Tensor& self, int64_t downscale_factor);
// tile: repeat with the repeats left-padded by 1s to self's rank. fliplr / flipud: flip dim 1
// (at least 2-D) / dim 0 (at least 1-D).
Tensor tile(const Tensor& self, IntArrayRef reps);
Tensor fliplr(const Tensor& self);
Tensor flipud(const Tensor& self);
// cat's other names.
Tensor concat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor concatenate(const std::vector<Tensor>& tensors, int64_t dim = 0);
// block_diag: the inputs (0-D, 1-D as one row, or 2-D) on the diagonal of a matrix of zeros, in
// their promoted dtype. diagflat: the flattened input on the offset diagonal. vander: the columns
// x^(N-1) ... x^0 of a 1-D x (increasing: x^0 first; N defaults to x's length; integers give int64).
Tensor block_diag(const std::vector<Tensor>& tensors);
Tensor diagflat(const Tensor& self, int64_t offset = 0);
Tensor vander(const Tensor& x, std::optional<int64_t> N = std::nullopt, bool increasing = false);
// Index tuples (frontend/ops_rearrange_combinations.cpp). cartesian_prod: the rows of the product
// of 1-D inputs, the last fastest (one input is returned as it is). combinations: the r-element
// combinations of a 1-D input's elements (with_replacement: repeats allowed) as rows, in
// lexicographic order of positions ([0] when r = 0). tril_indices / triu_indices: the [2, N]
// coordinates of a row x col matrix's lower (c <= r + offset) / upper (c >= r + offset)
// triangle, row-major, in int64 or int32.
Tensor cartesian_prod(const std::vector<Tensor>& tensors);
Tensor combinations(const Tensor& self, int64_t r = 2, bool with_replacement = false);
Tensor tril_indices(int64_t row, int64_t col, int64_t offset = 0, TensorOptions opts = {});
Tensor triu_indices(int64_t row, int64_t col, int64_t offset = 0, TensorOptions opts = {});

// ---- linear algebra ------------------------------------------------------------------------------
Tensor mm(const Tensor& self, const Tensor& mat2);
Tensor bmm(const Tensor& self, const Tensor& mat2);
// torch.matmul: 1-D and 2-D cases, and batched with broadcasting of the batch dims.
Tensor matmul(const Tensor& self, const Tensor& other);
// beta * self + alpha * (mat1 @ mat2), self broadcast to the product; beta = 0 ignores self.
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1, const Scalar& alpha = 1);
// activation(self + mat1 @ mat2), activation "none", "relu" or "gelu_tanh" (gelu's tanh form),
// computed in f32 for f16 and bf16 and rounded once (ATen's _addmm_activation; on cuda one
// cuBLASLt call with a bias-and-activation epilogue).
Tensor addmm_activation(const Tensor& self, const Tensor& mat1, const Tensor& mat2, std::string_view activation = "relu");
Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
               const Scalar& alpha = 1);
// The lower / upper triangle of the trailing matrices, from the given diagonal (0: the main one).
Tensor tril(const Tensor& self, int64_t diagonal = 0);
Tensor triu(const Tensor& self, int64_t diagonal = 0);

// ---- conversion ---------------------------------------------------------------------------------
Tensor to(const Tensor& self, ScalarType dtype);
Tensor clone(const Tensor& self);

// ---- comparison of whole tensors (eager) ---------------------------------------------------------
// Same sizes and equal elements (NaN != NaN), as torch.equal.
bool equal(const Tensor& a, const Tensor& b);
// |a - b| <= atol + rtol * |b| elementwise, after broadcasting, as torch.allclose.
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);

// ---- operators -----------------------------------------------------------------------------------
Tensor operator-(const Tensor& a);
Tensor operator~(const Tensor& a);
Tensor operator!(const Tensor& a);
#define KILN_DECLARE_OPERATOR(op)                         \
  Tensor operator op(const Tensor& a, const Tensor& b);   \
  Tensor operator op(const Tensor& a, const Scalar& b);   \
  Tensor operator op(const Scalar& a, const Tensor& b);
KILN_DECLARE_OPERATOR(+) KILN_DECLARE_OPERATOR(-) KILN_DECLARE_OPERATOR(*) KILN_DECLARE_OPERATOR(/)
KILN_DECLARE_OPERATOR(%) KILN_DECLARE_OPERATOR(&) KILN_DECLARE_OPERATOR(|) KILN_DECLARE_OPERATOR(^)
KILN_DECLARE_OPERATOR(<<) KILN_DECLARE_OPERATOR(>>) KILN_DECLARE_OPERATOR(==) KILN_DECLARE_OPERATOR(!=)
KILN_DECLARE_OPERATOR(<) KILN_DECLARE_OPERATOR(<=) KILN_DECLARE_OPERATOR(>) KILN_DECLARE_OPERATOR(>=)
#undef KILN_DECLARE_OPERATOR
Tensor& operator+=(Tensor& a, const Tensor& b);
Tensor& operator+=(Tensor& a, const Scalar& b);
Tensor& operator-=(Tensor& a, const Tensor& b);
Tensor& operator-=(Tensor& a, const Scalar& b);
Tensor& operator*=(Tensor& a, const Tensor& b);
Tensor& operator*=(Tensor& a, const Scalar& b);
Tensor& operator/=(Tensor& a, const Tensor& b);
Tensor& operator/=(Tensor& a, const Scalar& b);

}  // namespace kiln
