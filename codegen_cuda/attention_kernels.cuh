// kiln/codegen_cuda/attention_kernels.cuh — the fused attention kernel, as CUDA C inside a raw string.
//
// Included by codegen_cuda/cuda_attention_source.cpp, which puts before it the element type KT
// (__half or __nv_bfloat16) with its conversions (KILN_TO_F, KILN_FROM_F, KILN_BITS,
// KILN_FROM_BITS), the tensor-core type name KILN_MMA ("f16" or "bf16") and the head dims
// KILN_D (query and key) and KILN_DV (value), at most 128 each.
//
// out = softmax(q k^T * scale + mask) v without the scores in memory (FlashAttention-2's plan):
// a block of 4 warps takes 64 query rows of one batch entry, each warp 16 rows held as mma A
// fragments (few blocks over long rows, as in decoding, also split the keys among blocks and
// merge their shares: kiln_attention_combine). The keys and values pass through shared memory 64 at a time (32 for head dims over
// 64), the next tile copied in (cp.async) while the warps compute on this one; each warp computes
// its 16 x 64 scores with mma.m16n8k16 (f32 accumulators), masks and scales them, and folds them
// into a running maximum and sum per row (the online softmax: the output accumulated so far is
// rescaled by exp(old max - new max)); the probabilities, rounded to KT, are already the A
// fragments of the product with the values. A causal block stops at the last key its last row
// sees. Blocks are launched longest first.
//
// The fragment layouts are the PTX ISA's for mma.m16n8k16 and ldmatrix (lane = 4 * group + t):
// A (16 x 16, 4 registers of two values): rows group and group + 8, columns 2t, 2t + 1 and
// 2t + 8, 2t + 9; B (16 x 8, 2 registers): rows 2t, 2t + 1 and 2t + 8, 2t + 9 of column group;
// C (16 x 8, 4 floats): rows group and group + 8, columns 2t, 2t + 1. On sm_80 and later the two
// warp-wide operations are the instructions; elsewhere (and on kiln's emulated device, which has
// no __CUDA_ARCH__) they are computed from shuffles with the same layouts, so the rest of the
// kernel is the same code either way.
//
// Semantics are the decomposition's (frontend/ops_attention.cpp): a NaN or +inf score makes its
// row NaN; a row whose every score is -inf is zeros when a mask was given and NaN otherwise.
// One difference, as in PyTorch's flash kernel: a causal block does not read the values of keys
// past its last row, so a NaN or inf there does not reach rows that cannot see it (the
// decomposition multiplies it by a zero probability, which gives NaN).
// Scores, maxima and sums are f32; only the probabilities are rounded to KT for the product, as
// the decomposition rounds them.
//
// With KILN_LSE_ONLY defined to 1 (the backward's module, attention_backward_kernels.cuh, which
// follows this text) the same kernel is kiln_attention_lse: it reads no values and writes each
// row's log-sum-exp of the scaled scores instead of the output.
R"KILN(
#ifndef KILN_LSE_ONLY
#define KILN_LSE_ONLY 0
#endif
#define KILN_BM 64
#define KILN_DP (((KILN_D) + 15) / 16 * 16)
#define KILN_DVP (((KILN_DV) + 15) / 16 * 16)
// Keys a tile: two tiles of keys and values fit 48 KB of static shared memory.
#define KILN_BN (KILN_DP > 64 || KILN_DVP > 64 ? 32 : 64)
#define KILN_KSTRIDE (KILN_DP + 8)
#define KILN_VSTRIDE (KILN_DVP + 8)
#define KILN_FULL 0xffffffffu
#define KILN_LOG2E 1.4426950408889634f

// The batch dims of q, k, v, out and the mask (element strides), innermost last.
struct KilnAttentionBatch {
  long long rank;
  long long size[4];
  long long q[4], k[4], v[4], o[4], m[4];
};

struct __align__(16) KilnChunk {
  unsigned w[4];
};

