// kiln/bench/bench_fused.cpp — the hand-written fused loops of bench_fused.h.
//
// Compiled with -O3 -march=native -ffast-math (see bench/CMakeLists.txt; only this file), so the
// inner loops vectorize, tanhf/expf/logf map to glibc's libmvec and reductions reassociate.
// Every kernel reads each input once from memory and writes each output once: row workloads
// keep their row in cache between the statistics pass and the output pass. Work is split with
// rt::parallel_for, the same pool and thread count that kiln's generated kernels use.
#include "bench/bench_fused.h"

#include "runtime/cpu/blas_library.h"
#include "runtime/cpu/parallel_gemm.h"
#include "runtime/thread_pool.h"

#include <algorithm>
#include <cfloat>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <vector>

namespace kiln::bench {

namespace {

// Rows per chunk so that a chunk holds at least ~16K elements (amortizes dispatch).
int64_t row_grain(int64_t cols) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(1, cols)); }

constexpr int64_t kElemGrain = 32768;

inline float gelu_tanh(float v) {
  const float k = 0.7978845608028654f;  // sqrt(2 / pi)
  return 0.5f * v * (1.0f + std::tanh(k * (v + 0.044715f * v * v * v)));
}

}  // namespace

void fused_pointwise(const float* a, const float* b, float* out, int64_t n) {
  rt::parallel_for(n, kElemGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = a[i] / (std::fabs(a[i]) + 1.0f) * b[i];
  });
}

void fused_gelu_bias(const float* x, const float* bias, float* out, int64_t rows, int64_t cols) {
  rt::parallel_for(rows, row_grain(cols), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x + r * cols;
      float* o = out + r * cols;
      for (int64_t c = 0; c < cols; ++c) o[c] = gelu_tanh(xr[c] + bias[c]);
    }
  });
}

void fused_softmax(const float* x, float* out, int64_t rows, int64_t cols) {
  rt::parallel_for(rows, row_grain(cols), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x + r * cols;
      float* o = out + r * cols;
      float m = -INFINITY;
      for (int64_t c = 0; c < cols; ++c) m = std::max(m, xr[c]);
      float s = 0.0f;
      for (int64_t c = 0; c < cols; ++c) {
        const float e = std::exp(xr[c] - m);
        o[c] = e;
        s += e;
      }
      const float inv = 1.0f / s;
      for (int64_t c = 0; c < cols; ++c) o[c] *= inv;
    }
  });
}

void fused_layer_norm(const float* x, const float* w, const float* b, float* out, int64_t rows, int64_t cols) {
  rt::parallel_for(rows, row_grain(cols), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x + r * cols;
      float* o = out + r * cols;
      float s = 0.0f;
      for (int64_t c = 0; c < cols; ++c) s += xr[c];
      const float mean = s / static_cast<float>(cols);
      float v = 0.0f;
      for (int64_t c = 0; c < cols; ++c) v += (xr[c] - mean) * (xr[c] - mean);
      const float rstd = 1.0f / std::sqrt(v / static_cast<float>(cols) + 1e-5f);
      for (int64_t c = 0; c < cols; ++c) o[c] = (xr[c] - mean) * rstd * w[c] + b[c];
    }
  });
}

void fused_rms_norm(const float* x, const float* w, float* out, int64_t rows, int64_t cols) {
  rt::parallel_for(rows, row_grain(cols), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x + r * cols;
      float* o = out + r * cols;
      float ss = 0.0f;
      for (int64_t c = 0; c < cols; ++c) ss += xr[c] * xr[c];
      const float inv = 1.0f / std::sqrt(ss / static_cast<float>(cols) + FLT_EPSILON);
      for (int64_t c = 0; c < cols; ++c) o[c] = xr[c] * inv * w[c];
    }
  });
}

