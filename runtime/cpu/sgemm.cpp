// kiln/runtime/cpu/sgemm.cpp — kiln's own f32 matrix product (sgemm.h): blocking, packing and the
// micro-kernels. The kernels carry their instruction set as a function attribute, so this file is
// compiled for baseline x86-64 and nothing in it runs an instruction the host lacks.
#include "runtime/cpu/sgemm.h"

#include "base/error.h"
#include "base/host_cpu.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#define KILN_SGEMM_X86 1
#else
#define KILN_SGEMM_X86 0
#endif

namespace kiln::rt {

namespace {

// Rows of B (columns of A) per packed block: a panel kKc x kNr stays in L1 while the
// micro-kernel sweeps the rows of A's block past it.
constexpr int64_t kKc = 256;
// Rows of A per packed block (a multiple of every kMr below) and columns of B per packed block.
constexpr int64_t kMc = 120;
constexpr int64_t kNc = 1536;

#if KILN_SGEMM_X86
// The 8 x 8 block of a row-major matrix at `src` (leading dimension ld) transposed into `dst`
// (leading dimension ldd): dst[t * ldd + r] = src[r * ld + t].
__attribute__((target("avx2"))) void transpose_8x8(const float* src, int64_t ld, float* dst, int64_t ldd) {
  const __m256 r0 = _mm256_loadu_ps(src), r1 = _mm256_loadu_ps(src + ld), r2 = _mm256_loadu_ps(src + 2 * ld),
               r3 = _mm256_loadu_ps(src + 3 * ld), r4 = _mm256_loadu_ps(src + 4 * ld),
               r5 = _mm256_loadu_ps(src + 5 * ld), r6 = _mm256_loadu_ps(src + 6 * ld),
               r7 = _mm256_loadu_ps(src + 7 * ld);
  const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1), t2 = _mm256_unpacklo_ps(r2, r3),
               t3 = _mm256_unpackhi_ps(r2, r3), t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),
               t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  const __m256 s0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0)), s1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2)),
               s2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0)), s3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2)),
               s4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0)), s5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2)),
               s6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0)), s7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
  _mm256_storeu_ps(dst, _mm256_permute2f128_ps(s0, s4, 0x20));
  _mm256_storeu_ps(dst + ldd, _mm256_permute2f128_ps(s1, s5, 0x20));
  _mm256_storeu_ps(dst + 2 * ldd, _mm256_permute2f128_ps(s2, s6, 0x20));
  _mm256_storeu_ps(dst + 3 * ldd, _mm256_permute2f128_ps(s3, s7, 0x20));
  _mm256_storeu_ps(dst + 4 * ldd, _mm256_permute2f128_ps(s0, s4, 0x31));
  _mm256_storeu_ps(dst + 5 * ldd, _mm256_permute2f128_ps(s1, s5, 0x31));
  _mm256_storeu_ps(dst + 6 * ldd, _mm256_permute2f128_ps(s2, s6, 0x31));
  _mm256_storeu_ps(dst + 7 * ldd, _mm256_permute2f128_ps(s3, s7, 0x31));
}
#endif

// dst[t * ldd + r] = src[r * ld + t] for r < rows, t < cols: in 8 x 8 blocks where the host has
// AVX2 (scalar, transposing a linear layer's weight cost half of what a 64-row product spends
// multiplying), the edges scalar.
void transpose(const float* src, int64_t ld, int64_t rows, int64_t cols, float* dst, int64_t ldd, bool avx2) {
  int64_t r = 0;
#if KILN_SGEMM_X86
  if (avx2) {
    for (; r + 8 <= rows; r += 8) {
      int64_t t = 0;
      for (; t + 8 <= cols; t += 8) transpose_8x8(src + r * ld + t, ld, dst + t * ldd + r, ldd);
      for (; t < cols; ++t)
        for (int64_t q = r; q < r + 8; ++q) dst[t * ldd + q] = src[q * ld + t];
    }
  }
#else
  (void)avx2;
#endif
  for (; r < rows; ++r)
    for (int64_t t = 0; t < cols; ++t) dst[t * ldd + r] = src[r * ld + t];
}

