// kiln/runtime/cpu/extern_attention.cpp — scaled_dot_product_attention as one library call.
//
// The decomposition (frontend/ops_attention.cpp) writes the [..., L, S] scores to memory, reads them
// back for the softmax, writes the probabilities, and reads them again for the product with
// v; a causal mask is applied after computing every score. Here each block of query rows is
// done whole while its scores are in cache: the scores by BLAS (as mm), the scale, mask and
// softmax row by row, the product with v by BLAS straight into the output rows. A causal
// block reads only the keys its last row can see, so causal attention computes about half
// the products. The block is sized to keep its scores near 256 KB.
//
// Semantics are the decomposition's: NaN and +inf scores make their row NaN, a row of -inf
// scores is zeros when a mask was given (PyTorch's rule) and NaN otherwise. The softmax's
// exp is glibc's libmvec, the vector exp generated kernels call, chosen by the host's ISA
// (AVX-512, AVX2, else std::exp), so results may differ from the decomposition by rounding
// (sums are reassociated), never by semantics. f16/bf16 run in f32 and are rounded once.
#include "runtime/cpu/extern_kernels.h"

#include "base/error.h"
#include "base/host_cpu.h"
#include "base/tensor_impl.h"
#include "frontend/ops_factory.h"
#include "frontend/ops.h"
#include "runtime/thread_pool.h"

#include <dlfcn.h>
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace kiln::rt {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// ---- row kernels ------------------------------------------------------------------------------
// prep_max: x = x * scale (+ add[j] when add is given); returns the max (NaN may be dropped).
// exp_sum: x = exp(x - m); returns the sum. divide: x /= d.

template <typename T> T prep_max_scalar(T* x, int64_t n, T scale, const T* add) {
  T m = -std::numeric_limits<T>::infinity();
  for (int64_t j = 0; j < n; ++j) {
    x[j] = add ? x[j] * scale + add[j] : x[j] * scale;
    m = std::max(m, x[j]);
  }
  return m;
}
template <typename T> T exp_sum_scalar(T* x, int64_t n, T m) {
  T s = 0;
  for (int64_t j = 0; j < n; ++j) s += (x[j] = std::exp(x[j] - m));
  return s;
}
template <typename T> void divide_scalar(T* x, int64_t n, T d) {
  for (int64_t j = 0; j < n; ++j) x[j] /= d;
}

void* libmvec_symbol(const char* name) {
  static void* lib = dlopen("libmvec.so.1", RTLD_NOW | RTLD_LOCAL);
  return lib ? dlsym(lib, name) : nullptr;
}

// Horizontal max / pairwise sum of W lanes stored to memory (GCC 12's _mm512_reduce_* trip
// -Wuninitialized at -O3).
template <int W> float lanes_max(const float* a) { return *std::max_element(a, a + W); }
template <int W> float lanes_sum(float* a) {
  for (int w = W / 2; w >= 1; w /= 2)
    for (int i = 0; i < w; ++i) a[i] = a[i] + a[i + w];
  return a[0];
}

__attribute__((target("avx512f"))) float prep_max_avx512(float* x, int64_t n, float scale, const float* add) {
  __m512 m = _mm512_set1_ps(kNegInf);
  const __m512 s = _mm512_set1_ps(scale);
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 k = n - j >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - j)) - 1);
    __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, x + j), s);
    if (add) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(k, add + j));
    _mm512_mask_storeu_ps(x + j, k, v);
    m = _mm512_mask_max_ps(m, k, m, v);
  }
  alignas(64) float a[16];
  _mm512_store_ps(a, m);
  return lanes_max<16>(a);
}
__attribute__((target("avx512f"))) float exp_sum_avx512(float* x, int64_t n, float mx) {
  using Exp = __m512 (*)(__m512);
  static const Exp vexp = reinterpret_cast<Exp>(libmvec_symbol("_ZGVeN16v_expf"));
  if (!vexp) return exp_sum_scalar(x, n, mx);
  __m512 sum = _mm512_setzero_ps();
  const __m512 m = _mm512_set1_ps(mx);
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 k = n - j >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - j)) - 1);
    const __m512 e = vexp(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + j), m));
    _mm512_mask_storeu_ps(x + j, k, e);
    sum = _mm512_mask_add_ps(sum, k, sum, e);
  }
  alignas(64) float a[16];
  _mm512_store_ps(a, sum);
  return lanes_sum<16>(a);
}
__attribute__((target("avx512f"))) void divide_avx512(float* x, int64_t n, float d) {
  const __m512 v = _mm512_set1_ps(d);
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 k = n - j >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - j)) - 1);
    _mm512_mask_storeu_ps(x + j, k, _mm512_div_ps(_mm512_maskz_loadu_ps(k, x + j), v));
  }
}

