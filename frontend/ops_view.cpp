// kiln/frontend/ops_view.cpp — view metadata (ViewMeta) and the public view functions.
//
// The first half is pure arithmetic on sizes and strides, PyTorch's rules exactly:
// dimension wrapping, -1 inference, computeStride (when a reshape is expressible as a view),
// broadcasting, and the metadata of each view prim. The interpreter's view prims
// (runtime/interpreter/interp_view.cpp) use the same view_meta functions, so eager views and the
// reference implementation cannot drift apart.
//
// The second half is the user-facing API (view, reshape, transpose, select, split, ...).
// Each function validates and normalizes its arguments with PyTorch's error messages and
// then goes through dispatch1() with one of the eight view prims, so the same code runs
// eagerly (a view sharing storage) and under tracing (a recorded node): select is slice +
// squeeze, narrow is slice, transpose/t/movedim are permute, flatten/unflatten are reshape.
// The exception is eager as_strided, which addresses the storage itself (PyTorch's
// semantics) and so builds its view here; its prim addresses the input's elements.
//
// Size products are overflow-checked (checked_numel). Strides of dims with at most one
// element never address memory and PyTorch's arithmetic for them wraps, so they are
// computed with explicit two's-complement wrapping rather than signed overflow.
#include "frontend/ops_view.h"

#include "frontend/autograd_record.h"
#include "frontend/dispatch.h"
#include "frontend/grad_mode.h"
#include "base/error.h"
#include "frontend/symbolic.h"
#include "ir/expr.h"
#include "ir/shape_env.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

namespace kiln {

namespace {

constexpr const char* kViewIncompatible =
    "view size is not compatible with input tensor's size and stride (at least one dimension spans across two "
    "contiguous subspaces). Use .reshape(...) instead.";

ViewMeta meta_of(const Tensor& t) {
  const TensorImpl& impl = *t.impl();
  return ViewMeta{impl.sizes().vec(), impl.strides().vec(), impl.storage_offset()};
}

ir::Expr sym(int64_t v) { return ir::Expr(v); }

Tensor permute_prim(const Tensor& self, std::vector<int64_t> perm) {
  return dispatch1(ir::OpKind::permute, {self}, {std::move(perm)});
}

Tensor slice_prim(const Tensor& self, int64_t dim, int64_t start, int64_t end, int64_t step) {
  return dispatch1(ir::OpKind::slice, {self}, {dim, sym(start), sym(end), sym(step)});
}

Tensor reshape_prim(const Tensor& self, const std::vector<int64_t>& shape) {
  return dispatch1(ir::OpKind::reshape, {self}, {ir::to_exprs(shape)});
}

// Two's-complement arithmetic (what PyTorch's unchecked int64 arithmetic does in practice),
// for strides of dims that hold at most one element.
int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

[[noreturn]] void fail_numel_overflow(std::string_view op, IntArrayRef shape) {
  fail(op, "the number of elements of a tensor of shape {} overflows int64", shape_str(shape));
}

}  // namespace

// ---- metadata arithmetic ----------------------------------------------------------------------

void check_as_strided_bounds(IntArrayRef size, IntArrayRef stride, int64_t offset, int64_t itemsize,
                             int64_t available_bytes) {
  if (size.size() != stride.size())
    internal_fail("check_as_strided_bounds: {} sizes and {} strides", size.size(), stride.size());
  // Bytes the view can reach (torch's computeStorageNbytes): none when it has no elements.
  if (std::find(size.begin(), size.end(), int64_t{0}) != size.end()) return;
  bool overflow = false;
  int64_t span = 1;  // elements from the first to one past the last reachable one
  for (size_t d = 0; d < size.size(); ++d) {
    int64_t extent = 0;
    overflow |= __builtin_mul_overflow(stride[d], size[d] - 1, &extent);
    overflow |= __builtin_add_overflow(span, extent, &span);
  }
  int64_t need = 0;
  overflow |= __builtin_add_overflow(span, offset, &need);
  overflow |= __builtin_mul_overflow(need, itemsize, &need);
  if (overflow)
    fail("as_strided", "Storage size calculation overflowed with sizes={} and strides={}", shape_str(size),
         shape_str(stride));
  if (need > available_bytes)
    fail("as_strided",
         "setStorage: sizes {}, strides {}, storage offset {}, and itemsize {} requiring a storage size of {} are out "
         "of bounds for storage of size {}",
         shape_str(size), shape_str(stride), offset, itemsize, need, available_bytes);
}

int64_t normalize_dim(std::string_view op, int64_t dim, int64_t rank, bool allow_scalar) {
  if (rank <= 0) {
    if (!allow_scalar) fail(op, "Dimension specified as {} but tensor has no dimensions", dim);
    rank = 1;
  }
  const int64_t lo = -rank, hi = rank - 1;
  if (dim < lo || dim > hi)
    fail(op, "Dimension out of range (expected to be in range of [{}, {}], but got {})", lo, hi, dim);
  return dim < 0 ? dim + rank : dim;
}

std::vector<int64_t> infer_size(std::string_view op, IntArrayRef shape, int64_t numel) {
  std::vector<int64_t> res = shape.vec();
  int64_t newsize = 1;
  bool overflow = false;  // of the running product, as TensorImpl checks it
  std::optional<size_t> infer_dim;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1) {
      if (infer_dim) fail(op, "only one dimension can be inferred");
      infer_dim = d;
    } else if (shape[d] >= 0) {
      overflow |= __builtin_mul_overflow(newsize, shape[d], &newsize);
    } else {
      fail(op, "invalid shape dimension {}", shape[d]);
    }
  }
  if (overflow) fail_numel_overflow(op, shape);
  if (numel == newsize || (infer_dim && newsize > 0 && numel % newsize == 0)) {
    if (infer_dim) {
      if (newsize == 0)
        fail(op,
             "cannot reshape tensor of 0 elements into shape {} because the unspecified dimension size -1 can be "
             "any value and is ambiguous",
             shape_str(shape));
      res[*infer_dim] = numel / newsize;
    }
    return res;
  }
  fail(op, "shape '{}' is invalid for input of size {}", shape_str(shape), numel);
}

