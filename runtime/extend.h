// kiln/runtime/extend.h — extending kiln: user backends and custom lowerings.
//
//   kiln::register_backend("mine", [](const kiln::ir::Graph& g, const std::vector<kiln::Tensor>& ex) {
//     return [](const std::vector<kiln::Tensor>& in) -> std::vector<kiln::Tensor> { ... };
//   }, kiln::BackendOptions{.level = kiln::OpLevel::Core});
//   auto f = kiln::compile(fn, {.backend = "mine"});
//
// A user backend is called once per new signature with the graph, decomposed to its level
// and simplified, and one example tensor per graph input (the call's own tensors); under
// Dynamic::True the graph's sizes are symbols (the example tensors have this call's sizes).
// Its callable runs on every call that hits that entry. Guards, caching, dynamic shapes and
// recompile logs stay kiln's. A backend that throws is reported with its name.
//
//   kiln::register_lowering("cpu", "gelu", kiln::Lowering::extern_call("my_gelu", fn));
//
// overrides how one op lowers in a built-in backend: as an extern step that calls `fn` on
// the op's buffers (inputs, attributes, preallocated contiguous outputs; nothing fuses
// across it), or as a rewrite into other ops written with the tensor API. The plan and
// explain() name the lowering used ("extern gelu [lowering my_gelu](b0 -> b1)"). Lowerings
// apply to compiled graphs, not to eager ops: an extern call may run the op it replaces.
// Registration is thread-safe; registering a name or an (backend, op) pair twice is an error.
#pragma once

#include "frontend/decompositions.h"
#include "frontend/tensor.h"
#include "ir/graph.h"
#include "ir/op.h"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

using OpLevel = ir::OpLevel;

struct BackendOptions {
  OpLevel level = OpLevel::Core;  // the level of the graphs the backend receives
};

using BackendCallable = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs)>;
using BackendFn = std::function<BackendCallable(const ir::Graph& graph, const std::vector<Tensor>& example_inputs)>;

void register_backend(std::string name, BackendFn fn, BackendOptions opts = {});
std::vector<std::string> registered_backends();

// fn(inputs, attributes, outputs): writes the outputs (contiguous, allocated by kiln).
using ExternKernelFn =
    std::function<void(const std::vector<Tensor>& inputs, const ir::AttrList& attrs, const std::vector<Tensor>& outputs)>;

struct Lowering {
  std::string name{};          // shown in plans and explain()
  ExternKernelFn call{};       // an extern step ...
  DecompositionFn rewrite{};   // ... or a rewrite into other ops
  static Lowering extern_call(std::string name, ExternKernelFn fn) { return {std::move(name), std::move(fn), {}}; }
  static Lowering rewrite_as(std::string name, DecompositionFn fn) { return {std::move(name), {}, std::move(fn)}; }
};

// `op`: a built-in op's name ("gelu") or a custom op's ("mylib::softclip"). Rewrites work
// on every built-in backend; extern calls on the backends that run plans ("cpu").
void register_lowering(std::string_view backend, std::string_view op, Lowering lowering);

namespace rt {
// The lowering registered for (backend, op), or nullptr. The pointer stays valid.
const Lowering* find_lowering(std::string_view backend, ir::OpKind op);
// Whether a user registered an extern call for an op on `backend` (always false when `use` is
// false: a compilation that ignores lowerings); for passes that must leave such nodes alone.
std::function<bool(ir::OpKind)> users_call_lowerings(bool use, std::string backend);
}  // namespace rt

}  // namespace kiln
