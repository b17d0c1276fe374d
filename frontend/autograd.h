// kiln/frontend/autograd.h — reverse-mode automatic differentiation, with libtorch's API.
//
// A floating tensor marked requires_grad_() is a leaf; every op on it (eagerly, with grad mode
// on: frontend/grad_mode.h) records a node (frontend/autograd_node.h) whose derivative rule
// (frontend/derivatives.h) backward() runs:
//
//   Tensor w = randn({3, 3}).requires_grad_();
//   Tensor loss = (x.mm(w)).relu().sum();
//   loss.backward();                         // w.grad() += d loss / d w
//   auto g = autograd::grad({loss2}, {w});   // returned, not accumulated
//
// As in PyTorch: gradients accumulate into leaves; the graph is freed by a backward unless
// retain_graph; create_graph records the backward itself (for a second derivative); a tensor
// saved for backward and then written in place, or an in-place write into a leaf that requires
// grad, is an error with PyTorch's message. The function transforms (grad, value_and_grad, vjp
// of a function, frontend/function_transforms.h) differentiate traced graphs with the same rules.
#pragma once

#include "frontend/autograd_node.h"
#include "frontend/grad_mode.h"
#include "frontend/tensor.h"

#include <optional>
#include <vector>

namespace kiln::autograd {

// Accumulates the gradients of `tensors` (weighted by grad_tensors; a scalar tensor's default is
// 1) into the leaves that require grad, or only into `inputs` when given.
void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
              const std::vector<Tensor>& inputs = {});

// The gradients of `outputs` with respect to `inputs` (returned, not accumulated). An input the
// outputs do not depend on is an error unless allow_unused, which gives an undefined tensor.
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, std::optional<bool> retain_graph = std::nullopt,
                         bool create_graph = false, bool allow_unused = false);

}  // namespace kiln::autograd