std::optional<std::vector<int64_t>> compute_view_strides(IntArrayRef oldshape, IntArrayRef oldstride,
                                                         IntArrayRef newshape) {
  const int64_t new_rank = static_cast<int64_t>(newshape.size());
  if (oldshape.empty()) return std::vector<int64_t>(newshape.size(), 1);

  // With no elements the strides are arbitrary: keep them when the shape is unchanged, else
  // use contiguous-like strides (NumPy's behaviour, as PyTorch).
  const int64_t numel = checked_numel("view", oldshape);
  if (numel == 0 && oldshape == newshape) return oldstride.vec();
  std::vector<int64_t> newstride(newshape.size());
  if (numel == 0) {
    for (int64_t d = new_rank - 1; d >= 0; --d)
      newstride[d] = d == new_rank - 1 ? 1 : std::max<int64_t>(newshape[d + 1], 1) * newstride[d + 1];
    return newstride;
  }

  // Walk the old dims from the back in chunks of dims that are contiguous with each other;
  // the new dims must tile each chunk exactly.
  int64_t view_d = new_rank - 1;
  int64_t chunk_base_stride = oldstride.back();
  int64_t tensor_numel = 1;
  int64_t view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(oldshape.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= oldshape[tensor_d];
    if (tensor_d == 0 || (oldshape[tensor_d - 1] != 1 && oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || newshape[view_d] == 1)) {
        newstride[view_d] = view_numel * chunk_base_stride;
        view_numel *= newshape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = oldstride[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return newstride;
}

std::vector<int64_t> broadcast_shapes(std::string_view op, IntArrayRef a, IntArrayRef b) {
  const size_t ndim = std::max(a.size(), b.size());
  std::vector<int64_t> out(ndim);
  for (size_t i = ndim; i-- > 0;) {
    const size_t offset = ndim - 1 - i;
    const int64_t sa = offset < a.size() ? a[a.size() - 1 - offset] : 1;
    const int64_t sb = offset < b.size() ? b[b.size() - 1 - offset] : 1;
    if (sa != sb && sa != 1 && sb != 1)
      fail(op, "The size of tensor a ({}) must match the size of tensor b ({}) at non-singleton dimension {}", sa, sb,
           i);
    out[i] = sa == 1 ? sb : sa;
  }
  return out;
}

namespace view_meta {

ViewMeta reshape_view(const ViewMeta& in, IntArrayRef size) {
  std::optional<std::vector<int64_t>> strides = compute_view_strides(in.sizes, in.strides, size);
  if (!strides) fail("view", "{}", kViewIncompatible);
  return ViewMeta{size.vec(), std::move(*strides), in.offset};
}

ViewMeta expand(const ViewMeta& in, IntArrayRef size) {
  const int64_t ndim = static_cast<int64_t>(size.size());
  const int64_t tensor_dim = static_cast<int64_t>(in.sizes.size());
  if (ndim < tensor_dim)
    fail("expand",
         "the number of sizes provided ({}) must be greater or equal to the number of dimensions in the tensor ({})",
         ndim, tensor_dim);
  ViewMeta out{std::vector<int64_t>(ndim), std::vector<int64_t>(ndim), in.offset};
  if (tensor_dim == 0) {  // a 0-dim tensor broadcasts to anything, with all-zero strides
    for (int64_t i = 0; i < ndim; ++i) {
      if (size[i] < 0)
        fail("expand", "The expanded size of the tensor ({}) isn't allowed in a leading, non-existing dimension {}",
             size[i], i);
      out.sizes[i] = size[i];
    }
    return out;
  }
  for (int64_t i = ndim - 1; i >= 0; --i) {
    const int64_t offset = ndim - 1 - i;
    const int64_t dim = tensor_dim - 1 - offset;
    int64_t sz = dim >= 0 ? in.sizes[dim] : 1;
    int64_t stride = dim >= 0 ? in.strides[dim] : (i + 1 < ndim ? wrap_mul(out.sizes[i + 1], out.strides[i + 1]) : 1);
    int64_t target = size[i];
    if (target == -1) {
      if (dim < 0)
        fail("expand", "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {}", i);
      target = sz;
    }
    if (target < 0) fail("expand", "The expanded size of the tensor ({}) must be non-negative", target);
    if (sz != target) {
      if (sz != 1)
        fail("expand",
             "The expanded size of the tensor ({}) must match the existing size ({}) at non-singleton dimension {}.  "
             "Target sizes: {}.  Tensor sizes: {}",
             target, sz, i, shape_str(size), shape_str(in.sizes));
      sz = target;
      stride = 0;
    }
    out.sizes[i] = sz;
    out.strides[i] = stride;
  }
  checked_numel("expand", out.sizes);
  return out;
}

ViewMeta permute(const ViewMeta& in, IntArrayRef dims) {
  ViewMeta out{{}, {}, in.offset};
  for (int64_t d : dims) {
    out.sizes.push_back(in.sizes.at(static_cast<size_t>(d)));
    out.strides.push_back(in.strides.at(static_cast<size_t>(d)));
  }
  return out;
}

ViewMeta slice(const ViewMeta& in, int64_t dim, int64_t start, int64_t end, int64_t step) {
  // start <= end <= size, so only an empty slice's offset or a stride whose dim keeps at
  // most one element can leave int64 (PyTorch wraps there too).
  ViewMeta out = in;
  out.offset = wrap_add(out.offset, wrap_mul(start, in.strides.at(static_cast<size_t>(dim))));
  const int64_t len = end - start;
  out.sizes[dim] = len == 0 ? 0 : (len - 1) / step + 1;
  out.strides[dim] = wrap_mul(out.strides[dim], step);
  return out;
}

ViewMeta squeeze(const ViewMeta& in, IntArrayRef dims) {
  ViewMeta out{{}, {}, in.offset};
  for (size_t d = 0; d < in.sizes.size(); ++d) {
    if (std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) != dims.end()) continue;
    out.sizes.push_back(in.sizes[d]);
    out.strides.push_back(in.strides[d]);
  }
  return out;
}

ViewMeta unsqueeze(const ViewMeta& in, int64_t dim) {
  ViewMeta out = in;
  const size_t d = static_cast<size_t>(dim);
  const int64_t stride = d >= in.sizes.size() ? 1 : wrap_mul(in.sizes[d], in.strides[d]);
  out.sizes.insert(out.sizes.begin() + dim, 1);
  out.strides.insert(out.strides.begin() + dim, stride);
  return out;
}

ViewMeta diagonal(const ViewMeta& in, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t n1 = in.sizes.at(static_cast<size_t>(dim1)), n2 = in.sizes.at(static_cast<size_t>(dim2));
  const int64_t diag_size =
      offset >= 0 ? std::max<int64_t>(std::min(n1, n2 - offset), 0) : std::max<int64_t>(std::min(n1 + offset, n2), 0);
  ViewMeta out{{}, {}, in.offset};
  if (diag_size > 0) out.offset += offset >= 0 ? offset * in.strides[dim2] : -offset * in.strides[dim1];
  for (size_t d = 0; d < in.sizes.size(); ++d) {
    if (static_cast<int64_t>(d) == dim1 || static_cast<int64_t>(d) == dim2) continue;
    out.sizes.push_back(in.sizes[d]);
    out.strides.push_back(in.strides[d]);
  }
  out.sizes.push_back(diag_size);
  out.strides.push_back(wrap_add(in.strides[dim1], in.strides[dim2]));
  return out;
}

}  // namespace view_meta

// ---- reshaping ------------------------------------------------------------------------------

// infer_size on symbolic sizes: the -1 dim is numel // (product of the others), guarded to
// divide exactly; without -1 the element counts must match (guarded).
std::vector<ir::Expr> sym_infer_size(std::string_view op, IntArrayRef shape, const ir::Expr& numel) {
  std::vector<ir::Expr> res;
  ir::Expr known(1);
  std::optional<size_t> infer_dim;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1) {
      if (infer_dim) fail(op, "only one dimension can be inferred");
      infer_dim = d;
    } else if (shape[d] < 0) {
      fail(op, "invalid shape dimension {}", shape[d]);
    } else {
      known = known * ir::Expr(shape[d]);
    }
    res.push_back(ir::Expr(shape[d]));
  }
  const ir::ShapeEnv* env = ir::ShapeEnv::current();
  const int64_t numel_hint = env ? env->hint(numel) : numel.as_const();
  if (infer_dim) {
    if (known == ir::Expr(0))
      fail(op,
           "cannot reshape tensor of 0 elements into shape {} because the unspecified dimension size -1 can be "
           "any value and is ambiguous",
           shape_str(shape));
    if (!ir::sym_eq(ir::mod(numel, known), ir::Expr(0)))
      fail(op, "shape '{}' is invalid for input of size {}", shape_str(shape), numel_hint);
    res[*infer_dim] = ir::floordiv(numel, known);
  } else if (!ir::sym_eq(numel, known)) {
    fail(op, "shape '{}' is invalid for input of size {}", shape_str(shape), numel_hint);
  }
  return res;
}

