// kiln/runtime/cpu/blas_library.h — OpenBLAS, loaded at run time with the kernels the host can run.
//
// Debian's OpenBLAS is built with DYNAMIC_ARCH: its load-time constructor picks a kernel set
// from the CPU's family and model. On CPUs its table does not know (a VM reporting "Intel(R)
// Xeon(R) Processor", a newer AMD part), 0.3.21 falls back to Prescott's SSE3 kernels: sgemm ran
// at 35 GFLOP/s there instead of 200 with its AVX-512 kernels (bench/README.md). kiln therefore
// does not link OpenBLAS; it opens it on first use, after choosing the kernel set from the CPU's
// features (OPENBLAS_CORETYPE: SkylakeX with AVX-512F/BW/VL/DQ, Haswell with AVX2 and FMA). A
// user's own OPENBLAS_CORETYPE is respected, and an OpenBLAS already loaded into the process
// (by numpy, say) is used as it is.
#pragma once

#include <string>

namespace kiln::rt {

// The few CBLAS entry points kiln calls, with CBLAS's ABI enums (row-major 101, transposes
// 111/112).
struct BlasLibrary {
  using Sgemm = void (*)(int order, int ta, int tb, int m, int n, int k, float alpha, const float* a, int lda,
                         const float* b, int ldb, float beta, float* c, int ldc);
  using Dgemm = void (*)(int order, int ta, int tb, int m, int n, int k, double alpha, const double* a, int lda,
                         const double* b, int ldb, double beta, double* c, int ldc);
  static constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

  Sgemm sgemm = nullptr;
  Dgemm dgemm = nullptr;
  std::string core;  // the kernel set OpenBLAS runs ("SkylakeX", "Haswell", ...)
};

// The loaded library, single-threaded: kiln's pool runs products in parallel
// (runtime/cpu/parallel_gemm.h). Throws kiln::Error naming the
// library and dlopen's message when OpenBLAS cannot be loaded.
const BlasLibrary& blas();

// The OPENBLAS_CORETYPE kiln would choose for this CPU, or "" to leave OpenBLAS's own choice.
std::string blas_core_for_host();

}  // namespace kiln::rt
