// kiln/passes/simplify_indices.h — index expressions rewritten with what is known about them.
//
// Lowering builds a kernel's indices without context: a padded read is clamped into the input
// (`max(min(2*p3 - 1, 111), 0)`) and guarded (`0 <= 2*p3 - 1`), a symbolic size's stride carries
// `(s1 != 0)` so that an empty dim stays in bounds. Many of these are decided by facts the
// lowering does not consult: the trace's ShapeEnv (a dynamic size is >= 2; what its guards
// taught) and the loop variables' own ranges (0 <= p_i < grid_i, 0 <= r_j < extent_j). This pass
// rewrites every load, store and index instruction's expression, every check's bound and every
// extent with ir::simplify (ir/expr_facts.h) under those facts, before the schedule passes read
// the kernels. A shape-generic kernel then reads as its static twin would, where the facts allow:
// eager max pooling's kernel (Dynamic::True) loses its `(s1 != 0)` factors.
//
// Sound on every binding the facts admit, the loop ranges included: a backend never evaluates an
// index outside its loop nest (masked vector tails do not load or store the lanes they mask).
#pragma once

#include "ir/exec_plan.h"
#include "ir/expr_facts.h"
#include "ir/kernel.h"

namespace kiln::passes {

// Every kernel of the plan, or one kernel; whether anything changed.
bool simplify_indices(ir::ExecPlan& plan, const ir::ExprFacts& symbols);
bool simplify_indices(ir::Kernel& k, const ir::ExprFacts& symbols);

}  // namespace kiln::passes