Tensor view(const Tensor& self, IntArrayRef size) {
  if (is_symbolic(self)) return sym_reshape(self, sym_infer_size("view", size, sym_numel(self)));
  std::vector<int64_t> shape = infer_size("view", size, self.numel());
  if (!self.is_traced() && !compute_view_strides(self.sizes(), self.strides(), shape))
    fail("view", "{}", kViewIncompatible);
  return reshape_prim(self, shape);
}

Tensor reshape(const Tensor& self, IntArrayRef size) {
  if (is_symbolic(self)) return sym_reshape(self, sym_infer_size("reshape", size, sym_numel(self)));
  return reshape_prim(self, infer_size("reshape", size, self.numel()));
}

Tensor flatten(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  const int64_t n = self.dim();
  const int64_t s = normalize_dim("flatten", start_dim, n);
  const int64_t e = normalize_dim("flatten", end_dim, n);
  if (s > e) fail("flatten", "flatten() has invalid args: start_dim cannot come after end_dim");
  if (n == 0) return reshape_prim(self, {1});
  if (s == e) return self;
  if (is_symbolic(self)) {
    const std::vector<ir::Expr> in = sym_sizes(self);
    std::vector<ir::Expr> shape(in.begin(), in.begin() + s);
    shape.push_back(sym_product(std::vector<ir::Expr>(in.begin() + s, in.begin() + e + 1)));
    shape.insert(shape.end(), in.begin() + e + 1, in.end());
    return sym_reshape(self, shape);
  }
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().begin() + s);
  shape.push_back(checked_numel("flatten", IntArrayRef(self.sizes().data() + s, static_cast<size_t>(e - s + 1))));
  shape.insert(shape.end(), self.sizes().begin() + e + 1, self.sizes().end());
  return reshape_prim(self, shape);
}

