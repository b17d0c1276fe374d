// kiln/runtime/interpreter/interpreter.h — the reference interpreter: prims on CPU tensors, plain loops.
//
// It is the executable specification every other path is tested against, and the backend
// "interpreter". Strided scalar loops, f16/bf16 computed in f32, integers wrap around,
// PyTorch semantics for division, remainder, NaN and rounding. Written for clarity.
#pragma once

#include "frontend/tensor.h"
#include "ir/graph.h"

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::rt {

// Runs one prim on eager CPU tensors; outputs are fresh contiguous tensors, except view prims
// which return views of their input. A composite op runs its decomposition.
std::vector<Tensor> interpret_op(ir::OpKind op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs);

// Runs a whole graph: inputs bind to graph inputs in order. A symbolic graph is checked node by
// node at the inputs' sizes: each node's shape function runs again on the concrete types (a
// reshape whose element counts differ at these sizes, a slice past the end, fail as they
// would in a static graph), so a graph text that only holds at other sizes raises kiln::Error
// instead of reading outside a tensor. (A node of a composite family runs its decomposition on
// the tensors, whose eager ops check themselves.) `Guarded` skips that per-node check: for the
// "interpreter" backend's calls, whose inputs passed the compiled function's guards, under which
// the trace decided every relation.
enum class SizeChecks { AtTheseSizes, Guarded };
std::vector<Tensor> interpret(const ir::Graph& g, const std::vector<Tensor>& inputs,
                              SizeChecks checks = SizeChecks::AtTheseSizes);

// The values of the symbols of g's input types, bound from `inputs` (a dim that is one symbol
// binds it). Throws kiln::Error naming `op` unless the inputs fit the types: their count,
// dtypes and ranks, one value per symbol, and every size (a constant, or an expression of the
// bound symbols) equal to the tensor's.
std::map<std::string, int64_t> bind_graph_inputs(const ir::Graph& g, const std::vector<Tensor>& inputs,
                                                 std::string_view op);

// Test only: a function rt::interpret calls with each node and the outputs it computed, which
// it may change. Tests use it to make the reference deliberately wrong for one op and so
// exercise KILN_VERIFY, KILN_REPRO_DIR and the minimizer without a real backend bug. Only
// whole-graph interpretation is affected (interpret_op, which compiled programs use for
// fallback prims, is not). An empty function removes it. Not for concurrent use with running
// graphs.
using InterpretFault = std::function<void(const ir::Node& node, std::vector<Tensor>& outputs)>;
void set_interpret_fault_for_testing(InterpretFault fault);

}  // namespace kiln::rt
