// kiln/runtime/cpu/extern_index.cpp — the indexing prims as library calls: gather, index_select,
// scatter and scatter_add.
//
// Index values are checked first, in row-major order, with the interpreter's message
// ("[gather] index 5 is out of bounds for dimension 0 with size 3"; negative positions are
// out of bounds, as in PyTorch), so a bad index raises before any thread starts. Then:
//   gather        lines of the index along the dim, in parallel;
//   index_select  the selected slices, in parallel, each copied element by element;
//   scatter(_add) out starts as a copy of self; the lines of the index along the dim write
//                 disjoint lines of out, so they run in parallel, each in order — repeated
//                 positions end as the interpreter's do (the last write wins; sums in
//                 row-major order); scatter_reduce folds the same way (runtime/interpreter/scatter_fold.h).
// A 0-dim operand acts as a 1-element 1-D one, as in PyTorch.
#include "runtime/cpu/extern_kernels.h"

#include "base/error.h"
#include "base/tensor_impl.h"
#include "runtime/cpu/extern_lines.h"
#include "runtime/interpreter/scatter_fold.h"
#include "runtime/interpreter/strided_loop.h"

#include <cstdint>
#include <type_traits>

namespace kiln::rt {

namespace {

struct Layout {
  std::vector<int64_t> sizes, strides;
};

Layout nonempty(const Tensor& t) {
  if (t.dim() == 0) return {{1}, {0}};
  return {t.sizes().vec(), t.strides().vec()};
}

// The index as int64 (eager gathers may pass int32), strides kept when it already is.
Tensor as_int64(const Tensor& index) { return index.dtype() == ScalarType::Int64 ? index : index.to(ScalarType::Int64); }

// Raises for the first index value (row-major) outside [0, size); `index` is int64.
void check_index(const char* op, const Tensor& index, int64_t dim, int64_t size) {
  const int64_t* p = static_cast<const int64_t*>(index.data_ptr());
  const Layout ix = nonempty(index);
  for_each_element<1>(ix.sizes, {ix.strides.data()}, [&](const std::array<int64_t, 1>& o) {
    const int64_t v = p[o[0]];
    if (v < 0 || v >= size) fail(op, "index {} is out of bounds for dimension {} with size {}", v, dim, size);
  });
}

void gather(const Tensor& self, const Tensor& index0, int64_t dim, const Tensor& out) {
  const Tensor index = as_int64(index0);
  const Layout s = nonempty(self), ix = nonempty(index), o = nonempty(out);
  check_index("gather", index, dim, s.sizes[static_cast<size_t>(dim)]);
  const Lines lines(ix.sizes, dim);
  const int64_t* pi = static_cast<const int64_t*>(index.data_ptr());
  const int64_t ss = lines.step(s.strides), is = lines.step(ix.strides), os = lines.step(o.strides);
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* ps = static_cast<const T*>(self.data_ptr());
    T* po = static_cast<T*>(out.data_ptr());
    lines.parallel([&](int64_t b, int64_t e) {
      for (int64_t l = b; l < e; ++l) {
        const T* src = ps + lines.offset(l, s.strides);
        const int64_t* idx = pi + lines.offset(l, ix.strides);
        T* dst = po + lines.offset(l, o.strides);
        for (int64_t k = 0; k < lines.length(); ++k) dst[k * os] = src[idx[k * is] * ss];
      }
    });
    return 0;
  });
}

void index_select(const Tensor& self, const Tensor& index0, int64_t dim, const Tensor& out) {
  const Tensor index = as_int64(index0);
  const Layout s = nonempty(self), o = nonempty(out);
  const size_t du = static_cast<size_t>(dim);
  check_index("index_select", index, dim, s.sizes[du]);
  const Tensor idx = index.contiguous();
  const int64_t* pi = static_cast<const int64_t*>(idx.data_ptr());
  const int64_t n = idx.numel();
  if (self.dim() == 0 && n != 1) fail("index_select", "Index to scalar can have only 1 value, got {} value(s)", n);
  std::vector<int64_t> slice(s.sizes);  // one selected slice: every dim but `dim`
  slice[du] = 1;
  int64_t slice_numel = 1;
  for (int64_t v : slice) slice_numel *= v;
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* ps = static_cast<const T*>(self.data_ptr());
    T* po = static_cast<T*>(out.data_ptr());
    parallel_for(n, std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(1, slice_numel)), [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        const T* src = ps + pi[k] * s.strides[du];
        T* dst = po + k * o.strides[du];
        for_each_element<2>(slice, {o.strides.data(), s.strides.data()},
                            [&](const std::array<int64_t, 2>& off) { dst[off[0]] = src[off[1]]; });
      }
    });
    return 0;
  });
}

