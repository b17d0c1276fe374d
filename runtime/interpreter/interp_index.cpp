// kiln/runtime/interpreter/interp_index.cpp — reference indexing prims: gather, scatter, scatter_add and
// index_select.
//
// Index tensors hold int64 positions (any integer dtype is read); every position is checked
// against the size of the indexed dimension and a bad one throws
// "[gather] index 5 is out of bounds for dimension 0 with size 3". Negative positions are out
// of bounds too: these prims, like PyTorch's, do not wrap. scatter and scatter_add start from
// a copy of self and visit index elements in row-major order, so with repeated positions the
// last write wins (scatter) and sums accumulate in that fixed order (scatter_add). A 0-dim
// operand acts as a 1-element 1-D one, as PyTorch's ensure_nonempty_dim does.

#include "base/error.h"
#include "runtime/interpreter/interp_kernels.h"
#include "runtime/interpreter/scatter_fold.h"
#include "runtime/interpreter/strided_loop.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

namespace kiln::rt::interp {

namespace {

// Sizes and strides of an operand, a 0-dim one viewed as [1].
struct Layout {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
};

Layout nonempty_layout(const Tensor& t) {
  if (t.impl()->sizes().empty()) return {{1}, {0}};
  return {t.impl()->sizes().vec(), t.impl()->strides().vec()};
}

// The index values in row-major order, as int64.
std::vector<int64_t> index_values(const Tensor& index) {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(index.numel()));
  dispatch_dtype(index.dtype(), [&](auto tag) {
    using I = decltype(tag);
    if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>) {
      const I* p = static_cast<const I*>(index.impl()->data());
      for_each_element<1>(index.impl()->sizes(), {index.impl()->strides().data()},
                          [&](const std::array<int64_t, 1>& o) { out.push_back(static_cast<int64_t>(p[o[0]])); });
    } else {
      internal_fail("index tensor of dtype {} reached the interpreter", dtype_name(index.dtype()));
    }
  });
  return out;
}

void check_bounds(const char* name, const std::vector<int64_t>& idx, int64_t dim, int64_t size) {
  for (int64_t v : idx)
    if (v < 0 || v >= size) fail(name, "index {} is out of bounds for dimension {} with size {}", v, dim, size);
}

void check_dim(const char* name, int64_t dim, size_t rank) {
  if (dim < 0 || dim >= static_cast<int64_t>(rank))
    internal_fail("{} dim {} out of range for rank {}", name, dim, rank);
}

Tensor contiguous_copy(const Tensor& a) {
  Tensor out = empty_contiguous(a.impl()->sizes(), a.dtype());
  const size_t es = element_size(a.dtype());
  char* dst = static_cast<char*>(out.impl()->data());
  const char* src = static_cast<const char*>(a.impl()->data());
  const std::vector<int64_t> out_strides = contiguous_strides(a.impl()->sizes());
  for_each_element<2>(a.impl()->sizes(), {out_strides.data(), a.impl()->strides().data()},
                      [&](const std::array<int64_t, 2>& o) {
                        std::memcpy(dst + o[0] * static_cast<int64_t>(es), src + o[1] * static_cast<int64_t>(es), es);
                      });
  return out;
}

