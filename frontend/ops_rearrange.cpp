// kiln/frontend/ops_rearrange.cpp — rearranging ops over views, cat and index_select: repeat,
// roll, flip, diff.
//
// Each records existing prims, as PyTorch's decompositions of these ops do, after PyTorch's
// checks with its wording.
#include "frontend/decompositions_detail.h"
#include "frontend/dispatch.h"
#include "base/error.h"
#include "frontend/ops_factory.h"
#include "frontend/ops.h"
#include "frontend/symbolic.h"
#include "frontend/tracer.h"
#include "frontend/ops_view.h"
#include "ir/shape_env.h"

#include <algorithm>
#include <vector>

namespace kiln {

static Tensor repeat_prims(const Tensor& self, IntArrayRef repeats) {
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
  // Never a view: all repeats 1 leave self's own layout, and an eager reshape of the expansion
  // may be a view of self with a 0 stride (x[1, 3].repeat({5, 1})), which an in-place write
  // would then refuse.
  const bool all_ones = std::all_of(repeats.begin(), repeats.end(), [](int64_t k) { return k == 1; });
  return all_ones || r.is_alias_of(self) ? r.clone() : r;
}

Tensor repeat_interleave(const Tensor& self, int64_t repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  if (repeats < 0) fail("repeat_interleave", "repeats can not be negative");
  const Tensor x = dim ? self : self.flatten();
  const int64_t d = normalize_dim("repeat_interleave", dim.value_or(0), x.dim());
  if (x.dim() == 0) return repeat_interleave(x.reshape({1}), repeats, 0, output_size);
  std::vector<ir::Expr> grown = sym_sizes(x), merged = sym_sizes(x);
  grown.insert(grown.begin() + d + 1, ir::Expr(repeats));
  merged[static_cast<size_t>(d)] = merged[static_cast<size_t>(d)] * ir::Expr(repeats);
  if (output_size && !ir::sym_eq(merged[static_cast<size_t>(d)], ir::Expr(*output_size)))
    fail("repeat_interleave", "allocated size does not match required size: output_size {} for {} repeats of {} "
                              "elements", *output_size, repeats, x.size(d));
  return sym_reshape(sym_expand(x.unsqueeze(d + 1), grown), merged);  // views: fused into the consumer
}

namespace {

// The repeat counts of an eager integer tensor, checked.
std::vector<int64_t> repeat_counts(const Tensor& repeats) {
  if (repeats.dtype() != ScalarType::Int64 && repeats.dtype() != ScalarType::Int32)
    fail("repeat_interleave", "repeats has to be Long or Int tensor, but got {}", c10_type_name(repeats.dtype()));
  if (repeats.dim() > 1) fail("repeat_interleave", "repeats must be 0-dim or 1-dim tensor, but got {} dims", repeats.dim());
  if (repeats.is_traced() || Tracer::current())
    fail_data_dependent("repeat_interleave", "a tensor of repeats decides the output size by its values, which a traced "
                                             "function cannot read; pass an int number of repeats");
  std::vector<int64_t> r = repeats.to(ScalarType::Int64).to_vector<int64_t>();
  for (int64_t v : r)
    if (v < 0) fail("repeat_interleave", "repeats can not be negative");
  return r;
}

// Index i repeated counts[i] times, in order.
std::vector<int64_t> repeated_indices(const std::vector<int64_t>& counts) {
  std::vector<int64_t> idx;
  for (size_t i = 0; i < counts.size(); ++i) idx.insert(idx.end(), static_cast<size_t>(counts[i]), static_cast<int64_t>(i));
  return idx;
}

}  // namespace

Tensor repeat_interleave(const Tensor& self, const Tensor& repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  if (repeats.dim() == 0 && !repeats.is_traced() && !Tracer::current())
    return repeat_interleave(self, repeat_counts(repeats)[0], dim, output_size);
  const Tensor x = dim ? self : self.flatten();
  const int64_t d = normalize_dim("repeat_interleave", dim.value_or(0), x.dim());
  std::vector<int64_t> counts = repeat_counts(repeats);
  if (counts.size() == 1) counts.assign(static_cast<size_t>(x.size(d)), counts[0]);
  if (static_cast<int64_t>(counts.size()) != x.size(d))
    fail("repeat_interleave", "repeats must have the same size as input along dim, but got repeats.size(0) = {} and "
                              "input.size({}) = {}", counts.size(), d, x.size(d));
  const std::vector<int64_t> idx = repeated_indices(counts);
  if (output_size && *output_size != static_cast<int64_t>(idx.size()))
    fail("repeat_interleave", "allocated size does not match required size: output_size {} for {} repeated elements",
         *output_size, idx.size());
  return x.index_select(d, tensor(idx, {static_cast<int64_t>(idx.size())}, TensorOptions(ScalarType::Int64).device(x.device())));
}

Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> output_size) {
  if (repeats.dim() != 1) fail("repeat_interleave", "repeats must be 1-dim tensor, but got {} dims", repeats.dim());
  const std::vector<int64_t> idx = repeated_indices(repeat_counts(repeats));
  if (output_size && *output_size != static_cast<int64_t>(idx.size()))
    fail("repeat_interleave", "allocated size does not match required size: output_size {} for {} repeated elements",
         *output_size, idx.size());
  return tensor(idx, {static_cast<int64_t>(idx.size())}, TensorOptions(repeats.dtype()).device(repeats.device()));
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
    const std::optional<int64_t> known = sym_size(self, d).maybe_const();
    if (!known) {  // a symbolic size: out[j] = self[(j - shift) mod size], the positions read at run time
      const ir::Expr n = sym_size(out, d);
      const Tensor count = sym_scalar_tensor(n, ScalarType::Int64, self.device());
      // clamp_min: a size that is 0 at run time (x[2:] traced at 2) rolls nothing, and divides by nothing.
      const Tensor shift = remainder(sym_full({}, Scalar(shifts[i]), ScalarType::Int64, self.device()), clamp_min(count, 1));
      const Tensor from = remainder(sym_iota(n, ScalarType::Int64, self.device()) - shift, count);  // no overflow
      out = out.index_select(d, from);
      continue;
    }
    const int64_t size = *known;
    if (size == 0) continue;
    const int64_t s = ((shifts[i] % size) + size) % size;
    if (s == 0) continue;
    out = cat({out.slice(d, size - s, size), out.slice(d, 0, size - s)}, d);
  }
  return out.is_same(self) ? self.clone() : out;
}

