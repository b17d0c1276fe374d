// kiln/runtime/cpu/parallel_gemm.cpp — products split across kiln's pool (parallel_gemm.h).
#include "runtime/cpu/parallel_gemm.h"

#include "base/error.h"
#include "runtime/cpu/blas_library.h"
#include "runtime/cpu/onednn.h"
#include "runtime/cpu/sgemm.h"
#include "runtime/config.h"
#include "runtime/thread_pool.h"

#include <algorithm>
#include <climits>
#include <limits>
#include <type_traits>

namespace kiln::rt {

namespace {

enum class Library { OpenBlas, OneDnn, Kiln };

Library library_of(ScalarType dt, int64_t M, int64_t N, int64_t K) {
  const int64_t work = gemm_work(M, N, K);
  if (dt == ScalarType::Double || work <= kSmallGemmWork) return Library::OpenBlas;
  return config().sgemm == SgemmChoice::Kiln && M >= kKilnGemmMinRows ? Library::Kiln : Library::OneDnn;
}

// One product on the calling thread: f32 on the library chosen for the whole product (kiln's
// own SGEMM, oneDNN's or OpenBLAS's; a share small enough for OpenBLAS's small-matrix path goes
// there, as it did when each share chose), f64 on OpenBLAS's DGEMM (oneDNN has none). oneDNN runs a
// call made inside an OpenMP region (a chunk of parallel_for) on that thread; a call made outside
// one would start a team of its own, so it is held to one thread (LibraryTeam), as
// single-threaded OpenBLAS is.
template <typename T>
void call(Library lib, int ta, int tb, int64_t M, int64_t N, int64_t K, const T* a, int64_t lda, const T* b,
          int64_t ldb, T* c, int64_t ldc) {
  auto i = [](int64_t v) { return static_cast<int>(v); };
  if constexpr (std::is_same_v<T, float>) {
    // A thread's share of a product split across the pool may be small enough for OpenBLAS's
    // small-matrix path (a batch-1 linear split by columns: 1 x 500 x 512 per thread).
    if (lib == Library::OneDnn && gemm_work(M, N, K) <= kSmallGemmWork) lib = Library::OpenBlas;
    if (lib == Library::Kiln) {
      kiln_sgemm(ta == BlasLibrary::kTrans, tb == BlasLibrary::kTrans, M, N, K, a, lda, b, ldb, c, ldc);
      return;
    }
    if (lib == Library::OpenBlas) {
      blas().sgemm(BlasLibrary::kRowMajor, ta, tb, i(M), i(N), i(K), 1.0f, a, i(lda), b, i(ldb), 0.0f, c, i(ldc));
      return;
    }
    auto op = [](int t) { return t == BlasLibrary::kTrans ? 'T' : 'N'; };
    const OneDnn& dnn = onednn();  // libkiln_onednn, opened on the first product it runs
    int st = 0;
    {
      const LibraryTeam one(1);
      st = dnn.sgemm(op(ta), op(tb), M, N, K, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
    }
    if (st != 0) internal_fail("oneDNN sgemm failed (status {}) on a {}x{}x{} product", st, M, N, K);
  } else {
    (void)lib;
    blas().dgemm(BlasLibrary::kRowMajor, ta, tb, i(M), i(N), i(K), 1.0, a, i(lda), b, i(ldb), 0.0, c, i(ldc));
  }
}

// The epilogue on C's block [rows, cols), whose first column is column col0 of the product.
void apply_epilogue(const GemmEpilogue& e, int64_t rows, int64_t cols, float* c, int64_t ldc, int64_t col0) {
  const float* bias = e.bias ? e.bias + col0 : nullptr;
  constexpr float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t i = 0; i < rows; ++i) {
    float* row = c + i * ldc;
    if (bias && e.relu) {
      for (int64_t j = 0; j < cols; ++j) {
        const float v = row[j] + bias[j];
        row[j] = v != v ? nan : v < 0.0f ? 0.0f : v;
      }
    } else if (bias) {
      for (int64_t j = 0; j < cols; ++j) row[j] += bias[j];
    } else if (e.relu) {
      for (int64_t j = 0; j < cols; ++j) row[j] = row[j] != row[j] ? nan : row[j] < 0.0f ? 0.0f : row[j];
    }
  }
}

}  // namespace

const char* gemm_library(ScalarType dt, int64_t M, int64_t N, int64_t K) {
  switch (library_of(dt, M, N, K)) {
    case Library::OpenBlas: return "openblas";
    case Library::OneDnn: return "onednn";
    case Library::Kiln: return "kiln";
  }
  return "onednn";
}

int64_t gemm_work(int64_t M, int64_t N, int64_t K) {
  const double w = static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  return w >= 9e18 ? INT64_MAX : M * N * K;
}

int64_t gemm_cost(int64_t M, int64_t N, int64_t K) {
  const double moved = 16.0 * (static_cast<double>(M) * static_cast<double>(K) + static_cast<double>(K) * static_cast<double>(N) +
                               static_cast<double>(M) * static_cast<double>(N));
  return std::max(gemm_work(M, N, K), moved >= 9e18 ? INT64_MAX : static_cast<int64_t>(moved));
}

template <typename T>
void gemm(int ta, int tb, int64_t M, int64_t N, int64_t K, const T* a, int64_t lda, const T* b, int64_t ldb, T* c,
          int64_t ldc, bool parallel, const GemmEpilogue* epilogue) {
  const Library lib = library_of(std::is_same_v<T, float> ? ScalarType::Float : ScalarType::Double, M, N, K);
  // The block [rows) x [cols) of C, starting at row r0 and column c0: the product, then the epilogue.
  auto block = [&](int64_t r0, int64_t rows, int64_t c0, int64_t cols) {
    const T* ab = a + (ta == BlasLibrary::kNoTrans ? r0 * lda : r0);
    const T* bb = b + (tb == BlasLibrary::kNoTrans ? c0 : c0 * ldb);
    T* cb = c + r0 * ldc + c0;
    call(lib, ta, tb, rows, cols, K, ab, lda, bb, ldb, cb, ldc);
    if (epilogue) {
      if constexpr (std::is_same_v<T, float>) apply_epilogue(*epilogue, rows, cols, cb, ldc, c0);
      else internal_fail("[mm] a product epilogue on a {}x{}x{} f64 product", M, N, K);
    }
  };
  if (!parallel || num_threads() == 1 || gemm_cost(M, N, K) < kParallelGemmWork) {
    block(0, M, 0, N);
    return;
  }
  if (M >= N) {  // blocks of rows: of A's rows (columns of a transposed A) and of C's
    parallel_for(M, std::max<int64_t>(16, kParallelGemmWork / gemm_cost(1, N, K)),
                 [&](int64_t lo, int64_t hi) { block(lo, hi - lo, 0, N); });
  } else {  // blocks of columns: of B's columns (rows of a transposed B) and of C's
    parallel_for(N, std::max<int64_t>(16, kParallelGemmWork / gemm_cost(M, 1, K)),
                 [&](int64_t lo, int64_t hi) { block(0, M, lo, hi - lo); });
  }
}

template void gemm<float>(int, int, int64_t, int64_t, int64_t, const float*, int64_t, const float*, int64_t, float*,
                          int64_t, bool, const GemmEpilogue*);
template void gemm<double>(int, int, int64_t, int64_t, int64_t, const double*, int64_t, const double*, int64_t,
                           double*, int64_t, bool, const GemmEpilogue*);

}  // namespace kiln::rt
