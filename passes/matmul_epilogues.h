// kiln/passes/matmul_epilogues.h — fold_matmul_epilogues: a matrix product, its bias and its
// activation become one addmm_activation node, which a GEMM library computes in one call (the
// cuda backend: cuBLASLt's bias and activation epilogues; the cpu: the bias and relu applied to
// each thread's block of the product as it is finished, runtime/cpu/parallel_gemm.h).
//
// Before and after: prims, plus addmm_activation nodes after. The forms folded are what linear,
// gelu(approximate="tanh") and addmm_activation decompose into (frontend/decompositions_*.cpp):
//
//   p = mm(a, b)                    [m, n], f32; or f32 of f16/bf16 operands: mm(convert(a), convert(b))
//   p = reshape(p, [..., n])        optional: a linear of a 3-D input, rows split back
//   y = add(p, expand(bias))        either order; bias is [n] (or [1, ..., 1, n]), converted when
//                                   the operands are
//   y = convert(y, f16/bf16)        the low-precision form (then the activation, if any, comes
//                                   as convert(act(convert(y, f32)), f16/bf16))
//   y = act(y)                      optional, the activations the backend's epilogue computes
//                                   as the op does (MatmulEpilogues): gelu's tanh form (cuda),
//                                   relu = maximum(y, 0) of an f32 sum (cpu). cuBLASLt's RELU
//                                   epilogue gives 0 for a NaN (torch.relu gives NaN), so on
//                                   cuda relu stays a pointwise kernel reading the folded result.
//
// becomes y = addmm_activation(bias [n], a, b, act) (reshaped back when p was), in the operands'
// dtype. The bias stays one row, which the library reads in place and broadcasts; an expand
// would be copied out as a matrix. A low-precision product keeps its f16/bf16 operands, so the
// library runs it on tensor cores with f32 accumulation, and the result rounds once, as
// PyTorch's addmm does. gelu does not commute with that rounding, so a folded f16/bf16
// gelu(linear) skips the rounding of the linear's output that PyTorch's eager pair makes (up to
// an ulp apart; torch.compile's fused kernels skip it too). addmm_activation's own decomposition
// (the activation in f32, then one rounding) folds back as well.
//
// A value the pattern consumes must have no other use: when the sum before the activation has
// others (a backward pass saves it), only the bias folds and the activation stays a pointwise
// op; when the product has others, nothing folds. f64 and integer products, f16/bf16 products
// that are not widened (a plain f16 mm), and other addends (a full matrix, a column) are left
// alone.
#pragma once

#include "ir/graph.h"

#include <functional>

namespace kiln::passes {

// The activations a backend's epilogue computes exactly as the ops they replace, and the ops
// a user lowers on that backend (register_lowering): a node of such an op is never folded away.
struct MatmulEpilogues {
  bool gelu_tanh = false;  // gelu(approximate="tanh"), f32 and f16/bf16 forms
  bool relu = false;       // maximum(y, +0.0) of the f32 sum, NaN propagating, -0.0 kept as std::max keeps it
  // f16/bf16 products of widened operands fold to their low-precision operands (cuBLASLt runs
  // them on tensor cores). Without it (the cpu, whose libraries compute them in f32 anyway) such
  // a product does not fold: the kernel that rounds its sum adds the bias for free.
  bool low_precision_operands = false;
  std::function<bool(ir::OpKind)> user_lowered{};  // null: none
};

// Returns whether the graph changed.
bool fold_matmul_epilogues(ir::Graph& g, const MatmulEpilogues& epilogues);

}  // namespace kiln::passes