// AVX2: eight lanes; the tail is masked with maskload / maskstore.
__attribute__((target("avx2"))) __m256i tail_mask8(int64_t left) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::min<int64_t>(left, 8))), lane);
}
__attribute__((target("avx2"))) float prep_max_avx2(float* x, int64_t n, float scale, const float* add) {
  __m256 m = _mm256_set1_ps(kNegInf);
  const __m256 s = _mm256_set1_ps(scale), ninf = _mm256_set1_ps(kNegInf);
  for (int64_t j = 0; j < n; j += 8) {
    const __m256i k = tail_mask8(n - j);
    __m256 v = _mm256_mul_ps(_mm256_maskload_ps(x + j, k), s);
    if (add) v = _mm256_add_ps(v, _mm256_maskload_ps(add + j, k));
    _mm256_maskstore_ps(x + j, k, v);
    m = _mm256_max_ps(m, _mm256_blendv_ps(ninf, v, _mm256_castsi256_ps(k)));
  }
  alignas(32) float a[8];
  _mm256_store_ps(a, m);
  return lanes_max<8>(a);
}
__attribute__((target("avx2"))) float exp_sum_avx2(float* x, int64_t n, float mx) {
  using Exp = __m256 (*)(__m256);
  static const Exp vexp = reinterpret_cast<Exp>(libmvec_symbol("_ZGVdN8v_expf"));
  if (!vexp) return exp_sum_scalar(x, n, mx);
  __m256 sum = _mm256_setzero_ps();
  const __m256 m = _mm256_set1_ps(mx), zero = _mm256_setzero_ps();
  for (int64_t j = 0; j < n; j += 8) {
    const __m256i k = tail_mask8(n - j);
    const __m256 e = vexp(_mm256_sub_ps(_mm256_maskload_ps(x + j, k), m));
    _mm256_maskstore_ps(x + j, k, e);
    sum = _mm256_add_ps(sum, _mm256_blendv_ps(zero, e, _mm256_castsi256_ps(k)));
  }
  alignas(32) float a[8];
  _mm256_store_ps(a, sum);
  return lanes_sum<8>(a);
}
__attribute__((target("avx2"))) void divide_avx2(float* x, int64_t n, float d) {
  const __m256 v = _mm256_set1_ps(d);
  for (int64_t j = 0; j < n; j += 8) {
    const __m256i k = tail_mask8(n - j);
    _mm256_maskstore_ps(x + j, k, _mm256_div_ps(_mm256_maskload_ps(x + j, k), v));
  }
}

template <typename T> struct RowKernels {
  T (*prep_max)(T*, int64_t, T, const T*) = &prep_max_scalar<T>;
  T (*exp_sum)(T*, int64_t, T) = &exp_sum_scalar<T>;
  void (*divide)(T*, int64_t, T) = &divide_scalar<T>;
};

