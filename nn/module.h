// kiln/nn/module.h — the base of every layer, as torch::nn::Module, and the holders that name
// them (`Linear` for `LinearImpl`), as libtorch's TORCH_MODULE.
//
// A module registers its parameters (tensors that require grad), buffers (state such as a batch
// norm's running statistics) and submodules under names; the dotted paths of the tree name them
// in named_parameters(), state_dict() and checkpoints ("encoder.fc1.weight"), as in PyTorch.
// Registration returns a handle to the registered tensor; members keep such handles, and
// to(device/dtype) converts each tensor in place (Tensor::set_data), so the handles stay valid.
//
// Checkpoints: save(path) writes state_dict() as safetensors (io/safetensors.h);
// load(path) and load_state_dict() copy values into the registered tensors. Strict loading
// refuses missing and unexpected keys and shape mismatches, naming every key, as PyTorch's
// load_state_dict does.
#pragma once

#include "frontend/tensor.h"
#include "nn/ordered_dict.h"

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln::nn {

template <typename Contained> class ModuleHolder;

class Module : public std::enable_shared_from_this<Module> {
 public:
  explicit Module(std::string name = "Module");
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The type's name, as printed ("Linear").
  const std::string& name() const { return name_; }

  // A parameter requires grad unless requires_grad is false. An undefined tensor registers an
  // absent optional parameter (a Linear without bias): it is skipped by parameters() and
  // checkpoints, as PyTorch's None parameters are.
  Tensor& register_parameter(std::string name, Tensor tensor, bool requires_grad = true);
  Tensor& register_buffer(std::string name, Tensor tensor);
  template <typename M> std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module) {
    static_assert(std::is_base_of_v<Module, M>, "register_module takes a kiln::nn::Module");
    check_name(name, "submodule");
    children_.insert(std::move(name), module);
    restamp();
    return module;
  }
  template <typename M> std::shared_ptr<M> register_module(std::string name, const ModuleHolder<M>& holder) {
    return register_module(std::move(name), holder.ptr());
  }
  // Replaces a registered submodule (as `self.fc = nn.Linear(...)` would in PyTorch).
  template <typename M> std::shared_ptr<M> replace_module(const std::string& name, std::shared_ptr<M> module) {
    children_[name] = module;
    restamp();
    return module;
  }

  // Recursive by default, in registration order, each tensor once (a tensor registered
  // twice, as tied weights are, is listed under its first name).
  std::vector<Tensor> parameters(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  OrderedDict<std::string, std::shared_ptr<Module>> named_children() const;
  // This module first (include_self), then its descendants depth-first.
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true);
  OrderedDict<std::string, std::shared_ptr<Module>> named_modules(const std::string& prefix = "",
                                                                 bool include_self = true);

  // Training mode, for this module and every descendant (dropout, batch norm read it).
  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  // Changes whenever this module registers or replaces something (a process-wide count), so
  // that compiled modules notice a changed tree.
  uint64_t stamp() const { return stamp_; }
  // f(module) for this module and every descendant, depth-first, without building paths (the
  // per-call mode check of compiled modules).
  template <typename F> void for_each_module(F&& f) const {
    f(*this);
    for (const auto& c : children_)
      if (c.value()) c.value()->for_each_module(f);
  }

  // Converts every parameter and buffer in place (floating ones only, for a dtype), and their
  // gradients.
  void to(Device device);
  void to(ScalarType dtype);
  void to(Device device, ScalarType dtype);

  // set_to_none (the default, as in PyTorch 2): gradients become undefined; otherwise zeroed.
  void zero_grad(bool set_to_none = true);

  // fn on this module, then on each descendant (pre-order, as libtorch).
  void apply(const std::function<void(Module&)>& fn);
  void apply(const std::function<void(const std::string&, Module&)>& fn, const std::string& prefix = "");

  // Parameters and buffers by dotted path: each module's own parameters, then its buffers, then
  // its submodules', as PyTorch orders them; a tensor registered under two names (tied
  // weights) is listed under both, as PyTorch's state_dict lists it.
  OrderedDict<std::string, Tensor> state_dict() const;
  // Copies values (converting dtype, never shape) into the registered tensors, without
  // recording history.
  void load_state_dict(const std::map<std::string, Tensor>& state, bool strict = true);
  void save(const std::string& path, const std::map<std::string, std::string>& metadata = {}) const;
  void load(const std::string& path, bool strict = true);

  // "Linear(in_features=4, out_features=8, bias=true)"; containers print their children.
  virtual void pretty_print(std::ostream& os) const;

 protected:
  void check_name(const std::string& name, const char* what) const;
  void restamp();

  std::string name_;
  bool training_ = true;
  uint64_t stamp_ = 0;
  OrderedDict<std::string, Tensor> parameters_{"parameter"};
  OrderedDict<std::string, Tensor> buffers_{"buffer"};
  OrderedDict<std::string, std::shared_ptr<Module>> children_{"submodule"};

 private:
  // seen: skips tensors already listed (null: lists a shared tensor under every name).
  void collect(const std::string& prefix, bool params, bool bufs, bool recurse,
               OrderedDict<std::string, Tensor>& out, std::vector<const TensorImpl*>* seen) const;
  void pretty_print_tree(std::ostream& os, int indent) const;
  friend std::ostream& operator<<(std::ostream& os, const Module& m);
};

std::ostream& operator<<(std::ostream& os, const Module& m);

// Shares one module: `Linear fc(4, 8); fc->weight; fc(x)` (forward). Copies share the module.
template <typename Contained> class ModuleHolder {
 public:
  using ContainedType = Contained;

  // Constructs the module from its arguments (a holder given alone is copied, not wrapped).
  template <typename... Args>
    requires(!(sizeof...(Args) == 1 && (std::is_base_of_v<ModuleHolder, std::decay_t<Args>> || ...)))
  explicit ModuleHolder(Args&&... args) : impl_(std::make_shared<Contained>(std::forward<Args>(args)...)) {}
  ModuleHolder(std::nullptr_t) {}  // NOLINT: empty, to be assigned later
  ModuleHolder(std::shared_ptr<Contained> module) : impl_(std::move(module)) {}  // NOLINT

  Contained* operator->() const { return checked(); }
  Contained& operator*() const { return *checked(); }
  const std::shared_ptr<Contained>& ptr() const { return impl_; }
  Contained* get() const { return impl_.get(); }
  bool is_empty() const { return impl_ == nullptr; }

  template <typename... Args> decltype(auto) operator()(Args&&... args) const {
    return checked()->forward(std::forward<Args>(args)...);
  }
  // The module's own operator[] (Sequential, ModuleList).
  template <typename Arg> decltype(auto) operator[](Arg&& arg) const { return (*checked())[std::forward<Arg>(arg)]; }

 private:
  Contained* checked() const {
    if (!impl_) fail("nn", "accessing an empty ModuleHolder");
    return impl_.get();
  }
  std::shared_ptr<Contained> impl_;
};

}  // namespace kiln::nn

// Declares `Name` as the holder of `NameImpl`, as libtorch's TORCH_MODULE.
#define KILN_MODULE(Name)                                                  \
  class Name : public ::kiln::nn::ModuleHolder<Name##Impl> {               \
   public:                                                                 \
    using ::kiln::nn::ModuleHolder<Name##Impl>::ModuleHolder;              \
  }
