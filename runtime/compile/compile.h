// kiln/runtime/compile/compile.h — kiln::compile: trace a function once per input signature, fuse,
// compile to native kernels and cache by guards.
//
//   auto f = kiln::compile([](const Tensor& a, const Tensor& b) { return softmax(a * b, -1); });
//   Tensor y = f(a, b);                 // traced, compiled, cached
//   std::cout << f.explain(a, b);       // graphs, guards, kernels, LLVM IR, assembly, timings
//   CompileStats s = f.stats();         // traces, compiles, cache_hits, cache_misses, kernels
//
// Parameters may be Tensor (by value or const&) or scalars (integers, double, bool), which
// are guarded by value. Results may be a Tensor, a std::tuple of Tensors or a
// std::vector<Tensor>. Tensors the callable captures (weights) are lifted into graph inputs
// by reference at trace time. A compiled function may be called from several threads.
#pragma once

#include "frontend/tensor.h"
#include "guards/guard_set.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace kiln {

enum class Dynamic : uint8_t { Auto, True, False };

struct CompileOptions {
  // A registered backend (runtime/backend.h): "cpu" (generated kernels), "interpreter" (the
  // reference interpreter on the traced, decomposed graph), "eager" (no tracing) or one a
  // user registered (kiln::register_backend, runtime/extend.h). Empty: the inputs' device,
  // "cuda" for cuda tensors, else "cpu". An unknown name is an error listing the registered ones.
  std::string backend{};
  // Which input sizes become symbolic (docs/dynamic_shapes.md). Auto: the first compile is
  // static; a later miss in which only sizes differ recompiles with the dims that changed
  // symbolic (and logs "automatic dynamic: a.size(0)" under KILN_LOG=recompiles). True: every
  // dim of size >= 2 is symbolic from the first compile. False: always static. Sizes 0 and 1
  // are always specialized; kiln::mark_dynamic / mark_static override per tensor and dim.
  Dynamic dynamic = Dynamic::Auto;
  // Entries kept per function; past it calls run eagerly and a warning names the guard that
  // keeps failing.
  int cache_size_limit = 8;
  // An op whose result's size depends on tensor values (nonzero, unique, masked_select,
  // item(), ...) cannot be traced. By default compile() then runs the function eagerly for
  // that signature (an entry with static guards) and warns once; with fullgraph the call
  // raises kiln::DataDependentError instead.
  bool fullgraph = false;
  // cuda programs: replay warm calls as CUDA graphs, one launch a call (torch.compile's
  // mode="reduce-overhead"; runtime/cuda/cuda_graphs.h, docs/cuda.md). Inputs not at the
  // address they had on the previous call are copied into the graph's buffers, and outputs are
  // copies of its own; programs a graph cannot replay run as usual.
  bool cuda_graphs = false;
  std::string name = "fn";  // used in logs, debug dumps and errors
  // Names of the parameters in guards and messages ("a" gives "a.size(0)"); missing or empty
  // entries read "arg0", "arg1", ...
  std::vector<std::string> arg_names{};
};

// Makes dim `dim` of `t` symbolic whenever a compiled function is traced with it (unless its
// size is 0 or 1), whatever the function's `dynamic` option; mark_static keeps it static.
// The mark lives on the tensor (and its copies), as torch._dynamo.mark_dynamic.
void mark_dynamic(const Tensor& t, int64_t dim);
void mark_static(const Tensor& t, int64_t dim);

struct CompileStats {
  int64_t traces = 0;
  int64_t compiles = 0;
  int64_t cache_hits = 0;
  int64_t cache_misses = 0;
  int64_t kernels = 0;  // kernels of the entry last run
  // Compiles whose machine code was not generated but linked: from a module this process
  // compiled before, from the disk cache, from the remote (Redis) cache (docs/caching.md).
  int64_t code_from_memory = 0;
  int64_t code_from_disk = 0;
  int64_t code_from_remote = 0;
};

