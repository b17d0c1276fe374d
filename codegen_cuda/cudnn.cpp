// kiln/codegen_cuda/cudnn.cpp — dlopen-based cuDNN loader and the convolution calls (cudnn.h).
//
// The cuDNN entry points kiln uses are declared here as function-pointer types, with the few
// types and constants they need (each cited from cuDNN 9's cudnn_graph.h, cudnn_ops.h or
// cudnn_cnn.h; the legacy descriptor API, which cuDNN 9 keeps). libcudnn.so.9 is the shim that
// opens cuDNN's sub-libraries itself. Loading happens once per process; the library and the
// per-device handles stay for its life.
//
// The algorithm is cuDNN's own heuristic choice (cudnnGetConvolution*Algorithm_v7): the first
// result that succeeded, whose math type is allowed (FMA only for f32 unless TF32 is allowed, as
// PyTorch's allow_tf32), with the workspace it asks for; it is remembered per problem.
#include "codegen_cuda/cudnn.h"

#include "base/dl_symbol.h"
#include "base/error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <dlfcn.h>

#include <limits>
#include <mutex>
#include <string>
#include <unordered_map>

namespace kiln::cuda {

namespace {

// ---- cuDNN's C API, as far as kiln uses it (enums are int-sized in the C ABI) --------------
using cudnnStatus_t = int;  // 0 = CUDNN_STATUS_SUCCESS
struct DnnContext;
struct DnnTensorStruct;
struct DnnFilterStruct;
struct DnnConvStruct;
using cudnnHandle_t = DnnContext*;
using cudnnTensorDescriptor_t = DnnTensorStruct*;
using cudnnFilterDescriptor_t = DnnFilterStruct*;
using cudnnConvolutionDescriptor_t = DnnConvStruct*;

struct AlgoPerf {  // cudnnConvolutionFwdAlgoPerf_t and cudnnConvolutionBwdDataAlgoPerf_t alike
  int algo;
  cudnnStatus_t status;
  float time;
  size_t memory;
  int determinism;
  int math_type;
  int reserved[3];
};
static_assert(sizeof(AlgoPerf) == 48, "cudnnConvolutionFwdAlgoPerf_t's layout (cudnn_cnn.h)");

constexpr cudnnStatus_t kSuccess = 0;
// cudnnDataType_t
constexpr int kDataFloat = 0, kDataDouble = 1, kDataHalf = 2, kDataBfloat16 = 9;
constexpr int kTensorNchw = 0;         // cudnnTensorFormat_t CUDNN_TENSOR_NCHW
constexpr int kCrossCorrelation = 1;   // cudnnConvolutionMode_t CUDNN_CROSS_CORRELATION
// cudnnMathType_t
constexpr int kMathDefault = 0, kMathTensorOp = 1, kMathTensorOpAllowConversion = 2, kMathFma = 3;

using CreateFn = cudnnStatus_t (*)(cudnnHandle_t*);
using SetStreamFn = cudnnStatus_t (*)(cudnnHandle_t, void*);
using ErrorStringFn = const char* (*)(cudnnStatus_t);
using VersionFn = size_t (*)();
using CreateTensorFn = cudnnStatus_t (*)(cudnnTensorDescriptor_t*);
using SetTensorFn = cudnnStatus_t (*)(cudnnTensorDescriptor_t, int, int, const int*, const int*);
using DestroyTensorFn = cudnnStatus_t (*)(cudnnTensorDescriptor_t);
using CreateFilterFn = cudnnStatus_t (*)(cudnnFilterDescriptor_t*);
using SetFilterFn = cudnnStatus_t (*)(cudnnFilterDescriptor_t, int, int, int, const int*);
using DestroyFilterFn = cudnnStatus_t (*)(cudnnFilterDescriptor_t);
using CreateConvFn = cudnnStatus_t (*)(cudnnConvolutionDescriptor_t*);
using SetConvFn = cudnnStatus_t (*)(cudnnConvolutionDescriptor_t, int, const int*, const int*, const int*, int, int);
using SetGroupsFn = cudnnStatus_t (*)(cudnnConvolutionDescriptor_t, int);
using SetMathFn = cudnnStatus_t (*)(cudnnConvolutionDescriptor_t, int);
using DestroyConvFn = cudnnStatus_t (*)(cudnnConvolutionDescriptor_t);
using FwdAlgoFn = cudnnStatus_t (*)(cudnnHandle_t, cudnnTensorDescriptor_t, cudnnFilterDescriptor_t,
                                    cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t, int, int*, AlgoPerf*);
using BwdDataAlgoFn = cudnnStatus_t (*)(cudnnHandle_t, cudnnFilterDescriptor_t, cudnnTensorDescriptor_t,
                                        cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t, int, int*, AlgoPerf*);
using ForwardFn = cudnnStatus_t (*)(cudnnHandle_t, const void*, cudnnTensorDescriptor_t, const void*,
                                    cudnnFilterDescriptor_t, const void*, cudnnConvolutionDescriptor_t, int, void*,
                                    size_t, const void*, cudnnTensorDescriptor_t, void*);
using BackwardDataFn = cudnnStatus_t (*)(cudnnHandle_t, const void*, cudnnFilterDescriptor_t, const void*,
                                         cudnnTensorDescriptor_t, const void*, cudnnConvolutionDescriptor_t, int,
                                         void*, size_t, const void*, cudnnTensorDescriptor_t, void*);

constexpr const char* kLibraryCandidates[] = {
    "libcudnn.so.9",
    "/usr/local/cuda/lib64/libcudnn.so.9",
    "/usr/local/cuda/targets/x86_64-linux/lib/libcudnn.so.9",
};

struct Dnn {
  std::string error;  // empty when usable
  size_t version = 0;  // cudnnGetVersion(): major * 10000 + minor * 100 + patch (cuDNN 9)
  CreateFn create = nullptr;
  SetStreamFn set_stream = nullptr;
  ErrorStringFn error_string = nullptr;
  CreateTensorFn create_tensor = nullptr;
  SetTensorFn set_tensor = nullptr;
  DestroyTensorFn destroy_tensor = nullptr;
  CreateFilterFn create_filter = nullptr;
  SetFilterFn set_filter = nullptr;
  DestroyFilterFn destroy_filter = nullptr;
  CreateConvFn create_conv = nullptr;
  SetConvFn set_conv = nullptr;
  SetGroupsFn set_groups = nullptr;
  SetMathFn set_math = nullptr;
  DestroyConvFn destroy_conv = nullptr;
  FwdAlgoFn forward_algos = nullptr;
  BwdDataAlgoFn backward_data_algos = nullptr;
  ForwardFn forward = nullptr;
  BackwardDataFn backward_data = nullptr;
  std::unordered_map<int, cudnnHandle_t> handles;  // per device (guarded by mu)
  std::unordered_map<std::string, AlgoPerf> chosen;  // by describe_problem() (guarded by mu)
  std::mutex mu;  // the handles map, and a call's use of a handle

