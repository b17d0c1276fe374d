// kiln/passes/decompositions.cpp — the decomposition table, indexed by OpKind.
//
// Built once from ir/ops.def: every composite op maps to its function through a switch over
// CompositeOp with no default (a new composite fails to compile until it has one); prims map
// to nullptr. run_decomposition() is the single entry point the eager path, the interpreter
// and the decompose pass share.
#include "passes/decompositions.h"

#include "passes/decompositions_detail.h"

#include <array>

namespace kiln::passes {

namespace {

#define KILN_DECOMP(name)                                                                  \
  [](const std::vector<Tensor>& in, const ir::AttrList& attrs) -> std::vector<Tensor> {    \
    return {detail::name(detail::DecompArgs{ir::OpKind::name, in, attrs})};                \
  }

Decomposition composite_decomposition(ir::CompositeOp op) {
  switch (op) {
    case ir::CompositeOp::softmax: return KILN_DECOMP(softmax);
    case ir::CompositeOp::log_softmax: return KILN_DECOMP(log_softmax);
    case ir::CompositeOp::layer_norm: return KILN_DECOMP(layer_norm);
    case ir::CompositeOp::rms_norm: return KILN_DECOMP(rms_norm);
    case ir::CompositeOp::gelu: return KILN_DECOMP(gelu);
    case ir::CompositeOp::silu: return KILN_DECOMP(silu);
    case ir::CompositeOp::relu: return KILN_DECOMP(relu);
    case ir::CompositeOp::mean: return KILN_DECOMP(mean);
    case ir::CompositeOp::var: return KILN_DECOMP(var);
    case ir::CompositeOp::linear: return KILN_DECOMP(linear);
    case ir::CompositeOp::cross_entropy: return KILN_DECOMP(cross_entropy);
    case ir::CompositeOp::matmul: return KILN_DECOMP(matmul);
  }
  return nullptr;
}
#undef KILN_DECOMP

const std::array<Decomposition, ir::kNumOps>& table() {
  static const std::array<Decomposition, ir::kNumOps> t = [] {
    std::array<Decomposition, ir::kNumOps> out{};
    for (int k = 0; k < ir::kNumOps; ++k) {
      const ir::OpInfo& info = ir::op_info(static_cast<ir::OpKind>(k));
      if (info.family == ir::OpFamily::Composite) out[static_cast<size_t>(k)] = composite_decomposition(ir::as_composite(info.kind));
    }
    return out;
  }();
  return t;
}

}  // namespace

Decomposition decomposition_for(ir::OpKind op) { return table().at(static_cast<size_t>(op)); }

std::vector<Tensor> run_decomposition(ir::OpKind op, const std::vector<Tensor>& inputs, const ir::AttrList& attrs) {
  Decomposition d = decomposition_for(op);
  if (!d) internal_fail("{} ({}) has no decomposition", ir::op_name(op), ir::level_name(ir::op_info(op).level));
  return d(inputs, attrs);
}

}  // namespace kiln::passes
