// kiln/passes/equality_operands.cpp — values compared for equality (equality_operands.h).
#include "passes/equality_operands.h"

#include <vector>

namespace kiln::passes {

namespace {

bool is_constant(const ir::Value* v) { return !v->is_input() && v->producer()->op() == ir::OpKind::full; }

}  // namespace

bool compared_for_equality(const ir::Value* v) {
  std::vector<const ir::Value*> work{v};
  for (size_t i = 0; i < work.size() && i < 64; ++i) {  // views of views: a short chain in practice
    for (const ir::Use& u : work[i]->uses()) {
      const ir::Node* n = u.user;
      if (!n) continue;  // a graph output
      if (n->op() == ir::OpKind::eq || n->op() == ir::OpKind::ne) {
        const ir::Value* other = n->input(n->input(0) == work[i] ? 1 : 0);
        if (!is_constant(other)) return true;
      } else if (n->info().family == ir::OpFamily::View) {
        for (const ir::Value* o : n->outputs()) work.push_back(o);
      }
    }
  }
  return false;
}

}  // namespace kiln::passes
