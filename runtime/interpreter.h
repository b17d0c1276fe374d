// kiln/runtime/interpreter.h — the reference interpreter: prims on CPU tensors, plain loops.
//
// It is the executable specification every other path is tested against, and the backend
// "interpreter". Strided scalar loops, f16/bf16 computed in f32, integers wrap around,
// PyTorch semantics for division, remainder, NaN and rounding. Written for clarity.
#pragma once

#include "frontend/tensor.h"
#include "ir/graph.h"

#include <vector>

namespace kiln::rt {

// Runs one prim on eager CPU tensors; outputs are fresh contiguous tensors, except view prims
// which return views of their input. A composite op runs its decomposition.
std::vector<Tensor> interpret_op(ir::OpKind op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs);

// Runs a whole graph: inputs bind to graph inputs in order.
std::vector<Tensor> interpret(const ir::Graph& g, const std::vector<Tensor>& inputs);

}  // namespace kiln::rt
