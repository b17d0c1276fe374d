// kiln/nn/container.h — Sequential, ModuleList and ModuleDict, as torch::nn's.
//
// Sequential(Linear(4, 8), ReLU(), Linear(8, 1)) registers its modules as "0", "1", ... and
// forward() runs them in order, each on the previous one's result: every module in it has
// `Tensor forward(const Tensor&)`. ModuleList holds modules (registered the same way) and
// ModuleDict modules by name, for a parent's own forward to use.
#pragma once

#include "nn/module.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kiln::nn {

namespace detail {
template <typename M> std::shared_ptr<M> module_ptr(const ModuleHolder<M>& h) { return h.ptr(); }
template <typename M> std::shared_ptr<M> module_ptr(const std::shared_ptr<M>& p) { return p; }
}  // namespace detail

class SequentialImpl : public Module {
 public:
  SequentialImpl() : Module("Sequential") {}
  template <typename... Ms>
  explicit SequentialImpl(const Ms&... modules) : Module("Sequential") {
    (push_back(modules), ...);
  }

  template <typename M> void push_back(const M& module) { push_back(std::to_string(forwards_.size()), module); }
  template <typename M> void push_back(std::string name, const M& module) {
    auto ptr = detail::module_ptr(module);
    if (!ptr) fail("Sequential", "cannot add an empty module");
    register_module(std::move(name), ptr);
    forwards_.push_back([ptr](const Tensor& x) { return ptr->forward(x); });
  }

  Tensor forward(const Tensor& input) const {
    Tensor x = input;
    for (const auto& f : forwards_) x = f(x);
    return x;
  }
  size_t size() const { return forwards_.size(); }
  std::shared_ptr<Module> operator[](size_t i) const;
  // The module at i as its type; fails when it is another.
  template <typename T> T& at(size_t i) const {
    auto* m = dynamic_cast<T*>((*this)[i].get());
    if (!m) fail("Sequential", "module {} is a {}, not the type asked for", i, (*this)[i]->name());
    return *m;
  }

 private:
  std::vector<std::function<Tensor(const Tensor&)>> forwards_;
};
KILN_MODULE(Sequential);

class ModuleListImpl : public Module {
 public:
  ModuleListImpl() : Module("ModuleList") {}
  template <typename... Ms>
  explicit ModuleListImpl(const Ms&... modules) : Module("ModuleList") {
    (push_back(modules), ...);
  }
  template <typename M> void push_back(const M& module) {
    auto ptr = detail::module_ptr(module);
    if (!ptr) fail("ModuleList", "cannot add an empty module");
    register_module(std::to_string(modules_.size()), ptr);
    modules_.push_back(ptr);
  }
  size_t size() const { return modules_.size(); }
  std::shared_ptr<Module> operator[](size_t i) const;
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};
KILN_MODULE(ModuleList);

class ModuleDictImpl : public Module {
 public:
  ModuleDictImpl() : Module("ModuleDict") {}
  // Adds a module under `key`, or replaces the one there.
  template <typename M> void insert(const std::string& key, const M& module) {
    auto ptr = detail::module_ptr(module);
    if (!ptr) fail("ModuleDict", "cannot add an empty module under '{}'", key);
    if (children_.contains(key)) replace_module(key, ptr);
    else register_module(key, ptr);
  }
  std::shared_ptr<Module> operator[](const std::string& key) const;
  bool contains(const std::string& key) const { return children_.contains(key); }
  size_t size() const { return children_.size(); }
  std::vector<std::string> keys() const { return children_.keys(); }
  std::vector<std::shared_ptr<Module>> values() const { return children_.values(); }
  auto begin() const { return children_.begin(); }
  auto end() const { return children_.end(); }
};
KILN_MODULE(ModuleDict);

}  // namespace kiln::nn
