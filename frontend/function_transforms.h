// kiln/frontend/function_transforms.h — grad, value_and_grad and vjp of a function, as JAX and
// functorch expose them.
//
//   auto loss = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{(a[0].mm(a[1])).relu().sum()}; };
//   std::vector<Tensor> g = kiln::grad(loss, {1})({x, w});                // {d loss / d w}
//   std::vector<Tensor> vg = kiln::value_and_grad(loss, {0, 1})({x, w});  // {loss, dx, dw}
//   auto [outs, pullback] = kiln::vjp(f, {x, w});                         // pullback(cotangents)
//
// They transform the function's graph: the function is traced (frontend/tracer.h) on its
// arguments, and the graph is then replayed on them op by op through dispatch (eagerly, or into
// the trace of an enclosing compile() or transform), while a tape of every op that depends on
// an argument is kept; the pullback walks that tape backwards calling each op's derivative rule
// (frontend/derivatives.h), also through dispatch. A composite without a rule of its own is
// replayed through its decomposition. So the result of a transform is a function like any
// other: compile(value_and_grad(loss)) traces forward and backward into one graph, which fuses
// and caches as usual, symbolic sizes included; grad(grad(f)) differentiates the rules' ops.
//
// Arguments need not require grad and nothing is accumulated into .grad(): the transforms are
// functional. A tensor the function captures (a weight in a closure) is a constant to them.
#pragma once

#include "frontend/tensor.h"

#include "ir/graph.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kiln {

using TensorFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

struct VjpResult {
  std::vector<Tensor> outputs;
  // The cotangents of the primals from those of the outputs (one per output; an undefined one
  // counts as zeros). Undefined for a primal that is not floating; zeros for one the outputs do
  // not depend on. May be called more than once.
  std::function<std::vector<Tensor>(const std::vector<Tensor>&)> pullback;
};

// fn's outputs at `primals` and its pullback (jax.vjp, torch.func.vjp).
VjpResult vjp(const TensorFn& fn, const std::vector<Tensor>& primals);

// vjp that also differentiates the tensors fn captures that require grad (a module's
// parameters, in the order fn first reads them): the pullback returns the primals' cotangents,
// then theirs. compile() traces its joint forward and backward graph with it.
struct CapturedVjp {
  VjpResult vjp;
  std::vector<Tensor> captured;
  std::vector<bool> output_differentiable;  // per output: floating, and depends on a primal or captured tensor
};
CapturedVjp vjp_with_captured(const TensorFn& fn, const std::vector<Tensor>& primals);

// Runs graph `g` on `inputs` op by op through dispatch: eagerly, each op records autograd
// history as a user's call would (compiled training replays its joint graph so to
// differentiate a compiled backward again). Attributes that name a size symbol are evaluated
// at `symbols` first.
std::vector<Tensor> replay_graph(const ir::Graph& g, const std::vector<Tensor>& inputs,
                                 const std::map<std::string, int64_t>& symbols);

// The gradient of fn's scalar output (its first output with has_aux; the others are
// auxiliaries) with respect to the arguments at `argnums` (negative counts from the end).
// grad returns {gradients..., aux...}; value_and_grad returns {value, aux..., gradients...}.
TensorFn grad(TensorFn fn, std::vector<int64_t> argnums = {0}, bool has_aux = false);
TensorFn value_and_grad(TensorFn fn, std::vector<int64_t> argnums = {0}, bool has_aux = false);

}  // namespace kiln