Tensor unflatten(const Tensor& self, int64_t dim, IntArrayRef sizes) {
  const int64_t d = normalize_dim("unflatten", dim, self.dim(), /*allow_scalar=*/false);
  if (sizes.empty()) fail("unflatten", "sizes must be non-empty");
  if (is_symbolic(self)) {
    const std::vector<ir::Expr> in = sym_sizes(self);
    std::vector<ir::Expr> inferred = sym_infer_size("unflatten", sizes, in[static_cast<size_t>(d)]);
    std::vector<ir::Expr> shape(in.begin(), in.begin() + d);
    shape.insert(shape.end(), inferred.begin(), inferred.end());
    shape.insert(shape.end(), in.begin() + d + 1, in.end());
    return sym_reshape(self, shape);
  }
  std::vector<int64_t> inferred;
  try {
    inferred = infer_size("unflatten", sizes, self.size(d));
  } catch (const Error& e) {
    if (std::string_view(e.what()).find("is invalid for input of size") == std::string_view::npos) throw;
    fail("unflatten", "Provided sizes {} don't multiply up to the size of dim {} ({}) in the input tensor",
         shape_str(sizes), d, self.size(d));
  }
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().begin() + d);
  shape.insert(shape.end(), inferred.begin(), inferred.end());
  shape.insert(shape.end(), self.sizes().begin() + d + 1, self.sizes().end());
  return view(self, shape);
}

