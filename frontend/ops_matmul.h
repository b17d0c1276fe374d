// kiln/frontend/ops_matmul.h — internal: the Matmul family's argument checks, which the Linear
// family's addmm and baddbmm make too (with their own op name). mm and bmm themselves are
// declared in frontend/ops.h. Not part of the public API.
#pragma once

#include "frontend/tensor.h"

#include <string_view>

namespace kiln {

// mm's operands: two matrices of one dtype whose inner sizes agree.
void check_mm(std::string_view op, const Tensor& self, const Tensor& mat2);
// bmm's operands: two 3-D tensors of one dtype whose batch and inner sizes agree.
void check_bmm(std::string_view op, const Tensor& self, const Tensor& mat2);

}  // namespace kiln
