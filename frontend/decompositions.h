// kiln/frontend/decompositions.h — the decomposition rule of every op above prim level, in
// one table, written with the frontend API.
//
// A rule states an op's semantics with the tensor API (kiln::exp, amax, sum, ...), PrimTorch
// style: run on eager tensors it computes the op (each op dispatches as usual); run on
// traced tensors it records the op's expansion into the active trace. The built-in rules
// are indexed by OpKind; custom ops add theirs with register_decomposition. The compile
// driver hands trace_decomposition to the decompose pass (passes/decompose.h) as its
// provider, so the pass itself knows nothing of the frontend. Inputs are the node's tensor
// inputs in schema order (present optional tensors only, see docs/decisions.md), attributes
// the node's resolved attributes.
#pragma once

#include "frontend/tensor.h"
#include "ir/attr.h"
#include "ir/graph.h"
#include "ir/op.h"

#include <functional>
#include <memory>
#include <vector>

namespace kiln {

using DecompositionFn = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs, const ir::AttrList& attrs)>;

// Whether `op` has a decomposition (built-in composites and core ops, custom ops given one).
bool has_decomposition(ir::OpKind op);

// Runs op's decomposition on `inputs` (eager or traced tensors): the eager path of every
// composite op and how the interpreter runs non-prim nodes. InternalError without a rule.
std::vector<Tensor> run_decomposition(ir::OpKind op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs);

// Adds the rule of a custom op (frontend/custom_op.h calls it); throws for a built-in op or
// an op that has one already.
void register_decomposition(ir::OpKind op, DecompositionFn fn);

// `rule` traced on graph inputs of n's input types with n's attributes: the graph the
// decompose pass inlines in place of n. Throws InternalError if the rule captures eager
// tensors (constants must come from factories, which record into the trace).
std::shared_ptr<ir::Graph> trace_rule(const ir::Node& n, const DecompositionFn& rule);

// trace_rule with n's own decomposition, or nullptr when it has none: the decompose pass's
// DecompositionProvider.
std::shared_ptr<ir::Graph> trace_decomposition(const ir::Node& n);

// Installs the decompositions as ir's source of result types for ops whose shape function
// is their decomposition (ir::install_decomposition_shapes); runtime/wiring.cpp calls it.
void wire_decomposition_shapes();

}  // namespace kiln