// ---- permuting --------------------------------------------------------------------------------

Tensor permute(const Tensor& self, IntArrayRef dims) {
  const int64_t n = self.dim();
  if (static_cast<int64_t>(dims.size()) != n)
    fail("permute",
         "number of dimensions in the tensor input does not match the length of the desired ordering of "
         "dimensions i.e. input.dim() = {} is not equal to len(dims) = {}",
         n, dims.size());
  std::vector<int64_t> perm;
  std::vector<bool> seen(static_cast<size_t>(n), false);
  for (int64_t d : dims) {
    const int64_t w = normalize_dim("permute", d, n);
    if (seen[w]) fail("permute", "duplicate dims are not allowed.");
    seen[w] = true;
    perm.push_back(w);
  }
  return permute_prim(self, std::move(perm));
}

Tensor transpose(const Tensor& self, int64_t d0, int64_t d1) {
  const int64_t n = self.dim();
  const int64_t a = normalize_dim("transpose", d0, n);
  const int64_t b = normalize_dim("transpose", d1, n);
  std::vector<int64_t> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), 0);
  if (n > 0) std::swap(perm[a], perm[b]);
  return permute_prim(self, std::move(perm));
}

Tensor t(const Tensor& self) {
  const int64_t n = self.dim();
  if (n > 2) fail("t", "t() expects a tensor with <= 2 dimensions, but self is {}D", n);
  return transpose(self, 0, n < 2 ? 0 : 1);
}

Tensor movedim(const Tensor& self, int64_t src, int64_t dst) {
  const int64_t n = self.dim();
  const int64_t s = normalize_dim("movedim", src, n);
  const int64_t d = normalize_dim("movedim", dst, n);
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < n; ++i)
    if (i != s) perm.push_back(i);
  if (n > 0) perm.insert(perm.begin() + d, s);
  return permute_prim(self, std::move(perm));
}

// expand on symbolic sizes: -1 keeps the input's size, and a target that differs from a
// non-1 input size is decided (guarded) to be equal.
Tensor sym_expand_sizes(const Tensor& self, IntArrayRef size) {
  const std::vector<ir::Expr> in = sym_sizes(self);
  const int64_t ndim = static_cast<int64_t>(size.size()), tensor_dim = static_cast<int64_t>(in.size());
  if (ndim < tensor_dim)
    fail("expand",
         "the number of sizes provided ({}) must be greater or equal to the number of dimensions in the tensor ({})",
         ndim, tensor_dim);
  std::vector<ir::Expr> out(static_cast<size_t>(ndim));
  for (int64_t i = ndim - 1; i >= 0; --i) {
    const int64_t dim = tensor_dim - 1 - (ndim - 1 - i);
    const ir::Expr sz = dim >= 0 ? in[static_cast<size_t>(dim)] : ir::Expr(1);
    if (size[i] == -1 && dim < 0)
      fail("expand", "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {}", i);
    if (size[i] < -1 || (size[i] == -1 && dim < 0))
      fail("expand", "The expanded size of the tensor ({}) must be non-negative", size[i]);
    const ir::Expr target = size[i] == -1 ? sz : ir::Expr(size[i]);
    if (!ir::sym_eq(sz, target) && !ir::sym_eq(sz, ir::Expr(1)))
      fail("expand", "The expanded size of the tensor ({}) must match the existing size ({}) at non-singleton "
           "dimension {}.  Target sizes: {}.  Tensor sizes: {}", size[i], ir::ShapeEnv::current()->hint(sz), i,
           shape_str(size), ir::str(in));
    out[static_cast<size_t>(i)] = target;
  }
  return sym_expand(self, out);
}

Tensor expand(const Tensor& self, IntArrayRef size) {
  if (is_symbolic(self)) return sym_expand_sizes(self, size);
  ViewMeta m = view_meta::expand(meta_of(self), size);
  return dispatch1(ir::OpKind::expand, {self}, {ir::to_exprs(m.sizes)});
}

