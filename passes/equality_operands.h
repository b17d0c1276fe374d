// kiln/passes/equality_operands.h — values compared for equality must be computed once.
//
// A float value computed twice need not give the same bits twice: a kernel's vectorized body
// calls glibc's libmvec for sin or cos where its scalar tail and unvectorized kernels call libm
// (up to 4 ulp apart, codegen_cpu/llvm_math.h). Most consumers cannot tell, but an equality
// test can: amin/amax's gradient is the cotangent spread over `x == amin(x)`, and when fusion
// recomputed cos(x) in the count's kernel, or the partitioner recomputed it in the backward,
// every comparison could fail (the count 0, the gradient NaN or 0 where PyTorch's is -sin).
// So fusion materializes such a value once instead of recomputing it in each kernel that reads
// it (passes/fuse.cpp), and the partitioner saves it instead of recomputing it
// (passes/partition.cpp).
#pragma once

#include "ir/graph.h"

namespace kiln::passes {

// Whether v, directly or through views of it, is an operand of eq or ne whose other operand is
// not a constant (`full`).
bool compared_for_equality(const ir::Value* v);

}  // namespace kiln::passes
