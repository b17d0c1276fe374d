// kiln/frontend/ops_softmax.cpp — the Softmax family's frontend (frontend/ops_softmax.h):
// softmax and log_softmax (logsumexp, also of the family, is declared with the reductions in
// frontend/ops.h and defined here).
//
// Each normalizes its dim, resolves the dtype to compute in and dispatches one composite op;
// its decomposition is frontend/decompositions_softmax.cpp and its shape function
// ir/shape_fns_softmax.cpp.
#include "frontend/ops_softmax.h"

#include "base/error.h"
#include "frontend/dispatch.h"
#include "frontend/symbolic.h"
#include "frontend/ops.h"
#include "frontend/ops_reduction.h"
#include "frontend/ops_view.h"

#include <optional>
#include <string_view>

namespace kiln {

using ir::OpKind;

namespace {

Tensor softmax_like(OpKind op, std::string_view name, const Tensor& self, int64_t dim,
                    std::optional<ScalarType> dtype) {
  int64_t d = normalize_dim(name, dim, self.dim());
  return dispatch1(op, {self}, {d, dtype.value_or(self.dtype())});
}

}  // namespace

Tensor softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_like(OpKind::softmax, "softmax", self, dim, dtype);
}

Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_like(OpKind::log_softmax, "log_softmax", self, dim, dtype);
}

Tensor softmin(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) { return softmax(neg(self), dim, dtype); }

Tensor logsumexp(const Tensor& self, IntArrayRef dims, bool keepdim) {
  return dispatch1(OpKind::logsumexp, {self}, {reduce_dims("logsumexp", self, dims), keepdim});
}

Tensor Tensor::softmax(int64_t d, std::optional<ScalarType> dtype) const { return kiln::softmax(*this, d, dtype); }
Tensor Tensor::log_softmax(int64_t d, std::optional<ScalarType> dtype) const {
  return kiln::log_softmax(*this, d, dtype);
}

}  // namespace kiln
