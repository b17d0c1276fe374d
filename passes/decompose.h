// kiln/passes/decompose.h — the decompose pass: composite ops become the prims they stand for.
//
// before: any op.
// after:  prims only (every node's op has level Prim).
//
// Each non-prim node is replaced by its decomposition (passes/decompositions.h), traced on
// graph inputs of the node's input types and inlined just before the node: the traced nodes
// are recreated in the graph with fresh values, the node's uses are redirected to the traced
// results, and the node is erased. Decompositions may emit composites themselves (linear
// emits matmul, cross_entropy emits log_softmax), so the pass repeats until none remain.
// Decompositions are traced with static sizes: a node with symbolic sizes is an internal
// error until the frontend traces symbolically.
#pragma once

#include "ir/graph.h"

namespace kiln::passes {

// Returns whether the graph changed.
bool decompose(ir::Graph& g);

// Inlines the decomposition of one non-prim node `n` of `g` in its place (n is erased).
void decompose_node(ir::Graph& g, ir::Node* n);

}  // namespace kiln::passes
