// kiln/frontend/tracer.cpp — recording ops into a graph; lifting eager tensors into inputs.
#include "frontend/tracer.h"

#include "frontend/dispatch.h"
#include "frontend/grad_mode.h"
#include "base/error.h"
#include "ir/shape_env.h"

namespace kiln {

namespace {
thread_local Tracer* t_current = nullptr;
}

Tracer::Tracer() : graph_(std::make_unique<ir::Graph>()), prev_(t_current) { t_current = this; }

Tracer::~Tracer() { t_current = prev_; }

Tracer* Tracer::current() { return t_current; }

bool Tracer::encloses(const Tracer* other) const {
  for (const Tracer* t = prev_; t; t = t->prev_)
    if (t == other) return true;
  return false;
}

Tensor Tracer::wrap(ir::Value* v) {
  const ir::TensorType& ty = v->type();
  if (ty.is_static()) return Tensor(make_intrusive<TensorImpl>(this, v, ty.dtype, ty.device, ty.static_sizes()));
  // Symbolic sizes: the tensor's integer sizes are the hints (frontend/symbolic.h).
  const ir::ShapeEnv* env = ir::ShapeEnv::current();
  if (!env) internal_fail("traced value of type {} has symbolic sizes but no ShapeEnv is active", ty.str());
  std::vector<int64_t> hints;
  for (const ir::Expr& e : ty.sizes) hints.push_back(env->hint(e));
  return Tensor(make_intrusive<TensorImpl>(this, v, ty.dtype, ty.device, std::move(hints)));
}

Tensor Tracer::add_input(const Tensor& example, std::string name) {
  if (!example.defined()) fail("trace", "example input {} is an undefined tensor", name);
  // A tensor of an enclosing trace (a function transform traced inside compile()): its type,
  // symbolic sizes included.
  if (example.is_traced()) return add_input(example.impl()->value()->type(), std::move(name));
  return add_input(ir::TensorType(example.dtype(), ir::to_exprs(example.sizes().vec()), example.device()),
                   std::move(name));
}

Tensor Tracer::add_input(const ir::TensorType& type, std::string name) {
  return wrap(graph_->add_input(type, std::move(name)));
}

Tensor Tracer::lift(const Tensor& t) {
  if (t.is_traced()) {
    if (t.impl()->tracer() == this) return t;
    // A value of an enclosing trace is lifted as an eager tensor is (the transform that runs
    // this trace's graph passes it back in).
    if (!encloses(t.impl()->tracer())) fail("trace", "a tensor traced in another function was used in this one");
  }
  for (auto& [impl, traced] : lifted_map_)
    if (impl == t.impl()) return traced;
  Tensor traced = add_input(t, "c" + std::to_string(lifted_.size()));
  lifted_.push_back(t);
  lifted_map_.emplace_back(t.impl(), traced);
  return traced;
}

void Tracer::update_lifted(const Tensor& t, const Tensor& value) {
  lift(t);
  size_t k = 0;
  while (lifted_map_[k].first != t.impl()) ++k;  // lifted_ and lifted_map_ share their order
  lifted_map_[k].second = value;
  for (auto& [index, v] : lifted_updates_)
    if (index == k) {
      v = value.impl()->value();
      return;
    }
  lifted_updates_.emplace_back(k, value.impl()->value());
}

std::vector<Tensor> Tracer::record(const OpCall& call) {
  std::vector<ir::Value*> ins;
  ins.reserve(call.inputs.size());
  for (const Tensor& t : call.inputs) ins.push_back(lift(t).impl()->value());
  ir::Node* n = graph_->create(call.op, std::move(ins), call.attrs);
  // Under NoGradGuard in a function being differentiated, the results carry no gradient
  // (no_grad_copy, the write that keeps its target's place for the gradient, excepted).
  const bool stop = TracingForGrad::stops_gradients() && call.op != ir::OpKind::no_grad_copy;
  std::vector<Tensor> out;
  for (ir::Value* v : n->outputs()) {
    if (stop && is_floating_point(v->type().dtype)) v = graph_->create(ir::OpKind::detach, {v}, ir::AttrList())->output();
    out.push_back(wrap(v));
  }
  return out;
}

namespace {

TracedProgram finish(Tracer& tracer, const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn,
                     const std::vector<Tensor>& inputs) {
  std::vector<Tensor> results = fn(inputs);
  // A function may return nothing when it updates tensors in place (an optimizer's step): the
  // updates become its outputs (written back by compile()).
  if (results.empty()) {
    bool updates = !tracer.lifted_updates().empty();
    for (size_t i = 0; i < inputs.size() && !updates; ++i)
      updates = inputs[i].impl()->value() != tracer.graph().inputs().at(i);
    if (!updates) fail("trace", "the traced function returned no tensors and updated none in place");
  }
  for (const Tensor& r : results) {
    if (!r.defined()) fail("trace", "the traced function returned an undefined tensor");
    tracer.graph().add_output(tracer.lift(r).impl()->value());
  }
  // A captured tensor updated in place is written back after each run; another captured
  // tensor sharing its memory would have been read with the old contents.
  const std::vector<Tensor>& lifted = tracer.lifted();
  for (const auto& [k, v] : tracer.lifted_updates())
    for (size_t j = 0; j < lifted.size(); ++j)
      if (j != k && lifted[j].impl()->storage().get() == lifted[k].impl()->storage().get())
        fail("copy_", "in-place update of a captured tensor of shape {} that shares memory with another captured "
                      "tensor (shape {}) cannot be recorded; update the base tensor, or compute out of place",
             shape_str(lifted[k].sizes()), shape_str(lifted[j].sizes()));
  TracedProgram prog;
  prog.lifted = lifted;
  prog.lifted_updates = tracer.lifted_updates();
  prog.graph = tracer.take_graph();
  return prog;
}

}  // namespace

TracedProgram trace(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn,
                    const std::vector<Tensor>& examples) {
  Tracer tracer;
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < examples.size(); ++i) inputs.push_back(tracer.add_input(examples[i], "in" + std::to_string(i)));
  return finish(tracer, fn, inputs);
}

TracedProgram trace_types(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn,
                          const std::vector<ir::TensorType>& types) {
  Tracer tracer;
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < types.size(); ++i) inputs.push_back(tracer.add_input(types[i], "in" + std::to_string(i)));
  return finish(tracer, fn, inputs);
}

}  // namespace kiln