template <typename T> RowKernels<T> row_kernels() {
  RowKernels<T> r;
  if constexpr (std::is_same_v<T, float>) {
    if (host_has_avx512()) r = {&prep_max_avx512, &exp_sum_avx512, &divide_avx512};  // base/host_cpu.h
    else if (host_has_avx2()) r = {&prep_max_avx2, &exp_sum_avx2, &divide_avx2};
  }
  return r;
}

// ---- the blocked loop ---------------------------------------------------------------------------

// Element offset of batch entry `b` (row-major over `batch`) in a tensor expanded to batch dims.
int64_t batch_offset(const Tensor& t, int64_t b, const std::vector<int64_t>& batch) {
  int64_t off = t.storage_offset();
  for (size_t d = batch.size(); d-- > 0;) {
    off += (b % batch[d]) * t.stride(static_cast<int64_t>(d));
    b /= batch[d];
  }
  return off;
}

// t (batch dims first) broadcast to batch + its own last two dims, readable by BLAS.
Tensor expand_for_blas(const Tensor& t, const std::vector<int64_t>& batch) {
  std::vector<int64_t> shape = batch;
  shape.push_back(t.size(-2));
  shape.push_back(t.size(-1));
  Tensor e = t.expand(shape);
  return e.stride(-1) == 1 || e.stride(-2) == 1 ? e : e.contiguous();
}

struct Problem {
  Tensor q, k, v, mask;  // expanded to the batch; mask undefined when absent
  std::vector<int64_t> batch;
  int64_t L, S, E, Ev;
  bool causal;
  double scale;
};

template <typename T> void attend(const Problem& p, const Tensor& out) {
  const RowKernels<T> rk = row_kernels<T>();
  int64_t B = 1;
  for (int64_t d : p.batch) B *= d;
  const int64_t block = std::clamp<int64_t>(65536 / std::max<int64_t>(p.S, 1), 16, 512);
  const bool has_mask = p.mask.defined(), bool_mask = has_mask && p.mask.dtype() == ScalarType::Bool;
  const int64_t ms_i = has_mask ? p.mask.stride(-2) : 0, ms_j = has_mask ? p.mask.stride(-1) : 0;
  const bool add_unit = has_mask && !bool_mask && ms_j == 1;  // a float mask read in the vector pass
  const T scale = static_cast<T>(p.scale);
  // One task per (batch entry, block of query rows), shared out across the pool with a score
  // block of scratch per chunk of tasks; the products and the softmax inside run on the
  // task's thread (a parallel_for within a chunk runs inline). A GPT block's attention is 32
  // heads of 128 rows: one product each is too small to split across threads.
  const int64_t blocks = (p.L + block - 1) / block;
  parallel_for(B * blocks, 1, [&](int64_t task_lo, int64_t task_hi) {
    const Tensor scratch = empty({std::min(block, p.L), p.S}, TensorOptions(out.dtype()));
    for (int64_t task = task_lo; task < task_hi; ++task) {
      const int64_t b = task / blocks, r0 = (task % blocks) * block;
      const int64_t qo = batch_offset(p.q, b, p.batch), ko = batch_offset(p.k, b, p.batch);
      const int64_t vo = batch_offset(p.v, b, p.batch), mo = has_mask ? batch_offset(p.mask, b, p.batch) : 0;
      const int64_t rows = std::min(block, p.L - r0);
      const int64_t cols = p.causal ? std::min(p.S, r0 + rows) : p.S;  // keys any row here can see
      const Tensor y = out.as_strided({rows, p.Ev}, {p.Ev, 1}, out.storage_offset() + (b * p.L + r0) * p.Ev);
      if (cols == 0) {  // no keys: the product with an empty v
        Tensor(y).zero_();
        continue;
      }
      const Tensor sc = scratch.as_strided({rows, cols}, {cols, 1}, 0);
      const Tensor qb = p.q.as_strided({rows, p.E}, {p.q.stride(-2), p.q.stride(-1)}, qo + r0 * p.q.stride(-2));
      const Tensor kt = p.k.as_strided({p.E, cols}, {p.k.stride(-1), p.k.stride(-2)}, ko);
      blas_matmul(ir::OpKind::mm, qb, kt, sc);
      T* s = static_cast<T*>(sc.data_ptr());
      const T* m = has_mask ? static_cast<const T*>(p.mask.data_ptr()) - p.mask.storage_offset() + mo : nullptr;
      const bool* mb = bool_mask ? static_cast<const bool*>(p.mask.data_ptr()) - p.mask.storage_offset() + mo : nullptr;
      parallel_for(rows, std::max<int64_t>(1, 16384 / cols), [&](int64_t lo, int64_t hi) {
        for (int64_t r = lo; r < hi; ++r) {
          const int64_t i = r0 + r;
          T* x = s + r * cols;
          const int64_t n = p.causal ? std::min(i + 1, cols) : cols;  // the keys row i sees
          T mx;
          if (!has_mask || add_unit) {
            mx = rk.prep_max(x, n, scale, add_unit ? m + i * ms_i : nullptr);
          } else {  // a bool or strided mask: scalar pass
            mx = -std::numeric_limits<T>::infinity();
            for (int64_t j = 0; j < n; ++j) {
              const int64_t at = i * ms_i + j * ms_j;
              x[j] = bool_mask ? (mb[at] ? x[j] * scale : -std::numeric_limits<T>::infinity()) : x[j] * scale + m[at];
              mx = std::max(mx, x[j]);
            }
          }
          if (mx == -std::numeric_limits<T>::infinity()) {
            // Every score -inf, or NaN dropped by the vector max: zeros (masked) or NaN.
            const bool all_neg_inf = std::all_of(x, x + n, [](T e) { return e == -std::numeric_limits<T>::infinity(); });
            std::fill(x, x + n, has_mask && all_neg_inf ? T(0) : std::numeric_limits<T>::quiet_NaN());
          } else {
            rk.divide(x, n, rk.exp_sum(x, n, mx));
          }
          std::fill(x + n, x + cols, T(0));  // keys after i under the causal mask
        }
      });
      const Tensor vb = p.v.as_strided({cols, p.Ev}, {p.v.stride(-2), p.v.stride(-1)}, vo);
      blas_matmul(ir::OpKind::mm, sc, vb, y);
    }
  });
}

}  // namespace

