// kiln/codegen_cuda/cublaslt.h — row-major (batched) matmuls with fused bias and activation through cuBLASLt, loaded with dlopen.
//
// kiln builds and runs without the CUDA toolkit: cuBLASLt (libcublasLt.so.13) is opened on first
// use, and a machine without it is not an error until a matmul is asked of it
// (cublaslt_available() says why). No CUDA header is needed to include this. One call is one
// cublasLtMatmul on row-major operands, C[b] = epilogue(A[b] * B[b] + bias), with f32
// accumulation (f64 for f64); A and B may be row-major or transposed views (one of their two strides is 1), C
// is contiguous. Each device gets one cuBLASLt handle, created lazily on first use (thread-safe)
// and kept for the life of the process; nothing else is cached (cuBLASLt keeps its own cache of
// heuristic results). Failures, including argument errors and "no algorithm", throw
// kiln::Error("[matmul] cuBLASLt ...") naming the call, cuBLAS's status and the problem.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln::cuda {

// What runs on the result after the (optional) bias: nothing, max(x, 0), or cuBLASLt's GELU
// epilogue, the tanh approximation (PyTorch's gelu(approximate="tanh")).
enum class LtEpilogue { None, Relu, GeluTanh };

// The dtype of A, B, C and bias alike. f32, f16 and bf16 accumulate in f32 (CUBLAS_COMPUTE_32F;
// for F32 with allow_tf32, CUBLAS_COMPUTE_32F_FAST_TF32); f64 in f64 (CUBLAS_COMPUTE_64F, the
// FP64 tensor cores of an A100 or H100).
enum class LtDtype { F32, F16, BF16, F64 };

// One (batched) matmul on ROW-MAJOR operands: C[b] = A[b] (m x k) * B[b] (k x n), plus bias[n]
// broadcast over the rows (and the batch), then the epilogue.
//
// Each operand is given by element strides: a_rs / a_cs is the stride between rows / columns of
// A, and one of them must be 1 (A is row-major, or a transposed view of a row-major matrix); the
// other must be at least the extent of that dimension (no overlapping rows or columns). The
// same holds for B. The stride of a dimension of extent 1 is ignored. C is contiguous row-major
// (its row stride is n). Batch strides are in elements; 0 broadcasts an input over the batch;
// c_bs must be at least m * n when batch > 1. All pointers are device memory.
//
// batch, m, n and k must be positive (and fit in int32): an empty matmul (m, n or k == 0) is an
// error here, the caller handles it (k == 0 means C = epilogue(bias or 0)).
struct LtMatmul {
  LtDtype dtype = LtDtype::F32;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  const void* a = nullptr;
  int64_t a_rs = 0, a_cs = 1, a_bs = 0;
  const void* b = nullptr;
  int64_t b_rs = 0, b_cs = 1, b_bs = 0;
  void* c = nullptr;
  int64_t c_bs = 0;
  const void* bias = nullptr;  // optional: n elements of dtype, contiguous
  LtEpilogue epilogue = LtEpilogue::None;
  bool allow_tf32 = false;  // F32 only: TF32 tensor cores (PyTorch's allow_tf32); default exact f32
  void* workspace = nullptr;  // device memory the caller owns (may be null when workspace_bytes == 0)
  size_t workspace_bytes = 0;
  void* stream = nullptr;  // CUstream; the caller has made the device's context current
  int device = 0;          // which device's handle to use
};

// Whether libcublasLt.so.13 loaded and every entry point kiln uses is bound (no GPU needed); if
// not and `why` is given, the reason (the paths tried, or the missing symbol).
bool cublaslt_available(std::string* why = nullptr);

// cuBLASLt's version as "major.minor.patch" ("13.1.0"), or "" when it is not available.
std::string cublaslt_version();

// Runs the matmul asynchronously on p.stream, in the context current on this thread (which
// must be p.device's primary context). Throws kiln::Error "[matmul] cuBLASLt ..." for bad
// arguments, a missing library, a failing cuBLASLt call (its name, the status, the problem) or
// when the heuristic finds no algorithm for the problem within workspace_bytes.
void cublaslt_matmul(const LtMatmul& p);

}  // namespace kiln::cuda
