// kiln/frontend/decompositions.cpp — the decomposition table, indexed by OpKind.
//
// Generated from ir/ops.def: every Core and Composite op maps to decomp::<name>, written in
// frontend/decompositions_<family>.cpp (a new op fails to compile until it has one); prims
// map to nothing. Custom ops' rules live in a map beside it. run_decomposition() is
// the single entry point the eager path and the interpreter share; trace_decomposition()
// is what the decompose pass inlines.
#include "frontend/decompositions.h"

#include "base/error.h"
#include "frontend/decompositions_detail.h"
#include "frontend/symbolic.h"
#include "frontend/tracer.h"
#include "ir/shape_env.h"
#include "ir/shape_fns.h"

#include <array>
#include <iterator>
#include <map>
#include <mutex>
#include <shared_mutex>

namespace kiln {

namespace {

using Builtin = std::vector<Tensor> (*)(const std::vector<Tensor>&, const ir::AttrList&);

// A rule's results as a list (Core ops shaped by their decomposition return all of theirs).
std::vector<Tensor> results(Tensor t) { return {std::move(t)}; }
std::vector<Tensor> results(std::vector<Tensor> v) { return v; }

// One entry per row of ir/ops.def, in order: a prim has none; every Core and Composite op has
// decomp::<name> (frontend/decompositions_<family>.cpp). A row without its function fails to
// compile here.
#define KILN_DECOMP_Prim(name) nullptr
#define KILN_DECOMP_Core(name)                                                             \
  [](const std::vector<Tensor>& in, const ir::AttrList& attrs) -> std::vector<Tensor> {    \
    return results(decomp::name(decomp::DecompArgs{ir::OpKind::name, in, attrs}));        \
  }
#define KILN_DECOMP_Composite(name) KILN_DECOMP_Core(name)
#define KILN_OP(name, family, level, traits, schema) KILN_DECOMP_##level(name),
constexpr Builtin kBuiltins[] = {
#include "ir/ops.def"
};
#undef KILN_DECOMP_Prim
#undef KILN_DECOMP_Core
#undef KILN_DECOMP_Composite
static_assert(std::size(kBuiltins) == ir::kNumOps, "one decomposition entry per op of ir/ops.def");

Builtin builtin(ir::OpKind op) { return kBuiltins[static_cast<size_t>(op)]; }

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
  if (!ir::is_custom(op)) return builtin(op) != nullptr;
  return static_cast<bool>(custom_rule(op));
}

std::vector<Tensor> run_decomposition(ir::OpKind op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs) {
  // Constants the rule makes live on its inputs' device (a rule without inputs keeps the
  // surrounding default).
  Device device = default_device();
  bool any = false;
  for (const Tensor& t : inputs) {
    if (!t.defined()) continue;
    if (!any || t.device().is_cuda()) device = t.device();
    any = true;
    if (device.is_cuda()) break;
  }
  const DefaultDeviceScope scope(device);
  if (!ir::is_custom(op)) {
    if (Builtin b = builtin(op)) return b(inputs, attrs);
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

namespace {

// The result types of an op shaped by its decomposition (ir::install_decomposition_shapes):
// the decomposition traced on the input types, which checks the arguments on the way.
std::vector<ir::TensorType> decomposition_shapes(ir::OpKind op, const std::vector<ir::TensorType>& inputs,
                                                 const ir::AttrList& attrs) {
  // Tracing with symbolic sizes decides guards in the sizes' ShapeEnv: a graph text parsed
  // without one (no symbols(...) header, outside a trace) cannot type this op.
  if (!ir::ShapeEnv::current())
    for (const ir::TensorType& t : inputs)
      if (!t.is_static())
        fail(ir::op_name(op),
             "an input of type {} has symbolic sizes, and this op's result type comes from tracing its "
             "decomposition, which needs the symbols declared (a symbols(...) header on the graph text)",
             t.str());
  const TracedProgram sub =
      trace_types([&](const std::vector<Tensor>& in) { return run_decomposition(op, in, attrs); }, inputs);
  std::vector<ir::TensorType> out;
  for (const ir::Value* v : sub.graph->outputs()) out.push_back(v->type());
  return out;
}

}  // namespace

void wire_decomposition_shapes() { ir::install_decomposition_shapes(&decomposition_shapes); }

namespace decomp {

std::array<bool, 3> output_mask(const DecompArgs& a) {
  const std::vector<int64_t>& m = a.attr<std::vector<int64_t>>("output_mask");
  if (m.size() != 3) internal_fail("{}: output_mask has {} entries, expected 3", ir::op_name(a.op), m.size());
  return {m[0] != 0, m[1] != 0, m[2] != 0};
}

Tensor left_out(const Tensor& like) { return sym_full({ir::Expr(0)}, 0, like.dtype(), like.device()); }

std::vector<Tensor> masked_results(std::vector<Tensor> r, std::array<bool, 3> mask) {
  for (size_t i = 0; i < r.size() && i < mask.size(); ++i)
    if (!mask[i]) r[i] = Tensor();
  return r;
}

}  // namespace decomp

std::shared_ptr<ir::Graph> trace_decomposition(const ir::Node& n) {
  if (!has_decomposition(n.op())) return nullptr;
  const ir::OpKind op = n.op();
  return trace_rule(n, [op](const std::vector<Tensor>& in, const ir::AttrList& a) { return run_decomposition(op, in, a); });
}

}  // namespace kiln
