// kiln/frontend/ops_rearrange.cpp — rearranging ops over views, cat and index_select: repeat,
// roll, flip, diff.
//
// Each records existing prims, as PyTorch's decompositions of these ops do, after PyTorch's
// checks with its wording.
#include "base/error.h"
#include "frontend/factories.h"
#include "frontend/ops.h"
#include "frontend/symbolic.h"
#include "frontend/views.h"

#include <algorithm>
#include <vector>

namespace kiln {

Tensor repeat(const Tensor& self, IntArrayRef repeats) {
  const int64_t n = static_cast<int64_t>(repeats.size());
  if (n < self.dim())
    fail("repeat", "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  for (int64_t r : repeats)
    if (r < 0) fail("repeat", "Trying to create tensor with negative dimension {}: {}", r, shape_str(repeats));
  // [s0, s1, ...] -> [1, s0, 1, s1, ...] -> expand to [r0, s0, r1, s1, ...] -> [r0*s0, r1*s1, ...]
  std::vector<ir::Expr> sizes = sym_sizes(self);
  sizes.insert(sizes.begin(), static_cast<size_t>(n - self.dim()), ir::Expr(1));
  std::vector<ir::Expr> split, expanded, out;
  for (int64_t i = 0; i < n; ++i) {
    const ir::Expr r(repeats[static_cast<size_t>(i)]);
    const ir::Expr& s = sizes[static_cast<size_t>(i)];
    split.insert(split.end(), {ir::Expr(1), s});
    expanded.insert(expanded.end(), {r, s});
    out.push_back(r * s);
  }
  Tensor r = sym_reshape(sym_expand(sym_reshape(self, split), expanded), out);
  return std::all_of(repeats.begin(), repeats.end(), [](int64_t k) { return k == 1; }) ? r.clone() : r;  // never a view
}

Tensor roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  if (shifts.empty()) fail("roll", "`shifts` required");
  if (dims.empty()) {
    if (shifts.size() != 1) fail("roll", "shifts and dimensions must align. shifts: {}, dims:{}", shifts.size(), dims.size());
    return sym_reshape(roll(sym_reshape(self, {sym_numel(self)}), shifts, {0}), sym_sizes(self));
  }
  if (shifts.size() != dims.size())
    fail("roll", "shifts and dimensions must align. shifts: {}, dims:{}", shifts.size(), dims.size());
  Tensor out = self;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = normalize_dim("roll", dims[i], self.dim());
    const int64_t size = self.size(d);  // the shift modulo the size: a static size (guarded)
    if (size == 0) continue;
    const int64_t s = ((shifts[i] % size) + size) % size;
    if (s == 0) continue;
    out = cat({out.slice(d, size - s, size), out.slice(d, 0, size - s)}, d);
  }
  return out.is_same(self) ? self.clone() : out;
}

Tensor flip(const Tensor& self, IntArrayRef dims) {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(self.dim(), 1)), false);
  Tensor out = self;
  for (int64_t dim : dims) {
    const int64_t d = normalize_dim("flip", dim, self.dim());
    if (seen[static_cast<size_t>(d)]) fail("flip", "dims has duplicates, original flip dims size={}", dims.size());
    seen[static_cast<size_t>(d)] = true;
    if (self.dim() == 0) continue;
    const int64_t n = self.size(d);
    out = out.index_select(d, arange(n - 1, -1, -1, TensorOptions(ScalarType::Int64).device(self.device())));
  }
  return out.is_same(self) ? self.clone() : out;
}

Tensor diff(const Tensor& self, int64_t n, int64_t dim, const std::optional<Tensor>& prepend,
            const std::optional<Tensor>& append) {
  if (self.dim() == 0) fail("diff", "diff expects input to be at least one-dimensional");
  if (n < 0) fail("diff", "order must be non-negative but got {}", n);
  const int64_t d = normalize_dim("diff", dim, self.dim());
  std::vector<Tensor> parts;
  if (prepend && prepend->defined()) parts.push_back(*prepend);
  parts.push_back(self);
  if (append && append->defined()) parts.push_back(*append);
  Tensor x = parts.size() > 1 ? cat(parts, d) : self;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t len = x.size(d);
    if (len == 0) break;
    Tensor hi = x.slice(d, 1, len), lo = x.slice(d, 0, len - 1);
    x = x.dtype() == ScalarType::Bool ? logical_xor(hi, lo) : sub(hi, lo);
  }
  return n == 0 ? x.clone() : x;
}

}  // namespace kiln