void extern_attention(ir::OpKind op, const std::vector<Tensor>& ins, const ir::AttrList& attrs, const Tensor& out) {
  Problem p;
  p.causal = attrs.get<bool>(op, "is_causal");
  p.scale = attrs.get<double>(op, "scale");
  const ScalarType dt = out.dtype();
  if (dt != kFloat && dt != kDouble) {  // f16 / bf16: in f32, rounded once
    std::vector<Tensor> wide;
    for (const Tensor& t : ins) wide.push_back(t.dtype() == ScalarType::Bool ? t : t.to(kFloat));
    Tensor y = empty(out.sizes(), TensorOptions(kFloat));
    extern_attention(op, wide, attrs, y);
    Tensor(out).copy_(y);
    return;
  }
  const Tensor &q = ins.at(0), &k = ins.at(1), &v = ins.at(2);
  p.L = q.size(-2);
  p.E = q.size(-1);
  p.S = k.size(-2);
  p.Ev = v.size(-1);
  p.batch = std::vector<int64_t>(out.sizes().begin(), out.sizes().end() - 2);
  if (out.numel() == 0) return;
  p.q = expand_for_blas(q, p.batch);
  p.k = expand_for_blas(k, p.batch);
  p.v = expand_for_blas(v, p.batch);
  if (ins.size() > 3) {
    std::vector<int64_t> shape = p.batch;
    shape.push_back(p.L);
    shape.push_back(p.S);
    p.mask = ins[3].expand(shape);
  }
  if (dt == kFloat) attend<float>(p, out);
  else attend<double>(p, out);
}

}  // namespace kiln::rt
