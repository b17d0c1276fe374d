// kiln/test/test_support/vector_math.h — which prims the cpu computes with kiln's own f32 math
// (codegen_cpu/llvm_vecmath.cpp) or through glibc's libmvec (codegen_cpu/llvm_math.h), within
// 4 ulp of the C library the interpreter calls (docs/compiler.md, "Vector math"): tests
// comparing generated kernels with the interpreter allow that bound for them, in every float
// dtype, and exactness for everything else. (lgamma is libm's in both.)
#pragma once

#include "ir/op.h"

namespace kiln::test {

inline bool uses_vector_math(ir::OpKind op) {
  switch (op) {
    case ir::OpKind::exp: case ir::OpKind::exp2: case ir::OpKind::expm1: case ir::OpKind::log:
    case ir::OpKind::log2: case ir::OpKind::log10: case ir::OpKind::log1p: case ir::OpKind::sin:
    case ir::OpKind::cos: case ir::OpKind::tan: case ir::OpKind::asin: case ir::OpKind::acos:
    case ir::OpKind::atan: case ir::OpKind::sinh: case ir::OpKind::cosh: case ir::OpKind::tanh:
    case ir::OpKind::asinh: case ir::OpKind::acosh: case ir::OpKind::atanh: case ir::OpKind::erf:
    case ir::OpKind::erfc: case ir::OpKind::erfinv: case ir::OpKind::sigmoid: case ir::OpKind::pow:
    case ir::OpKind::atan2: case ir::OpKind::hypot:
      return true;
    default: return false;
  }
}

}  // namespace kiln::test
