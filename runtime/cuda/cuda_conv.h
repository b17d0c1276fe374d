// kiln/runtime/cuda/cuda_conv.h — the convolution prim on cuda tensors through cuDNN (codegen_cuda/cudnn.h).
//
// f32, f16, bf16 and f64 convolutions with 1 to 3 spatial dims, grouped, strided, padded and
// dilated, transposed ones included, run on cuDNN asynchronously on the device's current
// stream: the input and the weight made contiguous first (a generated copy when they are not),
// the bias added by a generated kernel after the call (for f16/bf16 after the result is
// rounded: within an ulp of the cpu's, which adds it before). Accumulation is f32 (exact f32
// unless KILN_ALLOW_TF32=1, PyTorch's allow_tf32) or f64. Integer convolutions, which cuDNN does
// not compute, return false, and the caller runs them on the host. A missing cuDNN raises
// "[convolution] cuDNN is not available (libcudnn.so.9 could not be loaded): ...".
#pragma once

#include "frontend/tensor.h"
#include "ir/attr.h"

#include <vector>

namespace kiln::rt {

// out = convolution(ins[0] input, ins[1] weight, ins[2] bias if present; attrs as the prim's);
// out is contiguous on the input's device. False when cuDNN cannot take these operands
// (integer dtypes, sizes past int32).
bool cuda_convolution(const std::vector<Tensor>& ins, const ir::AttrList& attrs, const Tensor& out);

// Whether cuDNN computes convolutions of this dtype (floating ones).
bool cudnn_convolution_dtype(ScalarType dt);

}  // namespace kiln::rt
