// kiln/frontend/autograd_node.h — the nodes of the eager autograd graph.
//
// Each op recorded with history (frontend/autograd_record.cpp) becomes a Node: the gradients
// of its outputs go in, the gradients of its inputs come out, along `next_edges` (one per
// input; an invalid edge where that input does not require grad). The names are PyTorch's
// (`MulBackward0`, `AccumulateGrad`), so a grad_fn reads as it does there.
//   - OpNode: a recorded op; it calls the op's derivative rule (frontend/derivatives.h) with
//     what it saved.
//   - AccumulateGrad: a leaf's sink; it runs the leaf's hooks and adds into leaf.grad().
//   - The nodes of in-place writes (CopyBackwards, CopySlices) and of a compiled function's
//     backward (runtime/compile/compile.cpp) are Nodes too.
// SavedTensor keeps a tensor a rule needs, with the version of its storage at save time: using
// it after an in-place write is PyTorch's error, and so is using it after the graph was freed.
#pragma once

#include "frontend/autograd_meta.h"
#include "frontend/tensor.h"
#include "ir/attr.h"
#include "ir/expr.h"
#include "ir/op.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln::autograd {

// The dtype, device and sizes of a tensor an op read or wrote: what a rule needs of a tensor
// it did not save (the shape of a sum's input), and what an undefined gradient is zeros of.
struct TensorMeta {
  ScalarType dtype = ScalarType::Float;
  Device device;
  std::vector<ir::Expr> sizes;
  static TensorMeta of(const Tensor& t);
  Tensor zeros() const;
};

// Hooks on a non-leaf tensor's gradient, shared between the tensor and the node that made it
// (so that neither keeps the other alive), and the gradient retain_grad() keeps.
struct OutputSlot {
  std::vector<std::pair<unsigned, Hook>> hooks;
  bool retain = false;
  Tensor retained;
};

class Node : public std::enable_shared_from_this<Node> {
 public:
  Node();
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  virtual std::string name() const = 0;
  // The gradients of the node's inputs (one per next edge; undefined: none flows) from those
  // of its outputs (one per output; undefined: zero). Runs under the engine's grad mode.
  virtual std::vector<Tensor> apply(std::vector<Tensor> grads) = 0;
  // Frees what the node saved (after a backward without retain_graph).
  virtual void release_saved() {}

  const std::vector<Edge>& next_edges() const { return next_edges_; }
  std::vector<Edge>& mutable_next_edges() { return next_edges_; }
  // The order nodes were made in: the engine runs later ones first.
  uint64_t sequence_nr() const { return sequence_nr_; }
  // The forward op's outputs: how many gradients apply() takes, and their meta.
  const std::vector<TensorMeta>& output_meta() const { return output_meta_; }
  void set_output_meta(std::vector<TensorMeta> m) { output_meta_ = std::move(m); }
  // The hook slot of output `i`, made on first use.
  std::shared_ptr<OutputSlot> slot(uint32_t i);
  std::shared_ptr<OutputSlot> slot_if_any(uint32_t i) const;

 private:
  std::vector<Edge> next_edges_;
  std::vector<TensorMeta> output_meta_;
  std::vector<std::shared_ptr<OutputSlot>> slots_;
  uint64_t sequence_nr_;
};

class SavedTensor {
 public:
  SavedTensor() = default;
  // `is_output`: t is an output of `owner` (saved without its history, which would be a cycle,
  // and given it back on unpack).
  SavedTensor(const Tensor& t, bool is_output);
  // The saved tensor; with grad mode on (a backward that creates a graph), an output is returned
  // with `owner` as its grad_fn again. Fails with PyTorch's messages after release() or after
  // an in-place write into the tensor's storage.
  Tensor unpack(const std::shared_ptr<Node>& owner, uint32_t output_nr) const;
  void release();
  bool defined() const { return saved_; }

 private:
  Tensor data_;
  uint64_t version_ = 0;
  bool saved_ = false;
  bool released_ = false;
  bool is_output_ = false;
  bool requires_grad_ = false;
  std::string grad_fn_name_;  // of the tensor when saved, for the error message
  uint32_t output_nr_ = 0;
};

// A leaf's sink: hooks, then leaf.grad() += gradient.
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(Tensor leaf);
  std::string name() const override { return "AccumulateGrad"; }
  std::vector<Tensor> apply(std::vector<Tensor> grads) override;
  const Tensor& leaf() const { return leaf_; }

 private:
  Tensor leaf_;
};

// A recorded op: its derivative rule over what it saved.
class OpNode final : public Node {
 public:
  OpNode(ir::OpKind op, ir::AttrList attrs);
  std::string name() const override;
  std::vector<Tensor> apply(std::vector<Tensor> grads) override;
  void release_saved() override;

  ir::OpKind op() const { return op_; }
  // Filled by the recorder.
  std::vector<TensorMeta> input_meta;
  std::vector<SavedTensor> saved_inputs;   // one per input (undefined where not saved)
  std::vector<SavedTensor> saved_outputs;  // one per output

 private:
  ir::OpKind op_;
  ir::AttrList attrs_;
};

// A Node whose backward is a function (in-place writes, compiled backward programs).
class FunctionNode final : public Node {
 public:
  using Fn = std::function<std::vector<Tensor>(std::vector<Tensor>)>;
  FunctionNode(std::string name, Fn fn, std::function<void()> release = {});
  std::string name() const override { return name_; }
  std::vector<Tensor> apply(std::vector<Tensor> grads) override { return fn_(std::move(grads)); }
  void release_saved() override;

 private:
  std::string name_;
  Fn fn_;
  std::function<void()> release_;
};

// PyTorch's name of an op's backward node: CamelCase of the op, then "Backward0".
std::string backward_name(ir::OpKind op);

}  // namespace kiln::autograd