  std::string describe(cudnnStatus_t s) const {
    const char* text = error_string ? error_string(s) : nullptr;
    return text ? fmt::format("{} ({})", text, s) : fmt::format("cuDNN status {}", s);
  }
};

Dnn* load() {
  auto* d = new Dnn();  // never destroyed: convolutions may run during static destruction
  std::string tried;
  void* lib = dlopen_first(kLibraryCandidates, tried);
  if (!lib) {
    d->error = "cuDNN is not available (libcudnn.so.9 could not be loaded):" + tried;
    return d;
  }
  const char* so = "libcudnn.so.9";
  std::string& e = d->error;
  VersionFn get_version = nullptr;
  bind_symbol(lib, so, "cudnnGetVersion", get_version, e);
  bind_symbol(lib, so, "cudnnCreate", d->create, e);
  bind_symbol(lib, so, "cudnnSetStream", d->set_stream, e);
  bind_symbol(lib, so, "cudnnGetErrorString", d->error_string, e);
  bind_symbol(lib, so, "cudnnCreateTensorDescriptor", d->create_tensor, e);
  bind_symbol(lib, so, "cudnnSetTensorNdDescriptor", d->set_tensor, e);
  bind_symbol(lib, so, "cudnnDestroyTensorDescriptor", d->destroy_tensor, e);
  bind_symbol(lib, so, "cudnnCreateFilterDescriptor", d->create_filter, e);
  bind_symbol(lib, so, "cudnnSetFilterNdDescriptor", d->set_filter, e);
  bind_symbol(lib, so, "cudnnDestroyFilterDescriptor", d->destroy_filter, e);
  bind_symbol(lib, so, "cudnnCreateConvolutionDescriptor", d->create_conv, e);
  bind_symbol(lib, so, "cudnnSetConvolutionNdDescriptor", d->set_conv, e);
  bind_symbol(lib, so, "cudnnSetConvolutionGroupCount", d->set_groups, e);
  bind_symbol(lib, so, "cudnnSetConvolutionMathType", d->set_math, e);
  bind_symbol(lib, so, "cudnnDestroyConvolutionDescriptor", d->destroy_conv, e);
  bind_symbol(lib, so, "cudnnGetConvolutionForwardAlgorithm_v7", d->forward_algos, e);
  bind_symbol(lib, so, "cudnnGetConvolutionBackwardDataAlgorithm_v7", d->backward_data_algos, e);
  bind_symbol(lib, so, "cudnnConvolutionForward", d->forward, e);
  bind_symbol(lib, so, "cudnnConvolutionBackwardData", d->backward_data, e);
  if (!e.empty()) return d;
  d->version = get_version();
  return d;
}

Dnn& dnn() {
  static Dnn* d = load();
  return *d;
}

const char* dtype_name(DnnDtype t) {
  switch (t) {
    case DnnDtype::F32: return "f32";
    case DnnDtype::F64: return "f64";
    case DnnDtype::F16: return "f16";
    case DnnDtype::BF16: return "bf16";
  }
  return "?";
}

int data_type(DnnDtype t) {
  switch (t) {
    case DnnDtype::F32: return kDataFloat;
    case DnnDtype::F64: return kDataDouble;
    case DnnDtype::F16: return kDataHalf;
    case DnnDtype::BF16: return kDataBfloat16;
  }
  return kDataFloat;
}

std::string describe_problem(const DnnConv& p) {
  return fmt::format("{} {}: x {} strides {}, w {}, y {} strides {}, padding {}, stride {}, dilation {}, groups {}{}, cuda:{}",
                     p.direction == DnnConv::Direction::Forward ? "forward" : "backward data", dtype_name(p.dtype),
                     p.x_sizes, p.x_strides, p.w_sizes, p.y_sizes, p.y_strides, p.padding, p.stride, p.dilation,
                     p.groups, p.dtype == DnnDtype::F32 && p.allow_tf32 ? ", tf32" : "", p.device);
}

std::vector<int> as_ints(const std::vector<int64_t>& v, const DnnConv& p) {
  std::vector<int> out;
  for (int64_t x : v) {
    if (x < 0 || x > std::numeric_limits<int>::max())
      fail("convolution", "cuDNN: a size, stride or geometry value {} does not fit in int32 ({})", x, describe_problem(p));
    out.push_back(static_cast<int>(x));
  }
  return out;
}

void validate(const DnnConv& p) {
  const size_t r = p.x_sizes.size();
  if (r < 4 || r > 5 || p.w_sizes.size() != r || p.y_sizes.size() != r || p.x_strides.size() != r ||
      p.y_strides.size() != r || p.padding.size() != r - 2 || p.stride.size() != r - 2 || p.dilation.size() != r - 2)
    fail("convolution", "cuDNN: expected tensors of 4 or 5 dims and geometry for each spatial dim ({})", describe_problem(p));
  if (p.groups < 1) fail("convolution", "cuDNN: groups must be positive ({})", describe_problem(p));
  const bool forward = p.direction == DnnConv::Direction::Forward;
  if (!p.w || (forward ? !p.x || !p.y_out : !p.y || !p.x_out))
    fail("convolution", "cuDNN: a null device pointer ({})", describe_problem(p));
  if (!p.workspace) fail("convolution", "cuDNN: no workspace allocator ({})", describe_problem(p));
}

void check(const Dnn& d, cudnnStatus_t s, const char* call, const DnnConv& p) {
  if (s != kSuccess) fail("convolution", "cuDNN {} failed: {} ({})", call, d.describe(s), describe_problem(p));
}

// The descriptors of one call, destroyed on every path out.
struct Descriptors {
  const Dnn& d;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  explicit Descriptors(const Dnn& dnn) : d(dnn) {}
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
  ~Descriptors() {
    if (conv) d.destroy_conv(conv);
    if (w) d.destroy_filter(w);
    if (y) d.destroy_tensor(y);
    if (x) d.destroy_tensor(x);
  }
};

cudnnHandle_t handle_for(Dnn& d, const DnnConv& p) {
  std::lock_guard<std::mutex> lock(d.mu);
  if (auto it = d.handles.find(p.device); it != d.handles.end()) return it->second;
  cudnnHandle_t h = nullptr;
  check(d, d.create(&h), "cudnnCreate", p);
  d.handles.emplace(p.device, h);
  return h;
}

// Whether an algorithm's math type keeps the requested precision: f32 without TF32 takes FMA
// math only (the default math type lets cuDNN use TF32 tensor cores on sm_80 and later; PyTorch
// asserts FMA there too).
bool math_allowed(const DnnConv& p, int math_type) {
  if (p.dtype != DnnDtype::F32 || p.allow_tf32) return true;
  return math_type == kMathFma;
}

}  // namespace

DnnConv with_two_spatial_dims(DnnConv p) {
  if (p.x_sizes.size() != 3) return p;
  auto widen = [](std::vector<int64_t>& v, int64_t value) { v.insert(v.begin() + 2, value); };
  widen(p.x_sizes, 1);
  widen(p.w_sizes, 1);
  widen(p.y_sizes, 1);
  // The new dim's stride: any value is valid for an extent of 1; the next dim's extent times its
  // stride keeps the layout packed.
  p.x_strides.insert(p.x_strides.begin() + 2, p.x_strides[2] * p.x_sizes[3]);
  p.y_strides.insert(p.y_strides.begin() + 2, p.y_strides[2] * p.y_sizes[3]);
  p.padding.insert(p.padding.begin(), 0);
  p.stride.insert(p.stride.begin(), 1);
  p.dilation.insert(p.dilation.begin(), 1);
  return p;
}

bool cudnn_available(std::string* why) {
  const Dnn& d = dnn();
  if (why) *why = d.error;
  return d.error.empty();
}

std::string cudnn_version() {
  const Dnn& d = dnn();
  if (!d.error.empty()) return "";
  return fmt::format("{}.{}.{}", d.version / 10000, d.version / 100 % 100, d.version % 100);
}

void cudnn_convolution(const DnnConv& given) {
  const DnnConv p = with_two_spatial_dims(given);
  validate(p);  // before the library: bad arguments are the caller's, with or without cuDNN
  Dnn& d = dnn();
  if (!d.error.empty()) fail("convolution", "{}", d.error);
  const int nd = static_cast<int>(p.x_sizes.size());
  const int dt = data_type(p.dtype);
  const int compute = p.dtype == DnnDtype::F64 ? kDataDouble : kDataFloat;
  const std::vector<int> xs = as_ints(p.x_sizes, p), xst = as_ints(p.x_strides, p), ws = as_ints(p.w_sizes, p);
  const std::vector<int> ys = as_ints(p.y_sizes, p), yst = as_ints(p.y_strides, p);
  const std::vector<int> pad = as_ints(p.padding, p), stride = as_ints(p.stride, p), dil = as_ints(p.dilation, p);

  Descriptors desc(d);
  check(d, d.create_tensor(&desc.x), "cudnnCreateTensorDescriptor", p);
  check(d, d.set_tensor(desc.x, dt, nd, xs.data(), xst.data()), "cudnnSetTensorNdDescriptor(x)", p);
  check(d, d.create_tensor(&desc.y), "cudnnCreateTensorDescriptor", p);
  check(d, d.set_tensor(desc.y, dt, nd, ys.data(), yst.data()), "cudnnSetTensorNdDescriptor(y)", p);
  check(d, d.create_filter(&desc.w), "cudnnCreateFilterDescriptor", p);
  check(d, d.set_filter(desc.w, dt, kTensorNchw, nd, ws.data()), "cudnnSetFilterNdDescriptor", p);
  check(d, d.create_conv(&desc.conv), "cudnnCreateConvolutionDescriptor", p);
  check(d, d.set_conv(desc.conv, nd - 2, pad.data(), stride.data(), dil.data(), kCrossCorrelation, compute),
        "cudnnSetConvolutionNdDescriptor", p);
  check(d, d.set_groups(desc.conv, static_cast<int>(p.groups)), "cudnnSetConvolutionGroupCount", p);
  const bool tensor_ops = p.dtype == DnnDtype::F16 || p.dtype == DnnDtype::BF16 || (p.dtype == DnnDtype::F32 && p.allow_tf32);
  check(d, d.set_math(desc.conv, tensor_ops ? kMathTensorOp : p.dtype == DnnDtype::F32 ? kMathFma : kMathDefault),
        "cudnnSetConvolutionMathType", p);

  cudnnHandle_t h = handle_for(d, p);
  // One handle per device, shared by the process's threads: a call holds it from setting its
  // stream until its work is queued (cuDNN handles are not for concurrent use).
  std::lock_guard<std::mutex> lock(d.mu);
  check(d, d.set_stream(h, p.stream), "cudnnSetStream", p);
  const bool forward = p.direction == DnnConv::Direction::Forward;
  // The algorithm chosen for this problem before (its description holds everything that shapes
  // it), so that a warm call asks no heuristic; else the first candidate that succeeded, keeps
  // the precision and whose workspace can be had (an FFT algorithm may ask for more memory than
  // is free: the next one then).
  const std::string key = describe_problem(p);
  const AlgoPerf* pick = nullptr;
  void* ws_ptr = nullptr;
  std::string last_error;
  auto take = [&](const AlgoPerf& a) {
    try {
      ws_ptr = a.memory > 0 ? p.workspace(a.memory) : nullptr;
      pick = &a;
    } catch (const Error& e) {
      last_error = e.what();
    }
  };
  if (auto it = d.chosen.find(key); it != d.chosen.end()) take(it->second);
  constexpr int kAlgos = 16;
  AlgoPerf perf[kAlgos] = {};
  int returned = 0;
  if (!pick) {
    if (forward)
      check(d, d.forward_algos(h, desc.x, desc.w, desc.conv, desc.y, kAlgos, &returned, perf),
            "cudnnGetConvolutionForwardAlgorithm_v7", p);
    else
      check(d, d.backward_data_algos(h, desc.w, desc.y, desc.conv, desc.x, kAlgos, &returned, perf),
            "cudnnGetConvolutionBackwardDataAlgorithm_v7", p);
    for (int i = 0; i < returned && !pick; ++i)
      if (perf[i].status == kSuccess && math_allowed(p, perf[i].math_type)) take(perf[i]);
    if (!pick)
      fail("convolution", "cuDNN has no algorithm for this convolution ({} candidates{}) ({})", returned,
           last_error.empty() ? "" : "; the last workspace failed: " + last_error, describe_problem(p));
    pick = &(d.chosen[key] = *pick);
  }
  check(d, d.set_math(desc.conv, pick->math_type), "cudnnSetConvolutionMathType", p);
  const float one_f = 1.0f, zero_f = 0.0f;
  const double one_d = 1.0, zero_d = 0.0;
  const void* alpha = p.dtype == DnnDtype::F64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta = p.dtype == DnnDtype::F64 ? static_cast<const void*>(&zero_d) : &zero_f;
  if (forward)
    check(d, d.forward(h, alpha, desc.x, p.x, desc.w, p.w, desc.conv, pick->algo, ws_ptr, pick->memory, beta, desc.y, p.y_out),
          "cudnnConvolutionForward", p);
  else
    check(d, d.backward_data(h, alpha, desc.w, p.w, desc.y, p.y, desc.conv, pick->algo, ws_ptr, pick->memory, beta, desc.x,
                             p.x_out),
          "cudnnConvolutionBackwardData", p);
}

}  // namespace kiln::cuda