Tensor gather(const Tensor& self, const Tensor& index, int64_t dim) {
  Layout s = nonempty_layout(self), ix = nonempty_layout(index);
  check_dim("gather", dim, s.sizes.size());
  if (ix.sizes.size() != s.sizes.size()) internal_fail("gather: index rank differs from self rank");
  const size_t du = static_cast<size_t>(dim);
  const std::vector<int64_t> idx = index_values(index);
  if (!idx.empty())
    for (size_t d = 0; d < s.sizes.size(); ++d)
      if (d != du && ix.sizes[d] > s.sizes[d])
        fail("gather",
             "Size does not match at dimension {} expected index {} to be no larger than self {} apart from dimension {}",
             d, fmt::format("[{}]", fmt::join(ix.sizes, ", ")), fmt::format("[{}]", fmt::join(s.sizes, ", ")), dim);
  check_bounds("gather", idx, dim, s.sizes[du]);

  Tensor out = empty_contiguous(index.impl()->sizes(), self.dtype());
  const std::vector<int64_t> out_strides = contiguous_strides(ix.sizes);
  std::vector<int64_t> walk(s.strides);  // self strides with the indexed dim held still
  walk[du] = 0;
  const int64_t es = static_cast<int64_t>(element_size(self.dtype()));
  char* dst = static_cast<char*>(out.impl()->data());
  const char* src = static_cast<const char*>(self.impl()->data());
  size_t i = 0;
  for_each_element<2>(ix.sizes, {out_strides.data(), walk.data()}, [&](const std::array<int64_t, 2>& o) {
    const int64_t so = o[1] + idx[i++] * s.strides[du];
    std::memcpy(dst + o[0] * es, src + so * es, static_cast<size_t>(es));
  });
  return out;
}

// scatter (no fold: the value replaces), scatter_add (fold Sum, self included) and
// scatter_reduce, visiting index elements in row-major order.
Tensor scatter_into(const char* name, const Tensor& self, const Tensor& index, const Tensor& src, int64_t dim,
                    std::optional<Fold> fold, bool include_self, bool mean) {
  Layout s = nonempty_layout(self), ix = nonempty_layout(index), sr = nonempty_layout(src);
  check_dim(name, dim, s.sizes.size());
  if (ix.sizes.size() != s.sizes.size() || sr.sizes.size() != s.sizes.size())
    internal_fail("{}: operand ranks differ", name);
  if (src.dtype() != self.dtype()) internal_fail("{}: src dtype differs from self dtype", name);
  const size_t du = static_cast<size_t>(dim);
  const std::vector<int64_t> idx = index_values(index);
  if (!idx.empty())
    for (size_t d = 0; d < s.sizes.size(); ++d)
      if ((d != du && ix.sizes[d] > s.sizes[d]) || ix.sizes[d] > sr.sizes[d])
        fail(name,
             "Expected index {} to be no larger than self {} apart from dimension {} and to be no larger size than src {}",
             fmt::format("[{}]", fmt::join(ix.sizes, ", ")), fmt::format("[{}]", fmt::join(s.sizes, ", ")), dim,
             fmt::format("[{}]", fmt::join(sr.sizes, ", ")));
  check_bounds(name, idx, dim, s.sizes[du]);

  Tensor out = contiguous_copy(self);
  std::vector<int64_t> walk = contiguous_strides(s.sizes);  // out strides with the indexed dim held still
  const int64_t out_dim_stride = walk[du];
  walk[du] = 0;
  const int64_t n = out.numel();
  // How many values each position holds (self counted when included): for include_self false
  // and for mean.
  std::vector<int64_t> count(fold ? static_cast<size_t>(n) : 0, include_self ? 1 : 0);
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* po = static_cast<T*>(out.impl()->data());
    const T* ps = static_cast<const T*>(src.impl()->data());
    size_t i = 0;
    for_each_element<2>(ix.sizes, {walk.data(), sr.strides.data()}, [&](const std::array<int64_t, 2>& o) {
      const int64_t at = o[0] + idx[i++] * out_dim_stride;
      if (!fold) {
        po[at] = ps[o[1]];
        return;
      }
      if (count[static_cast<size_t>(at)]++ == 0) po[at] = fold_identity<T>(*fold);  // first value, self excluded
      fold_into(*fold, po[at], ps[o[1]]);
    });
    if (mean)
      for (int64_t k = 0; k < n; ++k)
        if (count[static_cast<size_t>(k)] > 0) po[k] = mean_of(po[k], count[static_cast<size_t>(k)]);
  });
  return out;
}

