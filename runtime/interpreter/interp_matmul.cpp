// kiln/runtime/interpreter/interp_matmul.cpp — reference matrix products: mm ([n, k] @ [k, m]) and bmm
// ([b, n, k] @ [b, k, m]).
//
// Plain triple loops over strided operands (transposed and expanded inputs are read in
// place). Each output element accumulates its k products in increasing k order: in float for
// f16, bf16 and f32 (as PyTorch's CPU kernels do) and in double for f64; integer products
// wrap around. A zero-size k gives zeros. Bool operands throw, naming the op and dtype the
// way PyTorch's dispatch does: "[mm] \"addmm_impl_cpu_\" not implemented for 'Bool'".

#include "base/error.h"
#include "runtime/interpreter/interp_kernels.h"

#include <type_traits>

namespace kiln::rt::interp {

namespace {

template <typename T> using MatAcc =
    std::conditional_t<std::is_same_v<T, double>, double, std::conditional_t<std::is_integral_v<T>, uint64_t, float>>;

template <typename T> MatAcc<T> to_acc(T x) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<uint64_t>(static_cast<int64_t>(x));
  else
    return static_cast<MatAcc<T>>(x);
}

template <typename T> T from_acc(MatAcc<T> a) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(a);  // modular: wraps around
  else
    return T(a);
}

// One batch of products: out[b] = a[b] @ w[b] for b < batch, with operands given by
// (data, strides) where a batch stride of 0 broadcasts.
struct Operand {
  const void* data;
  int64_t sb, s0, s1;  // batch, row, column strides (elements)
};

template <typename T>
void batched_product(const Operand& a, const Operand& w, T* out, int64_t batch, int64_t n, int64_t k, int64_t m) {
  const T* pa = static_cast<const T*>(a.data);
  const T* pw = static_cast<const T*>(w.data);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        MatAcc<T> acc = 0;
        for (int64_t p = 0; p < k; ++p)
          acc += to_acc(pa[b * a.sb + i * a.s0 + p * a.s1]) * to_acc(pw[b * w.sb + p * w.s0 + j * w.s1]);
        out[(b * n + i) * m + j] = from_acc<T>(acc);
      }
}

Tensor product(const char* name, const char* kernel, const Tensor& a, const Tensor& w, bool batched) {
  const size_t rank = batched ? 3 : 2;
  const auto& as = a.impl()->sizes();
  const auto& ws = w.impl()->sizes();
  if (as.size() != rank || ws.size() != rank) internal_fail("{} operands must be {}-D", name, rank);
  if (a.dtype() != w.dtype()) internal_fail("{} operands of different dtypes reached the interpreter", name);
  if (a.dtype() == kBool) fail(name, "\"{}\" not implemented for 'Bool'", kernel);
  const size_t o = batched ? 1 : 0;
  const int64_t batch = batched ? as[0] : 1;
  const int64_t n = as[o], k = as[o + 1], m = ws[o + 1];
  if (ws[o] != k || (batched && ws[0] != batch)) internal_fail("{} operand shapes do not match", name);
  const auto& ast = a.impl()->strides();
  const auto& wst = w.impl()->strides();
  Operand oa{a.impl()->data(), batched ? ast[0] : 0, ast[o], ast[o + 1]};
  Operand ow{w.impl()->data(), batched ? wst[0] : 0, wst[o], wst[o + 1]};
  std::vector<int64_t> out_sizes = batched ? std::vector<int64_t>{batch, n, m} : std::vector<int64_t>{n, m};
  Tensor out = empty_contiguous(out_sizes, a.dtype());
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>)
      batched_product<T>(oa, ow, static_cast<T*>(out.impl()->data()), batch, n, k, m);
  });
  return out;
}

}  // namespace

Tensor matmul(ir::MatmulOp op, const Tensor& a, const Tensor& b) {
  switch (op) {
    case ir::MatmulOp::mm: return product("mm", "addmm_impl_cpu_", a, b, false);
    case ir::MatmulOp::bmm: return product("bmm", "bmm", a, b, true);
  }
  internal_fail("bad MatmulOp {}", static_cast<int>(op));
}

}  // namespace kiln::rt::interp
