// kiln/runtime/cpu/extern_sort.cpp — the argsort prim as an extern kernel on the CPU.
//
// Slices along the sorted dim are independent, so they are shared among the thread pool's
// workers. Each slice's values are copied into a contiguous buffer of the type they compare
// as (f16/bf16 as float), the NaN positions are moved out of the way in their original order
// (after the numbers ascending, before them descending: PyTorch's order), and the rest is
// ordered by std::stable_sort with a plain comparison, so equal values keep their order.
// The result is bit-identical to the interpreter's reference (runtime/interpreter/interp_sort.cpp).
#include "runtime/cpu/extern_kernels.h"

#include "base/error.h"
#include "base/tensor_impl.h"
#include "runtime/cpu/extern_lines.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <vector>

namespace kiln::rt {

namespace {

template <typename T> using Key = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

// Orders one slice of n values (element k at in[k * stride]) into positions out[k * out_stride].
template <typename T>
void argsort_slice(const T* in, int64_t stride, int64_t n, bool descending, int64_t* out, int64_t out_stride,
                   std::vector<Key<T>>& keys, std::vector<int64_t>& order) {
  keys.resize(static_cast<size_t>(n));
  order.resize(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) keys[static_cast<size_t>(k)] = static_cast<Key<T>>(in[k * stride]);
  std::iota(order.begin(), order.end(), int64_t{0});
  auto first = order.begin(), last = order.end();
  if constexpr (std::is_floating_point_v<Key<T>>) {
    auto is_num = [&](int64_t i) { return !std::isnan(keys[static_cast<size_t>(i)]); };
    if (descending) first = std::stable_partition(order.begin(), order.end(), [&](int64_t i) { return !is_num(i); });
    else last = std::stable_partition(order.begin(), order.end(), is_num);
  }
  if (descending)
    std::stable_sort(first, last, [&](int64_t i, int64_t j) { return keys[static_cast<size_t>(j)] < keys[static_cast<size_t>(i)]; });
  else
    std::stable_sort(first, last, [&](int64_t i, int64_t j) { return keys[static_cast<size_t>(i)] < keys[static_cast<size_t>(j)]; });
  for (int64_t k = 0; k < n; ++k) out[k * out_stride] = order[static_cast<size_t>(k)];
}

}  // namespace

void extern_sort(ir::OpKind, const std::vector<Tensor>& ins, const ir::AttrList& attrs, const Tensor& out) {
  const Tensor& a = ins.at(0);
  const Lines lines(a.sizes().vec(), attrs.get<int64_t>(ir::OpKind::argsort, "dim"));
  const bool descending = attrs.get<bool>(ir::OpKind::argsort, "descending");
  const std::vector<int64_t> in_strides = a.strides().vec(), out_strides = out.strides().vec();
  const int64_t n = lines.length(), stride = lines.step(in_strides), out_stride = lines.step(out_strides);
  int64_t* po = static_cast<int64_t*>(out.data_ptr());
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = static_cast<const T*>(a.data_ptr());
    lines.parallel([&](int64_t b, int64_t e) {
      std::vector<Key<T>> keys;
      std::vector<int64_t> order;
      for (int64_t l = b; l < e; ++l)
        argsort_slice<T>(in + lines.offset(l, in_strides), stride, n, descending, po + lines.offset(l, out_strides),
                         out_stride, keys, order);
    });
    return 0;
  });
}

}  // namespace kiln::rt
