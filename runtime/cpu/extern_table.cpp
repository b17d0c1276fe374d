// kiln/runtime/cpu/extern_table.cpp — which library kernel computes each prim that no generated
// kernel does, and each Core op the cpu runs whole (runtime/cpu/extern_kernels.h), switched on
// the op family with no default.
#include "runtime/cpu/extern_kernels.h"

namespace kiln::rt {

namespace {

struct Library {
  BuiltinExtern fn = nullptr;
  std::string_view name;
};

Library library_of(ir::OpKind op) {
  const ir::OpInfo& info = ir::op_info(op);
  // addmm_activation decomposes, but the backend folds a product, its bias and relu back into
  // one after (passes/matmul_epilogues.h), and the library computes that.
  if (op == ir::OpKind::addmm_activation) return {&extern_matmul, "blas"};
  // The Core ops of a family (index's embedding, sort's topk) decompose, unless the cpu runs
  // them whole (trait Extern).
  if (info.level != ir::OpLevel::Prim && !info.has(ir::traits::Extern)) return {};
  switch (info.family) {
    case ir::OpFamily::Matmul: return {&extern_matmul, "blas"};
    case ir::OpFamily::Conv: return {&extern_conv, "onednn"};
    case ir::OpFamily::Sort: return {&extern_sort, "sort"};
    case ir::OpFamily::Index: return {&extern_index, "index"};
    case ir::OpFamily::Random: return {&extern_random, "random"};
    case ir::OpFamily::Attention:
      // The backward has none: its decomposition compiles (and an eager call runs it as one
      // program, runtime/eager/eager.cpp).
      if (op == ir::OpKind::scaled_dot_product_attention) return {&extern_attention, "attention"};
      return {};
    case ir::OpFamily::Shape:
      // cat: a library copy where a backend asks for one (the cpu: a cat of hundreds of
      // inputs; runtime/cpu/backend_cpu.cpp); else computed in kernels.
      if (op == ir::OpKind::cat) return {&extern_cat, "copy"};
      return {};
    case ir::OpFamily::Scan:  // generated kernels (Scan groups), compiled and eager
    case ir::OpFamily::Unary:
    case ir::OpFamily::Binary:
    case ir::OpFamily::Ternary:
    case ir::OpFamily::Cast:
    case ir::OpFamily::Reduction:
    case ir::OpFamily::View:
    case ir::OpFamily::Factory:
    case ir::OpFamily::Activation:
    case ir::OpFamily::Softmax:
    case ir::OpFamily::Moments:
    case ir::OpFamily::Norm:
    case ir::OpFamily::Linear:
    case ir::OpFamily::Pointwise:
    case ir::OpFamily::Pool:
    case ir::OpFamily::Resample:
    case ir::OpFamily::Dropout:
    case ir::OpFamily::Rearrange:
    case ir::OpFamily::Custom: return {};
  }
  return {};
}

}  // namespace

BuiltinExtern builtin_extern(ir::OpKind op) { return library_of(op).fn; }
std::string_view builtin_extern_name(ir::OpKind op) { return library_of(op).name; }

}  // namespace kiln::rt
