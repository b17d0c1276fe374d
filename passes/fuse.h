// kiln/passes/fuse.h — fusion: which values of a prim graph live in memory, and the group of
// nodes each generated kernel computes.
//
// Before: a graph of prims (after decompose and simplify). After: the graph unchanged and an
// ir::Fusion, the groups in execution order, which a kernel builder (passes/lower.h) turns
// into an ExecPlan.
//
// Fusion works on index functions, as in a loop-fusion compiler: every pointwise, view,
// factory, pad and cat node is inlined (evaluated at the index its consumer asks for), so
// chains of them cost no memory traffic and views are index remapping. A value is
// materialized, the root of a group of its own, only when it must be: a graph output, an
// operand of a library call or of an interpreter fallback, a reduction read by two groups, or
// a reduction its consumer cannot compute as a reduce stage: one over another domain, or one
// read at another index than the consumer's own row (a transposed or shifted read). Reductions
// fuse with their pointwise prologue and epilogue, so softmax, log_softmax, rms_norm and
// layer_norm become one kernel each. A full reduction of a large input is a split group:
// partials over chunks in parallel, then one small final reduce.
#pragma once

#include "ir/fusion.h"
#include "ir/graph.h"
#include "passes/lower.h"

namespace kiln::passes {

// Uses opts.split_reduction_min, opts.hints and opts.extern_lowering. Ends with
// merge_sibling_groups.
ir::Fusion fuse(const ir::Graph& g, const LowerOptions& opts = {});

// Pointwise groups over the same sizes that read the same tensors become one kernel that
// stores several values (FusionGroup::extra_roots; passes/fuse_siblings.cpp).
void merge_sibling_groups(const ir::Graph& g, ir::Fusion& fusion);

}  // namespace kiln::passes