// op(A)'s rows [i0, i0 + rows) and columns [p0, p0 + kc) into panels of `mr` rows, each k-major
// (panel[k * mr + r]), the last panel zero-padded.
void pack_a(const float* a, int64_t lda, bool trans, int64_t i0, int64_t rows, int64_t p0, int64_t kc, int mr,
            bool avx2, float* dst) {
  for (int64_t r0 = 0; r0 < rows; r0 += mr, dst += kc * mr) {
    const int64_t n = std::min<int64_t>(mr, rows - r0);
    if (trans) {  // op(A)'s column k is a stored row: copy n floats per k
      for (int64_t k = 0; k < kc; ++k) std::copy_n(a + (p0 + k) * lda + i0 + r0, n, dst + k * mr);
    } else {
      transpose(a + (i0 + r0) * lda + p0, lda, n, kc, dst, mr, avx2);
    }
    for (int64_t k = 0; k < kc; ++k) std::fill(dst + k * mr + n, dst + (k + 1) * mr, 0.0f);
  }
}

// op(B)'s rows [p0, p0 + kc) and columns [j0, j0 + cols) into panels of `nr` columns, each k-major
// (panel[k * nr + j]), the last panel zero-padded.
void pack_b(const float* b, int64_t ldb, bool trans, int64_t p0, int64_t kc, int64_t j0, int64_t cols, int nr,
            bool avx2, float* dst) {
  for (int64_t c0 = 0; c0 < cols; c0 += nr, dst += kc * nr) {
    const int64_t n = std::min<int64_t>(nr, cols - c0);
    if (trans) {  // a stored row is op(B)'s column (a linear layer's weight)
      transpose(b + (j0 + c0) * ldb + p0, ldb, n, kc, dst, nr, avx2);
    } else {
      for (int64_t k = 0; k < kc; ++k) std::copy_n(b + (p0 + k) * ldb + j0 + c0, n, dst + k * nr);
    }
    for (int64_t k = 0; k < kc; ++k) std::fill(dst + k * nr + n, dst + (k + 1) * nr, 0.0f);
  }
}

// A micro-kernel: C's tile (rows x cols of at most mr x nr, leading dimension ldc) = (or +=, with
// `accumulate`) the product of an A panel (kc x mr, k-major) and a B panel (kc x nr).
using MicroKernel = void (*)(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc, bool accumulate,
                             int64_t rows, int64_t cols);

// A whole tile computed into `tile` (mr x nr) stored into C's partial tile.
void store_partial(const float* tile, int nr, float* c, int64_t ldc, bool accumulate, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j) c[r * ldc + j] = accumulate ? c[r * ldc + j] + tile[r * nr + j] : tile[r * nr + j];
}

#if KILN_SGEMM_X86
constexpr int kNr512 = 32;

// MR rows of C by 32 columns: 2 * MR accumulators (MR = 12: 24 of the 32 zmm registers).
template <int MR>
__attribute__((target("avx512f,avx512vl,fma"))) void micro_avx512(int64_t kc, const float* ap, const float* bp, float* c,
                                                                    int64_t ldc, bool accumulate, int64_t rows,
                                                                    int64_t cols) {
  __m512 lo[MR], hi[MR];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) lo[r] = hi[r] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; ++k, ap += MR, bp += kNr512) {
    const __m512 b0 = _mm512_load_ps(bp), b1 = _mm512_load_ps(bp + 16);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m512 x = _mm512_set1_ps(ap[r]);
      lo[r] = _mm512_fmadd_ps(x, b0, lo[r]);
      hi[r] = _mm512_fmadd_ps(x, b1, hi[r]);
    }
  }
  const __mmask16 m0 = cols >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << cols) - 1);
  const __mmask16 m1 = cols >= 32 ? __mmask16(0xFFFF) : cols <= 16 ? __mmask16(0) : __mmask16((1u << (cols - 16)) - 1);
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    if (r >= rows) break;
    float* row = c + r * ldc;
    __m512 v0 = lo[r], v1 = hi[r];
    if (accumulate) {
      v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, row));
      v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, row + 16));
    }
    _mm512_mask_storeu_ps(row, m0, v0);
    _mm512_mask_storeu_ps(row + 16, m1, v1);
  }
}

