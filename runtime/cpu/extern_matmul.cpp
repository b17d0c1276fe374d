// kiln/runtime/cpu/extern_matmul.cpp — mm and bmm as extern kernels: f32 on oneDNN's SGEMM
// (OpenBLAS's for products of at most 64^3, kiln's own with KILN_SGEMM=kiln), f64 on OpenBLAS
// (runtime/cpu/parallel_gemm.h).
//
// OpenBLAS was first chosen for both: on large products the two measured within a few percent
// (TOOLCHAIN.md: ~210 GFLOP/s on 2 threads). On the small products of transformer models
// oneDNN's SGEMM is 10-20% faster (it neither packs A nor scales C first; issue 33,
// docs/decisions/fusion-and-kernels.md). OpenBLAS is opened at run time with the host's kernel
// set (runtime/cpu/blas_library.h); both run in kiln's pool (runtime/cpu/parallel_gemm.h); a
// batch is shared out by products. Inputs with a
// unit stride in either of their last two dims are passed as they are (transposed where
// needed); others are made contiguous first. f16 and bf16 are computed in f32 by BLAS and
// rounded once (PyTorch's CPU kernels accumulate them in f32); integers, which BLAS has no
// type for, accumulate products in int64 with wrap-around, rows in parallel.
#include "runtime/cpu/extern_kernels.h"

#include "base/error.h"
#include "base/tensor_impl.h"
#include "frontend/decompositions.h"
#include "frontend/ops_factory.h"
#include "runtime/cpu/blas_library.h"
#include "runtime/cpu/parallel_gemm.h"
#include "runtime/thread_pool.h"

#include <climits>
#include <cstring>

namespace kiln::rt {

namespace {

// A matrix operand as BLAS wants it: base pointer, transposition and leading dimension.
struct MatArg {
  const void* data;
  int trans;  // BlasLibrary::kNoTrans or kTrans
  int64_t ld;
};

// How BLAS can read a rows x cols matrix with element strides (rs, cs), if it can. A dim of
// size 1 imposes nothing on its stride (a view may carry any stride there, even 0), and BLAS
// requires a leading dimension >= max(1, the other dim) even where it is never used.
bool as_blas(int64_t rows, int64_t cols, int64_t rs, int64_t cs, const void* data, MatArg& out) {
  const int64_t need_rows = std::max<int64_t>(1, cols), need_cols = std::max<int64_t>(1, rows);
  if (cols <= 1 || cs == 1) {  // row-major: rows are `ld` apart
    const int64_t ld = rows <= 1 ? need_rows : rs;
    if (ld >= need_rows && ld <= INT_MAX) {
      out = {data, BlasLibrary::kNoTrans, ld};
      return true;
    }
  }
  if (rows <= 1 || rs == 1) {  // column-major: columns are `ld` apart
    const int64_t ld = cols <= 1 ? need_cols : cs;
    if (ld >= need_cols && ld <= INT_MAX) {
      out = {data, BlasLibrary::kTrans, ld};
      return true;
    }
  }
  return false;
}

// The operand as BLAS reads it: the tensor itself when its strides allow, else a contiguous
// copy (which always does). `t` keeps the copy alive.
MatArg blas_operand(Tensor& t, int r, int64_t rows, int64_t cols) {
  MatArg m{};
  const TensorImpl* ti = t.impl();
  if (as_blas(rows, cols, ti->strides()[r], ti->strides()[r + 1], t.data_ptr(), m)) return m;
  t = t.clone();  // a fresh row-major tensor (contiguous() keeps size-1 dims' odd strides)
  ti = t.impl();
  if (!as_blas(rows, cols, ti->strides()[r], ti->strides()[r + 1], t.data_ptr(), m))
    internal_fail("[mm] a contiguous [{}, {}] operand has strides BLAS cannot read", rows, cols);
  return m;
}

template <typename T>
void run(const Tensor& a0, const Tensor& b0, const Tensor& out, bool batched, const GemmEpilogue* epilogue = nullptr) {
  Tensor a = a0, b = b0;
  const int r = batched ? 1 : 0;
  const TensorImpl* ai = a.impl();
  const TensorImpl* bi = b.impl();
  const int64_t M = ai->sizes()[r], K = ai->sizes()[r + 1], N = bi->sizes()[r + 1];
  const int64_t batch = batched ? ai->sizes()[0] : 1;
  T* c = static_cast<T*>(out.data_ptr());
  if (M == 0 || N == 0 || batch == 0) return;
  if (K == 0) {
    std::memset(c, 0, static_cast<size_t>(batch * M * N) * sizeof(T));
    if (epilogue) internal_fail("[addmm_activation] an epilogue on a product with k = 0");
    return;
  }
  // cblas takes int sizes and leading dimensions; larger problems are refused, never truncated.
  if (M > INT_MAX || N > INT_MAX || K > INT_MAX)
    fail(batched ? "bmm" : "mm", "sizes [{}, {}] x [{}, {}] exceed the BLAS limit of {} per dim", M, K, K, N, INT_MAX);
  const MatArg ma = blas_operand(a, r, M, K), mb = blas_operand(b, r, K, N);
  ai = a.impl();
  bi = b.impl();
  auto product = [&](int64_t i, bool parallel) {
    const T* x = static_cast<const T*>(ma.data) + (batched ? i * ai->strides()[0] : 0);
    const T* y = static_cast<const T*>(mb.data) + (batched ? i * bi->strides()[0] : 0);
    gemm<T>(ma.trans, mb.trans, M, N, K, x, ma.ld, y, mb.ld, c + i * M * N, N, parallel, epilogue);
  };
  // A batch that shares out evenly (or nearly: several products per thread) is split by
  // products; otherwise each product is split.
  const int64_t threads = num_threads();
  if (batch > 1 && (batch % threads == 0 || batch >= 4 * threads)) {
    parallel_for(batch, std::max<int64_t>(1, kParallelGemmWork / gemm_work(M, N, K)), [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) product(i, false);
    });
  } else {
    for (int64_t i = 0; i < batch; ++i) product(i, true);
  }
}

}  // namespace

