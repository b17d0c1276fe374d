// kiln/frontend/tracer.h — recording tensor programs into an ir::Graph.
//
// trace(fn, example_inputs) runs fn on traced tensors standing for the inputs: every op
// records a node instead of computing. Eager tensors that the program touches (captured
// weights, constants made by factories) are lifted into graph inputs by reference, in the
// order first seen; TracedProgram keeps them to pass on every run. trace_types() traces on
// inputs given only by their types (the decompose pass traces decompositions this way).
#pragma once

#include "frontend/tensor.h"
#include "ir/graph.h"

#include <functional>
#include <memory>
#include <vector>

namespace kiln {

struct OpCall;

class Tracer {
 public:
  Tracer();
  ~Tracer();
  ir::Graph& graph() { return *graph_; }
  std::unique_ptr<ir::Graph> take_graph() { return std::move(graph_); }

  // A traced tensor standing for a new graph input with the type of `example`.
  Tensor add_input(const Tensor& example, std::string name);
  // A traced tensor standing for a new graph input of type `type` (static sizes only).
  Tensor add_input(const ir::TensorType& type, std::string name);
  // The traced tensor for `t`: itself when traced by this tracer, else its lifted input.
  Tensor lift(const Tensor& t);
  // Records one node; returns traced tensors for its outputs.
  std::vector<Tensor> record(const OpCall& call);
  // Eager tensors lifted into inputs, in graph input order after the user's inputs.
  const std::vector<Tensor>& lifted() const { return lifted_; }
  // An in-place update of a captured eager tensor `t` (a module's running statistics): later
  // reads of `t` in the trace see `value`, and TracedProgram::lifted_updates names it so that
  // the compiled function copies it back into `t` after each run.
  void update_lifted(const Tensor& t, const Tensor& value);
  const std::vector<std::pair<size_t, ir::Value*>>& lifted_updates() const { return lifted_updates_; }

  // The tracer active on this thread (innermost), or null.
  static Tracer* current();
  // Whether `other` is active around this one (this trace runs inside other's).
  bool encloses(const Tracer* other) const;

 private:
  Tensor wrap(ir::Value* v);
  std::unique_ptr<ir::Graph> graph_;
  std::vector<Tensor> lifted_;
  std::vector<std::pair<TensorImpl*, Tensor>> lifted_map_;  // eager tensor -> its current traced value
  std::vector<std::pair<size_t, ir::Value*>> lifted_updates_;
  Tracer* prev_;
};

// The result of tracing: the graph plus the eager tensors it reads besides its inputs.
struct TracedProgram {
  std::shared_ptr<ir::Graph> graph;
  std::vector<Tensor> lifted;  // passed after the user's inputs
  // Captured tensors updated in place: (index in `lifted`, the graph value of their new
  // contents). compile() makes each an extra output written back after every run; a caller
  // of trace() that runs the graph itself must do the same.
  std::vector<std::pair<size_t, ir::Value*>> lifted_updates;
};

// Traces fn on inputs shaped like `examples` (their values are not read).
TracedProgram trace(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn,
                    const std::vector<Tensor>& examples);
// Traces fn on graph inputs of the given types (no example tensors needed).
TracedProgram trace_types(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn,
                          const std::vector<ir::TensorType>& types);

}  // namespace kiln
