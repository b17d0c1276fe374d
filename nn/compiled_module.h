// kiln/nn/compiled_module.h — kiln::compile(module): a module's forward as one compiled program.
//
//   nn::Sequential net(nn::Linear(4, 8), nn::ReLU(), nn::Linear(8, 1));
//   auto fast = kiln::compile(net);
//   Tensor y = fast(x);              // compiled forward; loss.backward() runs a compiled backward
//
// Parameters and buffers are read by reference, as every tensor a compiled function captures
// (an optimizer's in-place update is seen by the next call; a batch norm's running statistics
// are updated in place). Two extra integer arguments, which compile() guards by value, make the
// rest of what a trace depends on part of the guards:
//   - the modes (dropout, batch norm trace differently): 1 when every module trains, 0 when none
//     does, and the mask of which ones do otherwise;
//   - the tree: a hash of every module's registration stamp, so that a submodule replaced or a
//     tensor registered after compile() is traced again, not read stale.
#pragma once

#include "nn/module.h"
#include "runtime/compile/compile.h"

#include <memory>
#include <tuple>
#include <utility>

namespace kiln::nn {

// The two guard arguments above, for m and its descendants.
struct ModuleSignature {
  int64_t modes = 0, tree = 0;
};
ModuleSignature module_signature(const Module& m);

template <typename M> class CompiledModule {
 public:
  CompiledModule(std::shared_ptr<M> module, CompileOptions opts)
      : module_(module), fn_(kiln::compile(Forward{module}, std::move(opts))) {}

  template <typename... Args> auto operator()(const Args&... args) const {
    const ModuleSignature s = module_signature(*module_);
    return fn_(args..., s.modes, s.tree);
  }
  template <typename... Args> std::string explain(const Args&... args) const {
    const ModuleSignature s = module_signature(*module_);
    return fn_.explain(args..., s.modes, s.tree);
  }
  CompileStats stats() const { return fn_.stats(); }
  const std::shared_ptr<M>& module() const { return module_; }

 private:
  // forward(args...) with the two trailing signature arguments dropped: they only key the guards.
  struct Forward {
    std::shared_ptr<M> m;
    template <typename... Args> auto operator()(const Args&... args) const {
      return call(std::forward_as_tuple(args...), std::make_index_sequence<sizeof...(Args) - 2>{});
    }
    template <typename Tuple, size_t... I> auto call(const Tuple& t, std::index_sequence<I...>) const {
      return m->forward(std::get<I>(t)...);
    }
  };

  std::shared_ptr<M> module_;
  CompiledFunction<Forward> fn_;
};

}  // namespace kiln::nn

namespace kiln {

template <typename H>
  requires ModuleHolderLike<H>
nn::CompiledModule<typename H::ContainedType> compile(const H& module, CompileOptions opts = {}) {
  if (module.is_empty()) fail("compile", "the module holder is empty");
  return nn::CompiledModule<typename H::ContainedType>(module.ptr(), std::move(opts));
}

}  // namespace kiln
