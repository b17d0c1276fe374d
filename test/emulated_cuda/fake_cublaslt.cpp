// kiln/test/emulated_cuda/fake_cublaslt.cpp — an emulated cuBLASLt (libcublasLt.so.13): matrix products on the host.
//
// The calls kiln binds (codegen_cuda/cublaslt.cpp), computed as cuBLASLt documents them
// (cublasLt.h): matrices are column-major (element (r, c) of a layout at r + c * ld), with a
// batch count and a strided batch offset; D = alpha op(A) op(B) + beta C, op transposing when
// TRANSA/TRANSB say; the BIAS epilogue adds bias[r] to row r of D, then RELU (max with 0) or
// GELU (the tanh form) applies. f32, f16 and bf16 operands, computed in double and rounded
// once to D's type (the library accumulates in f32: within every tolerance the tests use), and
// f64 operands with the 64F compute type and f64 alpha and beta, summed in double; with
// the TF32 compute type, f32 operands are first rounded to TF32 as tensor cores read them.
// Device memory is host memory on the emulated device (fake_cuda.cpp), so the pointers are read
// directly. Test infrastructure, beside the emulated driver.
#include "include/cuda_bf16.h"
#include "include/cuda_fp16.h"
#include "emu_stream_work.h"
#include "emu_tf32.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace {

using Status = int;
constexpr Status kSuccess = 0, kInvalidValue = 7, kNotSupported = 15;
constexpr int kR32F = 0, kR64F = 1, kR16F = 2, kR16BF = 14;
constexpr int kCompute32F = 68, kCompute64F = 70, kCompute32FFastTF32 = 77;

struct Layout {
  int type = kR32F;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int32_t batch = 1;
  int64_t batch_stride = 0;
};
struct Desc {
  bool tf32 = false;  // CUBLAS_COMPUTE_32F_FAST_TF32: f32 operands rounded to 10 mantissa bits
  bool f64 = false;   // CUBLAS_COMPUTE_64F: f64 operands, alpha and beta
  int32_t trans_a = 0, trans_b = 0;
  uint32_t epilogue = 1;
  const void* bias = nullptr;
};
struct Handle {
  int token = 0;
};
struct Pref {
  uint64_t workspace = 0;
};

double get(const void* base, int type, int64_t i) {
  if (type == kR64F) return static_cast<const double*>(base)[i];
  if (type == kR32F) return static_cast<const float*>(base)[i];
  if (type == kR16F) return __half2float(static_cast<const __half*>(base)[i]);
  return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[i]);
}

void put(void* base, int type, int64_t i, double v) {
  if (type == kR64F) {
    static_cast<double*>(base)[i] = v;
    return;
  }
  const float f = static_cast<float>(v);
  if (type == kR32F) static_cast<float*>(base)[i] = f;
  else if (type == kR16F) static_cast<__half*>(base)[i] = __float2half_rn(f);
  else static_cast<__nv_bfloat16*>(base)[i] = __float2bfloat16_rn(f);
}

// Element (r, c) of op(X) for a layout stored column-major, transposed when `trans`.
double at(const void* base, const Layout& l, bool trans, int64_t batch, uint64_t r, uint64_t c) {
  const uint64_t rr = trans ? c : r, cc = trans ? r : c;
  return get(base, l.type, batch * l.batch_stride + static_cast<int64_t>(rr) + static_cast<int64_t>(cc) * l.ld);
}

}  // namespace