namespace detail {

// An argument of a compiled function: a tensor or a scalar (int64_t, double, bool).
using ArgValue = std::variant<Tensor, int64_t, double, bool>;
// What the guards read of each argument (the TensorImpl of a tensor, a scalar as it is);
// valid while `args` lives.
std::vector<guards::GuardArg> guard_args(const std::vector<ArgValue>& args);
using TraceFn = std::function<std::vector<Tensor>(const std::vector<ArgValue>&)>;

class CompiledState;
// use_lowerings = false: users' registered lowerings do not apply (kiln's eager composites).
std::shared_ptr<CompiledState> make_compiled_state(CompileOptions opts, bool use_lowerings = true);
std::vector<Tensor> call_compiled(CompiledState& s, const std::vector<ArgValue>& args, const TraceFn& fn);
std::string explain_compiled(CompiledState& s, const std::vector<ArgValue>& args, const TraceFn& fn);
CompileStats compiled_stats(const CompiledState& s);

template <typename T> ArgValue to_arg(const T& v) {
  using D = std::decay_t<T>;
  if constexpr (std::is_same_v<D, Tensor>) return v;
  else if constexpr (std::is_same_v<D, bool>) return v;
  else if constexpr (std::is_integral_v<D>) return static_cast<int64_t>(v);
  else if constexpr (std::is_floating_point_v<D>) return static_cast<double>(v);
  else static_assert(sizeof(D) == 0, "kiln::compile: parameters must be Tensor, an integer, double or bool");
}

template <typename T> std::decay_t<T> from_arg(const ArgValue& a) {
  using D = std::decay_t<T>;
  if constexpr (std::is_same_v<D, Tensor>) return std::get<Tensor>(a);
  else if constexpr (std::is_same_v<D, bool>) return std::get<bool>(a);
  else if constexpr (std::is_integral_v<D>) return static_cast<D>(std::get<int64_t>(a));
  else return static_cast<D>(std::get<double>(a));
}

template <typename R> struct Results {
  static_assert(std::is_same_v<R, Tensor>, "kiln::compile: results must be Tensor, std::tuple<Tensor...> or std::vector<Tensor>");
  static std::vector<Tensor> flatten(R r) { return {std::move(r)}; }
  static R unflatten(std::vector<Tensor> v) { return std::move(v.at(0)); }
};
template <> struct Results<std::vector<Tensor>> {
  static std::vector<Tensor> flatten(std::vector<Tensor> r) { return r; }
  static std::vector<Tensor> unflatten(std::vector<Tensor> v) { return v; }
};
template <typename... Ts> struct Results<std::tuple<Ts...>> {
  static_assert((std::is_same_v<Ts, Tensor> && ...), "kiln::compile: tuple results must hold Tensors");
  static std::vector<Tensor> flatten(std::tuple<Ts...> r) {
    return std::apply([](auto&... t) { return std::vector<Tensor>{std::move(t)...}; }, r);
  }
  static std::tuple<Ts...> unflatten(std::vector<Tensor> v) {
    return unflatten_impl(v, std::index_sequence_for<Ts...>{});
  }
  template <size_t... I> static std::tuple<Ts...> unflatten_impl(std::vector<Tensor>& v, std::index_sequence<I...>) {
    return std::tuple<Ts...>{std::move(v.at(I))...};
  }
};

}  // namespace detail

template <typename F> class CompiledFunction {
 public:
  CompiledFunction(F fn, CompileOptions opts)
      : fn_(std::make_shared<F>(std::move(fn))), state_(detail::make_compiled_state(std::move(opts))) {}

  template <typename... Args> auto operator()(Args&&... args) const {
    using R = std::decay_t<std::invoke_result_t<F&, Args...>>;
    std::vector<detail::ArgValue> vals{detail::to_arg(args)...};
    return detail::Results<R>::unflatten(detail::call_compiled(*state_, vals, trace_fn<Args...>()));
  }

  // The graph at each stage, the guards, the kernels and their generated code, and timings
  // for a compilation with these arguments (compiled afresh; the cache is not touched).
  template <typename... Args> std::string explain(Args&&... args) const {
    std::vector<detail::ArgValue> vals{detail::to_arg(args)...};
    return detail::explain_compiled(*state_, vals, trace_fn<Args...>());
  }

  CompileStats stats() const { return detail::compiled_stats(*state_); }

 private:
  template <typename... Args> detail::TraceFn trace_fn() const {
    using R = std::decay_t<std::invoke_result_t<F&, Args...>>;
    // A raw pointer keeps the std::function small enough to need no allocation per call.
    return [fn = fn_.get()](const std::vector<detail::ArgValue>& v) {
      return invoke<R, Args...>(*fn, v, std::index_sequence_for<Args...>{});
    };
  }
  template <typename R, typename... Args, size_t... I>
  static std::vector<Tensor> invoke(F& fn, const std::vector<detail::ArgValue>& v, std::index_sequence<I...>) {
    return detail::Results<R>::flatten(fn(detail::from_arg<Args>(v[I])...));
  }

  std::shared_ptr<F> fn_;
  std::shared_ptr<detail::CompiledState> state_;
};

// A module holder (a type naming its ContainedType: nn::Linear, nn::Sequential) has an overload
// of its own in nn/compiled_module.h, which adds the modules' train/eval modes to the guards.
template <typename F> concept ModuleHolderLike = requires { typename F::ContainedType; };

template <typename F>
  requires(!ModuleHolderLike<F>)
CompiledFunction<F> compile(F fn, CompileOptions opts = {}) {
  return CompiledFunction<F>(std::move(fn), std::move(opts));
}

}  // namespace kiln