Tensor index_select(const Tensor& self, const Tensor& index, int64_t dim) {
  if (index.impl()->sizes().size() > 1)
    internal_fail("index_select: index must be 0-D or 1-D, got {}-D", index.impl()->sizes().size());
  Layout s = nonempty_layout(self);
  check_dim("index_select", dim, s.sizes.size());
  const size_t du = static_cast<size_t>(dim);
  const std::vector<int64_t> idx = index_values(index);
  const int64_t n = static_cast<int64_t>(idx.size());
  std::vector<int64_t> out_sizes;
  if (self.impl()->sizes().empty()) {
    if (n != 1) fail("index_select", "Index to scalar can have only 1 value, got {} value(s)", n);
  } else {
    out_sizes = self.impl()->sizes().vec();
    out_sizes[du] = n;
  }
  check_bounds("index_select", idx, dim, s.sizes[du]);

  Tensor out = empty_contiguous(out_sizes, self.dtype());
  std::vector<int64_t> block(s.sizes);  // the loop over everything but the indexed dim
  block[du] = 1;
  std::vector<int64_t> block_sizes(s.sizes);
  block_sizes[du] = n;
  const std::vector<int64_t> out_strides = contiguous_strides(block_sizes);
  const int64_t es = static_cast<int64_t>(element_size(self.dtype()));
  char* dst = static_cast<char*>(out.impl()->data());
  const char* src = static_cast<const char*>(self.impl()->data());
  for_each_element<2>(block, {out_strides.data(), s.strides.data()}, [&](const std::array<int64_t, 2>& o) {
    for (int64_t k = 0; k < n; ++k)
      std::memcpy(dst + (o[0] + k * out_strides[du]) * es,
                  src + (o[1] + idx[static_cast<size_t>(k)] * s.strides[du]) * es, static_cast<size_t>(es));
  });
  return out;
}

}  // namespace

Tensor index(ir::IndexOp op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs) {
  auto need = [&](size_t n, const char* name) {
    if (inputs.size() != n) internal_fail("{} takes {} tensors, got {}", name, n, inputs.size());
  };
  switch (op) {
    case ir::IndexOp::gather:
      need(2, "gather");
      return gather(inputs[0], inputs[1], attrs.get<int64_t>(ir::OpKind::gather, "dim"));
    case ir::IndexOp::scatter:
      need(3, "scatter");
      return scatter_into("scatter", inputs[0], inputs[1], inputs[2], attrs.get<int64_t>(ir::OpKind::scatter, "dim"),
                          std::nullopt, true, false);
    case ir::IndexOp::scatter_add:
      need(3, "scatter_add");
      return scatter_into("scatter_add", inputs[0], inputs[1], inputs[2], attrs.get<int64_t>(ir::OpKind::scatter_add, "dim"),
                          Fold::Sum, true, false);
    case ir::IndexOp::index_select:
      need(2, "index_select");
      return index_select(inputs[0], inputs[1], attrs.get<int64_t>(ir::OpKind::index_select, "dim"));
    case ir::IndexOp::scatter_reduce: {
      need(3, "scatter_reduce");
      constexpr ir::OpKind k = ir::OpKind::scatter_reduce;
      const std::string& reduce = attrs.get<std::string>(k, "reduce");
      return scatter_into("scatter_reduce", inputs[0], inputs[1], inputs[2], attrs.get<int64_t>(k, "dim"), fold_of(reduce),
                          attrs.get<bool>(k, "include_self"), reduce == "mean");
    }
    case ir::IndexOp::embedding:
    case ir::IndexOp::embedding_dense_backward:
    case ir::IndexOp::embedding_bag:
    case ir::IndexOp::index:
    case ir::IndexOp::index_put:
    case ir::IndexOp::masked_scatter:
    case ir::IndexOp::slice_scatter:
    case ir::IndexOp::select_scatter: break;  // Core ops: interpret_op runs their decompositions
  }
  internal_fail("bad IndexOp {}", static_cast<int>(op));
}

}  // namespace kiln::rt::interp