extern "C" {

size_t cublasLtGetVersion() { return 130000; }
const char* cublasLtGetStatusString(Status s) { return s == kSuccess ? "success (emulated)" : "emulated cuBLASLt error"; }
Status cublasLtCreate(Handle** h) {
  *h = new Handle;
  return kSuccess;
}
Status cublasLtDestroy(Handle* h) {
  delete h;
  return kSuccess;
}
Status cublasLtMatmulDescCreate(Desc** d, int compute, int scale) {
  const bool f32 = (compute == kCompute32F || compute == kCompute32FFastTF32) && scale == kR32F;
  if (!f32 && !(compute == kCompute64F && scale == kR64F)) return kNotSupported;
  *d = new Desc;
  (*d)->tf32 = compute == kCompute32FFastTF32;
  (*d)->f64 = compute == kCompute64F;
  return kSuccess;
}
Status cublasLtMatmulDescDestroy(Desc* d) {
  delete d;
  return kSuccess;
}
Status cublasLtMatmulDescSetAttribute(Desc* d, int attr, const void* v, size_t n) {
  switch (attr) {
    case 3: if (n != 4) return kInvalidValue; std::memcpy(&d->trans_a, v, 4); return kSuccess;
    case 4: if (n != 4) return kInvalidValue; std::memcpy(&d->trans_b, v, 4); return kSuccess;
    case 7: if (n != 4) return kInvalidValue; std::memcpy(&d->epilogue, v, 4); return kSuccess;
    case 8: if (n != sizeof(void*)) return kInvalidValue; std::memcpy(&d->bias, v, sizeof(void*)); return kSuccess;
    default: return kNotSupported;
  }
}
Status cublasLtMatrixLayoutCreate(Layout** l, int type, uint64_t rows, uint64_t cols, int64_t ld) {
  if (type != kR32F && type != kR64F && type != kR16F && type != kR16BF) return kNotSupported;
  if (ld < static_cast<int64_t>(rows > 0 ? rows : 1)) return kInvalidValue;  // column-major: ld >= rows
  *l = new Layout{type, rows, cols, ld, 1, 0};
  return kSuccess;
}
Status cublasLtMatrixLayoutDestroy(Layout* l) {
  delete l;
  return kSuccess;
}
Status cublasLtMatrixLayoutSetAttribute(Layout* l, int attr, const void* v, size_t n) {
  if (attr == 5 && n == 4) return std::memcpy(&l->batch, v, 4), kSuccess;
  if (attr == 6 && n == 8) return std::memcpy(&l->batch_stride, v, 8), kSuccess;
  return kNotSupported;
}
Status cublasLtMatmulPreferenceCreate(Pref** p) {
  *p = new Pref;
  return kSuccess;
}
Status cublasLtMatmulPreferenceDestroy(Pref* p) {
  delete p;
  return kSuccess;
}
Status cublasLtMatmulPreferenceSetAttribute(Pref* p, int attr, const void* v, size_t n) {
  if (attr == 1 && n == 8) std::memcpy(&p->workspace, v, 8);
  return kSuccess;
}
struct HeuristicResult {
  uint64_t algo[8];
  size_t workspace;
  Status state;
  float waves;
  int reserved[4];
};
Status cublasLtMatmulAlgoGetHeuristic(Handle*, Desc*, Layout*, Layout*, Layout*, Layout*, Pref*, int requested,
                                      HeuristicResult* out, int* found) {
  if (requested < 1) return kInvalidValue;
  std::memset(out, 0, sizeof *out);
  out->waves = 1.0f;
  *found = 1;
  return kSuccess;
}
Status cublasLtMatmul(Handle*, Desc* dp, const void* alpha_p, const void* A, Layout* lap, const void* B, Layout* lbp,
                      const void* beta_p, const void* C, Layout* lcp, void* D, Layout* ldp, const void*, void*, size_t,
                      void* stream) {
  const Desc dd = *dp;
  const Layout la_v = *lap, lb_v = *lbp, lc_v = *lcp, ld_v = *ldp;
  const Desc* d = &dd;
  const Layout *la = &la_v, *lb = &lb_v, *lc = &lc_v, *ld = &ld_v;
  const bool ta = d->trans_a != 0, tb = d->trans_b != 0;
  const uint64_t m = ld->rows, n = ld->cols, k = ta ? la->rows : la->cols;
  // The shapes must agree as cuBLASLt checks them.
  if ((ta ? la->cols : la->rows) != m || (tb ? lb->cols : lb->rows) != k || (tb ? lb->rows : lb->cols) != n ||
      lc->rows != m || lc->cols != n)
    return kInvalidValue;
  if (la->batch != ld->batch || lb->batch != ld->batch || lc->batch != ld->batch) return kInvalidValue;
  // The 64F compute type takes f64 operands only, and the others none.
  for (const Layout* l : {la, lb, lc, ld})
    if ((l->type == kR64F) != d->f64) return kNotSupported;
  double alpha = 0, beta = 0;
  if (d->f64) {
    std::memcpy(&alpha, alpha_p, 8);
    std::memcpy(&beta, beta_p, 8);
  } else {
    float a32 = 0, b32 = 0;
    std::memcpy(&a32, alpha_p, 4);
    std::memcpy(&b32, beta_p, 4);
    alpha = a32;
    beta = b32;
  }
  const uint32_t ep = d->epilogue;
  const bool bias = ep == 4 || ep == 6 || ep == 36, relu = ep == 2 || ep == 6, gelu = ep == 32 || ep == 36;
  if (bias && !d->bias) return kInvalidValue;
  // The product on the stream, as the library's kernels run (a capture records it).
  kiln_emu::stream_work(stream, [=] {
    for (int64_t b = 0; b < ld_v.batch; ++b)
      for (uint64_t c = 0; c < n; ++c)
        for (uint64_t r = 0; r < m; ++r) {
          double s = 0;
          for (uint64_t p = 0; p < k; ++p) {
            const double x = at(A, la_v, ta, b, r, p), y = at(B, lb_v, tb, b, p, c);
            s += dd.tf32 && la_v.type == kR32F ? kiln_emu::tf32(x) * kiln_emu::tf32(y) : x * y;
          }
          double v = alpha * s;
          if (beta != 0) v += beta * at(C, lc_v, false, b, r, c);
          if (bias) v += get(dd.bias, ld_v.type, static_cast<int64_t>(r));
          if (relu) v = v > 0 ? v : 0;  // cuBLASLt's RELU: a NaN gives 0
          if (gelu) v = 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
          put(D, ld_v.type, b * ld_v.batch_stride + static_cast<int64_t>(r) + static_cast<int64_t>(c) * ld_v.ld, v);
        }
  });
  return kSuccess;
}

}  // extern "C"