// A product with a stored weight (B transposed) and few rows of A, without transposing the
// weight: C's tile of `rows` x `cols` (at most 32 x MR) is A's 32-row panel (K x 32, k-major,
// packed per block of K) times MR rows of the weight, read in place, each value broadcast. The
// tile accumulates the block in registers and is stored transposed (added to C's values with
// `accumulate`). Packing a 64-row product's weight into panels took a third of its time (perf),
// for values used 64 times.
template <int MR>
__attribute__((target("avx512f,avx512vl,fma"))) void weight_rows_avx512(int64_t K, const float* ap, const float* w,
                                                                          int64_t ldw, float* c, int64_t ldc,
                                                                          bool accumulate, int64_t rows, int64_t cols) {
  const float* wr[MR];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) wr[r] = w + std::min<int64_t>(r, cols - 1) * ldw;  // past the edge: a row again, unused
  __m512 lo[MR], hi[MR];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) lo[r] = hi[r] = _mm512_setzero_ps();
  for (int64_t k = 0; k < K; ++k, ap += 32) {
    const __m512 a0 = _mm512_load_ps(ap), a1 = _mm512_load_ps(ap + 16);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const __m512 x = _mm512_set1_ps(wr[r][k]);
      lo[r] = _mm512_fmadd_ps(x, a0, lo[r]);
      hi[r] = _mm512_fmadd_ps(x, a1, hi[r]);
    }
  }
  alignas(64) float tile[MR * 32];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    _mm512_store_ps(tile + r * 32, lo[r]);
    _mm512_store_ps(tile + r * 32 + 16, hi[r]);
  }
  if (MR == 8 && rows == 32 && cols == 8) {  // a whole tile: 8 x 8 blocks transposed in registers
    alignas(32) float block[64];
    for (int64_t i0 = 0; i0 < 32; i0 += 8) {
      float* dst = accumulate ? block : c + i0 * ldc;
      transpose_8x8(tile + i0, 32, dst, accumulate ? 8 : ldc);
      if (accumulate)
        for (int64_t i = 0; i < 8; ++i)
          _mm256_storeu_ps(c + (i0 + i) * ldc, _mm256_add_ps(_mm256_loadu_ps(c + (i0 + i) * ldc), _mm256_load_ps(block + i * 8)));
    }
    return;
  }
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t r = 0; r < cols; ++r) c[i * ldc + r] = accumulate ? c[i * ldc + r] + tile[r * 32 + i] : tile[r * 32 + i];
}

constexpr int kMr256 = 6, kNr256 = 16;

