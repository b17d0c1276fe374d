// kiln/passes/equality_operands.cpp — values compared for equality (equality_operands.h).
#include "passes/equality_operands.h"

#include "base/dtype.h"

#include <unordered_set>
#include <vector>

namespace kiln::passes {

namespace {

bool view_or_cast(const ir::Node* n) {
  return n->info().family == ir::OpFamily::View || n->op() == ir::OpKind::convert_element_type;
}

// A `full`, seen through views and casts (a scalar operand is expand(full) until constants fold).
bool is_constant(const ir::Value* v) {
  for (int depth = 0; depth < 64 && !v->is_input(); ++depth) {
    const ir::Node* p = v->producer();
    if (p->op() == ir::OpKind::full) return true;
    if (!view_or_cast(p) || p->inputs().empty()) return false;
    v = p->input(0);
  }
  return false;
}

// Whether `hit` accepts a use (user, the value used) of v or of a view or cast of it.
template <typename Hit> bool any_use(const ir::Value* v, Hit hit) {
  if (!is_floating_point(v->type().dtype)) return false;  // integers and bools compute exactly everywhere
  std::vector<const ir::Value*> work{v};
  std::unordered_set<const ir::Value*> seen{v};
  for (size_t i = 0; i < work.size(); ++i) {
    if (i >= 256) return true;  // a fan of views past the cap: assume it counts (the safe answer)
    for (const ir::Use& u : work[i]->uses()) {
      const ir::Node* n = u.user;
      if (!n) continue;  // a graph output
      if (hit(n, work[i])) return true;
      if (view_or_cast(n))
        for (const ir::Value* o : n->outputs())
          if (seen.insert(o).second) work.push_back(o);
    }
  }
  return false;
}

}  // namespace

bool computes_inexactly(const ir::Node& n) {
  return !view_or_cast(&n) && n.op() != ir::OpKind::full && n.op() != ir::OpKind::iota;
}

bool compared_for_equality(const ir::Value* v) {
  return any_use(v, [](const ir::Node* n, const ir::Value* used) {
    if (n->op() != ir::OpKind::eq && n->op() != ir::OpKind::ne) return false;
    const ir::Value* other = n->input(n->input(0) == used ? 1 : 0);
    return other != used && !is_constant(other);
  });
}

bool reduced_to_extremum(const ir::Value* v) {
  return any_use(v, [](const ir::Node* n, const ir::Value*) {
    return n->op() == ir::OpKind::amax || n->op() == ir::OpKind::amin;
  });
}

}  // namespace kiln::passes