template <bool Add>
void scatter(const Tensor& self, const Tensor& index0, const Tensor& src, int64_t dim, const Tensor& out) {
  const Tensor index = as_int64(index0);
  const char* name = Add ? "scatter_add" : "scatter";
  const Layout ix = nonempty(index), sr = nonempty(src), o = nonempty(out);
  check_index(name, index, dim, o.sizes[static_cast<size_t>(dim)]);
  Tensor(out).copy_(self);
  const Lines lines(ix.sizes, dim);
  const int64_t* pi = static_cast<const int64_t*>(index.data_ptr());
  const int64_t is = lines.step(ix.strides), rs = lines.step(sr.strides), os = lines.step(o.strides);
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* ps = static_cast<const T*>(src.data_ptr());
    T* po = static_cast<T*>(out.data_ptr());
    lines.parallel([&](int64_t b, int64_t e) {
      for (int64_t l = b; l < e; ++l) {
        const int64_t* idx = pi + lines.offset(l, ix.strides);
        const T* x = ps + lines.offset(l, sr.strides);
        T* dst = po + lines.offset(l, o.strides);
        for (int64_t k = 0; k < lines.length(); ++k) {
          T& d = dst[idx[k * is] * os];
          if constexpr (Add) fold_into(Fold::Sum, d, x[k * rs]);
          else d = x[k * rs];
        }
      }
    });
    return 0;
  });
}

void scatter_reduce(const Tensor& self, const Tensor& index0, const Tensor& src, int64_t dim, const std::string& reduce,
                    bool include_self, const Tensor& out) {
  const Tensor index = as_int64(index0);
  const Layout ix = nonempty(index), sr = nonempty(src), o = nonempty(out);
  const int64_t len = o.sizes[static_cast<size_t>(dim)];
  check_index("scatter_reduce", index, dim, len);
  Tensor(out).copy_(self);
  const Lines lines(ix.sizes, dim);
  const int64_t* pi = static_cast<const int64_t*>(index.data_ptr());
  const int64_t is = lines.step(ix.strides), rs = lines.step(sr.strides), os = lines.step(o.strides);
  const Fold f = fold_of(reduce);
  const bool mean = reduce == "mean";
  dispatch_dtype(self.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* ps = static_cast<const T*>(src.data_ptr());
    T* po = static_cast<T*>(out.data_ptr());
    lines.parallel([&](int64_t b, int64_t e) {
      std::vector<int64_t> count(static_cast<size_t>(len));  // values each position of the line received
      for (int64_t l = b; l < e; ++l) {
        std::fill(count.begin(), count.end(), include_self ? 1 : 0);
        const int64_t* idx = pi + lines.offset(l, ix.strides);
        const T* x = ps + lines.offset(l, sr.strides);
        T* dst = po + lines.offset(l, o.strides);
        for (int64_t k = 0; k < lines.length(); ++k) {
          const int64_t at = idx[k * is];
          T& d = dst[at * os];
          if (count[static_cast<size_t>(at)]++ == 0) d = fold_identity<T>(f);  // first value, self excluded
          fold_into(f, d, x[k * rs]);
        }
        if (mean)
          for (int64_t at = 0; at < len; ++at)
            if (count[static_cast<size_t>(at)] > 0) dst[at * os] = mean_of(dst[at * os], count[static_cast<size_t>(at)]);
      }
    });
    return 0;
  });
}

}  // namespace

void extern_index(ir::OpKind op, const std::vector<Tensor>& ins, const ir::AttrList& attrs, const Tensor& out) {
  const int64_t dim = attrs.get<int64_t>(op, "dim");
  switch (ir::as_index(op)) {
    case ir::IndexOp::gather: return gather(ins.at(0), ins.at(1), dim, out);
    case ir::IndexOp::index_select: return index_select(ins.at(0), ins.at(1), dim, out);
    case ir::IndexOp::scatter: return scatter<false>(ins.at(0), ins.at(1), ins.at(2), dim, out);
    case ir::IndexOp::scatter_add: return scatter<true>(ins.at(0), ins.at(1), ins.at(2), dim, out);
    case ir::IndexOp::scatter_reduce:
      return scatter_reduce(ins.at(0), ins.at(1), ins.at(2), dim, attrs.get<std::string>(op, "reduce"),
                            attrs.get<bool>(op, "include_self"), out);
    case ir::IndexOp::embedding:
    case ir::IndexOp::embedding_dense_backward:
    case ir::IndexOp::embedding_bag:
    case ir::IndexOp::index:
    case ir::IndexOp::index_put:
    case ir::IndexOp::masked_scatter:
    case ir::IndexOp::slice_scatter:
    case ir::IndexOp::select_scatter:
      internal_fail("extern_index: {} is a Core op that decomposes", ir::op_name(op));
  }
}

}  // namespace kiln::rt
