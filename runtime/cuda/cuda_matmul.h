// kiln/runtime/cuda/cuda_matmul.h — mm and bmm on cuda tensors through cuBLASLt (codegen_cuda/cublaslt.h).
//
// f32, f16, bf16 and f64 operands run on cuBLASLt, asynchronously on the device's current
// stream: f32, f16 and bf16 with f32 accumulation (exact f32 by default, TF32 tensor cores
// only when KILN_ALLOW_TF32=1, PyTorch's allow_tf32), f64 with f64 accumulation. An operand
// whose last two dims have a unit stride in neither, or whose batch stride is negative, is
// copied contiguous on the device first. The workspace (32 MiB) comes from the caching
// allocator. Integers return false, and the caller runs them on the host.
#pragma once

#include "frontend/tensor.h"
#include "ir/op.h"

#include <string>

namespace kiln::rt {

// out = a @ b (op mm: [m, k] x [k, n]; bmm: [B, m, k] x [B, k, n]); out is contiguous on a's
// device. False when cuBLASLt cannot take these operands.
bool cuda_matmul(ir::OpKind op, const Tensor& a, const Tensor& b, const Tensor& out);

// out = act(self + a @ b) (addmm_activation: [m, k] x [k, n], self one bias row [n] or that row
// broadcast over the rows, act "none", "relu" or "gelu_tanh") as one cuBLASLt call with a bias
// epilogue, computed in f32 and rounded once. False when cuBLASLt cannot take it: a dtype other
// than f32, f16 and bf16 (the fold makes none; f64 epilogues are not relied on), a self that is
// not one row, k == 0, or relu (cuBLASLt's RELU epilogue maps NaN to 0).
bool cuda_addmm_activation(const Tensor& self, const Tensor& a, const Tensor& b, const std::string& act,
                           const Tensor& out);

}  // namespace kiln::rt
