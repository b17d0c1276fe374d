// kiln/frontend/ops_linear.h — the Linear family: linear, cross_entropy, pdist, cdist and einsum
// (matmul, addmm and baddbmm are declared in frontend/ops.h).
//
// Names, argument order, defaults and semantics follow libtorch. Each validates its arguments
// with PyTorch's wording, resolves defaults and dispatches one composite op: traced, it is
// recorded as a single node that passes/decompose.h expands; eager, its decomposition runs
// prim by prim.
// einsum contracts its operands pairwise, left to right, as permute + reshape + bmm (repeated
// subscripts take a diagonal, subscripts needed by no later operand or the output are summed
// first, size-1 dims broadcast).
#pragma once

#include "frontend/tensor.h"
#include <optional>
#include <string_view>
#include <vector>

namespace kiln {

// input @ weight^T + bias; weight is [out_features, in_features].
Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt);

// Cross entropy of logits [N, C] or [C] (or [N, C, d1, ...]) against int64 class indices (the
// logits' shape without C), or against class probabilities of the logits' own shape (any
// floating dtype; ignore_index must stay negative, and 'mean' divides by the number of rows).
// reduction: "mean", "sum" or "none".
Tensor cross_entropy(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight = std::nullopt,
                     std::string_view reduction = "mean", int64_t ignore_index = -100, double label_smoothing = 0.0);

// The p-norm distances between the rows of input [N, M], pairs i < j in row-major order:
// [N * (N - 1) / 2], as torch.pdist.
Tensor pdist(const Tensor& input, double p = 2.0);

// "ij,jk->ik", "bij,bjk", "...ij,...jk->...ik", "ii->i"; subscripts in [a-zA-Z]. Without "->"
// the output is the ellipsis dims, then every subscript used once, in sorted order.
Tensor einsum(std::string_view equation, const std::vector<Tensor>& tensors);

// Distances between the rows of x1 [..., P, M] and x2 [..., R, M]: [..., P, R], batch dims
// broadcast. compute_mode: none or 0 uses the matrix-product form for p = 2 when P or R exceeds
// 25, 1 always does, 2 never does.
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2.0, std::optional<int64_t> compute_mode = std::nullopt);

}  // namespace kiln