__device__ __forceinline__ unsigned kiln_pack(float lo, float hi) {
  return (unsigned)KILN_BITS(KILN_FROM_F(lo)) | ((unsigned)KILN_BITS(KILN_FROM_F(hi)) << 16);
}

// An A fragment (16 x 16) from two C fragments side by side (columns 0-7: lo, 8-15: hi), rounded
// to KT: the layouts agree, so a product's result is the next product's operand in registers.
__device__ __forceinline__ void kiln_a_of_c(unsigned* a, const float* lo, const float* hi) {
  a[0] = kiln_pack(lo[0], lo[1]);
  a[1] = kiln_pack(lo[2], lo[3]);
  a[2] = kiln_pack(hi[0], hi[1]);
  a[3] = kiln_pack(hi[2], hi[3]);
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
// c += a b for one 16 x 8 tile with k = 16.
__device__ __forceinline__ void kiln_mma(float* c, const unsigned* a, unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." KILN_MMA "." KILN_MMA ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// Four 8 x 8 matrices from shared memory, lane 8j + r giving the address of row r of matrix j.
__device__ __forceinline__ void kiln_ldsm4(unsigned* r, const KT* p) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(s));
}
// The same, each matrix transposed.
__device__ __forceinline__ void kiln_ldsm4_trans(unsigned* r, const KT* p) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(p);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(s));
}
// 16 bytes from global to shared memory without passing through registers; complete for this
// thread after kiln_copies_done (the next tile's copies overlap this tile's products).
__device__ __forceinline__ void kiln_copy16(KT* dst, const KT* src) {
  const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src));
}
__device__ __forceinline__ void kiln_copies_commit() { asm volatile("cp.async.commit_group;\n" ::); }
// All committed copies but the last group (more: 1) or all of them (more: 0) are complete.
__device__ __forceinline__ void kiln_copies_done(int more) {
  if (more) asm volatile("cp.async.wait_group 1;\n" ::);
  else asm volatile("cp.async.wait_group 0;\n" ::);
}
#else
__device__ __forceinline__ void kiln_copy16(KT* dst, const KT* src) { *(KilnChunk*)dst = *(const KilnChunk*)src; }
__device__ __forceinline__ void kiln_copies_commit() {}
__device__ __forceinline__ void kiln_copies_done(int) {}
__device__ __forceinline__ float kiln_value(unsigned r, int high) {
  return KILN_TO_F(KILN_FROM_BITS((unsigned short)(high ? r >> 16 : r & 0xffffu)));
}
__device__ __forceinline__ void kiln_mma(float* c, const unsigned* a, unsigned b0, unsigned b1) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  for (int k = 0; k < 16; ++k) {
    const int from = (k & 7) >> 1, high = k & 1;
    const float x = kiln_value(__shfl_sync(KILN_FULL, k < 8 ? a[0] : a[2], g * 4 + from), high);
    const float y = kiln_value(__shfl_sync(KILN_FULL, k < 8 ? a[1] : a[3], g * 4 + from), high);
    const float u = kiln_value(__shfl_sync(KILN_FULL, k < 8 ? b0 : b1, 2 * t * 4 + from), high);
    const float w = kiln_value(__shfl_sync(KILN_FULL, k < 8 ? b0 : b1, (2 * t + 1) * 4 + from), high);
    c[0] += x * u;
    c[1] += x * w;
    c[2] += y * u;
    c[3] += y * w;
  }
}
__device__ __forceinline__ void kiln_ldsm4(unsigned* r, const KT* p) {
  const int lane = threadIdx.x & 31;
  const unsigned long long mine = (unsigned long long)p;
  for (int j = 0; j < 4; ++j) {
    const KT* row = (const KT*)__shfl_sync(KILN_FULL, mine, 8 * j + (lane >> 2));
    r[j] = (unsigned)KILN_BITS(row[2 * (lane & 3)]) | ((unsigned)KILN_BITS(row[2 * (lane & 3) + 1]) << 16);
  }
}
__device__ __forceinline__ void kiln_ldsm4_trans(unsigned* r, const KT* p) {
  const int lane = threadIdx.x & 31;
  const unsigned long long mine = (unsigned long long)p;
  for (int j = 0; j < 4; ++j) {
    const KT* lo = (const KT*)__shfl_sync(KILN_FULL, mine, 8 * j + 2 * (lane & 3));
    const KT* hi = (const KT*)__shfl_sync(KILN_FULL, mine, 8 * j + 2 * (lane & 3) + 1);
    r[j] = (unsigned)KILN_BITS(lo[lane >> 2]) | ((unsigned)KILN_BITS(hi[lane >> 2]) << 16);
  }
}
#endif

