// kiln/frontend/ops_sort.h — sorting and what is built on it: sort, argsort, msort, topk,
// kthvalue, median, nanmedian, mode, unique, unique_consecutive, randperm, searchsorted,
// bucketize.
//
// Names, argument order, defaults and semantics follow libtorch (at::sort, at::topk,
// at::_unique2, at::searchsorted, ...). Every sort is stable and orders NaN above every
// number, as PyTorch's CPU sort does; ops that return (values, indices) return the positions
// of the values in the input along the dim. They record the argsort prim and gathers
// (frontend/ops_sort.cpp says how each is built), so they trace and compile; unique and
// unique_consecutive size their result by the values, so traced they raise
// DataDependentError (a compiled function then runs eagerly). searchsorted and bucketize
// count boundaries by comparison (O(values x boundaries), fused into one kernel), which
// matches PyTorch's binary search for any sorted boundaries without NaN.
#pragma once

#include "frontend/tensor.h"
#include "frontend/tensor_options.h"

#include <optional>
#include <string_view>
#include <tuple>

namespace kiln {

// (values, int64 indices) of the slices along dim in order; `stable` is accepted for
// libtorch's signature: kiln's sort is always stable.
std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim = -1, bool descending = false);
std::tuple<Tensor, Tensor> sort(const Tensor& self, std::optional<bool> stable, int64_t dim = -1, bool descending = false);
Tensor argsort(const Tensor& self, int64_t dim = -1, bool descending = false);
Tensor msort(const Tensor& self);  // sorted along dim 0
// The k largest (smallest) along dim, in order; ties keep the lower index first.
std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);
// The k-th smallest (k from 1) along dim.
std::tuple<Tensor, Tensor> kthvalue(const Tensor& self, int64_t k, int64_t dim = -1, bool keepdim = false);
// The lower median; NaN when the slice holds a NaN (index: its first NaN). nanmedian ignores NaN.
Tensor median(const Tensor& self);
std::tuple<Tensor, Tensor> median(const Tensor& self, int64_t dim, bool keepdim = false);
Tensor nanmedian(const Tensor& self);
std::tuple<Tensor, Tensor> nanmedian(const Tensor& self, int64_t dim, bool keepdim = false);
// The most frequent value (the smallest among equally frequent ones) and its last position.
std::tuple<Tensor, Tensor> mode(const Tensor& self, int64_t dim = -1, bool keepdim = false);
// (sorted distinct values, inverse indices shaped like self, counts); the inverse and counts
// are empty [0] tensors unless asked for, as at::_unique2 returns them. Each NaN is distinct.
std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& self, bool sorted = true, bool return_inverse = false,
                                          bool return_counts = false);
// unique over the slices along dim, as at::unique_dim: the distinct slices in lexicographic
// order (inverse: [self.size(dim)]); each slice holding a NaN is distinct.
std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& self, int64_t dim, bool sorted = true,
                                              bool return_inverse = false, bool return_counts = false);
// The first of every run of equal consecutive elements (flattened when dim is not given).
std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& self, bool return_inverse = false,
                                                      bool return_counts = false,
                                                      std::optional<int64_t> dim = std::nullopt);
// A random permutation of 0..n-1 (Philox draws sorted: reproducible by seed, not PyTorch's).
Tensor randperm(int64_t n, TensorOptions opts = ScalarType::Int64);
// For each value, the number of boundaries below it (right: at or below it) in the last dim
// of sorted_sequence (1-D, or the values' leading dims); int32 when out_int32. side "left" or
// "right" overrides right (they must agree); sorter: the argsort of an unsorted sequence.
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& self, bool out_int32 = false, bool right = false,
                    std::optional<std::string_view> side = std::nullopt, const std::optional<Tensor>& sorter = std::nullopt);
Tensor searchsorted(const Tensor& sorted_sequence, const Scalar& self, bool out_int32 = false, bool right = false,
                    std::optional<std::string_view> side = std::nullopt, const std::optional<Tensor>& sorter = std::nullopt);
// searchsorted(boundaries, self): boundaries must be 1-D.
Tensor bucketize(const Tensor& self, const Tensor& boundaries, bool out_int32 = false, bool right = false);
Tensor bucketize(const Scalar& self, const Tensor& boundaries, bool out_int32 = false, bool right = false);

}  // namespace kiln
