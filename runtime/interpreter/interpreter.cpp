// kiln/runtime/interpreter/interpreter.cpp — the interpreter's dispatch over op families, and whole graphs.
//
// Prims run their reference kernels (runtime/interp_*.cpp); composite nodes run their
// decomposition (passes/decompositions.h) on the eager tensors, as the eager op does.
#include "runtime/interpreter/interpreter.h"

#include "base/error.h"
#include "frontend/custom_op.h"
#include "frontend/decompositions.h"
#include "ir/shape_fns.h"
#include "runtime/interpreter/interp_kernels.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace kiln::rt {

namespace interp {

Tensor empty_contiguous(IntArrayRef sizes, ScalarType dtype) {
  auto storage = make_intrusive<StorageImpl>(checked_nbytes("empty", sizes, dtype), Device());
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), dtype, sizes));
}

}  // namespace interp

std::vector<Tensor> interpret_op(ir::OpKind op, const std::vector<Tensor>& in, const ir::AttrList& attrs) {
  const ir::OpInfo& info = ir::op_info(op);
  for (const Tensor& t : in) {
    if (!t.defined()) fail(info.name, "received an undefined tensor");
    if (t.is_traced()) internal_fail("{}: the interpreter received a traced tensor", info.name);
    if (!t.device().is_cpu()) fail(info.name, "the interpreter runs on the cpu, got a tensor on {}", t.device().str());
  }
  auto need = [&](size_t n) {
    if (in.size() != n) internal_fail("{} expects {} tensor inputs, got {}", info.name, n, in.size());
  };
  // A Core op of a prim family (index's embedding, sort's topk) runs its decomposition too.
  if (info.level != ir::OpLevel::Prim && info.family != ir::OpFamily::Custom) return run_decomposition(op, in, attrs);
  switch (info.family) {
    case ir::OpFamily::Unary: need(1); return {interp::unary(ir::as_unary(op), in[0])};
    case ir::OpFamily::Binary: need(2); return {interp::binary(ir::as_binary(op), in[0], in[1], attrs)};
    case ir::OpFamily::Ternary: need(3); return {interp::ternary(ir::as_ternary(op), in[0], in[1], in[2])};
    case ir::OpFamily::Cast: need(1); return {interp::cast(ir::as_cast(op), in[0], attrs)};
    case ir::OpFamily::Reduction: need(1); return {interp::reduction(ir::as_reduction(op), in[0], attrs)};
    case ir::OpFamily::Scan: need(1); return {interp::scan(ir::as_scan(op), in[0], attrs)};
    case ir::OpFamily::View: need(1); return {interp::view(ir::as_view(op), in[0], attrs)};
    case ir::OpFamily::Shape: return {interp::shape(ir::as_shape(op), in, attrs)};
    case ir::OpFamily::Index: return {interp::index(ir::as_index(op), in, attrs)};
    case ir::OpFamily::Factory: need(0); return {interp::factory(ir::as_factory(op), attrs)};
    case ir::OpFamily::Random: need(0); return {interp::random(ir::as_random(op), attrs)};
    case ir::OpFamily::Matmul: need(2); return {interp::matmul(ir::as_matmul(op), in[0], in[1])};
    case ir::OpFamily::Conv: return {interp::conv(ir::as_conv(op), in, attrs)};
    case ir::OpFamily::Sort: need(1); return {interp::sort(ir::as_sort(op), in[0], attrs)};
    // A composite node runs its decomposition, prim by prim, exactly as the eager op does.
    KILN_CASE_COMPOSITE_FAMILIES: return run_decomposition(op, in, attrs);
    // A custom op runs its author's eager implementation.
    case ir::OpFamily::Custom: return run_custom_op(op, in, attrs);
  }
  internal_fail("bad op family for {}", info.name);
}

namespace {

using Bindings = std::map<std::string, int64_t>;

// Replaces symbolic size attributes by their values under the bindings.
ir::AttrList concretize(const ir::AttrList& attrs, const Bindings& b) {
  std::vector<ir::AttrValue> out = attrs.values();
  for (ir::AttrValue& v : out) {
    if (auto* e = std::get_if<ir::Expr>(&v)) {
      if (!e->is_const()) v = ir::Expr(e->evaluate(b));
    } else if (auto* list = std::get_if<std::vector<ir::Expr>>(&v)) {
      for (ir::Expr& x : *list)
        if (!x.is_const()) x = ir::Expr(x.evaluate(b));
    }
  }
  return ir::AttrList(std::move(out));
}

}  // namespace

