// kiln/passes/equality_operands.h — values compared for equality must be computed once.
//
// A float value computed twice need not give the same bits twice. On the cpu it does now
// (each math function computes through one libmvec function, codegen_cpu/llvm_math.h; before,
// vector bodies called libmvec and scalar code libm, up to 4 ulp apart), but NVRTC contracts
// `a * b + c` into an FMA as it sees fit in each cuda kernel. Most consumers cannot tell, but
// an equality test can: amin/amax's gradient is the cotangent spread over `x == amin(x)`, and when fusion
// recomputed cos(x) in the count's kernel, or the partitioner recomputed it in the backward,
// every comparison could fail (the count 0, the gradient NaN or 0 where PyTorch's is -sin).
// So fusion materializes such a value once instead of recomputing it in each kernel that reads
// it, a row kernel's two passes included, and a forward program's saved output that amax or
// amin reduces is read by the reduction rather than recomputed (passes/fuse.cpp); the
// partitioner saves such a value instead of recomputing it (passes/partition.cpp).
#pragma once

#include "ir/graph.h"

namespace kiln::passes {

// Whether n computes a value that another kernel might compute with other last bits: any node
// but a view, a cast or a constant (their results are exact everywhere).
bool computes_inexactly(const ir::Node& n);

// Whether v is a floating value that, directly or through views and casts of it, is an operand
// of eq or ne whose other operand is not a constant (`full`, through views and casts) nor the
// same value. Integer and bool values are exact in every kernel and never count.
bool compared_for_equality(const ir::Value* v);

// Whether v is a floating value that, directly or through views and casts of it, amax or amin
// reduces: their gradient compares v with the result, in the same graph or, for a value a
// training step's forward program saves, in the backward program.
bool reduced_to_extremum(const ir::Value* v);

}  // namespace kiln::passes
