// kiln/nn/module.cpp — registration, traversal, modes, conversion and checkpoints of modules
// (nn/module.h).
#include "nn/module.h"

#include "base/error.h"
#include "frontend/grad_mode.h"
#include "frontend/ops_factory.h"
#include "io/safetensors.h"

#include <algorithm>
#include <atomic>
#include <ostream>
#include <sstream>

namespace kiln::nn {

Module::Module(std::string name) : name_(std::move(name)) { restamp(); }

void Module::restamp() {
  static std::atomic<uint64_t> count{0};
  stamp_ = ++count;
}

void Module::check_name(const std::string& name, const char* what) const {
  if (name.empty()) fail("register_" + std::string(what), "{} name can't be empty string \"\"", what);
  if (name.find('.') != std::string::npos)
    fail("register_" + std::string(what), "{} name can't contain \".\", got: {}", what, name);
  if (parameters_.contains(name) || buffers_.contains(name) || children_.contains(name))
    fail("register_" + std::string(what), "attribute '{}' already exists in {}", name, name_);
}

Tensor& Module::register_parameter(std::string name, Tensor tensor, bool requires_grad) {
  check_name(name, "parameter");
  if (tensor.defined()) {
    if (tensor.impl()->is_traced()) fail("register_parameter", "parameter '{}' is a traced tensor", name);
    if (requires_grad && !is_floating_point(tensor.dtype()))
      fail("register_parameter", "parameter '{}' of dtype {} cannot require grad: only floating point tensors can",
           name, dtype_name(tensor.dtype()));
    tensor.requires_grad_(requires_grad);
  }
  restamp();
  return parameters_.insert(std::move(name), std::move(tensor));
}

Tensor& Module::register_buffer(std::string name, Tensor tensor) {
  check_name(name, "buffer");
  restamp();
  return buffers_.insert(std::move(name), std::move(tensor));
}

void Module::collect(const std::string& prefix, bool params, bool bufs, bool recurse,
                     OrderedDict<std::string, Tensor>& out, std::vector<const TensorImpl*>* seen) const {
  auto add = [&](const OrderedDict<std::string, Tensor>& from) {
    for (const auto& item : from) {
      const Tensor& t = item.value();
      if (!t.defined()) continue;
      if (seen) {
        if (std::find(seen->begin(), seen->end(), t.impl()) != seen->end()) continue;
        seen->push_back(t.impl());
      }
      out.insert(prefix + item.key(), t);
    }
  };
  if (params) add(parameters_);
  if (bufs) add(buffers_);
  if (!recurse) return;
  for (const auto& child : children_)
    if (child.value()) child.value()->collect(prefix + child.key() + ".", params, bufs, true, out, seen);
}

OrderedDict<std::string, Tensor> Module::named_parameters(bool recurse) const {
  OrderedDict<std::string, Tensor> out("parameter");
  std::vector<const TensorImpl*> seen;
  collect("", true, false, recurse, out, &seen);
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const { return named_parameters(recurse).values(); }

OrderedDict<std::string, Tensor> Module::named_buffers(bool recurse) const {
  OrderedDict<std::string, Tensor> out("buffer");
  std::vector<const TensorImpl*> seen;
  collect("", false, true, recurse, out, &seen);
  return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const { return named_buffers(recurse).values(); }

OrderedDict<std::string, Tensor> Module::state_dict() const {
  OrderedDict<std::string, Tensor> out("state entry");
  collect("", true, true, true, out, nullptr);  // a shared tensor under each of its names, as PyTorch
  return out;
}

std::vector<std::shared_ptr<Module>> Module::children() const { return children_.values(); }

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_children() const { return children_; }

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_modules(const std::string& prefix, bool include_self) {
  OrderedDict<std::string, std::shared_ptr<Module>> out("module");
  std::vector<const Module*> seen;
  std::function<void(const std::string&, const std::shared_ptr<Module>&)> walk =
      [&](const std::string& path, const std::shared_ptr<Module>& m) {
        if (std::find(seen.begin(), seen.end(), m.get()) != seen.end()) return;
        seen.push_back(m.get());
        out.insert(path, m);
        for (const auto& c : m->children_)
          if (c.value()) walk(path.empty() ? c.key() : path + "." + c.key(), c.value());
      };
  std::shared_ptr<Module> self;
  try {
    self = shared_from_this();
  } catch (const std::bad_weak_ptr&) {
    fail("named_modules", "the module is not held by a std::shared_ptr (make it with std::make_shared or a holder)");
  }
  if (include_self) {
    walk(prefix, self);
  } else {
    seen.push_back(this);
    for (const auto& c : children_)
      if (c.value()) walk(prefix.empty() ? c.key() : prefix + "." + c.key(), c.value());
  }
  return out;
}

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) {
  return named_modules("", include_self).values();
}

void Module::train(bool on) {
  training_ = on;
  for (const auto& c : children_)
    if (c.value()) c.value()->train(on);
}

namespace {

// Converts t in place (its handles see the result), and its gradient.
void convert(const Tensor& t, const TensorOptions& opts) {
  if (!t.defined()) return;
  NoGradGuard no_grad;
  t.set_data(t.detach().to(opts));
  if (t.grad().defined()) t.grad().set_data(t.grad().detach().to(opts));
}

}  // namespace

void Module::to(Device device) {
  for (Tensor& t : state_dict().values()) convert(t, TensorOptions(device));
}

void Module::to(ScalarType dtype) {
  for (Tensor& t : state_dict().values())
    if (is_floating_point(t.dtype())) convert(t, TensorOptions(dtype));
}

void Module::to(Device device, ScalarType dtype) {
  to(device);
  to(dtype);
}

void Module::zero_grad(bool set_to_none) {
  for (Tensor& p : parameters()) {
    if (!p.grad().defined()) continue;
    if (set_to_none) {
      p.mutable_grad() = Tensor();
    } else {
      NoGradGuard no_grad;
      p.mutable_grad().zero_();
    }
  }
}

void Module::apply(const std::function<void(Module&)>& fn) {
  fn(*this);
  for (const auto& c : children_)
    if (c.value()) c.value()->apply(fn);
}

void Module::apply(const std::function<void(const std::string&, Module&)>& fn, const std::string& prefix) {
  fn(prefix, *this);
  for (const auto& c : children_)
    if (c.value()) c.value()->apply(fn, prefix.empty() ? c.key() : prefix + "." + c.key());
}

void Module::load_state_dict(const std::map<std::string, Tensor>& state, bool strict) {
  const OrderedDict<std::string, Tensor> own = state_dict();
  std::vector<std::string> missing, unexpected, mismatched;
  for (const auto& item : own) {
    auto it = state.find(item.key());
    if (it == state.end()) {
      missing.push_back(item.key());
      continue;
    }
    const Tensor& src = it->second;
    if (!src.defined() || src.sizes().vec() != item.value().sizes().vec())
      mismatched.push_back(fmt::format(
          "size mismatch for {}: copying a param with shape {} from checkpoint, the shape in current model is {}.",
          item.key(), src.defined() ? shape_str(src.sizes()) : std::string("(undefined)"),
          shape_str(item.value().sizes())));
  }
  for (const auto& [key, _] : state)
    if (!own.contains(key)) unexpected.push_back(key);
  auto quoted = [](const std::vector<std::string>& keys) {
    std::string s;
    for (const std::string& k : keys) s += (s.empty() ? "\"" : ", \"") + k + "\"";
    return s;
  };
  std::string errors;
  if (strict && !missing.empty()) errors += "\n\tMissing key(s) in state_dict: " + quoted(missing) + ".";
  if (strict && !unexpected.empty()) errors += "\n\tUnexpected key(s) in state_dict: " + quoted(unexpected) + ".";
  for (const std::string& m : mismatched) errors += "\n\t" + m;
  if (!errors.empty()) fail("load_state_dict", "Error(s) in loading state_dict for {}:{}", name_, errors);
  NoGradGuard no_grad;
  for (const auto& item : own) {
    auto it = state.find(item.key());
    if (it == state.end()) continue;
    Tensor dst = item.value();
    dst.copy_(it->second);
  }
}

void Module::save(const std::string& path, const std::map<std::string, std::string>& metadata) const {
  std::map<std::string, Tensor> tensors;
  for (const auto& item : state_dict()) tensors.emplace(item.key(), item.value());
  save_safetensors(tensors, path, metadata);
}

void Module::load(const std::string& path, bool strict) {
  load_state_dict(load_safetensors(path), strict);
}

void Module::pretty_print(std::ostream& os) const { os << name_ << "()"; }

void Module::pretty_print_tree(std::ostream& os, int indent) const {
  std::ostringstream head;
  pretty_print(head);
  std::string text = head.str();
  if (children_.is_empty()) {
    os << text;
    return;
  }
  // A module with children prints them inside its parentheses, one per line.
  if (text.size() >= 2 && text.substr(text.size() - 2) == "()") text.resize(text.size() - 1);
  else text += "(";
  os << text << "\n";
  for (const auto& c : children_) {
    os << std::string(static_cast<size_t>(indent + 2), ' ') << "(" << c.key() << "): ";
    if (c.value()) c.value()->pretty_print_tree(os, indent + 2);
    else os << "None";
    os << "\n";
  }
  os << std::string(static_cast<size_t>(indent), ' ') << ")";
}

std::ostream& operator<<(std::ostream& os, const Module& m) {
  m.pretty_print_tree(os, 0);
  return os;
}

}  // namespace kiln::nn
