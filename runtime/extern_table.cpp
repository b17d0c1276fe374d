// kiln/runtime/extern_table.cpp — which library kernel computes each prim that no generated
// kernel does, and each Core op the cpu runs whole (runtime/extern_kernels.h), switched on
// the op family with no default.
#include "runtime/extern_kernels.h"

namespace kiln::rt {

namespace {

struct Library {
  BuiltinExtern fn = nullptr;
  std::string_view name;
};

Library library_of(ir::OpKind op) {
  switch (ir::op_info(op).family) {
    case ir::OpFamily::Matmul: return {&extern_matmul, "blas"};
    case ir::OpFamily::Conv: return {&extern_conv, "onednn"};
    case ir::OpFamily::Sort: return {&extern_sort, "sort"};
    case ir::OpFamily::Scan: return {&extern_scan, "scan"};
    case ir::OpFamily::Index: return {&extern_index, "index"};
    case ir::OpFamily::Random: return {&extern_random, "random"};
    case ir::OpFamily::Unary:
    case ir::OpFamily::Binary:
    case ir::OpFamily::Ternary:
    case ir::OpFamily::Cast:
    case ir::OpFamily::Reduction:
    case ir::OpFamily::Shape:
      // cat: a library copy where a backend asks for one (the cpu: a cat of hundreds of
      // inputs; runtime/backend_cpu.cpp); else computed in kernels.
      if (op == ir::OpKind::cat) return {&extern_cat, "copy"};
      return {};
    case ir::OpFamily::View:
    case ir::OpFamily::Factory:
    case ir::OpFamily::Decomposable:  // the Core ops the cpu runs whole (trait Extern)
      if (op == ir::OpKind::scaled_dot_product_attention) return {&extern_attention, "attention"};
      return {};
    case ir::OpFamily::Custom: return {};
  }
  return {};
}

}  // namespace

BuiltinExtern builtin_extern(ir::OpKind op) { return library_of(op).fn; }
std::string_view builtin_extern_name(ir::OpKind op) { return library_of(op).name; }

}  // namespace kiln::rt
