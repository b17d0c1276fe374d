// kiln/frontend/autograd_meta.cpp — a tensor's autograd state (frontend/autograd_meta.h).
#include "frontend/autograd_meta.h"

#include "frontend/autograd_node.h"

namespace kiln::autograd {

AutogradMeta& ensure_meta(const Tensor& t) {
  if (auto* m = meta_of(t)) return *m;
  t.impl()->set_autograd_meta(std::make_unique<AutogradMeta>());
  return *meta_of(t);
}

Edge gradient_edge(const Tensor& t) {
  AutogradMeta* m = meta_of(t);
  if (!m || !m->requires_grad) return {};
  if (m->grad_fn) return {m->grad_fn, m->output_nr};
  std::shared_ptr<Node> acc = m->grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t);
    m->grad_accumulator = acc;
  }
  return {acc, 0};
}

void set_history(const Tensor& t, const std::shared_ptr<Node>& fn, uint32_t output_nr) {
  AutogradMeta& m = ensure_meta(t);
  m.requires_grad = true;
  m.grad_fn = fn;
  m.output_nr = output_nr;
}

}  // namespace kiln::autograd
