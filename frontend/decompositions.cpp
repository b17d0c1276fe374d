// kiln/frontend/decompositions.cpp — the decomposition table, indexed by OpKind.
//
// Built once from ir/ops.def: every composite-family op maps to its function through a
// switch over DecomposableOp with no default (a new one fails to compile until it has a rule);
// prims map to nothing. Custom ops' rules live in a map beside it. run_decomposition() is
// the single entry point the eager path and the interpreter share; trace_decomposition()
// is what the decompose pass inlines.
#include "frontend/decompositions.h"

#include "base/error.h"
#include "frontend/decompositions_detail.h"
#include "frontend/tracer.h"

#include <array>
#include <map>
#include <mutex>
#include <shared_mutex>

namespace kiln {

namespace {

using Builtin = std::vector<Tensor> (*)(const std::vector<Tensor>&, const ir::AttrList&);

#define KILN_DECOMP(name)                                                                  \
  [](const std::vector<Tensor>& in, const ir::AttrList& attrs) -> std::vector<Tensor> {    \
    return {decomp::name(decomp::DecompArgs{ir::OpKind::name, in, attrs})};                \
  }

Builtin composite_decomposition(ir::DecomposableOp op) {
  switch (op) {
    case ir::DecomposableOp::softmax: return KILN_DECOMP(softmax);
    case ir::DecomposableOp::log_softmax: return KILN_DECOMP(log_softmax);
    case ir::DecomposableOp::layer_norm: return KILN_DECOMP(layer_norm);
    case ir::DecomposableOp::rms_norm: return KILN_DECOMP(rms_norm);
    case ir::DecomposableOp::gelu: return KILN_DECOMP(gelu);
    case ir::DecomposableOp::silu: return KILN_DECOMP(silu);
    case ir::DecomposableOp::relu: return KILN_DECOMP(relu);
    case ir::DecomposableOp::mean: return KILN_DECOMP(mean);
    case ir::DecomposableOp::var: return KILN_DECOMP(var);
    case ir::DecomposableOp::linear: return KILN_DECOMP(linear);
    case ir::DecomposableOp::cross_entropy: return KILN_DECOMP(cross_entropy);
    case ir::DecomposableOp::matmul: return KILN_DECOMP(matmul);
    case ir::DecomposableOp::elu: return KILN_DECOMP(elu);
    case ir::DecomposableOp::leaky_relu: return KILN_DECOMP(leaky_relu);
    case ir::DecomposableOp::hardtanh: return KILN_DECOMP(hardtanh);
    case ir::DecomposableOp::hardswish: return KILN_DECOMP(hardswish);
    case ir::DecomposableOp::hardsigmoid: return KILN_DECOMP(hardsigmoid);
    case ir::DecomposableOp::mish: return KILN_DECOMP(mish);
    case ir::DecomposableOp::softplus: return KILN_DECOMP(softplus);
    case ir::DecomposableOp::logsumexp: return KILN_DECOMP(logsumexp);
    case ir::DecomposableOp::lerp: return KILN_DECOMP(lerp);
    case ir::DecomposableOp::addcmul: return KILN_DECOMP(addcmul);
    case ir::DecomposableOp::addcdiv: return KILN_DECOMP(addcdiv);
    case ir::DecomposableOp::nan_to_num: return KILN_DECOMP(nan_to_num);
    case ir::DecomposableOp::tril: return KILN_DECOMP(tril);
    case ir::DecomposableOp::triu: return KILN_DECOMP(triu);
    case ir::DecomposableOp::addmm: return KILN_DECOMP(addmm);
    case ir::DecomposableOp::baddbmm: return KILN_DECOMP(baddbmm);
  }
  return nullptr;
}
#undef KILN_DECOMP

const std::array<Builtin, ir::kNumOps>& builtins() {
  static const std::array<Builtin, ir::kNumOps> t = [] {
    std::array<Builtin, ir::kNumOps> out{};
    for (int k = 0; k < ir::kNumOps; ++k) {
      const ir::OpInfo& info = ir::op_info(static_cast<ir::OpKind>(k));
      if (info.family == ir::OpFamily::Decomposable) out[static_cast<size_t>(k)] = composite_decomposition(ir::as_decomposable(info.kind));
    }
    return out;
  }();
  return t;
}

struct CustomRules {
  std::shared_mutex mu;
  std::map<ir::OpKind, DecompositionFn> rules;
};
CustomRules& custom_rules() {
  static CustomRules* r = new CustomRules();
  return *r;
}

// The rule of a custom op, or an empty function.
DecompositionFn custom_rule(ir::OpKind op) {
  CustomRules& r = custom_rules();
  std::shared_lock lock(r.mu);
  auto it = r.rules.find(op);
  return it == r.rules.end() ? DecompositionFn() : it->second;
}

}  // namespace

bool has_decomposition(ir::OpKind op) {
  if (!ir::is_custom(op)) return builtins().at(static_cast<size_t>(op)) != nullptr;
  return static_cast<bool>(custom_rule(op));
}

std::vector<Tensor> run_decomposition(ir::OpKind op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs) {
  if (!ir::is_custom(op)) {
    if (Builtin b = builtins().at(static_cast<size_t>(op))) return b(inputs, attrs);
  } else if (DecompositionFn f = custom_rule(op)) {
    return f(inputs, attrs);
  }
  internal_fail("{} ({}) has no decomposition", ir::op_name(op), ir::level_name(ir::op_info(op).level));
}

void register_decomposition(ir::OpKind op, DecompositionFn fn) {
  if (!ir::is_custom(op)) internal_fail("register_decomposition: {} is a built-in op", ir::op_name(op));
  CustomRules& r = custom_rules();
  std::unique_lock lock(r.mu);
  if (!r.rules.emplace(op, std::move(fn)).second)
    internal_fail("register_decomposition: {} has a decomposition already", ir::op_name(op));
}

std::shared_ptr<ir::Graph> trace_rule(const ir::Node& n, const DecompositionFn& rule) {
  std::vector<ir::TensorType> types;
  for (const ir::Value* v : n.inputs()) types.push_back(v->type());
  const ir::AttrList attrs = n.attrs();
  TracedProgram sub = trace_types([&](const std::vector<Tensor>& in) { return rule(in, attrs); }, types);
  if (!sub.lifted.empty())
    internal_fail("decompose: the decomposition of {} captured {} eager tensor(s)", ir::op_name(n.op()),
                  sub.lifted.size());
  return sub.graph;
}

std::shared_ptr<ir::Graph> trace_decomposition(const ir::Node& n) {
  if (!has_decomposition(n.op())) return nullptr;
  const ir::OpKind op = n.op();
  return trace_rule(n, [op](const std::vector<Tensor>& in, const ir::AttrList& a) { return run_decomposition(op, in, a); });
}

}  // namespace kiln
