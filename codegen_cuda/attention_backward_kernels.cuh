// kiln/codegen_cuda/attention_backward_kernels.cuh — the fused attention backward kernels, as CUDA C inside a raw string.
//
// Included by codegen_cuda/cuda_attention_source.cpp after attention_kernels.cuh, compiled with
// KILN_LSE_ONLY 1 (so the forward's text there is kiln_attention_lse) and using its helpers
// (fragments, kiln_mma, kiln_ldsm4, kiln_load_tile, kiln_offsets) and macros.
//
// The gradients of q, k and v of out = softmax(q k^T * scale + mask) v, FlashAttention-2's
// backward: the probabilities never reach memory. With g the output's gradient, P the
// probabilities (computed again from each row's maximum and sum), D = rowsum(g * out):
//   dV = P^T g,  dP = g V^T,  dS = P * (dP - D),  dQ = dS K * scale,  dK = dS^T Q * scale.
// Four launches: kiln_attention_lse (each row's maximum and sum: the forward without the values),
// kiln_attention_backward_prep (D, and dQ's f32 accumulator zeroed), kiln_attention_backward (a
// block per 64 keys of a batch entry accumulates their dK and dV in registers over every query
// tile, and adds its share of dQ to the accumulator with atomics), kiln_attention_backward_dq
// (the accumulator scaled and rounded to KT).
//
// In kiln_attention_backward each of the 4 warps owns 16 keys and computes, per tile of
// KILN_BR queries, the transposed products with the keys as rows (the mma A operand): S^T from
// the block's keys in shared memory and the query tile, P^T from it, dV += P^T g (the
// probabilities rounded to KT, as the forward rounds them), dP^T = V g^T (V's fragments in
// registers), dS^T, dK += dS^T Q. dS^T goes to shared memory, and the warps take dQ = dS K by
// rows of queries. The query tile is loaded once (cp.async) and not double-buffered.
// Semantics are the decomposition's (frontend/ops_attention.cpp): a query row that sees no key
// (maximum +inf) has P = 0 and adds nothing; a NaN score makes its row's P NaN.
R"KILN(
// Queries a tile: the query tile, g's tile, the block's keys and dS^T fit 48 KB of static shared
// memory.
#define KILN_BR (KILN_DP > 64 || KILN_DVP > 64 ? 32 : 64)
#define KILN_KEYS 64
#define KILN_DSSTRIDE (KILN_BR + 8)

// delta[r] = sum over c of g[r, c] * out[r, c] (f32), and row r of dq_acc zeroed: a warp per row
// of `rows` = entries * L; g and out are contiguous [rows, KILN_DV], dq_acc [rows, KILN_D].
extern "C" __global__ void __launch_bounds__(128)
kiln_attention_backward_prep(const KT* g, const KT* out, float* delta, float* dq_acc, long long rows) {
  const long long r = (long long)blockIdx.x * 4 + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (r >= rows) return;  // the whole warp: r is the warp's
  float sum = 0.f;
  for (int c = lane; c < KILN_DV; c += 32) sum += KILN_TO_F(g[r * KILN_DV + c]) * KILN_TO_F(out[r * KILN_DV + c]);
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(KILN_FULL, sum, o);
  if (lane == 0) delta[r] = sum;
  for (int c = lane; c < KILN_D; c += 32) dq_acc[r * KILN_D + c] = 0.f;
}

// dq[i] = dq_acc[i] * scale, rounded to KT, for the n = entries * L * KILN_D elements.
extern "C" __global__ void __launch_bounds__(128)
kiln_attention_backward_dq(const float* dq_acc, KT* dq, long long n, float scale) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dq[i] = KILN_FROM_F(dq_acc[i] * scale);
}

