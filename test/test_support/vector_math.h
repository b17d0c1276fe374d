// kiln/test/test_support/vector_math.h — which prims generated kernels compute with other math
// than the interpreter's libm: the transcendental functions (ir::traits::Approximate), which the
// cpu computes with kiln's own f32 code or through glibc's libmvec (codegen_cpu/llvm_math.h),
// within 4 ulp of the C library the interpreter calls (docs/compiler.md, "Vector math"). Tests
// comparing generated kernels with the interpreter allow that bound for them, in every float
// dtype, and exactness for everything else, lgamma (libm's in both) and rsqrt (1/sqrt, exact on
// the cpu) included.
#pragma once

#include "ir/op.h"

namespace kiln::test {

inline bool uses_vector_math(ir::OpKind op) {
  return ir::op_info(op).has(ir::traits::Approximate) && op != ir::OpKind::lgamma && op != ir::OpKind::rsqrt;
}

}  // namespace kiln::test