bool blas_matmul(ir::OpKind op, const Tensor& a, const Tensor& b, const Tensor& out) {
  const ScalarType dt = a.dtype();
  if ((dt != ScalarType::Float && dt != ScalarType::Double) || b.dtype() != dt || out.dtype() != dt) return false;
  const bool batched = op == ir::OpKind::bmm;
  if (dt == ScalarType::Float) run<float>(a, b, out, batched);
  else run<double>(a, b, out, batched);
  return true;
}

namespace {

// Integer products: out[b, i, j] = sum_k a[b, i, k] * w[b, k, j], wrapping.
template <typename T> void integer_matmul(const Tensor& a, const Tensor& w, const Tensor& out, bool batched) {
  const std::vector<int64_t> as = a.strides().vec(), ws = w.strides().vec();
  const int r = batched ? 1 : 0;
  const int64_t batch = batched ? a.size(0) : 1, M = a.size(r), K = a.size(r + 1), N = w.size(r + 1);
  const T* pa = static_cast<const T*>(a.data_ptr());
  const T* pw = static_cast<const T*>(w.data_ptr());
  T* po = static_cast<T*>(out.data_ptr());
  parallel_for(batch * M, std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(1, N * K)), [&](int64_t lo, int64_t hi) {
    for (int64_t row = lo; row < hi; ++row) {
      const int64_t bi = row / M, i = row % M;
      const T* ar = pa + (batched ? bi * as[0] : 0) + i * as[r];
      const T* wb = pw + (batched ? bi * ws[0] : 0);
      for (int64_t j = 0; j < N; ++j) {
        uint64_t acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += static_cast<uint64_t>(static_cast<int64_t>(ar[k * as[r + 1]])) *
                 static_cast<uint64_t>(static_cast<int64_t>(wb[k * ws[r] + j * ws[r + 1]]));
        po[row * N + j] = static_cast<T>(acc);
      }
    }
  });
}

}  // namespace

namespace {

// addmm_activation(self, mat1, mat2, act) in one product whose blocks get the bias and relu as
// they are finished (GemmEpilogue, parallel_gemm.h), as passes/matmul_epilogues.h folds a
// linear and its relu: f32, self one row of the product's columns. False when it cannot:
// another activation (gelu's tanh form is a generated kernel's work on the cpu), another self
// or dtype (the cpu folds f32 products only), k = 0.
bool blas_addmm_activation(const Tensor& self, const Tensor& a, const Tensor& b, const std::string& act,
                           const Tensor& out) {
  constexpr ScalarType f32 = ScalarType::Float;
  if (act != "none" && act != "relu") return false;
  if (out.dtype() != f32 || a.dtype() != f32 || b.dtype() != f32 || self.dtype() != f32) return false;
  if (a.dim() != 2 || b.dim() != 2 || a.size(1) == 0 || self.dim() != 1 || self.size(0) != b.size(1)) return false;
  const Tensor bias = self.contiguous();
  const GemmEpilogue epilogue{static_cast<const float*>(bias.data_ptr()), act == "relu"};
  run<float>(a, b, out, false, &epilogue);
  return true;
}

}  // namespace

void extern_matmul(ir::OpKind op, const std::vector<Tensor>& ins, const ir::AttrList& attrs, const Tensor& out) {
  if (op == ir::OpKind::addmm_activation) {
    const std::string& act = attrs.get<std::string>(op, "activation");
    if (!blas_addmm_activation(ins.at(0), ins.at(1), ins.at(2), act, out))
      Tensor(out).copy_(run_decomposition(op, ins, attrs).at(0));
    return;
  }
  const Tensor& a = ins.at(0);
  const Tensor& b = ins.at(1);
  if (blas_matmul(op, a, b, out)) return;
  const ScalarType dt = a.dtype();
  if (dt == ScalarType::Bool)  // PyTorch's CPU kernels have no bool product
    fail(ir::op_name(op), "\"{}\" not implemented for 'Bool'", op == ir::OpKind::mm ? "addmm_impl_cpu_" : "bmm");
  if (dt == ScalarType::Half || dt == ScalarType::BFloat16) {
    const Tensor wide = empty(out.sizes(), TensorOptions(ScalarType::Float));
    if (!blas_matmul(op, a.to(ScalarType::Float), b.to(ScalarType::Float), wide))
      internal_fail("[{}] the f32 product of {} operands was declined", ir::op_name(op), dtype_name(dt));
    Tensor(out).copy_(wide);
    return;
  }
  dispatch_dtype(dt, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) integer_matmul<T>(a, b, out, op == ir::OpKind::bmm);
    else internal_fail("[{}] no matmul kernel for {}", ir::op_name(op), dtype_name(dt));
    return 0;
  });
}

}  // namespace kiln::rt
