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

void check_mm(std::string_view op, const Tensor& self, const Tensor& mat2) {
  if (self.dim() != 2) fail(op, "self must be a matrix");
  if (mat2.dim() != 2) fail(op, "mat2 must be a matrix");
  check_same_dtype(op, "m1", "m2", self, mat2);
  if (!same_size(self, 1, mat2, 0)) {
    fail(op, "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})", hint_size(self, 0), hint_size(self, 1),
         hint_size(mat2, 0), hint_size(mat2, 1));
  }
}

void check_bmm(std::string_view op, const Tensor& self, const Tensor& mat2) {
  if (self.dim() != 3) fail(op, "batch1 must be a 3D tensor");
  if (mat2.dim() != 3) fail(op, "batch2 must be a 3D tensor");
  check_same_dtype(op, "batch1", "batch2", self, mat2);
  if (!same_size(mat2, 0, self, 0) || !same_size(mat2, 1, self, 2)) {
    fail(op, "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: [{}, {}].",
         hint_size(self, 0), hint_size(self, 2), hint_size(mat2, 0), hint_size(mat2, 1));
  }
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
