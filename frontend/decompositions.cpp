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
#include "ir/shape_fns.h"

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

// Core ops shaped by their decomposition return all their results.
#define KILN_DECOMP_N(name)                                                                \
  [](const std::vector<Tensor>& in, const ir::AttrList& attrs) -> std::vector<Tensor> {    \
    return decomp::name(decomp::DecompArgs{ir::OpKind::name, in, attrs});                  \
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
    case ir::DecomposableOp::max_pool2d_with_indices: return KILN_DECOMP_N(max_pool2d_with_indices);
    case ir::DecomposableOp::max_pool3d_with_indices: return KILN_DECOMP_N(max_pool3d_with_indices);
    case ir::DecomposableOp::avg_pool2d: return KILN_DECOMP_N(avg_pool2d);
    case ir::DecomposableOp::avg_pool3d: return KILN_DECOMP_N(avg_pool3d);
    case ir::DecomposableOp::adaptive_avg_pool2d: return KILN_DECOMP_N(adaptive_avg_pool2d);
    case ir::DecomposableOp::adaptive_avg_pool3d: return KILN_DECOMP_N(adaptive_avg_pool3d);
    case ir::DecomposableOp::native_layer_norm: return KILN_DECOMP_N(native_layer_norm);
    case ir::DecomposableOp::native_group_norm: return KILN_DECOMP_N(native_group_norm);
    case ir::DecomposableOp::embedding: return KILN_DECOMP_N(embedding);
    case ir::DecomposableOp::sort: return KILN_DECOMP_N(sort);
    case ir::DecomposableOp::topk: return KILN_DECOMP_N(topk);
    case ir::DecomposableOp::grid_sampler_2d: return KILN_DECOMP_N(grid_sampler_2d);
    case ir::DecomposableOp::col2im: return KILN_DECOMP_N(col2im);
    case ir::DecomposableOp::masked_scatter: return KILN_DECOMP_N(masked_scatter);
    case ir::DecomposableOp::slice_scatter: return KILN_DECOMP_N(slice_scatter);
    case ir::DecomposableOp::select_scatter: return KILN_DECOMP_N(select_scatter);
    case ir::DecomposableOp::flip: return KILN_DECOMP_N(flip);
    case ir::DecomposableOp::repeat: return KILN_DECOMP_N(repeat);
    case ir::DecomposableOp::reflection_pad1d: return KILN_DECOMP_N(reflection_pad1d);
    case ir::DecomposableOp::reflection_pad2d: return KILN_DECOMP_N(reflection_pad2d);
    case ir::DecomposableOp::reflection_pad3d: return KILN_DECOMP_N(reflection_pad3d);
    case ir::DecomposableOp::replication_pad1d: return KILN_DECOMP_N(replication_pad1d);
    case ir::DecomposableOp::replication_pad2d: return KILN_DECOMP_N(replication_pad2d);
    case ir::DecomposableOp::replication_pad3d: return KILN_DECOMP_N(replication_pad3d);
    case ir::DecomposableOp::cdist: return KILN_DECOMP_N(cdist);
    case ir::DecomposableOp::pdist: return KILN_DECOMP_N(pdist);
    case ir::DecomposableOp::scaled_dot_product_attention: return KILN_DECOMP_N(scaled_dot_product_attention);
    case ir::DecomposableOp::native_batch_norm: return KILN_DECOMP_N(native_batch_norm);
    case ir::DecomposableOp::native_dropout: return KILN_DECOMP_N(native_dropout);
    case ir::DecomposableOp::index: return KILN_DECOMP_N(index);
    case ir::DecomposableOp::index_put: return KILN_DECOMP_N(index_put);
    case ir::DecomposableOp::embedding_bag: return KILN_DECOMP_N(embedding_bag);
    case ir::DecomposableOp::upsample_nearest2d: return KILN_DECOMP_N(upsample_nearest2d);
    case ir::DecomposableOp::upsample_bilinear2d: return KILN_DECOMP_N(upsample_bilinear2d);
  }
  return nullptr;
}
#undef KILN_DECOMP
#undef KILN_DECOMP_N

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

namespace {

// The result types of an op shaped by its decomposition (ir::install_decomposition_shapes):
// the decomposition traced on the input types, which checks the arguments on the way.
std::vector<ir::TensorType> decomposition_shapes(ir::OpKind op, const std::vector<ir::TensorType>& inputs,
                                                 const ir::AttrList& attrs) {
  const TracedProgram sub =
      trace_types([&](const std::vector<Tensor>& in) { return run_decomposition(op, in, attrs); }, inputs);
  std::vector<ir::TensorType> out;
  for (const ir::Value* v : sub.graph->outputs()) out.push_back(v->type());
  return out;
}

const bool installed = (ir::install_decomposition_shapes(&decomposition_shapes), true);

}  // namespace

std::shared_ptr<ir::Graph> trace_decomposition(const ir::Node& n) {
  if (!has_decomposition(n.op())) return nullptr;
  const ir::OpKind op = n.op();
  return trace_rule(n, [op](const std::vector<Tensor>& in, const ir::AttrList& a) { return run_decomposition(op, in, a); });
}

}  // namespace kiln