// ---- adding and removing unit dims ----------------------------------------------------------

Tensor squeeze(const Tensor& self) {
  std::vector<int64_t> dims;
  const std::vector<ir::Expr> sizes = sym_sizes(self);
  for (int64_t d = 0; d < self.dim(); ++d)
    if (ir::sym_eq(sizes[static_cast<size_t>(d)], ir::Expr(1))) dims.push_back(d);
  return dispatch1(ir::OpKind::squeeze, {self}, {std::move(dims)});
}

Tensor squeeze(const Tensor& self, int64_t dim) {
  const int64_t d = normalize_dim("squeeze", dim, self.dim());
  std::vector<int64_t> dims;
  if (self.dim() > 0 && ir::sym_eq(sym_size(self, d), ir::Expr(1))) dims.push_back(d);  // squeezing a non-1 dim is a no-op
  return dispatch1(ir::OpKind::squeeze, {self}, {std::move(dims)});
}

Tensor unsqueeze(const Tensor& self, int64_t dim) {
  const int64_t d = normalize_dim("unsqueeze", dim, self.dim() + 1);
  return dispatch1(ir::OpKind::unsqueeze, {self}, {d});
}

// ---- slicing ------------------------------------------------------------------------------------

namespace {

// slice on a symbolic dim: negative bounds count from the (symbolic) end, and each clamp to
// [0, size] is decided with a guard (an omitted end is the size itself, with no guard).
Tensor sym_slice(const Tensor& self, int64_t d, std::optional<int64_t> start, std::optional<int64_t> end,
                 int64_t step) {
  const ir::Expr size = sym_size(self, d);
  auto clamp = [&](ir::Expr v, const ir::Expr& lo) {
    if (ir::sym_lt(v, lo)) return lo;
    if (ir::sym_lt(size, v)) return size;
    return v;
  };
  ir::Expr s = start.value_or(0) < 0 ? size + ir::Expr(*start) : ir::Expr(start.value_or(0));
  s = clamp(s, ir::Expr(0));
  ir::Expr e = size;
  if (end && *end != std::numeric_limits<int64_t>::max()) e = clamp(*end < 0 ? size + ir::Expr(*end) : ir::Expr(*end), s);
  return dispatch1(ir::OpKind::slice, {self}, {d, s, e, ir::Expr(step)});
}

}  // namespace

Tensor slice(const Tensor& self, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  const int64_t n = self.dim();
  if (n == 0) fail("slice", "slice() cannot be applied to a 0-dim tensor.");
  const int64_t d = normalize_dim("slice", dim, n);
  if (step <= 0) fail("slice", "slice step must be positive");
  if (is_symbolic(self)) return sym_slice(self, d, start, end, step);
  const int64_t size = self.sizes()[d];
  int64_t s = start.value_or(0);
  int64_t e = end.value_or(std::numeric_limits<int64_t>::max());
  if (s < 0) s += size;
  if (e < 0) e += size;
  s = std::clamp<int64_t>(s, 0, size);
  e = e < s ? s : std::min(e, size);
  return slice_prim(self, d, s, e, step);
}

