// kiln/frontend/dispatch.cpp — records a node when an input is traced, else runs eagerly.
//
// Eagerly, a prim runs in the runtime and a composite op runs its decomposition
// (run_composite_eager), whose prims dispatch one by one.
#include "frontend/dispatch.h"

#include "base/error.h"
#include "frontend/tracer.h"
#include "ir/shape_fns.h"
#include "passes/decompositions.h"
#include "runtime/eager.h"
#include "runtime/interpreter.h"

namespace kiln {

namespace {

ir::TensorType type_of(const Tensor& t) {
  return ir::TensorType(t.dtype(), ir::to_exprs(t.impl()->sizes()), t.device());
}

}  // namespace

std::vector<Tensor> dispatch(OpCall call) {
  const std::string_view name = ir::op_name(call.op);
  Tracer* tracer = nullptr;
  for (const Tensor& t : call.inputs) {
    if (!t.defined()) fail(name, "received an undefined tensor");
    if (t.is_traced()) {
      if (tracer && tracer != t.impl()->tracer())
        fail(name, "inputs come from two different traces; a tensor traced in one function cannot be used in another");
      tracer = t.impl()->tracer();
    }
  }
  // Factories (no tensor inputs) record into the active trace so their values become
  // constants of the graph rather than opaque inputs.
  if (!tracer && call.inputs.empty()) tracer = Tracer::current();
  if (tracer) return tracer->record(call);

  std::vector<ir::TensorType> in_types;
  in_types.reserve(call.inputs.size());
  for (const Tensor& t : call.inputs) {
    if (!t.device().is_cpu())
      fail(name, "tensor on {} has no eager backend yet; move it to the cpu", t.device().str());
    in_types.push_back(type_of(t));
  }
  ir::check_attrs(call.op, call.attrs);
  // Validates shapes and dtypes, naming the op; factories also say where their result lives.
  for (const ir::TensorType& out : ir::infer_types(call.op, in_types, call.attrs))
    if (!out.device.is_cpu())
      fail(name, "cannot create a tensor on {}: there is no eager backend for that device yet; use the cpu",
           out.device.str());
  if (ir::op_info(call.op).level != ir::OpLevel::Prim) return run_composite_eager(call);
  return rt::eager_execute(call.op, call.inputs, call.attrs);
}

std::vector<Tensor> run_composite_eager(const OpCall& call) {
  return passes::run_decomposition(call.op, call.inputs, call.attrs);
}

Tensor dispatch1(ir::OpKind op, std::vector<Tensor> inputs, std::vector<ir::AttrValue> attrs) {
  std::vector<Tensor> out = dispatch(OpCall{op, std::move(inputs), ir::AttrList(std::move(attrs))});
  if (out.size() != 1) internal_fail("{} returned {} outputs where one was expected", ir::op_name(op), out.size());
  return std::move(out[0]);
}

}  // namespace kiln
