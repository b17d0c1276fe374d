// kiln/test/emulated_cuda/fake_cudnn.cpp — an emulated cuDNN (libcudnn.so.9): convolutions on the host.
//
// The calls kiln binds (codegen_cuda/cudnn.cpp), computed as cuDNN documents them
// (cudnn_cnn.h): N-d cross-correlation of an NC... tensor with strides by a packed filter
// [K, C/groups, ...], with padding, stride, dilation and groups (output channel k reads the input
// channels of its group, k / (K / groups)); the forward pass y = alpha conv(x, w) + beta y, and
// the backward data pass dx = alpha conv^T(dy, w) + beta dx (each dy element spread over the
// inputs it read). f32, f64, f16 and bf16, accumulated in double and rounded once; f32 operands
// rounded to TF32 first when the convolution's math type allows tensor cores. The algorithm
// queries offer one algorithm that needs no workspace, with FMA math (what kiln asks of f32
// without TF32). Device memory is host memory on the emulated device. Test infrastructure.
#include "include/cuda_bf16.h"
#include "include/cuda_fp16.h"
#include "emu_stream_work.h"
#include "emu_tf32.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

using Status = int;
constexpr Status kSuccess = 0, kBadParam = 3, kNotSupported = 9;
constexpr int kFloat = 0, kDouble = 1, kHalf = 2, kBfloat16 = 9;

struct Tensor {
  int type = kFloat;
  std::vector<int> dims, strides;
};
struct Filter {
  int type = kFloat;
  std::vector<int> dims;  // packed: strides follow
};
struct Conv {
  std::vector<int> pad, stride, dilation;
  int groups = 1;
  int math = 0;
};
struct AlgoPerf {
  int algo;
  Status status;
  float time;
  size_t memory;
  int determinism;
  int math_type;
  int reserved[3];
};
static_assert(sizeof(AlgoPerf) == 48, "cudnnConvolutionFwdAlgoPerf_t");

double get(const void* p, int type, int64_t i) {
  switch (type) {
    case kFloat: return static_cast<const float*>(p)[i];
    case kDouble: return static_cast<const double*>(p)[i];
    case kHalf: return __half2float(static_cast<const __half*>(p)[i]);
    default: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
  }
}

void put(void* p, int type, int64_t i, double v) {
  switch (type) {
    case kFloat: static_cast<float*>(p)[i] = static_cast<float>(v); return;
    case kDouble: static_cast<double*>(p)[i] = v; return;
    case kHalf: static_cast<__half*>(p)[i] = __float2half_rn(static_cast<float>(v)); return;
    default: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(static_cast<float>(v)); return;
  }
}

// The operands' product as the convolution's math type has it computed.
double product(const Conv& cv, int type, double a, double b) {
  return type == kFloat && (cv.math == 1 || cv.math == 2) ? kiln_emu::tf32(a) * kiln_emu::tf32(b) : a * b;
}

double scalar(const void* p, int type) { return type == kDouble ? *static_cast<const double*>(p) : *static_cast<const float*>(p); }

// Visits every (n, k, output position) of y and, for each, every (c, filter position) whose input
// position is inside x: f(y offset, x offset, w offset).
template <class F> void each_tap(const Tensor& x, const Filter& w, const Conv& cv, const Tensor& y, F f) {
  const size_t sp = x.dims.size() - 2;
  const int K = w.dims[0], Cg = w.dims[1], Kg = K / cv.groups;
  std::vector<int64_t> wstride(w.dims.size(), 1);
  for (size_t d = w.dims.size() - 1; d-- > 0;) wstride[d] = wstride[d + 1] * w.dims[d + 1];
  std::vector<int> o(sp), r(sp);
  for (int n = 0; n < y.dims[0]; ++n)
    for (int k = 0; k < K; ++k) {
      const int g = k / Kg;
      std::fill(o.begin(), o.end(), 0);
      for (bool more_o = true; more_o;) {
        int64_t yo = static_cast<int64_t>(n) * y.strides[0] + static_cast<int64_t>(k) * y.strides[1];
        for (size_t d = 0; d < sp; ++d) yo += static_cast<int64_t>(o[d]) * y.strides[d + 2];
        for (int c = 0; c < Cg; ++c) {
          std::fill(r.begin(), r.end(), 0);
          for (bool more_r = true; more_r;) {
            bool inside = true;
            int64_t xo = static_cast<int64_t>(n) * x.strides[0] + static_cast<int64_t>(g * Cg + c) * x.strides[1];
            int64_t wo = static_cast<int64_t>(k) * wstride[0] + static_cast<int64_t>(c) * wstride[1];
            for (size_t d = 0; d < sp; ++d) {
              const int i = o[d] * cv.stride[d] - cv.pad[d] + r[d] * cv.dilation[d];
              inside = inside && i >= 0 && i < x.dims[d + 2];
              xo += static_cast<int64_t>(i) * x.strides[d + 2];
              wo += static_cast<int64_t>(r[d]) * wstride[d + 2];
            }
            if (inside) f(yo, xo, wo);
            more_r = false;
            for (size_t d = sp; d-- > 0;)
              if (++r[d] < w.dims[d + 2]) {
                more_r = true;
                break;
              } else r[d] = 0;
          }
        }
        more_o = false;
        for (size_t d = sp; d-- > 0;)
          if (++o[d] < y.dims[d + 2]) {
            more_o = true;
            break;
          } else o[d] = 0;
      }
    }
}

