// kiln/runtime/backend.cpp — the backend registry and the adapter for user backends.
#include "runtime/backend.h"

#include "base/error.h"
#include "runtime/pipeline.h"
#include "runtime/extend.h"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <shared_mutex>

namespace kiln::rt {

namespace {

struct Registry {
  std::shared_mutex mu;
  std::map<std::string, std::shared_ptr<const Backend>, std::less<>> backends;
  Registry() {
    for (auto b : {make_cpu_backend(), make_cuda_backend(), make_interpreter_backend(), make_eager_backend()}) backends.emplace(b->name(), b);
  }
};
Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: compiled functions may outlive main
  return *r;
}

// The executable of a user backend: its callable, checked and reported with its name.
class UserExecutable final : public Executable {
 public:
  UserExecutable(std::string backend, BackendCallable fn, size_t outputs)
      : backend_(std::move(backend)), fn_(std::move(fn)), outputs_(outputs) {}
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) const override {
    std::vector<Tensor> out;
    try {
      out = fn_(inputs);
    } catch (const std::exception& e) {
      fail("compile", "backend '{}' failed while running: {}", backend_, e.what());
    }
    if (out.size() != outputs_)
      fail("compile", "backend '{}' returned {} tensors where the graph has {} outputs", backend_, out.size(), outputs_);
    for (const Tensor& t : out)
      if (!t.defined()) fail("compile", "backend '{}' returned an undefined tensor", backend_);
    return out;
  }

 private:
  std::string backend_;
  BackendCallable fn_;
  size_t outputs_;
};

class UserBackend final : public Backend {
 public:
  UserBackend(std::string name, BackendFn fn, BackendOptions opts)
      : name_(std::move(name)), fn_(std::move(fn)), opts_(opts) {}
  const std::string& name() const override { return name_; }
  ir::OpLevel level() const override { return opts_.level; }
  CompileStatus compile(Compilation& c) const override {
    BackendCallable callable;
    try {
      callable = fn_(*c.graph, c.opts.example_inputs);
    } catch (const std::exception& e) {
      return CompileStatus::failure(fmt::format("backend '{}' failed to compile '{}': {}", name_, c.opts.name, e.what()));
    }
    if (!callable) return CompileStatus::failure(fmt::format("backend '{}' returned no callable for '{}'", name_, c.opts.name));
    CompileStatus s;
    s.exe = std::make_unique<UserExecutable>(name_, std::move(callable), c.graph->outputs().size());
    return s;
  }

 private:
  std::string name_;
  BackendFn fn_;
  BackendOptions opts_;
};

}  // namespace

void add_backend(std::shared_ptr<const Backend> b) {
  Registry& r = registry();
  std::unique_lock lock(r.mu);
  if (b->name().empty()) fail("register_backend", "a backend needs a name");
  if (r.backends.count(b->name())) fail("register_backend", "a backend called '{}' is already registered", b->name());
  r.backends.emplace(b->name(), std::move(b));
}

std::shared_ptr<const Backend> find_backend(std::string_view name, std::string_view op) {
  Registry& r = registry();
  std::shared_lock lock(r.mu);
  auto it = r.backends.find(name.empty() ? std::string_view("cpu") : name);
  if (it != r.backends.end()) return it->second;
  std::string names;
  for (const auto& [n, b] : r.backends) names += (names.empty() ? "\"" : ", \"") + n + "\"";
  fail(op, "unknown backend '{}'; registered backends: {}", name, names);
}

std::vector<std::string> backend_names() {
  Registry& r = registry();
  std::shared_lock lock(r.mu);
  std::vector<std::string> out;
  for (const auto& [n, b] : r.backends) out.push_back(n);
  return out;
}

}  // namespace kiln::rt

namespace kiln {

void register_backend(std::string name, BackendFn fn, BackendOptions opts) {
  if (!fn) fail("register_backend", "backend '{}' has no compile function", name);
  if (opts.level == OpLevel::Composite)
    fail("register_backend", "backend '{}': the level must be Core or Prim (composites always decompose)", name);
  rt::add_backend(std::make_shared<rt::UserBackend>(std::move(name), std::move(fn), opts));
}

std::vector<std::string> registered_backends() { return rt::backend_names(); }

}  // namespace kiln
