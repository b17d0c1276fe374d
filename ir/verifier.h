// kiln/ir/verifier.h — structural and type checks of a graph.
//
// Checks: every input is defined before use and belongs to this graph; use-lists match the
// inputs and graph outputs; the tensor input count matches the schema (a Tensor[] needs at
// least one); attributes match the schema; output types equal what the shape function infers.
// Problems are reported as kiln::Error naming the node as printed:
// "[verify] node %3 = add(%1, %2): ...".
#pragma once

#include "ir/graph.h"

#include <functional>
#include <string>

namespace kiln::ir {

void verify(const Graph& g);

// As verify(g), with each message about a node prefixed by locate(node) (the parser passes
// "line:col: " so errors found after parsing point into the text).
using NodeLocator = std::function<std::string(const Node*)>;
void verify(const Graph& g, const NodeLocator& locate);

}  // namespace kiln::ir