Tensor select(const Tensor& self, int64_t dim, int64_t index) {
  const int64_t n = self.dim();
  if (n == 0) fail("select", "select() cannot be applied to a 0-dim tensor.");
  const int64_t d = normalize_dim("select", dim, n);
  if (is_symbolic(self) && !sym_size(self, d).is_const()) {
    const ir::Expr size = sym_size(self, d);
    if (!ir::sym_le(ir::Expr(-index), size) || !ir::sym_lt(ir::Expr(index), size))
      fail("select", "index {} out of range for tensor of size {} at dimension {}", index, ir::str(sym_sizes(self)), d);
    const ir::Expr at = index < 0 ? size + ir::Expr(index) : ir::Expr(index);
    Tensor one = dispatch1(ir::OpKind::slice, {self}, {d, at, at + 1, ir::Expr(1)});
    return dispatch1(ir::OpKind::squeeze, {one}, {std::vector<int64_t>{d}});
  }
  const int64_t size = self.sizes()[d];
  if (index < -size || index >= size)
    fail("select", "index {} out of range for tensor of size {} at dimension {}", index, shape_str(self.sizes()), d);
  if (index < 0) index += size;
  Tensor one = slice_prim(self, d, index, index + 1, 1);
  return dispatch1(ir::OpKind::squeeze, {one}, {std::vector<int64_t>{d}});
}

Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  if (self.dim() == 0) fail("narrow", "narrow() cannot be applied to a 0-dim tensor.");
  if (length < 0) fail("narrow", "narrow(): length must be non-negative.");
  const int64_t d = normalize_dim("narrow", dim, self.dim());
  if (is_symbolic(self) && !sym_size(self, d).is_const()) {
    const ir::Expr cur = sym_size(self, d);
    if (!ir::sym_le(ir::Expr(-start), cur) || !ir::sym_le(ir::Expr(start), cur))
      fail("narrow", "start out of range (expected to be in range of [-size, size], but got {})", start);
    const ir::Expr s = start < 0 ? cur + ir::Expr(start) : ir::Expr(start);
    if (!ir::sym_le(s + ir::Expr(length), cur))
      fail("narrow", "start ({}) + length ({}) exceeds dimension size ({}).", start, length, cur.str());
    return dispatch1(ir::OpKind::slice, {self}, {d, s, s + ir::Expr(length), ir::Expr(1)});
  }
  const int64_t cur = self.size(d);  // this dim alone (static here): the others may stay symbolic
  if (start < -cur || start > cur)
    fail("narrow", "start out of range (expected to be in range of [{}, {}], but got {})", -cur, cur, start);
  if (start < 0) start += cur;
  if (start > cur - length) fail("narrow", "start ({}) + length ({}) exceeds dimension size ({}).", start, length, cur);
  return slice_prim(self, d, start, start + length, 1);
}

Tensor diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t n = self.dim();
  const int64_t d1 = normalize_dim("diagonal", dim1, n);
  const int64_t d2 = normalize_dim("diagonal", dim2, n);
  if (d1 == d2) fail("diagonal", "diagonal dimensions cannot be identical {}, {}", dim1, dim2);
  return dispatch1(ir::OpKind::diagonal, {self}, {offset, d1, d2});
}

Tensor as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset) {
  if (!self.defined()) fail("as_strided", "received an undefined tensor");
  if (size.size() != stride.size())
    fail("as_strided", "mismatch in length of strides and shape: {} sizes and {} strides", size.size(), stride.size());
  for (int64_t s : size)
    if (s < 0) fail("as_strided", "Trying to create tensor with negative dimension {}: {}", s, shape_str(size));
  for (int64_t s : stride)
    if (s < 0)
      fail("as_strided", "Negative strides are not supported at the moment, got strides: {}", shape_str(stride));
  // Traced: the prim addresses the input value's row-major elements (it has no storage).
  const TensorImpl& impl = *self.impl();
  const int64_t offset = storage_offset.value_or(self.is_traced() ? 0 : impl.storage_offset());
  if (offset < 0) fail("as_strided", "Tensor: invalid storage offset {}", offset);
  if (self.is_traced())
    return dispatch1(ir::OpKind::as_strided, {self},
                     {ir::to_exprs(size.vec()), ir::to_exprs(stride.vec()), sym(offset)});
  // Eager: PyTorch's semantics, a view of the storage itself, whatever self's own layout.
  const int64_t itemsize = static_cast<int64_t>(element_size(self.dtype()));
  const int64_t storage_bytes = impl.storage() ? static_cast<int64_t>(impl.storage()->nbytes()) : 0;
  check_as_strided_bounds(size, stride, offset, itemsize, storage_bytes);
  IntrusivePtr<TensorImpl> view = make_intrusive<TensorImpl>(impl.storage(), self.dtype(), size, stride, offset);
  view->set_view_of(self.impl());
  Tensor out(std::move(view));
  if (!GradMode::is_enabled() || !self.requires_grad()) return out;
  // The derivative rule addresses self's row-major elements, which are the storage's from
  // self's offset on when self is contiguous.
  const int64_t from_self = offset - impl.storage_offset();
  if (!self.is_contiguous() || from_self < 0)
    fail("as_strided", "viewing a tensor that requires grad with as_strided needs a contiguous tensor and a storage "
                       "offset at or after its own ({} here, the tensor's is {}); call .contiguous() first",
         offset, impl.storage_offset());
  return autograd::attach_history(
             OpCall{ir::OpKind::as_strided, {self}, ir::AttrList({ir::to_exprs(size.vec()), ir::to_exprs(stride.vec()),
                                                                   sym(from_self)})},
             {out})
      .at(0);
}

// ---- splitting -----------------------------------------------------------------------------------

