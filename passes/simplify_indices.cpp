// kiln/passes/simplify_indices.cpp — see simplify_indices.h.
#include "passes/simplify_indices.h"

namespace kiln::passes {

namespace {

// facts plus `var` in [0, extent - 1]: the upper end unbounded when the extent's is, and when
// the extent is at most 0 (the loop never runs; its variable then says nothing, and an empty
// range must not let the facts decide the body's expressions).
void add_loop_range(ir::ExprFacts& facts, const std::string& var, const ir::Expr& extent) {
  const ir::Range e = ir::bound(extent, facts);
  facts.set_range(var, {0, e.hi == ir::Range::kPosInf || e.hi < 1 ? ir::Range::kPosInf : e.hi - 1});
}

// e simplified until it stops changing (a rewrite can expose another: min(2*p3, 111) becoming
// 2*p3 decides the max around it), at most a few rounds.
bool rewrite(ir::Expr& e, const ir::ExprFacts& facts) {
  bool changed = false;
  for (int round = 0; round < 4; ++round) {
    ir::Expr s = ir::simplify(e, facts);
    if (s == e) break;
    e = std::move(s);
    changed = true;
  }
  return changed;
}

}  // namespace

bool simplify_indices(ir::Kernel& k, const ir::ExprFacts& symbols) {
  bool changed = false;
  ir::ExprFacts grid_facts = symbols;
  for (size_t i = 0; i < k.grid.size(); ++i) {
    changed |= rewrite(k.grid[i], symbols);
    add_loop_range(grid_facts, ir::grid_var(i), k.grid[i]);
  }
  for (ir::KStage& st : k.stages) {
    ir::ExprFacts facts = grid_facts;
    for (size_t j = 0; j < st.extents.size(); ++j) {
      changed |= rewrite(st.extents[j], grid_facts);
      add_loop_range(facts, ir::stage_var(j), st.extents[j]);
    }
    for (ir::KInst& in : st.body) {
      const bool has_index = in.kind == ir::KOp::Load || in.kind == ir::KOp::Store || in.kind == ir::KOp::Index ||
                             (in.kind == ir::KOp::Check && in.check == ir::CheckKind::InBounds);
      if (has_index) changed |= rewrite(in.index, facts);
    }
  }
  return changed;
}

bool simplify_indices(ir::ExecPlan& plan, const ir::ExprFacts& symbols) {
  bool changed = false;
  for (ir::PlanStep& st : plan.steps)
    if (st.kind == ir::StepKind::Kernel) changed |= simplify_indices(st.kernel, symbols);
  return changed;
}

}  // namespace kiln::passes
