// kiln/frontend/autograd_record.cpp — recording an eager op's history (frontend/autograd.h).
//
// dispatch() comes here when grad mode is on and an input requires grad. The op runs with grad
// mode off (so nothing inside it records), then:
//   - an op with a derivative rule gets an OpNode: the metadata of every input and output, the
//     inputs and outputs its rule saves (frontend/derivatives.h), and an edge per input; its
//     floating outputs require grad with the node as grad_fn;
//   - an op that is not differentiable returns outputs that do not require grad;
//   - a composite without a rule of its own runs its decomposition with grad mode on, so that
//     its ops record one by one;
//   - a custom op has no derivative, and a gradient through it would be silently zero: an
//     error names it.
// A view op's output remembers its base and geometry when the base requires grad, for in-place
// writes into the view (frontend/autograd_inplace.cpp).
#include "frontend/autograd_record.h"

#include "base/error.h"
#include "frontend/autograd_meta.h"
#include "frontend/autograd_node.h"
#include "frontend/derivatives.h"
#include "frontend/dispatch.h"
#include "frontend/grad_mode.h"

namespace kiln::autograd {

namespace {

bool differentiable_dtype(ScalarType t) { return is_floating_point(t); }

// The base a view of `input` shares storage with: input's own base when input is a view.
Tensor view_base(const Tensor& input) {
  const AutogradMeta* m = meta_of(input);
  return m && m->view ? m->view->base : input;
}

}  // namespace

bool any_requires_grad(const std::vector<Tensor>& inputs) {
  for (const Tensor& t : inputs)
    if (t.defined() && t.impl()->requires_grad()) return true;
  return false;
}

std::vector<Tensor> record(const OpCall& call) {
  const ir::OpInfo& info = ir::op_info(call.op);
  if (info.family == ir::OpFamily::Custom)
    fail(info.name, "custom op '{}' has no derivative, and an input requires grad; run it under NoGradGuard or "
                    "detach() its inputs", info.name);
  const Derivative* d = derivative(call.op);
  if (!d) {
    if (info.level == ir::OpLevel::Prim) internal_fail("prim {} has no derivative entry", info.name);
    std::vector<Tensor> outs = run_composite_eager(call);  // its ops record their own history
    distinct_from_inputs(call, outs);
    return outs;
  }
  std::vector<Tensor> outs;
  {
    NoGradGuard no_grad;
    OpCall all = call;  // the backward may read any output (max pooling's indices)
    all.unused_outputs = 0;
    outs = dispatch(std::move(all));
  }
  return attach_history(call, std::move(outs));
}

std::vector<Tensor> attach_history(const OpCall& call, std::vector<Tensor> outs) {
  const ir::OpInfo& info = ir::op_info(call.op);
  const Derivative* d = derivative(call.op);
  if (!d) internal_fail("attach_history: {} has no derivative entry", info.name);
  if (d->not_differentiable) return outs;

  auto node = std::make_shared<OpNode>(call.op, call.attrs);
  node->input_meta.reserve(call.inputs.size());
  for (const Tensor& in : call.inputs) {
    node->input_meta.push_back(TensorMeta::of(in));
    Edge e = differentiable_dtype(in.dtype()) ? gradient_edge(in) : Edge{};
    node->mutable_next_edges().push_back(std::move(e));
  }
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    bool save = d->saved_inputs & bit(static_cast<int>(i));
    if (save && (d->only_for_other & bit(static_cast<int>(i))) && call.inputs.size() == 2)
      save = node->next_edges()[1 - i].valid();
    node->saved_inputs.emplace_back(save ? call.inputs[i] : Tensor(), false);
  }
  std::vector<TensorMeta> out_meta;
  for (const Tensor& o : outs) out_meta.push_back(TensorMeta::of(o));
  node->set_output_meta(std::move(out_meta));
  const bool view = info.has(ir::traits::View);
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!differentiable_dtype(outs[i].dtype()) || !(d->outputs & bit(static_cast<int>(i)))) continue;
    set_history(outs[i], node, static_cast<uint32_t>(i));
    if (view && !outs[i].is_traced()) {
      const TensorImpl& o = *outs[i].impl();
      meta_of(outs[i])->view = std::make_shared<ViewInfo>(ViewInfo{view_base(call.inputs.at(0)), o.sizes().vec(),
                                                                   o.strides().vec(), o.storage_offset()});
    }
  }
  for (size_t i = 0; i < outs.size(); ++i)
    node->saved_outputs.emplace_back((d->saved_outputs & bit(static_cast<int>(i))) ? outs[i] : Tensor(), true);
  return outs;
}

}  // namespace kiln::autograd