// dK and dV of keys [64 * (x % k_blocks), + 64) of batch entry x / k_blocks, and their share of
// dQ. q, k, v and the mask as kiln_attention reads them (rows of element strides qr, kr, vr; the
// mask's mr, mc; batch strides in `batch`); g contiguous [entries, L, KILN_DV]; lse each row's
// maximum and log2 of its sum (2 floats a row, as kiln_attention_lse writes them), delta
// [entries * L]; dq_acc [entries, L, KILN_D] (f32, added to); dk [entries, S, KILN_D] and dv
// [entries, S, KILN_DV] written.
extern "C" __global__ void __launch_bounds__(128)
kiln_attention_backward(const KT* q, const KT* k, const KT* v, const void* mask, const KT* g, const float* lse,
                        const float* delta, float* dq_acc, KT* dk, KT* dv, long long L, long long S, long long qr,
                        long long kr, long long vr, long long mr, long long mc, KilnAttentionBatch batch,
                        long long k_blocks, float scale, int causal, int mask_kind) {
  __shared__ __align__(16) KT qs[KILN_BR * KILN_KSTRIDE];      // the query tile
  __shared__ __align__(16) KT gs[KILN_BR * KILN_VSTRIDE];      // g's rows of the tile
  __shared__ __align__(16) KT ks[KILN_KEYS * KILN_KSTRIDE];    // the block's keys
  __shared__ __align__(16) KT dss[KILN_KEYS * KILN_DSSTRIDE];  // dS^T: [key][query of the tile]
  __shared__ float max_s[KILN_BR], lsum_s[KILN_BR], delta_s[KILN_BR];
  const float neg = __int_as_float(0xff800000);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, gr = lane >> 2, t = lane & 3;
  const int sel = lane >> 3, r8 = lane & 7;
  const long long kb = (long long)blockIdx.x % k_blocks, entry = (long long)blockIdx.x / k_blocks;
  const KilnOffsets at = kiln_offsets(batch, entry);
  const long long om = at.m, k0 = kb * KILN_KEYS;
  q += at.q;
  k += at.k;
  v += at.v;
  g += entry * L * KILN_DV;
  lse += 2 * entry * L;
  delta += entry * L;
  dq_acc += entry * L * KILN_D;
  // This warp's keys, as the rows of its A operands.
  const long long j_g = k0 + warp * 16 + gr, j_g8 = j_g + 8;

  kiln_load_tile(ks, k, k0, S, kr, KILN_D, KILN_DP, KILN_KSTRIDE, KILN_KEYS);
  kiln_copies_commit();
  unsigned vf[KILN_DVP / 16][4];
  kiln_load_a<KILN_DVP / 16>(vf, v, j_g, S, vr, KILN_DV);
  float dva[KILN_DVP / 8][4], dka[KILN_DP / 8][4];
#pragma unroll
  for (int n = 0; n < KILN_DVP / 8; ++n) dva[n][0] = dva[n][1] = dva[n][2] = dva[n][3] = 0.f;
#pragma unroll
  for (int n = 0; n < KILN_DP / 8; ++n) dka[n][0] = dka[n][1] = dka[n][2] = dka[n][3] = 0.f;
  // As in kiln_attention: base-2 scores, or natural ones with an added mask (scaled after).
  const float scale_x = mask_kind == 2 ? scale : scale * KILN_LOG2E, to_base2 = mask_kind == 2 ? KILN_LOG2E : 1.f;

  // A causal block's keys are seen from query k0 on.
  const long long first = causal ? k0 / KILN_BR * KILN_BR : 0;
  for (long long i0 = first; i0 < L; i0 += KILN_BR) {
    kiln_load_tile(qs, q, i0, L, qr, KILN_D, KILN_DP, KILN_KSTRIDE, KILN_BR);
    kiln_load_tile(gs, g, i0, L, KILN_DV, KILN_DV, KILN_DVP, KILN_VSTRIDE, KILN_BR);
    kiln_copies_commit();
    for (int r = threadIdx.x; r < KILN_BR; r += blockDim.x) {
      const bool in = i0 + r < L;
      max_s[r] = in ? lse[2 * (i0 + r)] : __int_as_float(0x7f800000);
      lsum_s[r] = in ? lse[2 * (i0 + r) + 1] : 0.f;
      delta_s[r] = in ? delta[i0 + r] : 0.f;
    }
    kiln_copies_done(0);
    __syncthreads();  // the tile (and, the first time, the keys) in shared memory for every thread

    // S^T: this warp's 16 keys by the tile's queries.
    float s[KILN_BR / 8][4];
#pragma unroll
    for (int n = 0; n < KILN_BR / 8; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < KILN_DP / 16; ++kk) {
      unsigned a[4];
      kiln_ldsm4(a, ks + (warp * 16 + (sel & 1) * 8 + r8) * KILN_KSTRIDE + kk * 16 + (sel >> 1) * 8);
      kiln_mma_by_rows<KILN_BR / 16>(s, a, qs + kk * 16, KILN_KSTRIDE);
    }
    // P^T, masked and scaled as the forward does: element e of s[n] is key (e < 2 ? j_g : j_g8)
    // and query column n * 8 + 2t + (e & 1) of the tile.
#pragma unroll
    for (int n = 0; n < KILN_BR / 8; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int col = n * 8 + 2 * t + (e & 1);
        const long long i = i0 + col, j = e < 2 ? j_g : j_g8;
        float x = s[n][e] * scale_x;
        if (j >= S || i >= L || (causal && j > i)) {
          x = neg;
        } else if (mask_kind == 1) {
          if (!((const unsigned char*)mask)[om + i * mr + j * mc]) x = neg;
        } else if (mask_kind == 2) {
          x += KILN_TO_F(((const KT*)mask)[om + i * mr + j * mc]);
        }
        s[n][e] = x == neg ? 0.f : exp2f((x - max_s[col]) * to_base2 - lsum_s[col]);
      }
    }
    // dV += P^T g.
#pragma unroll
    for (int kk = 0; kk < KILN_BR / 16; ++kk) {
      unsigned a[4];
      kiln_a_of_c(a, s[2 * kk], s[2 * kk + 1]);
      kiln_mma_by_cols<KILN_DVP / 16>(dva, a, gs + kk * 16 * KILN_VSTRIDE, KILN_VSTRIDE);
    }
    // dP^T = V g^T, then dS^T = P^T * (dP^T - D) in s.
    {
      float dp[KILN_BR / 8][4];
#pragma unroll
      for (int n = 0; n < KILN_BR / 8; ++n) dp[n][0] = dp[n][1] = dp[n][2] = dp[n][3] = 0.f;
#pragma unroll
      for (int kk = 0; kk < KILN_DVP / 16; ++kk) kiln_mma_by_rows<KILN_BR / 16>(dp, vf[kk], gs + kk * 16, KILN_VSTRIDE);
#pragma unroll
      for (int n = 0; n < KILN_BR / 8; ++n) {
#pragma unroll
        for (int e = 0; e < 4; ++e) s[n][e] = s[n][e] * (dp[n][e] - delta_s[n * 8 + 2 * t + (e & 1)]);
      }
    }
    // dK += dS^T Q (scaled at the end), and dS^T to shared memory for dQ.
#pragma unroll
    for (int kk = 0; kk < KILN_BR / 16; ++kk) {
      unsigned a[4];
      kiln_a_of_c(a, s[2 * kk], s[2 * kk + 1]);
      *(unsigned*)(dss + (warp * 16 + gr) * KILN_DSSTRIDE + kk * 16 + 2 * t) = a[0];
      *(unsigned*)(dss + (warp * 16 + gr + 8) * KILN_DSSTRIDE + kk * 16 + 2 * t) = a[1];
      *(unsigned*)(dss + (warp * 16 + gr) * KILN_DSSTRIDE + kk * 16 + 8 + 2 * t) = a[2];
      *(unsigned*)(dss + (warp * 16 + gr + 8) * KILN_DSSTRIDE + kk * 16 + 8 + 2 * t) = a[3];
      kiln_mma_by_cols<KILN_DP / 16>(dka, a, qs + kk * 16 * KILN_KSTRIDE, KILN_KSTRIDE);
    }
    __syncthreads();  // every warp's dS^T in shared memory

    // dQ of the tile += dS K: 16 query rows (m-tile mt) by 16 columns (np) at a time, the warps
    // taking the (mt, np) pairs in turn; added to the f32 accumulator.
    for (int unit = warp; unit < (KILN_BR / 16) * (KILN_DP / 16); unit += 4) {
      const int mt = unit % (KILN_BR / 16), np = unit / (KILN_BR / 16);
      float c[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
#pragma unroll
      for (int kk = 0; kk < KILN_KEYS / 16; ++kk) {
        unsigned a[4];
        kiln_ldsm4_trans(a, dss + (kk * 16 + (sel >> 1) * 8 + r8) * KILN_DSSTRIDE + mt * 16 + (sel & 1) * 8);
        kiln_mma_by_cols<1>(c, a, ks + kk * 16 * KILN_KSTRIDE + np * 16, KILN_KSTRIDE);
      }
      const long long i_g = i0 + mt * 16 + gr, i_g8 = i_g + 8;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int col = np * 16 + h * 8 + 2 * t;
        if (i_g < L) {
          if (col < KILN_D) atomicAdd(dq_acc + i_g * KILN_D + col, c[h][0]);
          if (col + 1 < KILN_D) atomicAdd(dq_acc + i_g * KILN_D + col + 1, c[h][1]);
        }
        if (i_g8 < L) {
          if (col < KILN_D) atomicAdd(dq_acc + i_g8 * KILN_D + col, c[h][2]);
          if (col + 1 < KILN_D) atomicAdd(dq_acc + i_g8 * KILN_D + col + 1, c[h][3]);
        }
      }
    }
    __syncthreads();  // the tile's readers are done before the next tile replaces it
  }
  kiln_copies_done(0);  // the keys' copies, where no query tile waited for them (causal, k0 >= L)

  // This warp's rows of dK (times scale) and dV.
  dk += entry * S * KILN_D;
  dv += entry * S * KILN_DV;
