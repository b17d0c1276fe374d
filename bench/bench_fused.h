// kiln/bench/bench_fused.h — hand-written fused C++ loops: the practical limit for each workload.
//
// Each function computes one bench workload directly on raw float buffers, in one pass where
// the math allows, parallelized with kiln's own rt::parallel_for so that it uses exactly the
// thread count kiln uses (KILN_NUM_THREADS). bench_fused.cpp is compiled with -O3
// -march=native -ffast-math (vectorized tanhf/expf from libmvec, reassociated reductions): it
// is what a careful programmer would write by hand for this machine. Matmuls call OpenBLAS's
// cblas_sgemm directly (the library baseline); stream_copy is the STREAM "copy" kernel and
// stream_read a pure read; peak_fma the host's multiply-add limit.
#pragma once

#include <cstdint>

namespace kiln::bench {

// out = a / (|a| + 1) * b, n elements.
void fused_pointwise(const float* a, const float* b, float* out, int64_t n);
// out[r, c] = gelu_tanh(x[r, c] + bias[c]).
void fused_gelu_bias(const float* x, const float* bias, float* out, int64_t rows, int64_t cols);
// Softmax over each row.
void fused_softmax(const float* x, float* out, int64_t rows, int64_t cols);
// Layer norm over each row with weight and bias (eps 1e-5, biased variance).
void fused_layer_norm(const float* x, const float* w, const float* b, float* out, int64_t rows, int64_t cols);
// RMS norm over each row with weight (eps = FLT_EPSILON, as kiln/torch default for f32).
void fused_rms_norm(const float* x, const float* w, float* out, int64_t rows, int64_t cols);
// Sum of all n elements (float accumulation per thread, partials combined in order).
float fused_sum_all(const float* x, int64_t n);
// out[c] = sum over r of x[r, c].
void fused_col_sum(const float* x, float* out, int64_t rows, int64_t cols);
// Mean cross entropy of logits [rows, cols] against int64 class indices.
float fused_cross_entropy(const float* logits, const int64_t* target, int64_t rows, int64_t cols);

// out = zeros [rows, cols]; out[index[k], :] += src[k, :] for k < n, in order (index_add along
// dim 0: an embedding's backward). Threads split the columns, each walking every k.
void fused_index_add_rows(const float* src, const int64_t* index, float* out, int64_t n, int64_t rows, int64_t cols);

// c[M, N] = a[M, K] @ b[K, N] (row-major) with cblas_sgemm.
void blas_matmul(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k);
// out[M, N] = relu(x[M, K] @ w[N, K]^T + bias[N]): one sgemm and one fused epilogue pass.
void fused_linear_bias_relu(const float* x, const float* w, const float* bias, float* out, int64_t m, int64_t n,
                            int64_t k);
// out[M, N] = x[M, K] @ w[N, K]^T + bias[N].
void fused_linear_bias(const float* x, const float* w, const float* bias, float* out, int64_t m, int64_t n, int64_t k);

// STREAM copy: dst = src, n floats, split over the pool's threads.
void stream_copy(const float* src, float* dst, int64_t n);
// The STREAM-style "read" kernel: every 32-bit word of x or-ed together (no arithmetic to wait
// on, so the loop runs at the rate memory delivers), split among the pool's threads, each chunk
// read as four streams in step.
uint32_t stream_read(const uint32_t* x, int64_t n);
// The host's peak f32 multiply-add rate: every pool thread runs `rounds` rounds of 16
// independent vector FMAs in registers, in this build's widest vectors (-march=native: 16 lanes
// on AVX-512, 8 on AVX2). Returns the floating-point operations done (2 per lane per FMA);
// `sink` receives a value that depends on all of them.
double peak_fma(int64_t rounds, float* sink);

}  // namespace kiln::bench
