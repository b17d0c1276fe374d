// kiln/ir/verifier.h — structural and type checks of a graph.
//
// Checks: every input is defined before use and belongs to this graph; use-lists match the
// inputs; attributes match the schema; output types equal what the shape function infers.
// Problems are reported as kiln::Error naming the node ("[verify] %3 = add(...): ...").
#pragma once

#include "ir/graph.h"

namespace kiln::ir {

void verify(const Graph& g);

}  // namespace kiln::ir
