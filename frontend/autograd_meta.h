// kiln/frontend/autograd_meta.h — internal: what autograd keeps on a tensor.
//
// A tensor takes part in autograd once it requires grad: a leaf the user marked
// (requires_grad_()), or the output of an op recorded with a grad_fn. Its AutogradMeta (the
// TensorImpl's slot, base/tensor_impl.h) holds
//   - requires_grad, and for a leaf its accumulated gradient `grad`;
//   - grad_fn and output_nr: the node that computed it and which of the node's outputs it is;
//     null for a leaf, whose gradient goes to its AccumulateGrad node instead (made on first
//     use and kept weakly, so that a graph does not keep its leaves' accumulators alive and
//     two graphs over one leaf share one);
//   - the hooks registered on it (register_hook), run on its gradient in order before it
//     flows on, and retain_grad's flag;
//   - for a view of a tensor that requires grad: its base and geometry, which an in-place
//     write into the view needs to rewrite the base's history (autograd_inplace.cpp).
// Not part of the public API.
#pragma once

#include "frontend/tensor.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace kiln::autograd {

class Node;

// Where a gradient goes: input `input_nr` of `fn` (null fn: nowhere).
struct Edge {
  std::shared_ptr<Node> fn;
  uint32_t input_nr = 0;
  bool valid() const { return static_cast<bool>(fn); }
};

using Hook = std::function<Tensor(const Tensor&)>;

struct ViewInfo {
  Tensor base;                  // the tensor whose storage this view reads (itself not a view)
  std::vector<int64_t> sizes, strides;
  int64_t storage_offset = 0;
};

struct AutogradMeta final : AutogradMetaInterface {
  Tensor grad;
  std::shared_ptr<Node> grad_fn;
  std::weak_ptr<Node> grad_accumulator;  // leaves
  uint32_t output_nr = 0;
  bool retains_grad = false;
  std::vector<std::pair<unsigned, Hook>> hooks;  // (handle, hook)
  std::shared_ptr<ViewInfo> view;                // null unless a view of a tensor that requires grad
};

// The tensor's AutogradMeta, or null.
inline AutogradMeta* meta_of(const Tensor& t) {
  return t.defined() ? static_cast<AutogradMeta*>(t.impl()->autograd_meta()) : nullptr;
}
// The tensor's AutogradMeta, made if it has none.
AutogradMeta& ensure_meta(const Tensor& t);

// The edge a gradient for `t` flows into: its grad_fn's output slot, or its leaf accumulator;
// invalid when t does not require grad.
Edge gradient_edge(const Tensor& t);

// Makes `t` the output `output_nr` of `fn` (requires grad).
void set_history(const Tensor& t, const std::shared_ptr<Node>& fn, uint32_t output_nr);

}  // namespace kiln::autograd
