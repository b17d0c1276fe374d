// kiln/runtime/cpu/extern_kernels.h — the prims the CPU runs as library calls, and their table.
//
// A prim that no generated kernel computes is a library call: a well-kept library where one
// exists (OpenBLAS for mm/bmm, oneDNN for the convolution), else a typed, threaded C++ kernel
// of kiln's own (sorting, scans, scatters, random draws). Eager ops and compiled programs
// find them through one table, builtin_extern(); the reference interpreter
// (runtime/interp_*.cpp) is never run by either, and every kernel here is tested against it.
// Each writes the op's one output into a preallocated contiguous `out`; inputs may have any
// strides.
#pragma once

#include "frontend/tensor.h"
#include "ir/attr.h"
#include "ir/op.h"

#include <string_view>
#include <vector>

namespace kiln::rt {

using BuiltinExtern = void (*)(ir::OpKind op, const std::vector<Tensor>& ins, const ir::AttrList& attrs, const Tensor& out);

// The library kernel of a prim (or of a Core op with the Extern trait), or null for prims that
// generated kernels compute.
BuiltinExtern builtin_extern(ir::OpKind op);
// Its name in plans and explain() ("blas", "onednn", "sort", "index", "random",
// "attention"), or "".
std::string_view builtin_extern_name(ir::OpKind op);

// mm/bmm through BLAS when the dtype and layout allow (f32/f64, unit stride in one of the last
// two dims); false when it cannot (runtime/cpu/extern_matmul.cpp).
bool blas_matmul(ir::OpKind op, const Tensor& a, const Tensor& b, const Tensor& out);
// mm/bmm for every dtype: BLAS where blas_matmul can; f16/bf16 computed in f32 by BLAS and
// rounded once; integers accumulated in int64 with wrap-around (runtime/cpu/extern_matmul.cpp).
void extern_matmul(ir::OpKind op, const std::vector<Tensor>& ins, const ir::AttrList& attrs, const Tensor& out);
// The convolution (runtime/cpu/extern_conv.cpp): oneDNN for f32, f16 and bf16 (computed in f32),
// im2col + dgemm for f64. ins: input, weight and the optional bias.
void extern_conv(ir::OpKind op, const std::vector<Tensor>& ins, const ir::AttrList& attrs, const Tensor& out);
// argsort (runtime/cpu/extern_sort.cpp): a stable sort per slice, slices in parallel.
void extern_sort(ir::OpKind op, const std::vector<Tensor>& ins, const ir::AttrList& attrs, const Tensor& out);
// cat of many inputs: each copied into its slice (runtime/cpu/extern_shape.cpp).
void extern_cat(ir::OpKind op, const std::vector<Tensor>& ins, const ir::AttrList& attrs, const Tensor& out);
// gather, index_select, scatter, scatter_add (runtime/cpu/extern_index.cpp), index values checked.
void extern_index(ir::OpKind op, const std::vector<Tensor>& ins, const ir::AttrList& attrs, const Tensor& out);
// uniform, normal (runtime/cpu/extern_random.cpp): Philox draws (frontend/ops_random.h) in parallel.
void extern_random(ir::OpKind op, const std::vector<Tensor>& ins, const ir::AttrList& attrs, const Tensor& out);
// scaled_dot_product_attention, a Core op the cpu runs whole (runtime/cpu/extern_attention.cpp):
// per block of query rows, the scores by BLAS, the masked softmax in cache, the product with v
// by BLAS; a causal block reads only the keys its rows can see. ins: q, k, v and the optional mask.
void extern_attention(ir::OpKind op, const std::vector<Tensor>& ins, const ir::AttrList& attrs, const Tensor& out);

}  // namespace kiln::rt
