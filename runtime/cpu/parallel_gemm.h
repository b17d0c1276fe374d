// kiln/runtime/cpu/parallel_gemm.h — a matrix product, parallel in kiln's pool: f32 on oneDNN's
// SGEMM, f64 on OpenBLAS (docs/decisions/fusion-and-kernels.md, "f32 products on oneDNN").
//
// Each library call runs on one thread (OpenBLAS is opened single-threaded, blas_library.cpp;
// oneDNN runs a call made inside a parallel_for chunk on that thread). A product large enough
// to share is cut into blocks of C's rows (or of its columns, when it has more of those), one
// per thread of kiln's pool (runtime/thread_pool.h), each one library call. Before, OpenBLAS ran its own
// threads, and the two pools took turns spinning on the same cores: OpenBLAS's workers spin
// (sched_yield) for about 0.1 s after each product while kiln's kernels run there, and kiln's
// workers spin while OpenBLAS multiplies. A training step alternates the two hundreds of
// times; on 2 cores the spinning was about a tenth of its samples (bench/README.md).
#pragma once

#include "base/dtype.h"

#include <cstdint>

namespace kiln::rt {

// C = op(A) op(B), row-major: C is M x N with leading dimension ldc; op(A) is M x K and op(B)
// K x N, each transposed when its flag is BlasLibrary::kTrans (CBLAS's conventions, leading
// dimensions of the matrices as stored). `parallel` false: one call on the calling thread
// (for callers that already split their work across the pool). T is float or double. Sizes
// and leading dimensions must fit in an int (the caller checks).
template <typename T>
void gemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, const T* a, int64_t lda, const T* b, int64_t ldb,
          T* c, int64_t ldc, bool parallel = true);

// The library gemm() calls for a product computed in `dt` (f16 and bf16 are computed in f32):
// "onednn" for f32, "openblas" for f64. The cpu backend names its extern mm/bmm steps by it, so
// a plan shows which library each product runs on.
const char* gemm_library(ScalarType dt);

// Products below this many multiply-adds (about 10 us) are not split.
inline constexpr int64_t kParallelGemmWork = int64_t{1} << 20;

// M * N * K, saturating (each may be up to 2^31; their product may not fit in 64 bits).
int64_t gemm_work(int64_t M, int64_t N, int64_t K);

}  // namespace kiln::rt
