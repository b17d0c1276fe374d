// kiln/frontend/ops_matmul.cpp — the Matmul family's frontend: mm and bmm, the matrix-product
// prims, and their checks (frontend/ops_matmul.h). matmul, addmm and baddbmm, composites over
// them, are the Linear family (frontend/ops_linear.cpp).
#include "frontend/ops_matmul.h"

#include "base/error.h"
#include "frontend/arg_checks.h"
#include "frontend/dispatch.h"
#include "frontend/ops.h"

namespace kiln {

using ir::OpKind;

// PyTorch 2.15's CPU wording: mm's and addmm's kernel is addmm_impl_cpu_, which has no bool.
void check_mm(std::string_view op, const Tensor& self, const Tensor& mat2) {
  if (self.dim() != 2) fail(op, "self must be a matrix");
  if (mat2.dim() != 2) fail(op, "mat2 must be a matrix");
  check_same_dtype(op, "m1", "m2", self, mat2);
  if (!same_size(self, 1, mat2, 0)) {
    fail(op, "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})", hint_size(self, 0), hint_size(self, 1),
         hint_size(mat2, 0), hint_size(mat2, 1));
  }
  if (self.dtype() == ScalarType::Bool) fail(op, "\"addmm_impl_cpu_\" not implemented for 'Bool'");
}

// bmm's and baddbmm's: batch2 must have batch1's dtype ("expected scalar type ... but found ...").
void check_bmm(std::string_view op, const Tensor& self, const Tensor& mat2) {
  if (self.dim() != 3) fail(op, "batch1 must be a 3D tensor");
  if (mat2.dim() != 3) fail(op, "batch2 must be a 3D tensor");
  if (!same_size(mat2, 0, self, 0) || !same_size(mat2, 1, self, 2)) {
    fail(op, "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: [{}, {}].",
         hint_size(self, 0), hint_size(self, 2), hint_size(mat2, 0), hint_size(mat2, 1));
  }
  if (self.dtype() != mat2.dtype())
    fail(op, "expected scalar type {} but found {}", c10_type_name(self.dtype()), c10_type_name(mat2.dtype()));
  if (self.dtype() == ScalarType::Bool) fail(op, "\"{}\" not implemented for 'Bool'", op);
}

Tensor mm(const Tensor& self, const Tensor& mat2) {
  check_mm("mm", self, mat2);
  return dispatch1(OpKind::mm, {self, mat2});
}

Tensor bmm(const Tensor& self, const Tensor& mat2) {
  check_bmm("bmm", self, mat2);
  return dispatch1(OpKind::bmm, {self, mat2});
}

}  // namespace kiln