// c[2 np], c[2 np + 1] += a times the 16 x 16 tiles np < N16 of B (k by n), which shared memory
// holds transposed: a row of `stride` elements per column n, `rows` at n = 0 and the k wanted
// (as the keys are held for q k^T).
template <int N16>
__device__ __forceinline__ void kiln_mma_by_rows(float (*c)[4], const unsigned* a, const KT* rows, int stride) {
  const int lane = threadIdx.x & 31, sel = lane >> 3, r8 = lane & 7;
#pragma unroll
  for (int np = 0; np < N16; ++np) {
    unsigned b[4];
    kiln_ldsm4(b, rows + (np * 16 + (sel >> 1) * 8 + r8) * stride + (sel & 1) * 8);
    kiln_mma(c[2 * np], a, b[0], b[1]);
    kiln_mma(c[2 * np + 1], a, b[2], b[3]);
  }
}
// The same with B held as it is: a row of `stride` elements per k, `rows` at the k wanted and
// n = 0 (as the values are held for p v).
template <int N16>
__device__ __forceinline__ void kiln_mma_by_cols(float (*c)[4], const unsigned* a, const KT* rows, int stride) {
  const int lane = threadIdx.x & 31, sel = lane >> 3, r8 = lane & 7;
#pragma unroll
  for (int np = 0; np < N16; ++np) {
    unsigned b[4];
    kiln_ldsm4_trans(b, rows + ((sel & 1) * 8 + r8) * stride + np * 16 + (sel >> 1) * 8);
    kiln_mma(c[2 * np], a, b[0], b[1]);
    kiln_mma(c[2 * np + 1], a, b[2], b[3]);
  }
}

// Two consecutive values of row `row` from column `col` (zero past `rows` and `cols`).
__device__ __forceinline__ unsigned kiln_pair(const KT* p, long long row, int col, long long rows, long long stride,
                                              int cols) {
  unsigned lo = 0, hi = 0;
  if (row < rows) {
    if (col < cols) lo = KILN_BITS(p[row * stride + col]);
    if (col + 1 < cols) hi = KILN_BITS(p[row * stride + col + 1]);
  }
  return lo | (hi << 16);
}

// A warp's 16 rows of a [rows, cols] matrix (row stride `stride`) as A fragments, K16 of 16
// columns: this thread's rows `row` and `row + 8`; zero past `rows` and `cols`.
template <int K16>
__device__ __forceinline__ void kiln_load_a(unsigned (*f)[4], const KT* p, long long row, long long rows,
                                            long long stride, int cols) {
  const int t = threadIdx.x & 3;
#pragma unroll
  for (int kk = 0; kk < K16; ++kk) {
    const int c = kk * 16 + 2 * t;
    f[kk][0] = kiln_pair(p, row, c, rows, stride, cols);
    f[kk][1] = kiln_pair(p, row + 8, c, rows, stride, cols);
    f[kk][2] = kiln_pair(p, row, c + 8, rows, stride, cols);
    f[kk][3] = kiln_pair(p, row + 8, c + 8, rows, stride, cols);
  }
}