// Every element offset of a strided tensor, in index order.
std::vector<int64_t> offsets(const Tensor& t) {
  std::vector<int64_t> out{0};
  for (size_t d = 0; d < t.dims.size(); ++d) {
    std::vector<int64_t> next;
    next.reserve(out.size() * static_cast<size_t>(t.dims[d]));
    for (int64_t base : out)
      for (int i = 0; i < t.dims[d]; ++i) next.push_back(base + static_cast<int64_t>(i) * t.strides[d]);
    out.swap(next);
  }
  return out;
}

// out = a * sums + b * out over the elements of `t`: `sum` adds into a buffer indexed by
// element offset (distinct for the tensors kiln describes: no broadcast output).
template <class F> void blend_scaled(const Tensor& t, void* out, double a, double b, F sum) {
  const std::vector<int64_t> offs = offsets(t);
  int64_t top = 0;
  for (int64_t o : offs) top = o > top ? o : top;
  std::vector<double> acc(static_cast<size_t>(top + 1), 0.0);
  sum(acc);
  for (int64_t o : offs) put(out, t.type, o, a * acc[static_cast<size_t>(o)] + (b != 0 ? b * get(out, t.type, o) : 0.0));
}

bool consistent(const Tensor& x, const Filter& w, const Conv& cv, const Tensor& y) {
  const size_t sp = x.dims.size() - 2;
  if (x.dims.size() < 3 || w.dims.size() != x.dims.size() || y.dims.size() != x.dims.size() || cv.pad.size() != sp)
    return false;
  if (x.type != w.type || y.type != w.type || cv.groups < 1 || w.dims[0] % cv.groups != 0 ||
      x.dims[1] != w.dims[1] * cv.groups || y.dims[1] != w.dims[0] || y.dims[0] != x.dims[0])
    return false;
  for (size_t d = 0; d < sp; ++d) {
    const int span = cv.dilation[d] * (w.dims[d + 2] - 1) + 1;
    if (y.dims[d + 2] != (x.dims[d + 2] + 2 * cv.pad[d] - span) / cv.stride[d] + 1) return false;
  }
  return true;
}

}  // namespace

