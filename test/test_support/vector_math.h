// kiln/test/test_support/vector_math.h — which prims kiln computes with its own f32 vector math
// (codegen_cpu/llvm_vecmath.cpp, and erfinv built from it), within 4 ulp of the C library the
// interpreter calls (docs/compiler.md, "Vector math"): tests comparing generated kernels with
// the interpreter allow that bound for them, and exactness for everything else.
#pragma once

#include "ir/op.h"

namespace kiln::test {

inline bool uses_vector_math(ir::OpKind op) {
  switch (op) {
    case ir::OpKind::exp: case ir::OpKind::exp2: case ir::OpKind::expm1: case ir::OpKind::log:
    case ir::OpKind::log1p: case ir::OpKind::tanh: case ir::OpKind::erf: case ir::OpKind::erfinv:
    case ir::OpKind::sigmoid:
      return true;
    default: return false;
  }
}

}  // namespace kiln::test
