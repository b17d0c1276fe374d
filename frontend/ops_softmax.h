// kiln/frontend/ops_softmax.h — the Softmax family: softmax, log_softmax and softmin
// (logsumexp is declared with the reductions in frontend/ops.h).
//
// Names, argument order, defaults and semantics follow libtorch. Each validates its arguments
// with PyTorch's wording, resolves defaults and dispatches one composite op: traced, it is
// recorded as a single node that passes/decompose.h expands; eager, its decomposition runs
// prim by prim.
#pragma once

#include "frontend/tensor.h"
#include <optional>

namespace kiln {

// dtype, when given, casts the input first (as torch.softmax's dtype argument).
Tensor softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
// softmax(-self, dim, dtype), as torch.nn.functional.softmin writes it (the negation first).
Tensor softmin(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);

}  // namespace kiln
