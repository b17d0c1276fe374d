// kiln/runtime/compile/compiled_backward.h — internal: compiled functions called on tensors that require
// grad (what AOTAutograd does for torch.compile).
//
// compile() (runtime/compile/compile.cpp) makes a training entry when grad mode is on and an argument,
// or a tensor the function captures (a parameter), requires grad:
//   1. joint_trace_fn: the function to trace is the function's vjp (frontend/function_transforms.h)
//      with the captured tensors that require grad differentiated too, and one cotangent input per
//      differentiable output, added to the trace after the forward: one joint graph whose outputs
//      are the function's results, then the gradients;
//   2. build_training: the partition pass (passes/partition.h) splits it into a forward graph,
//      which also returns what the backward needs, and a backward graph, chosen by a minimum cut
//      that prefers recomputing cheap elementwise work to saving it; both are compiled by the
//      entry's backend;
//   3. run_training: a call runs the forward and gives the differentiable results a grad_fn,
//      "CompiledFunctionBackward", which holds the saved tensors and runs the backward program.
// requires_grad of every argument and captured tensor is part of the entry's key.
#pragma once

#include "frontend/tensor.h"
#include "ir/graph.h"
#include "runtime/pipeline.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kiln::rt {

// What the joint trace found, filled while tracing.
struct JointInfo {
  size_t num_outputs = 0;                   // the function's results
  std::vector<bool> output_differentiable;  // per result
  std::vector<const ir::Value*> cotangents;  // joint inputs: one per differentiable result
  std::vector<size_t> grad_args;            // tensor arguments (by position among them) that get gradients
  std::vector<Tensor> grad_captured;        // captured tensors that get gradients, in gradient order
};

// The function whose trace is the joint graph: `fn` maps the traced tensor arguments to the
// function's results; `requires_grad` marks the arguments to differentiate.
std::function<std::vector<Tensor>(const std::vector<Tensor>&)> joint_trace_fn(
    std::function<std::vector<Tensor>(const std::vector<Tensor>&)> fn, std::vector<bool> requires_grad,
    JointInfo* info);

struct TrainingProgram {
  std::unique_ptr<Executable> forward, backward;
  Compilation forward_comp, backward_comp;
  JointInfo joint;
  size_t num_saved = 0;
  int64_t saved_bytes_at_trace = 0;
  // Backward inputs that carry a size symbol no other backward input has: (forward input, dim).
  std::vector<ParamSource> carriers;
  Tensor carrier_element;  // the one float a call's carriers view (stride 0), made at build
  // Where each gradient goes: the forward inputs (tensor arguments, then captured tensors) in
  // gradient order.
  std::vector<size_t> grad_inputs;
  // Forward inputs updated in place (tensor arguments, then captured tensors): the forward
  // returns their new contents after its results, and a call copies them back.
  std::vector<size_t> writebacks;
  std::string partition_report;
  std::string joint_text;
  // A second derivative (backward with create_graph) replays the joint graph eagerly instead
  // (frontend/function_transforms.h replay_graph): its ops record history, from the forward's
  // inputs and the cotangents. joint_inputs: per joint input, the forward input it is (>= 0),
  // or -(j + 1) for the cotangent of result j; symbols: where each size symbol is read.
  std::shared_ptr<const ir::Graph> joint_graph;
  std::vector<int64_t> joint_inputs;
  std::map<std::string, ParamSource> symbols;
  std::string no_replay;  // why the joint cannot be replayed (a random draw), or empty
};

// Partitions the joint graph and compiles both halves with `be`; `fwd` are the options of the
// forward (the entry's: symbols, strides, dumps), from which the backward's are derived.
// `writebacks`: (forward input, joint value of its new contents) for inputs updated in place.
std::unique_ptr<TrainingProgram> build_training(const std::shared_ptr<ir::Graph>& joint, JointInfo info,
                                                size_t num_arg_tensors, const std::vector<Tensor>& lifted,
                                                const std::vector<std::pair<size_t, const ir::Value*>>& writebacks,
                                                const Backend& be, DriverOptions fwd);

// Runs the forward on `inputs` (tensor arguments, then captured tensors) and attaches the
// compiled backward to the results.
std::vector<Tensor> run_training(const std::shared_ptr<const TrainingProgram>& p, const std::vector<Tensor>& inputs);

}  // namespace kiln::rt