// Rows [k0, k0 + tile) of a [S, cols] matrix (row stride `stride`, columns contiguous) into
// shared memory rows of `dstride`, zero past S and `cols` up to `padded`; 16 bytes a copy where
// the source allows.
__device__ __forceinline__ void kiln_load_tile(KT* dst, const KT* src, long long k0, long long S, long long stride,
                                               int cols, int padded, int dstride, int tile) {
  const int chunks = padded / 8;
  for (int c = threadIdx.x; c < tile * chunks; c += blockDim.x) {
    const int row = c / chunks, col = (c % chunks) * 8;
    const long long key = k0 + row;
    KT* d = dst + row * dstride + col;
    if (key < S && col + 8 <= cols && ((((unsigned long long)(src + key * stride + col)) & 15) == 0)) {
      kiln_copy16(d, src + key * stride + col);
    } else {
      for (int e = 0; e < 8; ++e) d[e] = key < S && col + e < cols ? src[key * stride + col + e] : KILN_FROM_BITS(0);
    }
  }
}

__device__ __forceinline__ float kiln_finish(float o, float l, int masked) {
  if (l == 0.f) return masked ? 0.f : __int_as_float(0x7fc00000);
  return o / l;
}

// Where batch entry `entry`'s rows start in each tensor (element offsets, innermost dim last).
struct KilnOffsets {
  long long q, k, v, o, m;
};
__device__ __forceinline__ KilnOffsets kiln_offsets(const KilnAttentionBatch& batch, long long entry) {
  KilnOffsets at = {0, 0, 0, 0, 0};
#pragma unroll
  for (int i = 3; i >= 0; --i) {  // constant indices: the parameters are read in place, not copied
    if (i >= batch.rank) continue;
    const long long c = entry % batch.size[i];
    entry /= batch.size[i];
    at.q += c * batch.q[i];
    at.k += c * batch.k[i];
    at.v += c * batch.v[i];
    at.o += c * batch.o[i];
    at.m += c * batch.m[i];
  }
  return at;
}

