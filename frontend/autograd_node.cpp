// kiln/frontend/autograd_node.cpp — nodes and saved tensors (frontend/autograd_node.h).
#include "frontend/autograd_node.h"

#include "base/error.h"
#include "frontend/derivatives.h"
#include "frontend/grad_mode.h"
#include "frontend/ops.h"
#include "frontend/symbolic.h"

#include <atomic>
#include <cctype>

namespace kiln::autograd {

namespace {

std::atomic<uint64_t> g_sequence{0};

// PyTorch's legacy type name of a tensor, as its autograd errors print it.
std::string legacy_type_name(ScalarType dt, Device device) {
  const char* base = "Float";
  switch (dt) {
    case ScalarType::Bool: base = "Bool"; break;
    case ScalarType::UInt8: base = "Byte"; break;
    case ScalarType::Int8: base = "Char"; break;
    case ScalarType::Int16: base = "Short"; break;
    case ScalarType::Int32: base = "Int"; break;
    case ScalarType::Int64: base = "Long"; break;
    case ScalarType::Half: base = "Half"; break;
    case ScalarType::BFloat16: base = "BFloat16"; break;
    case ScalarType::Float: base = "Float"; break;
    case ScalarType::Double: base = "Double"; break;
  }
  return fmt::format("torch.{}{}Tensor", device.is_cuda() ? "cuda." : "", base);
}

// An alias of t's storage and geometry with no autograd history.
Tensor bare_alias(const Tensor& t) {
  const TensorImpl& i = *t.impl();
  return Tensor(make_intrusive<TensorImpl>(i.storage(), i.dtype(), i.sizes(), i.strides(), i.storage_offset()));
}

uint64_t version_of(const Tensor& t) {
  const Storage& s = t.impl()->storage();
  return s ? s->version() : 0;
}

}  // namespace

TensorMeta TensorMeta::of(const Tensor& t) { return TensorMeta{t.dtype(), t.device(), sym_sizes(t)}; }

Tensor TensorMeta::zeros() const { return sym_full(sizes, 0, dtype, device); }

Node::Node() : sequence_nr_(g_sequence.fetch_add(1, std::memory_order_relaxed)) {}

std::shared_ptr<OutputSlot> Node::slot(uint32_t i) {
  if (slots_.size() <= i) slots_.resize(i + 1);
  if (!slots_[i]) slots_[i] = std::make_shared<OutputSlot>();
  return slots_[i];
}

std::shared_ptr<OutputSlot> Node::slot_if_any(uint32_t i) const { return i < slots_.size() ? slots_[i] : nullptr; }

// ---- saved tensors ---------------------------------------------------------------------------

SavedTensor::SavedTensor(const Tensor& t, bool is_output) : saved_(t.defined()), is_output_(is_output) {
  if (!saved_) return;
  version_ = version_of(t);
  requires_grad_ = t.impl()->requires_grad();
  if (const AutogradMeta* m = meta_of(t)) {
    output_nr_ = m->output_nr;
    if (m->grad_fn) grad_fn_name_ = m->grad_fn->name();
  }
  // An output keeps no history (its history is the node that saves it: a cycle).
  data_ = is_output ? bare_alias(t) : t;
}

Tensor SavedTensor::unpack(const std::shared_ptr<Node>& owner, uint32_t output_nr) const {
  if (!saved_) return {};
  if (released_)
    fail("backward",
         "Trying to backward through the graph a second time (or directly access saved tensors after they have "
         "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
         "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
         "if you need to access saved tensors after calling backward.");
  const uint64_t now = version_of(data_);
  if (now != version_) {
    std::string sizes = "[";
    for (int64_t d = 0; d < data_.dim(); ++d) sizes += (d ? ", " : "") + std::to_string(data_.size(d));
    sizes += "]";
    const std::string which = grad_fn_name_.empty() ? std::string()
                                                     : fmt::format(", which is output {} of {},", output_nr_, grad_fn_name_);
    fail("backward",
         "one of the variables needed for gradient computation has been modified by an inplace operation: [{} {}]{}"
         " is at version {}; expected version {} instead. Hint: enable anomaly detection to find the operation "
         "that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True).",
         legacy_type_name(data_.dtype(), data_.device()), sizes, which, now, version_);
  }
  if (is_output_ && requires_grad_ && GradMode::is_enabled()) {
    Tensor t = bare_alias(data_);
    set_history(t, owner, output_nr);
    return t;
  }
  return data_;
}

void SavedTensor::release() {
  if (!saved_) return;
  data_ = Tensor();
  released_ = true;
}

// ---- nodes --------------------------------------------------------------------------------------

AccumulateGrad::AccumulateGrad(Tensor leaf) : leaf_(std::move(leaf)) {
  set_output_meta({TensorMeta::of(leaf_)});
}

std::vector<Tensor> AccumulateGrad::apply(std::vector<Tensor> grads) {
  Tensor g = std::move(grads.at(0));
  if (!g.defined()) return {};
  AutogradMeta& m = ensure_meta(leaf_);
  for (const auto& [handle, hook] : m.hooks) {
    Tensor changed = hook(g);
    if (changed.defined()) g = changed;
  }
  // The gradient keeps its history only in a backward that creates a graph (double backward).
  if (!GradMode::is_enabled()) g = g.detach();
  m.grad = m.grad.defined() ? m.grad + g : g;
  return {};
}

OpNode::OpNode(ir::OpKind op, ir::AttrList attrs) : op_(op), attrs_(std::move(attrs)) {}

std::string OpNode::name() const { return backward_name(op_); }

std::vector<Tensor> OpNode::apply(std::vector<Tensor> grads) {
  const Derivative* d = derivative(op_);
  if (!d || !d->fn) internal_fail("{} has no derivative rule but was recorded", ir::op_name(op_));
  const std::shared_ptr<Node> self = shared_from_this();
  GradArgs a{op_, attrs_, {}, {}, input_meta, output_meta(), std::move(grads), {}};
  for (const SavedTensor& s : saved_inputs) a.inputs.push_back(s.unpack(nullptr, 0));
  for (size_t i = 0; i < saved_outputs.size(); ++i) a.outputs.push_back(saved_outputs[i].unpack(self, static_cast<uint32_t>(i)));
  for (const Edge& e : next_edges()) a.needs.push_back(e.valid());
  std::vector<Tensor> out = d->fn(a);
  if (out.size() > input_meta.size())
    internal_fail("derivative of {} returned {} gradients for {} inputs", ir::op_name(op_), out.size(), input_meta.size());
  out.resize(input_meta.size());
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i].defined() || !a.need(i)) {
      out[i] = Tensor();
      continue;
    }
    const TensorMeta& m = input_meta[i];
    if (out[i].dtype() != m.dtype || sym_sizes(out[i]) != m.sizes)
      internal_fail("derivative of {}: the gradient of input {} is {}{}, the input is {}{}", ir::op_name(op_), i,
                    dtype_short_name(out[i].dtype()), ir::str(sym_sizes(out[i])), dtype_short_name(m.dtype),
                    ir::str(m.sizes));
  }
  return out;
}

void OpNode::release_saved() {
  for (SavedTensor& s : saved_inputs) s.release();
  for (SavedTensor& s : saved_outputs) s.release();
}

FunctionNode::FunctionNode(std::string name, Fn fn, std::function<void()> release)
    : name_(std::move(name)), fn_(std::move(fn)), release_(std::move(release)) {}

void FunctionNode::release_saved() {
  if (release_) release_();
}

std::string backward_name(ir::OpKind op) {
  std::string out;
  bool upper = true;
  for (char c : ir::op_name(op)) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out + "Backward0";
}

}  // namespace kiln::autograd
