// kiln/frontend/derivatives.cpp — the derivative table (frontend/derivatives.h), filled once
// by every family's add_<family>_derivatives on first use.
#include "frontend/derivatives.h"

#include "base/error.h"

namespace kiln::autograd {

Derivative& DerivativeTable::rule(ir::OpKind op, RuleFn fn, uint32_t saved_inputs, uint32_t saved_outputs,
                                  uint32_t only_for_other) {
  const size_t k = static_cast<size_t>(op);
  if (entries_.size() <= k) {
    entries_.resize(k + 1);
    present_.resize(k + 1, false);
  }
  if (present_[k]) internal_fail("derivative of {} registered twice", ir::op_name(op));
  entries_[k] = Derivative{fn, saved_inputs, saved_outputs, only_for_other, nullptr};
  present_[k] = true;
  return entries_[k];
}

void DerivativeTable::none(ir::OpKind op, const char* reason) {
  rule(op, nullptr);
  entries_[static_cast<size_t>(op)].not_differentiable = reason;
}

const Derivative* DerivativeTable::find(ir::OpKind op) const {
  const size_t k = static_cast<size_t>(op);
  return k < present_.size() && present_[k] ? &entries_[k] : nullptr;
}

namespace {

const DerivativeTable& table() {
  static const DerivativeTable t = [] {
    DerivativeTable d;
    add_unary_derivatives(d);
    add_binary_derivatives(d);
    add_ternary_derivatives(d);
    add_cast_derivatives(d);
    add_reduction_derivatives(d);
    add_moments_derivatives(d);
    add_scan_derivatives(d);
    add_view_derivatives(d);
    add_shape_derivatives(d);
    add_index_derivatives(d);
    add_factory_derivatives(d);
    add_random_derivatives(d);
    add_matmul_derivatives(d);
    add_linear_derivatives(d);
    add_conv_derivatives(d);
    add_sort_derivatives(d);
    add_softmax_derivatives(d);
    add_norm_derivatives(d);
    add_pool_derivatives(d);
    add_attention_derivatives(d);
    add_dropout_derivatives(d);
    add_activation_derivatives(d);
    return d;
  }();
  return t;
}

}  // namespace

const Derivative* derivative(ir::OpKind op) { return table().find(op); }

bool has_rule(ir::OpKind op) {
  const Derivative* d = derivative(op);
  return d && d->fn;
}

const Tensor& GradArgs::in(size_t i) const {
  const Tensor& t = inputs.at(i);
  if (!t.defined()) internal_fail("derivative of {}: input {} was not saved", ir::op_name(op), i);
  return t;
}

const Tensor& GradArgs::out(size_t i) const {
  const Tensor& t = outputs.at(i);
  if (!t.defined()) internal_fail("derivative of {}: output {} was not saved", ir::op_name(op), i);
  return t;
}

Tensor GradArgs::grad(size_t i) const {
  if (has_grad(i)) return grads[i];
  return output_meta.at(i).zeros();
}

}  // namespace kiln::autograd