// out[b, i, :] = attention of query row i of batch entry b. Block x: split x % splits of the keys,
// then, of x / splits, batch entry / q_blocks and query rows from 64 * (q_blocks - 1 - % q_blocks).
// Rows have element strides qr, kr, vr, orow; the mask (mask_kind 1: bool, 2: added KT values) has
// strides mr (rows) and mc (keys). With splits > 1 (few blocks, long rows: decoding) each block
// takes an even share of the key tiles and writes its row's unnormalized output, maximum and sum
// to `part` (KILN_DV + 2 floats per entry, row and split), which kiln_attention_combine merges.
#if KILN_LSE_ONLY
#define KILN_FORWARD kiln_attention_lse
#else
#define KILN_FORWARD kiln_attention
#endif
extern "C" __global__ void __launch_bounds__(128, KILN_BN == 64 ? 3 : 2)
KILN_FORWARD(const KT* q, const KT* k, const KT* v, const void* mask, KT* out, long long L, long long S,
               long long qr, long long kr, long long vr, long long orow, long long mr, long long mc,
               KilnAttentionBatch batch, long long q_blocks, float scale, int causal, int mask_kind, long long splits,
               float* part) {
  __shared__ __align__(16) KT ks[2][KILN_BN * KILN_KSTRIDE];  // two tiles: one read, the next arriving
#if !KILN_LSE_ONLY
  __shared__ __align__(16) KT vs[2][KILN_BN * KILN_VSTRIDE];
#endif
  const float neg = __int_as_float(0xff800000);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const long long split = (long long)blockIdx.x % splits, unit = (long long)blockIdx.x / splits;
  const long long qb = q_blocks - 1 - unit % q_blocks, entry = unit / q_blocks;
  const KilnOffsets at = kiln_offsets(batch, entry);
  const long long om = at.m;
  q += at.q;
  k += at.k;
  v += at.v;
  out += at.o;
  const long long rg = qb * KILN_BM + warp * 16 + g, rg8 = rg + 8;

  unsigned qf[KILN_DP / 16][4];
  kiln_load_a<KILN_DP / 16>(qf, q, rg, L, qr, KILN_D);
#if !KILN_LSE_ONLY
  float acc[KILN_DVP / 8][4];
#pragma unroll
  for (int n = 0; n < KILN_DVP / 8; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;
#endif
  // Scores and maxima are kept in base 2 (times log2(e)), so that an exponent is one exp2 of a
  // difference; with an added mask they stay in natural units (a bf16 mask near its limit,
  // finfo.min, times log2(e) would pass the f32 range), and the difference is scaled instead.
  float m_g = neg, m_g8 = neg, l_g = 0.f, l_g8 = 0.f;
  const float scale_x = mask_kind == 2 ? scale : scale * KILN_LOG2E, to_base2 = mask_kind == 2 ? KILN_LOG2E : 1.f;

  long long kend = S;
  if (causal) {
    const long long last = (qb + 1) * KILN_BM < L ? (qb + 1) * KILN_BM : L;  // one past the block's last row
    kend = last < S ? last : S;
  }
  // This split's tiles: [kbegin, kend).
  const long long tiles = (kend + KILN_BN - 1) / KILN_BN, share = (tiles + splits - 1) / splits;
  const long long kbegin = split * share * KILN_BN;
  if ((split + 1) * share * KILN_BN < kend) kend = (split + 1) * share * KILN_BN;
  if (kbegin < kend) {
    kiln_load_tile(ks[0], k, kbegin, S, kr, KILN_D, KILN_DP, KILN_KSTRIDE, KILN_BN);
#if !KILN_LSE_ONLY
    kiln_load_tile(vs[0], v, kbegin, S, vr, KILN_DV, KILN_DVP, KILN_VSTRIDE, KILN_BN);
#endif
    kiln_copies_commit();
  }
  for (long long k0 = kbegin, tile = 0; k0 < kend; k0 += KILN_BN, ++tile) {
    const int buf = (int)(tile & 1), more = k0 + KILN_BN < kend;
    if (more) {  // the next tile into the other buffer, whose readers passed the last barrier
      kiln_load_tile(ks[buf ^ 1], k, k0 + KILN_BN, S, kr, KILN_D, KILN_DP, KILN_KSTRIDE, KILN_BN);
#if !KILN_LSE_ONLY
      kiln_load_tile(vs[buf ^ 1], v, k0 + KILN_BN, S, vr, KILN_DV, KILN_DVP, KILN_VSTRIDE, KILN_BN);
#endif
      kiln_copies_commit();
    }
    kiln_copies_done(more);
    __syncthreads();  // this tile is in shared memory for every thread

    float s[KILN_BN / 8][4];
#pragma unroll
    for (int n = 0; n < KILN_BN / 8; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < KILN_DP / 16; ++kk) kiln_mma_by_rows<KILN_BN / 16>(s, qf[kk], ks[buf] + kk * 16, KILN_KSTRIDE);

    // A tile of existing keys every row of the block sees, without a mask, is only scaled.
    const bool whole = k0 + KILN_BN <= S && mask_kind == 0 && (!causal || k0 + KILN_BN - 1 <= qb * KILN_BM);
    float mx_g = neg, mx_g8 = neg;
#pragma unroll
    for (int n = 0; n < KILN_BN / 8; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float x = s[n][e] * scale_x;
        if (!whole) {
          const long long i = e < 2 ? rg : rg8, j = k0 + n * 8 + 2 * t + (e & 1);
          if (j >= S || (causal && j > i)) {
            x = neg;
          } else if (mask_kind != 0 && i < L) {
            const long long at = om + i * mr + j * mc;
            if (mask_kind == 1) {
              if (!((const unsigned char*)mask)[at]) x = neg;
            } else {
              x += KILN_TO_F(((const KT*)mask)[at]);
            }
          }
        }
        s[n][e] = x;
        if (e < 2) mx_g = fmaxf(mx_g, x);
        else mx_g8 = fmaxf(mx_g8, x);
      }
    }
    mx_g = fmaxf(mx_g, __shfl_xor_sync(KILN_FULL, mx_g, 1));
    mx_g = fmaxf(mx_g, __shfl_xor_sync(KILN_FULL, mx_g, 2));
    mx_g8 = fmaxf(mx_g8, __shfl_xor_sync(KILN_FULL, mx_g8, 1));
    mx_g8 = fmaxf(mx_g8, __shfl_xor_sync(KILN_FULL, mx_g8, 2));
    const float new_g = fmaxf(m_g, mx_g), new_g8 = fmaxf(m_g8, mx_g8);
    // A row that has seen only -inf subtracts 0, so its -inf scores give 0 and a NaN stays NaN.
    const float base_g = new_g == neg ? 0.f : new_g, base_g8 = new_g8 == neg ? 0.f : new_g8;
    const float alpha_g = exp2f((m_g - base_g) * to_base2), alpha_g8 = exp2f((m_g8 - base_g8) * to_base2);
    float sum_g = 0.f, sum_g8 = 0.f;
#pragma unroll
    for (int n = 0; n < KILN_BN / 8; ++n) {
      s[n][0] = exp2f((s[n][0] - base_g) * to_base2);
      s[n][1] = exp2f((s[n][1] - base_g) * to_base2);
      s[n][2] = exp2f((s[n][2] - base_g8) * to_base2);
      s[n][3] = exp2f((s[n][3] - base_g8) * to_base2);
      sum_g += s[n][0] + s[n][1];
      sum_g8 += s[n][2] + s[n][3];
    }
    l_g = l_g * alpha_g + sum_g;
    l_g8 = l_g8 * alpha_g8 + sum_g8;
    m_g = new_g;
    m_g8 = new_g8;
#if !KILN_LSE_ONLY
#pragma unroll
    for (int n = 0; n < KILN_DVP / 8; ++n) {
      acc[n][0] *= alpha_g;
      acc[n][1] *= alpha_g;
      acc[n][2] *= alpha_g8;
      acc[n][3] *= alpha_g8;
    }

#pragma unroll
    for (int kk = 0; kk < KILN_BN / 16; ++kk) {
      unsigned a[4];
      kiln_a_of_c(a, s[2 * kk], s[2 * kk + 1]);
      kiln_mma_by_cols<KILN_DVP / 16>(acc, a, vs[buf] + kk * 16 * KILN_VSTRIDE, KILN_VSTRIDE);
    }
#endif
    __syncthreads();  // this tile's readers are done before the next iteration refills its buffer
  }

  l_g += __shfl_xor_sync(KILN_FULL, l_g, 1);
  l_g += __shfl_xor_sync(KILN_FULL, l_g, 2);
  l_g8 += __shfl_xor_sync(KILN_FULL, l_g8, 1);
  l_g8 += __shfl_xor_sync(KILN_FULL, l_g8, 2);
#if KILN_LSE_ONLY
  // Each row's maximum (in the scores' units) and log2 of its sum, two floats per row of
  // `part` (entries * L rows), which the backward reads: a probability is exp2((x - max) *
  // to_base2 - log2(sum)), kept apart so that scores near the f32 limit (a bf16 finfo.min mask)
  // still sum; a row that sees no key gets max +inf, so that its probabilities are 0.
  if (t == 0) {
    const long long e_here = (long long)blockIdx.x / q_blocks;
    const float inf = __int_as_float(0x7f800000);
    if (rg < L) {
      part[2 * (e_here * L + rg)] = l_g == 0.f ? inf : m_g;
      part[2 * (e_here * L + rg) + 1] = l_g == 0.f ? 0.f : log2f(l_g);
    }
    if (rg8 < L) {
      part[2 * (e_here * L + rg8)] = l_g8 == 0.f ? inf : m_g8;
      part[2 * (e_here * L + rg8) + 1] = l_g8 == 0.f ? 0.f : log2f(l_g8);
    }
  }
#else
  if (splits > 1) {  // this split's share, for kiln_attention_combine
    // (entry and split from the block index again: keeping them live through the loop spilled)
    const long long e_here = (long long)blockIdx.x / splits / q_blocks, s_here = (long long)blockIdx.x % splits;
    float* pg = part + ((e_here * L + rg) * splits + s_here) * (KILN_DV + 2);
    float* pg8 = part + ((e_here * L + rg8) * splits + s_here) * (KILN_DV + 2);
#pragma unroll
    for (int n = 0; n < KILN_DVP / 8; ++n) {
      const int c = n * 8 + 2 * t;
      if (rg < L) {
        if (c < KILN_DV) pg[c] = acc[n][0];
        if (c + 1 < KILN_DV) pg[c + 1] = acc[n][1];
      }
      if (rg8 < L) {
        if (c < KILN_DV) pg8[c] = acc[n][2];
        if (c + 1 < KILN_DV) pg8[c + 1] = acc[n][3];
      }
    }
    if (t == 0 && rg < L) {
      pg[KILN_DV] = m_g;
      pg[KILN_DV + 1] = l_g;
    }
    if (t == 0 && rg8 < L) {
      pg8[KILN_DV] = m_g8;
      pg8[KILN_DV + 1] = l_g8;
    }
    return;
  }
#pragma unroll
  for (int n = 0; n < KILN_DVP / 8; ++n) {
    const int c = n * 8 + 2 * t;
    if (rg < L) {
      if (c < KILN_DV) out[rg * orow + c] = KILN_FROM_F(kiln_finish(acc[n][0], l_g, mask_kind));
      if (c + 1 < KILN_DV) out[rg * orow + c + 1] = KILN_FROM_F(kiln_finish(acc[n][1], l_g, mask_kind));
    }
    if (rg8 < L) {
      if (c < KILN_DV) out[rg8 * orow + c] = KILN_FROM_F(kiln_finish(acc[n][2], l_g8, mask_kind));
      if (c + 1 < KILN_DV) out[rg8 * orow + c + 1] = KILN_FROM_F(kiln_finish(acc[n][3], l_g8, mask_kind));
    }
  }
#endif
}