float fused_sum_all(const float* x, int64_t n) {
  const int64_t k = std::max<int64_t>(1, rt::parallel_num_chunks(n, kElemGrain));
  std::vector<float> partial(static_cast<size_t>(k), 0.0f);
  rt::parallel_for(k, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const rt::ChunkBounds cb = rt::parallel_chunk(n, k, i);
      float s = 0.0f;
      for (int64_t j = cb.begin; j < cb.end; ++j) s += x[j];
      partial[static_cast<size_t>(i)] = s;
    }
  });
  float total = 0.0f;
  for (float p : partial) total += p;
  return total;
}

void fused_col_sum(const float* x, float* out, int64_t rows, int64_t cols) {
  // Each thread owns a band of columns and streams every row's segment of that band, so its
  // accumulators stay in L1 and x is read exactly once overall.
  rt::parallel_for(cols, 256, [&](int64_t c0, int64_t c1) {
    constexpr int64_t kBand = 2048;
    for (int64_t b0 = c0; b0 < c1; b0 += kBand) {
      const int64_t b1 = std::min(c1, b0 + kBand);
      float* o = out + b0;
      std::memset(o, 0, static_cast<size_t>(b1 - b0) * sizeof(float));
      for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * cols + b0;
        for (int64_t c = 0; c < b1 - b0; ++c) o[c] += xr[c];
      }
    }
  });
}

float fused_cross_entropy(const float* logits, const int64_t* target, int64_t rows, int64_t cols) {
  const int64_t k = std::max<int64_t>(1, rt::parallel_num_chunks(rows, row_grain(cols)));
  std::vector<double> partial(static_cast<size_t>(k), 0.0);
  rt::parallel_for(k, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const rt::ChunkBounds cb = rt::parallel_chunk(rows, k, i);
      double acc = 0.0;
      for (int64_t r = cb.begin; r < cb.end; ++r) {
        const float* xr = logits + r * cols;
        float m = -INFINITY;
        for (int64_t c = 0; c < cols; ++c) m = std::max(m, xr[c]);
        float s = 0.0f;
        for (int64_t c = 0; c < cols; ++c) s += std::exp(xr[c] - m);
        acc += static_cast<double>(std::log(s) + m - xr[target[r]]);
      }
      partial[static_cast<size_t>(i)] = acc;
    }
  });
  double total = 0.0;
  for (double p : partial) total += p;
  return static_cast<float>(total / static_cast<double>(rows));
}

void fused_index_add_rows(const float* src, const int64_t* index, float* out, int64_t n, int64_t rows, int64_t cols) {
  constexpr int64_t kTile = 64;  // columns per task: a row's tile is a few cache lines
  const int64_t tiles = (cols + kTile - 1) / kTile;
  rt::parallel_for(tiles, 1, [&](int64_t t0, int64_t t1) {
    const int64_t c0 = t0 * kTile, c1 = std::min(cols, t1 * kTile);
    for (int64_t r = 0; r < rows; ++r) std::fill(out + r * cols + c0, out + r * cols + c1, 0.0f);
    for (int64_t k = 0; k < n; ++k) {
      float* dst = out + index[k] * cols;
      const float* x = src + k * cols;
      for (int64_t c = c0; c < c1; ++c) dst[c] += x[c];
    }
  });
}

void blas_matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k) {
  rt::gemm<float>(rt::BlasLibrary::kNoTrans, rt::BlasLibrary::kNoTrans, m, n, k, a, k, b, n, c, n);
}

namespace {

template <bool Relu>
void linear_impl(const float* x, const float* w, const float* bias, float* out, int64_t m, int64_t n, int64_t k) {
  rt::gemm<float>(rt::BlasLibrary::kNoTrans, rt::BlasLibrary::kTrans, m, n, k, x, k, w, k, out, n);
  rt::parallel_for(m, row_grain(n), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      float* o = out + r * n;
      for (int64_t c = 0; c < n; ++c) {
        const float v = o[c] + bias[c];
        o[c] = Relu ? std::max(v, 0.0f) : v;
      }
    }
  });
}

}  // namespace

