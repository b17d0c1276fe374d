// kiln/passes/partition.h — the partition pass: a joint forward-and-backward graph becomes a
// forward graph and a backward graph (what AOTAutograd's min-cut partitioner does for
// torch.compile).
//
// before: a joint graph whose first `num_forward_outputs` outputs are the forward's results and
//         whose other outputs are gradients; `backward_inputs` are the inputs only the backward
//         has (the cotangents of the forward's results).
// after:  forward:  the joint's other inputs, in order -> the forward results, the extra forward
//                   outputs, then the saved values;
//         backward: the saved values, then the backward inputs, in order -> the gradients.
//
// Which values cross is a minimum cut. Every value the backward needs is either saved by the
// forward (costing its bytes) or recomputed in the backward from saved values. Only cheap ops
// may be recomputed: elementwise ops (activations kept whole for their rule, such as relu,
// included), views, casts and constants; a matrix product, a
// convolution, a reduction or a random draw is computed once, in the forward, and its result
// saved if the backward needs it. Among all choices the cut saves the fewest bytes, so that a
// chain like gelu(x @ w + b) saves the product and recomputes the activation, and a
// broadcast bias is not saved at its broadcast size. The backward's own work (everything that
// depends on a cotangent) stays in the backward.
#pragma once

#include "ir/graph.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::passes {

struct PartitionSpec {
  size_t num_forward_outputs = 0;
  // The joint's outputs after the forward's that are gradients (default: all the rest).
  std::optional<size_t> num_backward_outputs;
  // Forward-side values the forward also returns, after its results (new contents of tensors
  // updated in place, such as a batch norm's running statistics).
  std::vector<const ir::Value*> extra_forward_outputs;
  std::vector<const ir::Value*> backward_inputs;
  // The bytes a value takes (symbolic sizes at their hints); default: static sizes, else 1 MB.
  std::function<int64_t(const ir::Value&)> bytes;
};

struct Partition {
  std::shared_ptr<ir::Graph> forward, backward;
  size_t num_saved = 0;
  int64_t saved_bytes = 0;
  // Joint nodes that run in both graphs (recomputed in the backward), by op name, and a
  // description of the cut for explain() and the debug dumps.
  std::vector<std::string> recomputed;
  std::string report;
};

Partition partition_joint(const ir::Graph& joint, const PartitionSpec& spec);

}  // namespace kiln::passes
