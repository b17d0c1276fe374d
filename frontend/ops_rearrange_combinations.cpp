// kiln/frontend/ops_rearrange_combinations.cpp — enumerations of index tuples (frontend/ops.h):
// cartesian_prod, combinations, tril_indices and triu_indices.
//
// The tuples depend on sizes only, so they are listed on the host, in the order ATen's masks and
// grids give them (row-major: the last position fastest), and the values are then read with one
// index_select (combinations) or a meshgrid (cartesian_prod): a traced function records them, and
// gradients flow through the selection. Checks and wording are PyTorch 2.15's (measured).
#include "base/error.h"
#include "frontend/ops.h"
#include "frontend/ops_factory.h"
#include "frontend/ops_view.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace kiln {

namespace {

void check_vector(std::string_view op, const Tensor& t) {
  if (t.dim() != 1) fail(op, "Expect a 1D vector, but got shape {}", shape_str(t.sizes()));
}

// Calls visit(i_0, ..., i_{r-1}) for each index tuple into [0, n) that increases (strictly, or
// not with `repeats`), the last position fastest.
template <typename Visit> void for_each_tuple(int64_t n, int64_t r, bool repeats, Visit visit) {
  std::vector<int64_t> t(static_cast<size_t>(r));
  for (int64_t k = 0; k < r; ++k) t[static_cast<size_t>(k)] = repeats ? 0 : k;
  if (!repeats && r > n) return;
  while (true) {
    visit(t);
    // The rightmost position that can still grow; the positions after it restart at their least.
    int64_t k = r - 1;
    while (k >= 0 && t[static_cast<size_t>(k)] == (repeats ? n - 1 : n - r + k)) --k;
    if (k < 0) return;
    ++t[static_cast<size_t>(k)];
    for (int64_t j = k + 1; j < r; ++j)
      t[static_cast<size_t>(j)] = repeats ? t[static_cast<size_t>(k)] : t[static_cast<size_t>(j - 1)] + 1;
  }
}

// The number of such tuples, or a failure past int64 (binomial(n, r) or binomial(n + r - 1, r)).
int64_t tuple_count(std::string_view op, int64_t n, int64_t r, bool repeats) {
  const __int128 top = repeats ? __int128{n} + r - 1 : __int128{n};
  if (r > top) return 0;
  const __int128 k = std::min<__int128>(r, top - r);
  __int128 c = 1;
  for (__int128 i = 1; i <= k; ++i) {
    c = c * (top - k + i) / i;  // exact: a product of i consecutive integers is divisible by i!
    if (c > INT64_MAX / std::max<int64_t>(r, 1))
      fail(op, "combinations of {} elements taken {} at a time number more than 2^63", n, r);
  }
  return static_cast<int64_t>(c);
}

void check_triangle(std::string_view op, int64_t row, int64_t col, const TensorOptions& opts) {
  if (row < 0) fail(op, "row must be non-negative, got{}", row);
  if (col < 0) fail(op, "col must be non-negative, got{}", col);
  const ScalarType dtype = opts.dtype_.value_or(ScalarType::Int64);
  if (dtype != ScalarType::Int64 && dtype != ScalarType::Int32)
    fail(op, "\"{}\" not implemented for '{}'", op, c10_type_name(dtype));
}

using i128 = __int128;

i128 clamp128(i128 v, i128 lo, i128 hi) { return v < lo ? lo : v > hi ? hi : v; }

// The number of elements (r, c) of a row x col matrix with c <= r + offset: rows below -offset
// hold none, the rows up to col - offset - 1 one more each, the rest all col.
i128 lower_count(i128 row, i128 col, i128 offset) {
  if (row <= 0 || col <= 0) return 0;
  const i128 r1 = clamp128(-offset, 0, row), r2 = clamp128(col - offset - 1, r1, row), len = r2 - r1;
  const i128 ramp = len % 2 == 0 ? len / 2 * (r1 + r2 - 1) : (r1 + r2 - 1) / 2 * len;  // sum of r over [r1, r2)
  return len * (offset + 1) + ramp + (row - r2) * col;
}

// The [2, N] coordinates (rows, then columns) of a row x col matrix's elements (r, c) with
// c <= r + offset (lower) or c >= r + offset, row-major, in opts' dtype (int64 by default) and
// device. They are counted in closed form, written into a CPU tensor (a size past memory is the
// allocator's error), and the loop visits only the rows that hold some.
Tensor triangle(std::string_view op, int64_t row, int64_t col, int64_t offset, bool lower, TensorOptions opts) {
  const i128 count = lower ? lower_count(row, col, offset) : i128{row} * col - lower_count(row, col, i128{offset} - 1);
  if (count > INT64_MAX / 2) fail(op, "a {} x {} triangle at offset {} has more than 2^62 elements", row, col, offset);
  const int64_t n = static_cast<int64_t>(count);
  const Tensor out = empty({2, n}, ScalarType::Int64);
  int64_t* rows = out.data_ptr<int64_t>();
  int64_t* cols = rows + n;
  // The first row that holds an element, and the columns [lo, hi) of row r.
  const int64_t first = lower ? static_cast<int64_t>(clamp128(-i128{offset}, 0, row)) : 0;
  for (int64_t r = first, i = 0; i < n; ++r) {
    const i128 edge = i128{r} + offset;
    const int64_t lo = lower ? 0 : static_cast<int64_t>(clamp128(edge, 0, col));
    const int64_t hi = lower ? static_cast<int64_t>(clamp128(edge + 1, 0, col)) : col;
    for (int64_t c = lo; c < hi; ++c, ++i) {
      rows[i] = r;
      cols[i] = c;
    }
  }
  return out.to(TensorOptions(opts.dtype_.value_or(ScalarType::Int64)).device(opts.device_or()));
}

}  // namespace

Tensor cartesian_prod(const std::vector<Tensor>& tensors) {
  for (const Tensor& t : tensors) check_vector("cartesian_prod", t);
  if (tensors.size() == 1) return tensors[0];
  std::vector<Tensor> grids = meshgrid(tensors, "ij");
  for (Tensor& g : grids) g = g.reshape({-1});
  return stack(grids, 1);
}

Tensor combinations(const Tensor& self, int64_t r, bool with_replacement) {
  constexpr std::string_view op = "combinations";
  check_vector(op, self);
  if (r < 0) fail(op, "Expect a non-negative number, but got {}", r);
  if (r == 0) return empty({0}, self.options());
  const int64_t n = self.size(0), count = tuple_count(op, n, r, with_replacement);
  const Tensor index = empty({count * r}, ScalarType::Int64);
  int64_t* next = index.data_ptr<int64_t>();
  if (count > 0)
    for_each_tuple(n, r, with_replacement,
                   [&](const std::vector<int64_t>& t) { next = std::copy(t.begin(), t.end(), next); });
  return index_select(self, 0, index.to(self.device())).reshape({count, r});
}

Tensor tril_indices(int64_t row, int64_t col, int64_t offset, TensorOptions opts) {
  check_triangle("tril_indices", row, col, opts);
  return triangle("tril_indices", row, col, offset, /*lower=*/true, opts);
}

Tensor triu_indices(int64_t row, int64_t col, int64_t offset, TensorOptions opts) {
  check_triangle("triu_indices", row, col, opts);
  return triangle("triu_indices", row, col, offset, /*lower=*/false, opts);
}

}  // namespace kiln