std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim) {
  if (self.dim() == 0) fail("split", "split expects at least a 1-dimensional tensor");
  if (split_size < 0) fail("split", "split expects split_size be non-negative, but got split_size={}", split_size);
  const int64_t d = normalize_dim("split", dim, self.dim());
  const int64_t dim_size = self.sizes()[d];
  if (split_size == 0 && dim_size != 0)
    fail("split", "split_size can only be 0 if dimension size is 0, but got dimension size of {}", dim_size);
  // ceil(dim_size / split_size) pieces (at least one), the last holding what is left; written
  // so that no intermediate leaves int64 however large split_size is.
  const int64_t num_splits = split_size == 0 || dim_size == 0 ? 1 : (dim_size - 1) / split_size + 1;
  const int64_t last = dim_size - split_size * (num_splits - 1);
  std::vector<Tensor> out;
  out.reserve(static_cast<size_t>(num_splits));
  for (int64_t i = 0; i < num_splits; ++i)
    out.push_back(slice_prim(self, d, i * split_size, i * split_size + (i < num_splits - 1 ? split_size : last), 1));
  return out;
}

std::vector<Tensor> split_with_sizes(const Tensor& self, IntArrayRef split_sizes, int64_t dim) {
  if (self.dim() == 0) fail("split_with_sizes", "split expects at least a 1-dimensional tensor");
  const int64_t d = normalize_dim("split_with_sizes", dim, self.dim());
  const int64_t dim_size = self.sizes()[d];
  int64_t total = 0;
  bool overflow = false;  // the entries are non-negative, so an overflowing sum exceeds dim_size
  for (int64_t s : split_sizes) {
    if (s < 0)
      fail("split_with_sizes",
           "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes={}",
           shape_str(split_sizes));
    overflow |= __builtin_add_overflow(total, s, &total);
  }
  if (overflow || total != dim_size)
    fail("split_with_sizes",
         "split_with_sizes expects split_sizes to sum exactly to {} (input tensor's size at dimension {}), but got "
         "split_sizes={}",
         dim_size, d, shape_str(split_sizes));
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    out.push_back(slice_prim(self, d, start, start + s, 1));
    start += s;
  }
  return out;
}

std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim) {
  if (self.dim() == 0) fail("chunk", "chunk expects at least a 1-dimensional tensor");
  if (chunks <= 0) fail("chunk", "chunk expects `chunks` to be greater than 0, got: {}", chunks);
  const int64_t d = normalize_dim("chunk", dim, self.dim());
  const int64_t dim_size = self.sizes()[d];
  const int64_t split_size = dim_size == 0 ? 0 : (dim_size - 1) / chunks + 1;  // ceil, without overflow
  // With nothing to split, split() would return one piece; chunk keeps the requested count.
  if (split_size == 0 && dim_size == 0)
    return split_with_sizes(self, std::vector<int64_t>(static_cast<size_t>(chunks), 0), d);
  return split(self, split_size, d);
}

std::vector<Tensor> unbind(const Tensor& self, int64_t dim) {
  const int64_t d = normalize_dim("unbind", dim, self.dim(), /*allow_scalar=*/false);
  std::vector<Tensor> out;
  for (int64_t i = 0; i < self.sizes()[d]; ++i) out.push_back(select(self, d, i));
  return out;
}

std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& tensors) {
  if (std::any_of(tensors.begin(), tensors.end(), [](const Tensor& t) { return is_symbolic(t); })) {
    std::vector<ir::Expr> shape;
    for (const Tensor& t : tensors) shape = sym_broadcast_shapes("broadcast_tensors", shape, sym_sizes(t));
    std::vector<Tensor> out;
    for (const Tensor& t : tensors) out.push_back(sym_expand(t, shape));
    return out;
  }
  std::vector<int64_t> shape;
  for (const Tensor& t : tensors) shape = broadcast_shapes("broadcast_tensors", shape, t.sizes());
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(expand(t, shape));
  return out;
}

Tensor alias(const Tensor& self) {
  if (self.is_traced()) return sym_reshape(self, sym_sizes(self));  // values, not storage, when traced
  Tensor out;
  {
    NoGradGuard no_grad;
    out = as_strided(self, self.sizes(), self.strides(), self.impl()->storage_offset());
  }
  if (!GradMode::is_enabled() || !self.requires_grad()) return out;
  // The same elements: the gradient passes through as a reshape's does.
  return autograd::attach_history(OpCall{ir::OpKind::reshape, {self}, ir::AttrList({sym_sizes(self)})}, {out}).at(0);
}

}  // namespace kiln
