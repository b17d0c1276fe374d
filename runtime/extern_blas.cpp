// kiln/runtime/extern_blas.cpp — mm and bmm as extern kernels on OpenBLAS.
//
// OpenBLAS was chosen over oneDNN because it is already a dependency, installs everywhere
// Debian does, and measured within a few percent of oneDNN's SGEMM on this machine
// (TOOLCHAIN.md: ~210 GFLOP/s on 2 threads for both); bench/ reports the figure. Inputs with a
// unit stride in either of their last two dims are passed as they are (transposed where
// needed); others are made contiguous first. f16/bf16/integer matmuls are not BLAS types:
// the caller falls back to the interpreter for them.
#include "runtime/program.h"

#include "base/error.h"
#include "base/tensor_impl.h"
#include "runtime/thread_pool.h"

#include <cblas.h>

#include <climits>
#include <cstring>
#include <mutex>

extern "C" void openblas_set_num_threads(int num_threads);

namespace kiln::rt {

namespace {

// A matrix operand as BLAS wants it: base pointer, transposition and leading dimension.
struct MatArg {
  const void* data;
  CBLAS_TRANSPOSE trans;
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
      out = {data, CblasNoTrans, ld};
      return true;
    }
  }
  if (rows <= 1 || rs == 1) {  // column-major: columns are `ld` apart
    const int64_t ld = cols <= 1 ? need_cols : cs;
    if (ld >= need_cols && ld <= INT_MAX) {
      out = {data, CblasTrans, ld};
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
void gemm(int64_t M, int64_t N, int64_t K, const MatArg& a, const MatArg& b, T* c) {
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, a.trans, b.trans, static_cast<int>(M), static_cast<int>(N), static_cast<int>(K), 1.0f,
                static_cast<const float*>(a.data), static_cast<int>(a.ld), static_cast<const float*>(b.data),
                static_cast<int>(b.ld), 0.0f, c, static_cast<int>(N));
  else
    cblas_dgemm(CblasRowMajor, a.trans, b.trans, static_cast<int>(M), static_cast<int>(N), static_cast<int>(K), 1.0,
                static_cast<const double*>(a.data), static_cast<int>(a.ld), static_cast<const double*>(b.data),
                static_cast<int>(b.ld), 0.0, c, static_cast<int>(N));
}

template <typename T> void run(const Tensor& a0, const Tensor& b0, const Tensor& out, bool batched) {
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
    return;
  }
  // cblas takes int sizes and leading dimensions; larger problems are refused, never truncated.
  if (M > INT_MAX || N > INT_MAX || K > INT_MAX)
    fail(batched ? "bmm" : "mm", "sizes [{}, {}] x [{}, {}] exceed the BLAS limit of {} per dim", M, K, K, N, INT_MAX);
  const MatArg ma = blas_operand(a, r, M, K), mb = blas_operand(b, r, K, N);
  ai = a.impl();
  bi = b.impl();
  for (int64_t i = 0; i < batch; ++i) {
    MatArg x = ma, y = mb;
    if (batched) {
      x.data = static_cast<const T*>(ma.data) + i * ai->strides()[0];
      y.data = static_cast<const T*>(mb.data) + i * bi->strides()[0];
    }
    gemm<T>(M, N, K, x, y, c + i * M * N);
  }
}

}  // namespace

bool blas_matmul(ir::OpKind op, const Tensor& a, const Tensor& b, const Tensor& out) {
  const ScalarType dt = a.dtype();
  if ((dt != ScalarType::Float && dt != ScalarType::Double) || b.dtype() != dt || out.dtype() != dt) return false;
  static std::once_flag threads_set;
  std::call_once(threads_set, [] { openblas_set_num_threads(num_threads()); });
  const bool batched = op == ir::OpKind::bmm;
  if (dt == ScalarType::Float) run<float>(a, b, out, batched);
  else run<double>(a, b, out, batched);
  return true;
}

}  // namespace kiln::rt
