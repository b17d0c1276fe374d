// kiln/passes/simplify.h — graph clean-up passes: DCE, CSE, constant folding, algebra.
//
// before and after: prims (composites are allowed too; these passes treat ops generically).
// - dce: removes nodes none of whose outputs is used.
// - cse: merges nodes with the same op, inputs and attributes (random ops included: equal
//   seed and offset draw equal values).
// - fold_constants: an elementwise prim whose inputs are all `full` constants becomes one
//   `full` of the value `eval` computes, where eval gives one (the compile driver passes the
//   reference interpreter's and gives none for a transcendental function, so folding matches
//   execution bit for bit); views of a `full` become a `full` of the view's shape. Without an
//   evaluator only views fold.
// - simplify_algebra: identities that are exact in IEEE arithmetic: x*1, x/1, x-0 for
//   integers and x+0 for integers (not floats: -0.0 + 0 is +0.0), neg(neg(x)), clone(x), detach(x) (once traced graphs are differentiated, it is a copy),
//   casts to the same dtype, reshape/expand to the same shape, identity permutes, clamp with a
//   bound at the dtype's extreme (maximum / minimum, or x for both). A rewrite
//   that would make a graph output alias a graph input is skipped (eager never aliases).
// fold_constants and simplify_algebra leave the nodes `keep` accepts as they are (ops the
// backend lowers itself: a user's extern lowering of clamp, which relu's clamp(x, 0, inf) would
// otherwise never reach, of a constant's op, or of a reduction or product a reshape or
// transpose would rebuild).
// Each returns whether it changed the graph.
#pragma once

#include "base/scalar.h"
#include "ir/graph.h"

#include <functional>
#include <optional>
#include <vector>

namespace kiln::passes {

bool dce(ir::Graph& g);
bool cse(ir::Graph& g);
// The value of elementwise node n on inputs of these values (in its input dtypes), or nullopt
// when evaluating fails (integer division by zero).
using ConstantEvaluator = std::function<std::optional<Scalar>(const ir::Node& n, const std::vector<Scalar>& inputs)>;
using Keep = std::function<bool(const ir::Node&)>;  // null: every node may be rewritten
bool fold_constants(ir::Graph& g, const ConstantEvaluator& eval, const Keep& keep = {});
bool simplify_algebra(ir::Graph& g, const Keep& keep = {});

}  // namespace kiln::passes