__attribute__((target("avx2,fma"))) void micro_avx2(int64_t kc, const float* ap, const float* bp, float* c,
                                                     int64_t ldc, bool accumulate, int64_t rows, int64_t cols) {
  __m256 lo[kMr256], hi[kMr256];
#pragma GCC unroll 6
  for (int r = 0; r < kMr256; ++r) lo[r] = hi[r] = _mm256_setzero_ps();
  for (int64_t k = 0; k < kc; ++k, ap += kMr256, bp += kNr256) {
    const __m256 b0 = _mm256_load_ps(bp), b1 = _mm256_load_ps(bp + 8);
#pragma GCC unroll 6
    for (int r = 0; r < kMr256; ++r) {
      const __m256 x = _mm256_broadcast_ss(ap + r);
      lo[r] = _mm256_fmadd_ps(x, b0, lo[r]);
      hi[r] = _mm256_fmadd_ps(x, b1, hi[r]);
    }
  }
  if (rows == kMr256 && cols == kNr256) {
#pragma GCC unroll 6
    for (int r = 0; r < kMr256; ++r) {
      float* row = c + r * ldc;
      __m256 v0 = lo[r], v1 = hi[r];
      if (accumulate) {
        v0 = _mm256_add_ps(v0, _mm256_loadu_ps(row));
        v1 = _mm256_add_ps(v1, _mm256_loadu_ps(row + 8));
      }
      _mm256_storeu_ps(row, v0);
      _mm256_storeu_ps(row + 8, v1);
    }
    return;
  }
  alignas(32) float tile[kMr256 * kNr256];
#pragma GCC unroll 6
  for (int r = 0; r < kMr256; ++r) {
    _mm256_store_ps(tile + r * kNr256, lo[r]);
    _mm256_store_ps(tile + r * kNr256 + 8, hi[r]);
  }
  store_partial(tile, kNr256, c, ldc, accumulate, rows, cols);
}
#endif

constexpr int kMrPortable = 4, kNrPortable = 8;

void micro_portable(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc, bool accumulate, int64_t rows,
                    int64_t cols) {
  float tile[kMrPortable * kNrPortable] = {};
  for (int64_t k = 0; k < kc; ++k, ap += kMrPortable, bp += kNrPortable)
    for (int r = 0; r < kMrPortable; ++r)
      for (int j = 0; j < kNrPortable; ++j) tile[r * kNrPortable + j] += ap[r] * bp[j];
  store_partial(tile, kNrPortable, c, ldc, accumulate, rows, cols);
}

using WeightKernel = void (*)(int64_t K, const float* ap, const float* w, int64_t ldw, float* c, int64_t ldc,
                              bool accumulate, int64_t rows, int64_t cols);
// The block buffers hold kMc rows and kNc columns of whole tiles.
#if KILN_SGEMM_X86
static_assert(kMc % 12 == 0 && kMc % 8 == 0 && kMc % kMr256 == 0 && kNc % kNr512 == 0 && kNc % kNr256 == 0);
#endif
static_assert(kMc % kMrPortable == 0 && kNc % kNrPortable == 0);

// The micro-kernels of one instruction set: `tall` (more rows per tile) and `short` (fewer), the
// product taking whichever wastes fewer padded rows of its last tile (64 rows: 8 tiles of 8
// rather than 6 tiles of 12 with 8 padded rows).
struct Kernel {
  MicroKernel tall, short_;
  int mr_tall, mr_short, nr;
  bool avx2;  // packing may use AVX2
  const char* name;
  WeightKernel weight_rows = nullptr;  // few rows times a stored weight; none: the panels above
  int weight_mr = 0;
};

// The micro-kernels, widest first, with whether this host runs them.
struct Available {
  Kernel kernel;
  bool runs;
};
const std::vector<Available>& kernels() {
  // Never destroyed: a product may run while statics are torn down at exit.
  static const std::vector<Available>& all = *new std::vector<Available>{
#if KILN_SGEMM_X86
      {{micro_avx512<12>, micro_avx512<8>, 12, 8, kNr512, true, "avx512 12x32", weight_rows_avx512<8>, 8}, host_has_avx512()},
      {{micro_avx2, micro_avx2, kMr256, kMr256, kNr256, true, "avx2 6x16"}, host_has_avx2()},
#endif
      {{micro_portable, micro_portable, kMrPortable, kMrPortable, kNrPortable, false, "portable 4x8"}, true},
  };
  return all;
}

const Kernel& host_kernel() {
  static const Kernel& k = [&]() -> const Kernel& {
    for (const Available& a : kernels())
      if (a.runs) return a.kernel;
    return kernels().back().kernel;
  }();
  return k;
}