extern "C" {

size_t cudnnGetVersion() { return 90000; }
const char* cudnnGetErrorString(Status s) { return s == kSuccess ? "CUDNN_STATUS_SUCCESS" : "emulated cuDNN error"; }
// A handle is the stream its calls run on (cudnnSetStream), kept in a pointer-sized cell.
Status cudnnCreate(int** h) {
  *h = reinterpret_cast<int*>(new void*(nullptr));
  return kSuccess;
}
Status cudnnSetStream(int* h, void* stream) {
  *reinterpret_cast<void**>(h) = stream;
  return kSuccess;
}
Status cudnnCreateTensorDescriptor(Tensor** t) {
  *t = new Tensor;
  return kSuccess;
}
Status cudnnSetTensorNdDescriptor(Tensor* t, int type, int nd, const int* dims, const int* strides) {
  if (nd != 4 && nd != 5) return kNotSupported;  // cuDNN's convolutions take 4-d and 5-d tensors
  t->type = type;
  t->dims.assign(dims, dims + nd);
  t->strides.assign(strides, strides + nd);
  return kSuccess;
}
Status cudnnDestroyTensorDescriptor(Tensor* t) {
  delete t;
  return kSuccess;
}
Status cudnnCreateFilterDescriptor(Filter** f) {
  *f = new Filter;
  return kSuccess;
}
Status cudnnSetFilterNdDescriptor(Filter* f, int type, int format, int nd, const int* dims) {
  if (format != 0) return kNotSupported;  // NCHW only
  f->type = type;
  f->dims.assign(dims, dims + nd);
  return kSuccess;
}
Status cudnnDestroyFilterDescriptor(Filter* f) {
  delete f;
  return kSuccess;
}
Status cudnnCreateConvolutionDescriptor(Conv** c) {
  *c = new Conv;
  return kSuccess;
}
Status cudnnSetConvolutionNdDescriptor(Conv* c, int n, const int* pad, const int* stride, const int* dilation, int mode,
                                       int) {
  if (mode != 1) return kNotSupported;  // cross-correlation only
  c->pad.assign(pad, pad + n);
  c->stride.assign(stride, stride + n);
  c->dilation.assign(dilation, dilation + n);
  return kSuccess;
}
Status cudnnSetConvolutionGroupCount(Conv* c, int groups) {
  c->groups = groups;
  return kSuccess;
}
Status cudnnSetConvolutionMathType(Conv* c, int math) {
  c->math = math;
  return kSuccess;
}
Status cudnnDestroyConvolutionDescriptor(Conv* c) {
  delete c;
  return kSuccess;
}
Status one_algorithm(int requested, int* returned, AlgoPerf* perf) {
  if (requested < 1) return kBadParam;
  std::memset(perf, 0, sizeof *perf);
  perf->math_type = 3;  // CUDNN_FMA_MATH
  *returned = 1;
  return kSuccess;
}
Status cudnnGetConvolutionForwardAlgorithm_v7(int*, Tensor*, Filter*, Conv*, Tensor*, int requested, int* returned,
                                              AlgoPerf* perf) {
  return one_algorithm(requested, returned, perf);
}
Status cudnnGetConvolutionBackwardDataAlgorithm_v7(int*, Filter*, Tensor*, Conv*, Tensor*, int requested, int* returned,
                                                   AlgoPerf* perf) {
  return one_algorithm(requested, returned, perf);
}
// Both run on the handle's stream with copies of their descriptors and scalars, as the
// library's kernels would (a capture records them).
Status cudnnConvolutionForward(int* h, const void* alpha, Tensor* xd, const void* x, Filter* wd, const void* w, Conv* cv,
                               int, void*, size_t, const void* beta, Tensor* yd, void* y) {
  if (!consistent(*xd, *wd, *cv, *yd)) return kBadParam;
  const Tensor xv = *xd, yv = *yd;
  const Filter wv = *wd;
  const Conv cvv = *cv;
  const double a = scalar(alpha, yv.type), b = scalar(beta, yv.type);
  kiln_emu::stream_work(*reinterpret_cast<void**>(h), [=] {
    blend_scaled(yv, y, a, b, [&](std::vector<double>& acc) {
      each_tap(xv, wv, cvv, yv, [&](int64_t yo, int64_t xo, int64_t wo) {
        acc[static_cast<size_t>(yo)] += product(cvv, xv.type, get(x, xv.type, xo), get(w, wv.type, wo));
      });
    });
  });
  return kSuccess;
}
Status cudnnConvolutionBackwardData(int* h, const void* alpha, Filter* wd, const void* w, Tensor* dyd, const void* dy,
                                    Conv* cv, int, void*, size_t, const void* beta, Tensor* dxd, void* dx) {
  if (!consistent(*dxd, *wd, *cv, *dyd)) return kBadParam;
  const Tensor dxv = *dxd, dyv = *dyd;
  const Filter wv = *wd;
  const Conv cvv = *cv;
  const double a = scalar(alpha, dxv.type), b = scalar(beta, dxv.type);
  kiln_emu::stream_work(*reinterpret_cast<void**>(h), [=] {
    blend_scaled(dxv, dx, a, b, [&](std::vector<double>& acc) {
      each_tap(dxv, wv, cvv, dyv, [&](int64_t yo, int64_t xo, int64_t wo) {
        acc[static_cast<size_t>(xo)] += product(cvv, dyv.type, get(dy, dyv.type, yo), get(w, wv.type, wo));
      });
    });
  });
  return kSuccess;
}

}  // extern "C"