#pragma unroll
  for (int n = 0; n < KILN_DP / 8; ++n) {
    const int c = n * 8 + 2 * t;
    if (j_g < S) {
      if (c < KILN_D) dk[j_g * KILN_D + c] = KILN_FROM_F(dka[n][0] * scale);
      if (c + 1 < KILN_D) dk[j_g * KILN_D + c + 1] = KILN_FROM_F(dka[n][1] * scale);
    }
    if (j_g8 < S) {
      if (c < KILN_D) dk[j_g8 * KILN_D + c] = KILN_FROM_F(dka[n][2] * scale);
      if (c + 1 < KILN_D) dk[j_g8 * KILN_D + c + 1] = KILN_FROM_F(dka[n][3] * scale);
    }
  }
#pragma unroll
  for (int n = 0; n < KILN_DVP / 8; ++n) {
    const int c = n * 8 + 2 * t;
    if (j_g < S) {
      if (c < KILN_DV) dv[j_g * KILN_DV + c] = KILN_FROM_F(dva[n][0]);
      if (c + 1 < KILN_DV) dv[j_g * KILN_DV + c + 1] = KILN_FROM_F(dva[n][1]);
    }
    if (j_g8 < S) {
      if (c < KILN_DV) dv[j_g8 * KILN_DV + c] = KILN_FROM_F(dva[n][2]);
      if (c + 1 < KILN_DV) dv[j_g8 * KILN_DV + c + 1] = KILN_FROM_F(dva[n][3]);
    }
  }
}
)KILN"
