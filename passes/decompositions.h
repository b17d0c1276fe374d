// kiln/passes/decompositions.h — the decomposition of every non-prim op, as frontend code.
//
// A decomposition states a composite op's semantics with the frontend API (kiln::exp, amax,
// sum, ...), PrimTorch style: run on eager tensors it computes the op eagerly (each prim
// dispatches as usual); run on traced tensors it records the op's expansion into the active
// trace (passes/decompose.h inlines that into a graph). The table is indexed by OpKind; prims
// have no entry. Inputs are the node's tensor inputs in schema order (present optional
// tensors only, see docs/decisions.md), attributes the node's resolved attributes.
#pragma once

#include "frontend/tensor.h"
#include "ir/attr.h"
#include "ir/op.h"

#include <vector>

namespace kiln::passes {

using Decomposition = std::vector<Tensor> (*)(const std::vector<Tensor>& inputs, const ir::AttrList& attrs);

// The decomposition registered for `op`, or nullptr (prims).
Decomposition decomposition_for(ir::OpKind op);

// Runs op's decomposition on `inputs` (eager or traced tensors). This is the eager path of
// every composite op (frontend/dispatch.cpp) and how the interpreter runs composite nodes.
// Throws InternalError when op has no decomposition.
std::vector<Tensor> run_decomposition(ir::OpKind op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs);

}  // namespace kiln::passes
