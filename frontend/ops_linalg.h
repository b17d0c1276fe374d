// kiln/frontend/ops_linalg.h — einsum and cdist.
//
// Names, argument order, defaults and semantics follow libtorch (at::einsum, at::cdist). Both
// record the ops they are made of: einsum contracts its operands pairwise, left to right, as
// permute + reshape + bmm (repeated subscripts take a diagonal, subscripts needed by no later
// operand or the output are summed first, size-1 dims broadcast); cdist computes p-norms of
// differences, or PyTorch's matrix-product form of the Euclidean distance where PyTorch uses it.
#pragma once

#include "frontend/tensor.h"

#include <optional>
#include <string_view>
#include <vector>

namespace kiln {

// "ij,jk->ik", "bij,bjk", "...ij,...jk->...ik", "ii->i"; subscripts in [a-zA-Z]. Without "->"
// the output is the ellipsis dims, then every subscript used once, in sorted order.
Tensor einsum(std::string_view equation, const std::vector<Tensor>& tensors);

// Distances between the rows of x1 [..., P, M] and x2 [..., R, M]: [..., P, R], batch dims
// broadcast. compute_mode: none or 0 uses the matrix-product form for p = 2 when P or R exceeds
// 25, 1 always does, 2 never does.
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2.0, std::optional<int64_t> compute_mode = std::nullopt);

}  // namespace kiln
