// kiln/runtime/cpu/sgemm.h — kiln's own f32 matrix product: packed panels and a register-blocked
// micro-kernel for the host's vector registers, with nothing to load or generate at run time.
//
// The libraries kiln calls for products cost time before their first result: oneDNN generates
// its SGEMM kernels on the first call of each shape (about 5.5 ms here, after a 1.5 ms dlopen)
// and OpenBLAS takes 4.5-5 ms to open. A process that multiplies a few matrices once (an exported
// program, a short script) paid more for that start than for the products. This product is
// compiled into kiln: its first call costs what its later ones do.
//
// The method is the one BLIS and GotoBLAS made standard. B is packed per block of kKc of its rows
// into panels kNr columns wide (k-major, so each step of the micro-kernel reads one row of a
// panel), A per block of rows into panels kMr rows high; the micro-kernel keeps a kMr x kNr tile
// of C in registers and adds one outer product per k. Panels are zero-padded, so the
// micro-kernel always computes a whole tile; a partial tile is stored through masks or a small
// buffer. A transposed operand is transposed while packing, which each operand needs anyway.
// Micro-kernels: AVX-512 (12 x 32, or 8 x 32 where that pads fewer rows), AVX2 with FMA (6 x 16),
// and a portable one (4 x 8) for other hosts, chosen once from the host's CPUID.
//
// One shape gets its own kernel on AVX-512: 32 or 64 rows times a stored weight (a linear
// layer's x W^T on a batch). Transposing the weight into panels cost a third of such a product,
// for values each used by only 64 rows; instead A is packed into 32-row panels (per block of 1024
// of K) and the weight's rows are read in place, each value broadcast against a panel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::rt {

// C = op(A) op(B) on the calling thread, row-major with CBLAS's conventions: C is M x N with
// leading dimension ldc, op(A) M x K, op(B) K x N, each the stored matrix transposed when its
// flag is set (leading dimensions of the matrices as stored). C is overwritten (K = 0 gives
// zeros). Sizes are at least 0; the caller splits large products across threads
// (parallel_gemm.h).
void kiln_sgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const float* a, int64_t lda,
                const float* b, int64_t ldb, float* c, int64_t ldc);

// The micro-kernel kiln_sgemm runs on this host: "avx512 12x32", "avx2 6x16" or "portable 4x8".
const char* kiln_sgemm_kernel();

// How kiln_sgemm computes a product of M rows on this host: "weight rows" (AVX-512, B
// transposed, 32-64 rows), "panels" (at most 120 rows: each B panel packed just before use) or
// "blocks" (B packed per block of 1536 columns, A per block of 120 rows).
const char* kiln_sgemm_path(bool trans_b, int64_t M);

// Every micro-kernel this host can run, widest first, and the product on a named one of them
// (tests run each; kiln::Error naming the kernels there are for one this host cannot run).
std::vector<std::string> kiln_sgemm_kernels();
void kiln_sgemm_on(const std::string& kernel, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
                   const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc);

}  // namespace kiln::rt
