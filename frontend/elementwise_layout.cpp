// kiln/frontend/elementwise_layout.cpp — TensorIterator's output layout for eager elementwise
// ops (elementwise_layout.h).
#include "frontend/elementwise_layout.h"

#include "base/tensor_impl.h"

#include <algorithm>
#include <numeric>

namespace kiln {

bool is_non_overlapping_and_dense(IntArrayRef sizes, IntArrayRef strides) {
  const size_t n = sizes.size();
  if (n == 1) return sizes[0] < 2 || strides[0] == 1;
  std::vector<size_t> perm(n);
  std::iota(perm.begin(), perm.end(), size_t{0});
  // Dims of size 0 or 1 last, the rest by increasing stride.
  std::sort(perm.begin(), perm.end(), [&](size_t a, size_t b) {
    if (sizes[a] < 2) return false;
    if (sizes[b] < 2) return true;
    return strides[a] < strides[b];
  });
  int64_t required = 1;
  for (size_t d : perm) {
    if (sizes[d] < 2) return true;
    if (strides[d] != required) return false;
    required *= sizes[d];
  }
  return true;
}

namespace {

bool is_channels_last(IntArrayRef sizes, IntArrayRef strides) {
  if (sizes.size() != 4) return false;
  int64_t expected = 1;
  for (size_t d : {1, 3, 2, 0}) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

}  // namespace

std::vector<int64_t> elementwise_output_strides(IntArrayRef shape, const std::vector<const TensorImpl*>& inputs) {
  const size_t n = shape.size();
  if (n < 2 || inputs.empty()) return {};
  // Steps 1-3: inputs of the output's shape that share a layout.
  bool same_shape = true, row_major = true, channels_last = true, dense = true;
  for (const TensorImpl* t : inputs) {
    same_shape = same_shape && t->sizes() == shape;
    row_major = row_major && t->is_contiguous();
    channels_last = channels_last && is_channels_last(t->sizes(), t->strides());
    dense = dense && is_non_overlapping_and_dense(t->sizes(), t->strides());
  }
  if (same_shape) {
    if (row_major) return {};
    if (channels_last) return {shape[1] * shape[3] * shape[2], 1, shape[1] * shape[3], shape[1]};
    if (dense && std::all_of(inputs.begin(), inputs.end(), [&](const TensorImpl* t) { return t->strides() == inputs[0]->strides(); }))
      return inputs[0]->strides().vec();
  }
  // Step 4: each input's strides over the output's dims, 0 where it broadcasts.
  std::vector<std::vector<int64_t>> strides;
  for (const TensorImpl* t : inputs) {
    const size_t r = t->sizes().size(), offset = n - r;
    std::vector<int64_t>& s = strides.emplace_back(n, 0);
    for (size_t d = 0; d < r; ++d)
      s[offset + d] = t->sizes()[d] == 1 && shape[offset + d] != 1 ? 0 : t->strides()[d];
  }
  // > 0: dim0 goes outside dim1; < 0: inside; 0: no input decides.
  auto should_swap = [&](int64_t dim0, int64_t dim1) {
    for (const std::vector<int64_t>& s : strides) {
      const int64_t s0 = s[static_cast<size_t>(dim0)], s1 = s[static_cast<size_t>(dim1)];
      if (s0 == 0 || s1 == 0) continue;
      if (s0 != s1) return s0 < s1 ? -1 : 1;
      if (shape[static_cast<size_t>(dim0)] > shape[static_cast<size_t>(dim1)]) return 1;
    }
    return 0;
  };
  std::vector<int64_t> perm(n);  // innermost first
  for (size_t i = 0; i < n; ++i) perm[i] = static_cast<int64_t>(n - 1 - i);
  for (size_t i = 1; i < n; ++i) {
    size_t dim1 = i;
    for (size_t dim0 = i; dim0-- > 0;) {
      const int cmp = should_swap(perm[dim0], perm[dim1]);
      if (cmp > 0) {
        std::swap(perm[dim0], perm[dim1]);
        dim1 = dim0;
      } else if (cmp < 0) {
        break;
      }
    }
  }
  bool identity = true;
  for (size_t i = 0; i < n; ++i) identity = identity && perm[i] == static_cast<int64_t>(n - 1 - i);
  if (identity) return {};
  std::vector<int64_t> out(n);
  int64_t next = 1;
  for (int64_t d : perm) {
    out[static_cast<size_t>(d)] = next;
    next *= shape[static_cast<size_t>(d)];
  }
  return out;
}

std::vector<int64_t> outer_to_inner(IntArrayRef shape, IntArrayRef strides) {
  std::vector<int64_t> order(shape.size());
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return strides[static_cast<size_t>(a)] > strides[static_cast<size_t>(b)];
  });
  return order;
}

}  // namespace kiln
