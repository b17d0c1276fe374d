// kiln/runtime/cpu/parallel_gemm.h — a matrix product, parallel in kiln's pool: f32 on oneDNN's
// SGEMM or kiln's own (KILN_SGEMM), small ones on OpenBLAS's, f64 on OpenBLAS
// (docs/decisions/fusion-and-kernels.md, "f32 products on oneDNN" and "kiln's own SGEMM").
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

// What gemm() does to each block of C as soon as a thread has computed it, while the block is
// still in that thread's cache: adds the bias (one row of N values, broadcast over the rows),
// then relu (std::max(v, 0) with NaN propagating, as kiln's maximum). It saves the pass over C
// that a pointwise kernel after the product would make, and that kernel's parallel region
// (addmm_activation, passes/matmul_epilogues.h). f32 only.
struct GemmEpilogue {
  const float* bias = nullptr;  // N values, or null
  bool relu = false;
};

// C = op(A) op(B), row-major: C is M x N with leading dimension ldc; op(A) is M x K and op(B)
// K x N, each transposed when its flag is BlasLibrary::kTrans (CBLAS's conventions, leading
// dimensions of the matrices as stored). `parallel` false: one call on the calling thread
// (for callers that already split their work across the pool). T is float or double; an
// epilogue only for float. Sizes and leading dimensions must fit in an int (the caller checks).
template <typename T>
void gemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, const T* a, int64_t lda, const T* b, int64_t ldb,
          T* c, int64_t ldc, bool parallel = true, const GemmEpilogue* epilogue = nullptr);

// The library gemm() calls for a product computed in `dt` of M x K by K x N (f16 and bf16 are
// computed in f32):
// - "openblas" for f64, and for f32 products of at most kSmallGemmWork multiply-adds, where
//   oneDNN's per-call cost is most of the time (single-threaded, this host: 8^3 0.6 us against
//   OpenBLAS's 0.1, 64x64x32 4.4 against 3.1, attention's per-head products);
// - "onednn" for larger f32 products;
// - "kiln" (kiln's own SGEMM, runtime/cpu/sgemm.h) instead of oneDNN for products of at least
//   kKilnGemmMinRows rows when KILN_SGEMM=kiln (`kiln run` sets it unless the environment says
//   otherwise). It needs no library start: oneDNN's first product in a process costs about 7 ms
//   more than its later ones (dlopen and kernel generation), but its warm calls are 0-40%
//   faster (bench/bench_sgemm.cpp; docs/decisions/fusion-and-kernels.md, "kiln's own SGEMM"),
//   so long-lived processes keep oneDNN. Few-row products stay on oneDNN: kiln's tiles would be
//   mostly padding and it would transpose a whole weight for one row.
// The cpu backend names its extern mm/bmm steps by it for static shapes, so a plan shows the
// choice; gemm() makes the same choice at run time, also for symbolic shapes (named "by shape").
const char* gemm_library(ScalarType dt, int64_t M, int64_t N, int64_t K);
inline constexpr int64_t kSmallGemmWork = int64_t{1} << 18;  // 64^3
inline constexpr int64_t kKilnGemmMinRows = 16;
// Products below this many multiply-adds (about 10 us) are not split.
inline constexpr int64_t kParallelGemmWork = int64_t{1} << 20;
// M * N * K, saturating (each may be up to 2^31; their product may not fit in 64 bits).
int64_t gemm_work(int64_t M, int64_t N, int64_t K);
// What a product costs for the decision to split it: its multiply-adds, or 16 per element of
// its operands and result when that is more. A product with a few rows (a batch-1 linear,
// 1 x 1000 x 512) moves its whole weight for few multiply-adds; split by columns it reads half
// per thread (3x faster on two threads here: 79 -> 28 us).
int64_t gemm_cost(int64_t M, int64_t N, int64_t K);

}  // namespace kiln::rt
