// kiln/runtime/cuda/cuda_matmul.h — mm and bmm on cuda tensors through cuBLASLt (codegen_cuda/cublaslt.h).
//
// f32, f16 and bf16 operands whose last two dims have a unit stride in one of them run on
// cuBLASLt, asynchronously on the device's current stream, with f32 accumulation: exact f32
// by default, TF32 tensor cores only when KILN_ALLOW_TF32=1 (PyTorch's allow_tf32). Its
// workspace (32 MiB) comes from the caching allocator. Other dtypes (f64, integers) and layouts
// return false, and the caller runs them on the host.
#pragma once

#include "frontend/tensor.h"
#include "ir/op.h"

namespace kiln::rt {

// out = a @ b (op mm: [m, k] x [k, n]; bmm: [B, m, k] x [B, k, n]); out is contiguous on a's
// device. False when cuBLASLt cannot take these operands.
bool cuda_matmul(ir::OpKind op, const Tensor& a, const Tensor& b, const Tensor& out);

}  // namespace kiln::rt