namespace {
// Replaced faults are kept until exit, not freed: a concurrent interpret() may still hold the
// old one. (Owned by a static list, so leak checkers see them as reachable.)
std::atomic<const InterpretFault*> g_fault{nullptr};
std::mutex g_faults_mu;
std::vector<std::unique_ptr<InterpretFault>> g_faults;
}  // namespace

void set_interpret_fault_for_testing(InterpretFault fault) {
  const InterpretFault* p = nullptr;
  if (fault) {
    std::lock_guard<std::mutex> lock(g_faults_mu);
    g_faults.push_back(std::make_unique<InterpretFault>(std::move(fault)));
    p = g_faults.back().get();
  }
  g_fault.store(p, std::memory_order_release);
}

Bindings bind_graph_inputs(const ir::Graph& g, const std::vector<Tensor>& inputs, std::string_view op) {
  if (inputs.size() != g.inputs().size())
    fail(op, "the graph takes {} inputs, got {}", g.inputs().size(), inputs.size());
  Bindings b;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::TensorType& ty = g.inputs()[i]->type();
    const Tensor& t = inputs[i];
    if (t.dtype() != ty.dtype || t.dim() != ty.rank())
      fail(op, "input {} should be {}, got {}{}", i, ty.str(), dtype_short_name(t.dtype()), shape_str(t.sizes()));
    for (size_t d = 0; d < ty.sizes.size(); ++d) {
      if (!ty.sizes[d].is_symbol()) continue;
      auto [it, fresh] = b.emplace(ty.sizes[d].symbol_name(), t.sizes()[d]);
      if (!fresh && it->second != t.sizes()[d])
        fail(op, "input {} dim {}: symbol {} is {} here but {} elsewhere", i, d, ty.sizes[d].symbol_name(),
             t.sizes()[d], it->second);
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::TensorType& ty = g.inputs()[i]->type();
    for (size_t d = 0; d < ty.sizes.size(); ++d) {
      if (ty.sizes[d].is_const() && ty.sizes[d].as_const() == inputs[i].sizes()[d]) continue;
      std::vector<std::string> symbols;
      ty.sizes[d].collect_symbols(symbols);
      for (const std::string& s : symbols)
        if (!b.count(s))
          fail(op, "input {} dim {} has size {}, but no input has a dim of size {} alone to bind it", i, d,
               ty.sizes[d].str(), s);
      if (ty.sizes[d].is_const())
        fail(op, "input {} dim {} should be {}, got {}", i, d, ty.sizes[d].as_const(), inputs[i].sizes()[d]);
      const std::optional<int64_t> expected = ty.sizes[d].evaluate_exact(b);  // a wrapped product matches nothing
      if (!expected)
        fail(op, "input {} dim {} has size {}, which overflows int64 at these sizes", i, d, ty.sizes[d].str());
      if (*expected != inputs[i].sizes()[d])
        fail(op, "input {} dim {} should be {} = {}, got {}", i, d, ty.sizes[d].str(), *expected, inputs[i].sizes()[d]);
    }
  }
  return b;
}

std::vector<Tensor> interpret(const ir::Graph& g, const std::vector<Tensor>& inputs, SizeChecks checks) {
  const InterpretFault* fault = g_fault.load(std::memory_order_acquire);
  const Bindings bindings = bind_graph_inputs(g, inputs, "interpret");
  std::unordered_map<const ir::Value*, Tensor> env;
  for (size_t i = 0; i < inputs.size(); ++i) env[g.inputs()[i]] = inputs[i];
  for (const ir::Node* n : g.nodes()) {
    std::vector<Tensor> args;
    args.reserve(n->inputs().size());
    for (const ir::Value* v : n->inputs()) args.push_back(env.at(v));
    const ir::AttrList attrs = concretize(n->attrs(), bindings);
    // The parser verified the graph for all sizes its symbols may take, but a relation it could
    // not decide (a reshape of [s0] to [s0*s0//6]) is decided only here, at these sizes. A node
    // of a composite family runs its decomposition on these tensors, whose ops check themselves.
    if (checks == SizeChecks::AtTheseSizes && !bindings.empty() &&
        !ir::is_composite_family(ir::op_info(n->op()).family)) {
      std::vector<ir::TensorType> types;
      types.reserve(args.size());
      for (const Tensor& t : args) types.emplace_back(t.dtype(), ir::to_exprs(t.sizes().vec()), t.device());
      ir::infer_types(n->op(), types, attrs);
    }
    std::vector<Tensor> outs = interpret_op(n->op(), args, attrs);
    if (fault) (*fault)(*n, outs);
    for (size_t k = 0; k < outs.size(); ++k) env[n->output(k)] = std::move(outs[k]);
  }
  std::vector<Tensor> results;
  for (const ir::Value* v : g.outputs()) results.push_back(env.at(v));
  return results;
}

}  // namespace kiln::rt
