// kiln/ir/graph_rebuild.h — a copy of a graph with values replaced, inputs retyped and dead code dropped.
//
// The graph edits a test-case minimizer needs, done as one rebuild rather than in-place
// surgery: keep a subset of the outputs; replace a value by another value of the graph or by
// a fresh graph input of its type; give graph inputs new (concrete) types. Nodes are created
// again through Graph::create, so output types are inferred afresh by the shape functions —
// a shape-dependent attribute that no longer fits throws kiln::Error, which callers treat as
// "this candidate does not exist". Symbols of the original input types are bound to the new
// concrete sizes and substituted into attributes, so a symbolic graph becomes a static one.
// Only nodes the kept outputs depend on are copied; unused inputs are dropped.
#pragma once

#include "ir/graph.h"

#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace kiln::ir {

struct RebuildSpec {
  // New type of each original graph input, by position; missing entries keep their type.
  std::map<size_t, TensorType> input_types;
  // original value -> the original value standing in for it (same dtype and rank), or
  // nullptr: a fresh graph input of the value's type.
  std::map<const Value*, const Value*> replace;
  // Positions of the outputs to keep, in order; nullopt keeps all.
  std::optional<std::vector<size_t>> outputs;
  // Output position (in the original graph) -> the original value returned there instead
  // (any type: the consumer that made the output is dropped).
  std::map<size_t, const Value*> output_values;
  // Keep every original input, used or not (the graph's interface stays the same).
  bool keep_all_inputs = false;
};

struct Rebuilt {
  std::unique_ptr<Graph> graph;
  // For each input of the new graph, the original value it stands for (an original graph
  // input, or a value replaced by a fresh input). Original inputs come first, in order.
  std::vector<const Value*> input_origin;
};

// Throws kiln::Error when a node cannot be recreated (shape function) or the result does not
// verify.
Rebuilt rebuild_graph(const Graph& g, const RebuildSpec& spec);

}  // namespace kiln::ir
