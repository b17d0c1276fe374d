// kiln/runtime/cuda/cuda_conv.cpp — the convolution prim's operands described to cuDNN (cuda_conv.h).
#include "runtime/cuda/cuda_conv.h"

#include "base/tensor_impl.h"
#include "codegen_cuda/cudnn.h"
#include "codegen_cuda/driver.h"
#include "frontend/ops.h"
#include "runtime/config.h"
#include "runtime/cuda/cuda_device.h"

#include <algorithm>
#include <climits>

namespace kiln::rt {

namespace {

std::vector<int64_t> sizes_of(const Tensor& t) { return t.sizes().vec(); }

// The packed strides of a contiguous tensor, a dim of extent 1 included (whose stored stride
// may be anything: kiln's is_contiguous ignores it, cuDNN's descriptors do not).
std::vector<int64_t> packed_strides(const Tensor& t) {
  const std::vector<int64_t> sizes = t.sizes().vec();
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t i = sizes.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<int64_t>(sizes[i], 1);
  return strides;
}

// cuDNN takes sizes, strides and element counts as int32.
bool fits_int32(const Tensor& t) { return t.numel() <= INT_MAX; }

}  // namespace

bool cudnn_convolution_dtype(ScalarType dt) {
  return dt == ScalarType::Float || dt == ScalarType::Double || dt == ScalarType::Half || dt == ScalarType::BFloat16;
}

bool cuda_convolution(const std::vector<Tensor>& ins, const ir::AttrList& attrs, const Tensor& out) {
  const ir::OpKind k = ir::OpKind::convolution;
  const Tensor& input = ins.at(0);
  if (!cudnn_convolution_dtype(input.dtype())) return false;  // integers: the host
  const auto stride = attrs.get<std::vector<int64_t>>(k, "stride"), padding = attrs.get<std::vector<int64_t>>(k, "padding");
  const auto dilation = attrs.get<std::vector<int64_t>>(k, "dilation");
  const auto output_padding = attrs.get<std::vector<int64_t>>(k, "output_padding");
  const bool transposed = attrs.get<bool>(k, "transposed");
  const int64_t groups = attrs.get<int64_t>(k, "groups");
  const size_t spatial = stride.size();
  if (spatial < 1 || spatial > 3 || input.dim() != static_cast<int64_t>(spatial) + 2) return false;
  // cuDNN derives the transposed output's size from its input as a forward convolution's
  // input: an output_padding of a stride or more (allowed below the dilation) does not fit.
  if (transposed)
    for (size_t i = 0; i < spatial; ++i)
      if (output_padding[i] >= stride[i]) return false;
  if (out.numel() == 0) return true;
  const Tensor bias = ins.size() > 2 ? ins[2] : Tensor();
  Tensor result(out);
  if (input.numel() == 0 || ins.at(1).numel() == 0) {  // an empty sum: the bias alone
    result.zero_();
  } else {
    const Tensor x = input.is_contiguous() ? input : input.contiguous();
    const Tensor w = ins[1].is_contiguous() ? ins[1] : ins[1].contiguous();
    if (!fits_int32(x) || !fits_int32(w) || !fits_int32(out)) return false;
    cuda::DnnConv p;
    switch (input.dtype()) {
      case ScalarType::Double: p.dtype = cuda::DnnDtype::F64; break;
      case ScalarType::Half: p.dtype = cuda::DnnDtype::F16; break;
      case ScalarType::BFloat16: p.dtype = cuda::DnnDtype::BF16; break;
      default: p.dtype = cuda::DnnDtype::F32; break;
    }
    // In the forward convolution's roles: a transposed convolution is the forward one's
    // backward data, whose input is our output and whose output is our input.
    const Tensor& fx = transposed ? out : x;
    const Tensor& fy = transposed ? x : out;
    p.direction = transposed ? cuda::DnnConv::Direction::BackwardData : cuda::DnnConv::Direction::Forward;
    p.x_sizes = sizes_of(fx);
    p.x_strides = packed_strides(fx);
    p.y_sizes = sizes_of(fy);
    p.y_strides = packed_strides(fy);
    p.w_sizes = sizes_of(w);
    p.padding = padding;
    p.stride = stride;
    p.dilation = dilation;
    p.groups = groups;
    p.w = w.impl()->data();
    if (transposed) {
      p.y = x.impl()->data();
      p.x_out = out.impl()->data();
    } else {
      p.x = x.impl()->data();
      p.y_out = out.impl()->data();
    }
    p.allow_tf32 = config().allow_tf32;
    p.device = out.device().index;
    p.stream = cuda::current_stream(p.device).handle();
    // The workspace goes back to this stream's free list when the call returns: later work on
    // the stream is ordered after the convolution.
    Storage ws;
    p.workspace = [&](size_t bytes) {
      ws = make_intrusive<StorageImpl>(bytes, out.device());
      return ws->data();
    };
    cuda::use_device(p.device);
    cuda::cudnn_convolution(p);
  }
  if (bias.defined()) {
    std::vector<int64_t> shape(static_cast<size_t>(out.dim()), 1);
    shape[1] = out.size(1);
    result.add_(bias.reshape(shape));
  }
  return true;
}

}  // namespace kiln::rt
