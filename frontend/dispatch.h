// kiln/frontend/dispatch.h — the one path every prim call takes.
//
// An OpCall names a prim, its tensor inputs (schema order) and its attributes. dispatch()
// records a node when any input is traced (frontend/tracer.h); otherwise it runs the op
// eagerly through the runtime (for now the reference interpreter, one node at a time), and a
// composite op through its decomposition.
#pragma once

#include "frontend/tensor.h"
#include "ir/attr.h"
#include "ir/op.h"

#include <vector>

namespace kiln {

struct OpCall {
  ir::OpKind op;
  std::vector<Tensor> inputs;
  ir::AttrList attrs;
};

std::vector<Tensor> dispatch(OpCall call);
// The eager path of a composite (non-prim) op on eager, already validated inputs: runs its
// decomposition (passes/decompositions.h), each prim of which dispatches as usual.
std::vector<Tensor> run_composite_eager(const OpCall& call);
// For ops with exactly one output.
Tensor dispatch1(ir::OpKind op, std::vector<Tensor> inputs, std::vector<ir::AttrValue> attrs = {});

}  // namespace kiln