static Tensor flip_prims(const Tensor& self, IntArrayRef dims) {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(self.dim(), 1)), false);
  Tensor out = self;
  for (int64_t dim : dims) {
    const int64_t d = normalize_dim("flip", dim, self.dim());
    if (seen[static_cast<size_t>(d)]) fail("flip", "dims has duplicates, original flip dims size={}", dims.size());
    seen[static_cast<size_t>(d)] = true;
    if (self.dim() == 0) continue;
    const ir::Expr n = sym_size(self, d);
    if (const std::optional<int64_t> c = n.maybe_const()) {
      out = out.index_select(d, arange(*c - 1, -1, -1, TensorOptions(ScalarType::Int64).device(self.device())));
    } else {  // a symbolic size: the positions n - 1, ..., 0 computed at run time
      out = out.index_select(d, sym_scalar_tensor(n - ir::Expr(1), ScalarType::Int64, self.device()) -
                                    sym_iota(n, ScalarType::Int64, self.device()));
    }
  }
  return out.is_same(self) ? self.clone() : out;
}

Tensor repeat(const Tensor& self, IntArrayRef repeats) { return dispatch1(ir::OpKind::repeat, {self}, {repeats.vec()}); }
Tensor flip(const Tensor& self, IntArrayRef dims) { return dispatch1(ir::OpKind::flip, {self}, {dims.vec()}); }

namespace decomp {
std::vector<Tensor> repeat(const DecompArgs& a) { return {repeat_prims(a.in(0), a.attr<std::vector<int64_t>>("repeats"))}; }
std::vector<Tensor> flip(const DecompArgs& a) { return {flip_prims(a.in(0), a.attr<std::vector<int64_t>>("dims"))}; }
}  // namespace decomp

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
    const ir::Expr len = sym_size(x, d);  // an expression: a symbolic length stays symbolic
    if (ir::sym_eq(len, ir::Expr(0))) break;
    Tensor hi = x.slice(d, 1), lo = x.slice(d, 0, -1);
    x = x.dtype() == ScalarType::Bool ? logical_xor(hi, lo) : sub(hi, lo);
  }
  return n == 0 ? x.clone() : x;
}

}  // namespace kiln