void fused_linear_bias_relu(const float* x, const float* w, const float* bias, float* out, int64_t m, int64_t n,
                            int64_t k) {
  linear_impl<true>(x, w, bias, out, m, n, k);
}

void fused_linear_bias(const float* x, const float* w, const float* bias, float* out, int64_t m, int64_t n, int64_t k) {
  linear_impl<false>(x, w, bias, out, m, n, k);
}

void stream_copy(const float* src, float* dst, int64_t n) {
  rt::parallel_for(n, 1 << 20, [&](int64_t begin, int64_t end) {
    std::memcpy(dst + begin, src + begin, static_cast<size_t>(end - begin) * sizeof(float));
  });
}

uint32_t stream_read(const uint32_t* x, int64_t n) {
  // Each chunk is read as four streams in step (its quarters): on the VMs measured, one
  // sequential stream per core read about a third slower than the memory delivers to several
  // (a tiled column sum reads four rows at a time). Chunks of 16 MiB: with 4 MiB ones the
  // quarters restart every 1 MiB, and the read measured 20-45% below what a sum reaches.
  std::atomic<uint32_t> all{0};
  rt::parallel_for(n, 1 << 22, [&](int64_t begin, int64_t end) {
    const int64_t q = (end - begin) / 4;
    const uint32_t *a = x + begin, *b = a + q, *c = b + q, *d = c + q;
    uint32_t acc = 0;
    for (int64_t i = 0; i < q; ++i) acc |= a[i] | b[i] | c[i] | d[i];
    for (int64_t i = begin + 4 * q; i < end; ++i) acc |= x[i];
    all.fetch_or(acc, std::memory_order_relaxed);
  });
  return all.load();
}

namespace {

// 16 independent accumulators cover the FMA units' latency (4 cycles) times their count (2).
// Vectors of this build's widest registers; a * b + c contracts to one FMA (-ffast-math).
#if defined(__AVX512F__)
constexpr int64_t kFmaLanes = 16;
#elif defined(__AVX2__) && defined(__FMA__)
constexpr int64_t kFmaLanes = 8;
#else
#error "bench_fused.cpp needs an x86-64 host with AVX2 and FMA (built with -march=native)"
#endif
using Vec = float __attribute__((vector_size(kFmaLanes * sizeof(float))));

}  // namespace

double peak_fma(int64_t rounds, float* sink) {
  constexpr int kAcc = 16;
  const int64_t threads = rt::num_threads();
  std::mutex mu;
  float total = 0.0f;
  rt::parallel_for(threads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      Vec acc[kAcc];
      for (int i = 0; i < kAcc; ++i) acc[i] = Vec{} + static_cast<float>(i + t) * 1e-3f;
      const Vec mul = Vec{} + 0.999999f, add = Vec{} + 1e-7f;
      for (int64_t r = 0; r < rounds; ++r) {
        for (int i = 0; i < kAcc; ++i) acc[i] = acc[i] * mul + add;
        // The accumulators pass through empty asm, so no round folds into the next.
        asm volatile("" : "+v"(acc[0]), "+v"(acc[1]), "+v"(acc[2]), "+v"(acc[3]), "+v"(acc[4]), "+v"(acc[5]),
                     "+v"(acc[6]), "+v"(acc[7]));
        asm volatile("" : "+v"(acc[8]), "+v"(acc[9]), "+v"(acc[10]), "+v"(acc[11]), "+v"(acc[12]), "+v"(acc[13]),
                     "+v"(acc[14]), "+v"(acc[15]));
      }
      Vec s = acc[0];
      for (int i = 1; i < kAcc; ++i) s = s + acc[i];
      const std::lock_guard<std::mutex> lock(mu);
      total += s[0];
    }
  });
  *sink = total;
  return 2.0 * static_cast<double>(kFmaLanes * kAcc) * static_cast<double>(rounds) * static_cast<double>(threads);
}

}  // namespace kiln::bench