#if !KILN_LSE_ONLY

// The splits' shares of each row merged (a thread per output element of `rows` = entries * L
// rows): the largest maximum is the common base, each share's sum and output scaled to it.
extern "C" __global__ void __launch_bounds__(128)
kiln_attention_combine(const float* part, KT* out, long long L, long long rows, long long splits, long long orow,
                       KilnAttentionBatch batch, int mask_kind) {
  const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= rows * KILN_DV) return;
  const long long row = idx / KILN_DV, c = idx % KILN_DV, entry = row / L, i = row % L;
  const float neg = __int_as_float(0xff800000), to_base2 = mask_kind == 2 ? KILN_LOG2E : 1.f;
  const float* p = part + row * splits * (KILN_DV + 2);
  float top = neg;
  for (long long sp = 0; sp < splits; ++sp) top = fmaxf(top, p[sp * (KILN_DV + 2) + KILN_DV]);
  const float base = top == neg ? 0.f : top;
  float o = 0.f, l = 0.f;
  for (long long sp = 0; sp < splits; ++sp) {
    const float* share = p + sp * (KILN_DV + 2);
    const float w = exp2f((share[KILN_DV] - base) * to_base2);
    o += share[c] * w;
    l += share[KILN_DV + 1] * w;
  }
  out[kiln_offsets(batch, entry).o + i * orow + c] = KILN_FROM_F(kiln_finish(o, l, mask_kind));
}
#endif
)KILN"
