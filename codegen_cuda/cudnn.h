// kiln/codegen_cuda/cudnn.h — convolutions through cuDNN, loaded with dlopen.
//
// kiln builds and runs without cuDNN: libcudnn.so.9 is opened on the first convolution asked of
// it, and a machine without it is an error only then ("[convolution] cuDNN is not available
// ... libcudnn.so.9", cudnn_available() says why). No CUDA or cuDNN header is needed to include
// this. One call is one cudnnConvolutionForward (a convolution) or cudnnConvolutionBackwardData
// (a transposed convolution: the adjoint of the forward one) on strided NC* tensors, through
// cuDNN's descriptor API; each device gets one handle, created on first use and kept for the
// process. Failures, including "no algorithm", throw kiln::Error("[convolution] cuDNN ...")
// naming the call, cuDNN's status and the problem.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kiln::cuda {

enum class DnnDtype { F32, F64, F16, BF16 };

// The forward convolution y = conv(x, w) in its own roles, whichever way it runs:
//   x [N, C, *in], w [K, C / groups, *kernel] (contiguous), y [N, K, *out], with 1 to 3 spatial
//   dims; padding, stride and dilation per spatial dim.
// Forward computes y from x and w. BackwardData computes x from y and w: that is a transposed
// convolution whose input is y and whose output is x (its weight [K, C / groups, *kernel] is w).
// Accumulation: f32 for f32, f16 and bf16 (f32 exact unless allow_tf32), f64 for f64. The
// tensor the call writes is overwritten. All pointers are device memory; the strides are in
// elements.
struct DnnConv {
  enum class Direction { Forward, BackwardData } direction = Direction::Forward;
  DnnDtype dtype = DnnDtype::F32;
  std::vector<int64_t> x_sizes, x_strides, w_sizes, y_sizes, y_strides;
  std::vector<int64_t> padding, stride, dilation;
  int64_t groups = 1;
  const void* w = nullptr;
  const void* x = nullptr;  // read by Forward
  void* x_out = nullptr;    // written by BackwardData
  const void* y = nullptr;  // read by BackwardData
  void* y_out = nullptr;    // written by Forward
  bool allow_tf32 = false;
  void* stream = nullptr;  // CUstream; the caller has made the device's context current
  int device = 0;
  // Device memory of at least the given bytes, alive until the work queued on `stream` is done
  // (the caching allocator's stream-ordered blocks).
  std::function<void*(size_t)> workspace;
};

// cuDNN's geometry has at least two spatial dims: a 1-D convolution is given one of extent 1
// in front (sizes 1, padding 0, stride 1, dilation 1; the strides of a dim of extent 1 are
// free). Returns p unchanged for 2 and 3 spatial dims.
DnnConv with_two_spatial_dims(DnnConv p);

// Whether libcudnn.so.9 loaded and every entry point kiln uses is bound (no GPU needed); if
// not and `why` is given, the reason (the paths tried, or the missing symbol).
bool cudnn_available(std::string* why = nullptr);

// cuDNN's version as "major.minor.patch", or "" when it is not available.
std::string cudnn_version();

// Runs the convolution asynchronously on p.stream. Throws kiln::Error "[convolution] cuDNN ..."
// for a missing library, bad arguments, a failing call (its name, cuDNN's status text, the
// problem) or when cuDNN finds no algorithm.
void cudnn_convolution(const DnnConv& p);

}  // namespace kiln::cuda
