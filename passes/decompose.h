// kiln/passes/decompose.h — the decompose pass: ops above the backend's level become the ops
// they stand for.
//
// before: any op.
// after:  every node's op has a level at or below `level` (Composite > Core > Prim), except
//         the nodes `keep` accepts (ops the backend lowers itself).
//
// The pass knows no decomposition: `expand` gives, for one node, a graph whose inputs stand
// for the node's inputs and whose outputs are its results (the frontend traces its rules,
// written with the tensor API: frontend/decompositions.h). That graph is inlined just before
// the node: its nodes are recreated with fresh values, the node's uses are redirected to the
// results, and the node is erased. An expansion may emit ops above the level itself (linear
// emits matmul, cross_entropy emits log_softmax), so the pass repeats until none remain.
#pragma once

#include "ir/graph.h"
#include "ir/op.h"

#include <functional>
#include <memory>

namespace kiln::passes {

// The expansion of `n`, or nullptr when its op has no decomposition (an internal error).
using DecompositionProvider = std::function<std::shared_ptr<ir::Graph>(const ir::Node& n)>;

struct DecomposeOptions {
  ir::OpLevel level = ir::OpLevel::Prim;
  DecompositionProvider expand;
  std::function<bool(const ir::Node&)> keep;  // optional: nodes left as they are
};

// Returns whether the graph changed.
bool decompose(ir::Graph& g, const DecomposeOptions& opts);

// Inlines the expansion `sub` of node `n` of `g` in its place (n is erased).
void inline_expansion(ir::Graph& g, ir::Node* n, const ir::Graph& sub);

}  // namespace kiln::passes
