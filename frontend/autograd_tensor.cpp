// kiln/frontend/autograd_tensor.cpp — the Tensor methods of autograd (frontend/tensor.h), and
// the history of device moves and in-place writes.
#include "frontend/autograd.h"
#include "frontend/autograd_inplace.h"

#include "base/error.h"
#include "frontend/autograd_meta.h"
#include "frontend/autograd_node.h"

#include <atomic>

namespace kiln {

using autograd::AutogradMeta;
using autograd::meta_of;

namespace {

std::atomic<unsigned> g_hook_handle{1};

const Tensor& undefined() {
  static const Tensor none;
  return none;
}

void check_eager(const Tensor& t, const char* op) {
  if (!t.defined()) fail(op, "called on an undefined tensor");
  if (t.is_traced())
    fail(op, "autograd state cannot be read or set on a traced tensor; inside a compiled function, differentiate "
             "with kiln::grad / value_and_grad / vjp, or call the compiled function on tensors that require grad");
}

}  // namespace

Tensor& Tensor::requires_grad_(bool requires_grad) {
  check_eager(*this, "requires_grad_");
  AutogradMeta* m = meta_of(*this);
  if (m && m->grad_fn && !requires_grad)
    fail("requires_grad_", "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                           "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
  if (requires_grad && !is_floating_point())
    fail("requires_grad_", "only Tensors of floating point and complex dtype can require gradients");
  if (!m && !requires_grad) return *this;
  autograd::ensure_meta(*this).requires_grad = requires_grad;
  return *this;
}

bool Tensor::requires_grad() const { return defined() && impl()->requires_grad(); }

const Tensor& Tensor::grad() const {
  const AutogradMeta* m = meta_of(*this);
  if (!m) return undefined();
  if (m->grad_fn) {  // a non-leaf keeps its gradient only with retain_grad
    if (auto slot = m->grad_fn->slot_if_any(m->output_nr); slot && slot->retain) return slot->retained;
    return m->grad;  // backward(inputs=...) asked for it by name
  }
  return m->grad;
}

Tensor& Tensor::mutable_grad() {
  check_eager(*this, "mutable_grad");
  return autograd::ensure_meta(*this).grad;
}

bool Tensor::is_leaf() const {
  const AutogradMeta* m = meta_of(*this);
  return !m || !m->grad_fn;
}

std::shared_ptr<autograd::Node> Tensor::grad_fn() const {
  const AutogradMeta* m = meta_of(*this);
  return m ? m->grad_fn : nullptr;
}

uint32_t Tensor::output_nr() const {
  const AutogradMeta* m = meta_of(*this);
  return m ? m->output_nr : 0;
}

void Tensor::retain_grad() const {
  check_eager(*this, "retain_grad");
  if (!requires_grad()) fail("retain_grad", "can't retain_grad on Tensor that has requires_grad=False");
  AutogradMeta* m = meta_of(*this);
  if (!m->grad_fn) return;  // a leaf keeps its gradient anyway
  m->retains_grad = true;
  m->grad_fn->slot(m->output_nr)->retain = true;
}

bool Tensor::retains_grad() const {
  const AutogradMeta* m = meta_of(*this);
  return m && m->retains_grad;
}

void Tensor::set_data(const Tensor& src) const {
  if (!defined() || !src.defined()) fail("set_data", "both tensors must be defined");
  if (impl()->is_traced() || src.impl()->is_traced()) fail("set_data", "a traced tensor's data cannot be replaced");
  impl()->set_data(*src.impl());
}

Tensor Tensor::detach() const {
  if (!defined()) fail("detach", "called on an undefined tensor");
  if (is_traced()) return autograd::detach_traced(*this);
  const TensorImpl& i = *impl();
  return Tensor(make_intrusive<TensorImpl>(i.storage(), i.dtype(), i.sizes(), i.strides(), i.storage_offset()));
}

Tensor& Tensor::detach_() {
  check_eager(*this, "detach_");
  AutogradMeta* m = meta_of(*this);
  if (!m) return *this;
  if (m->view) fail("detach_", "Can't detach views in-place. Use detach() instead.");
  m->grad_fn = nullptr;
  m->requires_grad = false;
  m->output_nr = 0;
  return *this;
}

unsigned Tensor::register_hook(std::function<Tensor(const Tensor&)> hook) const {
  check_eager(*this, "register_hook");
  if (!requires_grad()) fail("register_hook", "cannot register a hook on a tensor that doesn't require gradient");
  const unsigned h = g_hook_handle.fetch_add(1);
  AutogradMeta* m = meta_of(*this);
  if (m->grad_fn)
    m->grad_fn->slot(m->output_nr)->hooks.emplace_back(h, std::move(hook));
  else
    m->hooks.emplace_back(h, std::move(hook));
  return h;
}

void Tensor::remove_hook(unsigned handle) const {
  AutogradMeta* m = meta_of(*this);
  if (!m) return;
  auto drop = [&](std::vector<std::pair<unsigned, autograd::Hook>>& hooks) {
    for (auto it = hooks.begin(); it != hooks.end(); ++it)
      if (it->first == handle) {
        hooks.erase(it);
        return;
      }
  };
  drop(m->hooks);
  if (m->grad_fn)
    if (auto slot = m->grad_fn->slot_if_any(m->output_nr)) drop(slot->hooks);
}

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph,
                      const std::vector<Tensor>& inputs) const {
  autograd::backward({*this}, gradient.defined() ? std::vector<Tensor>{gradient} : std::vector<Tensor>{}, retain_graph,
                     create_graph, inputs);
}

int64_t Tensor::_version() const {
  if (!defined() || is_traced() || !impl()->storage()) return 0;
  return static_cast<int64_t>(impl()->storage()->version());
}

}  // namespace kiln