int64_t padded(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

// Packing buffers of the calling thread, 64-byte aligned, grown on demand and kept.
struct Buffers {
  struct Free {
    void operator()(float* p) const { ::operator delete[](p, std::align_val_t{64}); }
  };
  std::unique_ptr<float[], Free> a, b;
  int64_t a_size = 0, b_size = 0;

  static float* grow(std::unique_ptr<float[], Free>& p, int64_t& size, int64_t want) {
    if (size < want) {
      p.reset(static_cast<float*>(::operator new[](static_cast<size_t>(want) * sizeof(float), std::align_val_t{64})));
      size = want;
    }
    return p.get();
  }
};

// Products of at most this many rows by a stored weight run on the kernel's weight_rows, when
// padding them to 32-row panels adds at most an eighth (32 and 64 rows, not 48 or 8: a few-row
// product would multiply mostly zeros).
constexpr int64_t kWeightRowsMax = 64;
bool weight_rows_fit(bool trans_b, int64_t M) {
  return trans_b && M <= kWeightRowsMax && padded(M, 32) - M <= M / 8;
}

// The weight-rows path packs A per block of this many of K: 64 rows x 1024 in 256 KB of L2 per
// thread, allocated whole on the first product (pages are touched, once, as blocks fill them).
// Packed whole (all of K), each thread of a product split by columns packed all of A into a
// buffer of up to 1 MB, and grew it from product to product: fresh memory that a process's first
// call touched page by page (320 of the exported MLP's 615 first-call page faults, each about 2 us
// on the test VM). Each block after the first adds its tile to C's values; interleaved on the
// MLP's products, blocks of 512 cost 7-10% at K = 2048 (the stores), blocks of 1024 nothing
// measurable.
constexpr int64_t kWeightKc = 1024;

// Columns [k0, k0 + kc) of A's rows [32 p, 32 p + 32) as panel p of the weight-rows path:
// kc x 32, k-major, rows past M zero.
void pack_weight_panel(const Kernel& kern, bool trans_a, int64_t M, const float* a, int64_t lda, int64_t p, int64_t k0,
                       int64_t kc, float* dst) {
  const int64_t i0 = p * 32, n = std::min<int64_t>(32, M - i0);
  if (trans_a) {
    for (int64_t k = 0; k < kc; ++k) std::copy_n(a + (k0 + k) * lda + i0, n, dst + k * 32);
  } else {
    transpose(a + i0 * lda + k0, lda, n, kc, dst, 32, kern.avx2);
  }
  for (int64_t k = 0; k < kc; ++k) std::fill(dst + k * 32 + n, dst + (k + 1) * 32, 0.0f);
}

// C = op(A) W^T, W stored N x K: per block of K, A packed into 32-row panels, then each group of
// weight_mr rows of W, read in place, against each panel.
void weight_product(const Kernel& kern, bool trans_a, int64_t M, int64_t N, int64_t K, const float* a, int64_t lda,
                    const float* w, int64_t ldw, float* c, int64_t ldc) {
  thread_local Buffers buf;
  const int64_t panels = (M + 31) / 32, mr = kern.weight_mr;
  float* ap = Buffers::grow(buf.a, buf.a_size, panels * 32 * kWeightKc);
  for (int64_t k0 = 0; k0 < K; k0 += kWeightKc) {
    const int64_t kc = std::min(kWeightKc, K - k0);
    for (int64_t p = 0; p < panels; ++p) pack_weight_panel(kern, trans_a, M, a, lda, p, k0, kc, ap + p * 32 * kc);
    for (int64_t j = 0; j < N; j += mr)
      for (int64_t p = 0; p < panels; ++p)
        kern.weight_rows(kc, ap + p * 32 * kc, w + j * ldw + k0, ldw, c + p * 32 * ldc + j, ldc, k0 > 0,
                         std::min<int64_t>(32, M - p * 32), std::min(mr, N - j));
  }
}

void product(const Kernel& kern, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const float* a, int64_t lda,
             const float* b, int64_t ldb, float* c, int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    for (int64_t i = 0; i < M; ++i) std::fill(c + i * ldc, c + i * ldc + N, 0.0f);
    return;
  }
  if (kern.weight_rows != nullptr && weight_rows_fit(trans_b, M)) {
    weight_product(kern, trans_a, M, N, K, a, lda, b, ldb, c, ldc);
    return;
  }
  const bool tall = padded(M, kern.mr_tall) <= padded(M, kern.mr_short);
  const MicroKernel run = tall ? kern.tall : kern.short_;
  const int64_t mr = tall ? kern.mr_tall : kern.mr_short, nr = kern.nr;
  const int64_t mc_max = std::min(kMc, padded(M, mr));
  // One block of A's rows (M <= kMc): each panel of B is packed just before the tiles that use
  // it, so it goes from the source to L1 and is never written to a block buffer in L2.
  const bool per_panel = M <= kMc;
  thread_local Buffers buf;
  float* bp = Buffers::grow(buf.b, buf.b_size, std::min(kKc, K) * (per_panel ? nr : std::min(kNc, padded(N, nr))));
  float* ap = Buffers::grow(buf.a, buf.a_size, std::min(kKc, K) * mc_max);
  for (int64_t p0 = 0; p0 < K; p0 += kKc) {
    const int64_t kc = std::min(kKc, K - p0);
    if (per_panel) {
      pack_a(a, lda, trans_a, 0, M, p0, kc, static_cast<int>(mr), kern.avx2, ap);
      for (int64_t jr = 0; jr < N; jr += nr) {
        pack_b(b, ldb, trans_b, p0, kc, jr, std::min(nr, N - jr), static_cast<int>(nr), kern.avx2, bp);
        for (int64_t ir = 0; ir < M; ir += mr)
          run(kc, ap + ir * kc, bp, c + ir * ldc + jr, ldc, p0 > 0, std::min(mr, M - ir), std::min(nr, N - jr));
      }
      continue;
    }
    for (int64_t j0 = 0; j0 < N; j0 += kNc) {
      const int64_t nc = std::min(kNc, N - j0);
      pack_b(b, ldb, trans_b, p0, kc, j0, nc, static_cast<int>(nr), kern.avx2, bp);
      for (int64_t i0 = 0; i0 < M; i0 += kMc) {
        const int64_t mc = std::min(kMc, M - i0);
        pack_a(a, lda, trans_a, i0, mc, p0, kc, static_cast<int>(mr), kern.avx2, ap);
        for (int64_t jr = 0; jr < nc; jr += nr)
          for (int64_t ir = 0; ir < mc; ir += mr)
            run(kc, ap + ir * kc, bp + jr * kc, c + (i0 + ir) * ldc + j0 + jr, ldc, p0 > 0, std::min(mr, mc - ir),
                std::min(nr, nc - jr));
      }
    }
  }
}

}  // namespace

void kiln_sgemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const float* a, int64_t lda,
                const float* b, int64_t ldb, float* c, int64_t ldc) {
  product(host_kernel(), trans_a, trans_b, M, N, K, a, lda, b, ldb, c, ldc);
}

const char* kiln_sgemm_kernel() { return host_kernel().name; }

const char* kiln_sgemm_path(bool trans_b, int64_t M) {
  if (host_kernel().weight_rows != nullptr && weight_rows_fit(trans_b, M)) return "weight rows";
  return M <= kMc ? "panels" : "blocks";
}

std::vector<std::string> kiln_sgemm_kernels() {
  std::vector<std::string> names;
  for (const Available& a : kernels())
    if (a.runs) names.emplace_back(a.kernel.name);
  return names;
}

void kiln_sgemm_on(const std::string& kernel, bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K,
                   const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  for (const Available& k : kernels())
    if (k.runs && kernel == k.kernel.name) return product(k.kernel, trans_a, trans_b, M, N, K, a, lda, b, ldb, c, ldc);
  throw Error(fmt::format("[sgemm] this host cannot run the micro-kernel '{}'; it runs: {}", kernel,
                          fmt::join(kiln_sgemm_kernels(), ", ")));
}

}  // namespace kiln::rt
