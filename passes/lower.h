// kiln/passes/lower.h — fusion and lowering of a prim graph into an ExecPlan of ir::Kernels.
//
// Before: a graph of prims (after decompose and simplify). After: an ExecPlan whose steps are
// generated kernels, extern library calls (mm, bmm) and interpreter fallbacks.
//
// Fusion works on index functions, as in a loop-fusion compiler: every pointwise, view,
// factory, pad and cat node is "inlined" — evaluated at the index its consumer asks for —
// so chains of them cost no memory traffic, and views are index remapping. A value is
// materialized into a buffer only when it must be: a graph output, an input of an extern
// or fallback op, or a reduction that cannot share its consumer's kernel. Reductions fuse
// with their pointwise prologue (inlined into the reduce stage) and their epilogue (later
// stages of the same kernel over the same rows), so softmax, log_softmax, rms_norm and
// layer_norm become one kernel each. A full reduction of a large tensor is split into a
// parallel partial kernel and a small final one (fixed split: deterministic results).
#pragma once

#include "ir/graph.h"
#include "ir/exec_plan.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kiln::passes {

struct LowerOptions {
  // Strides (in elements) of each graph input as it will be passed at run time; an empty
  // entry (or a missing one) means contiguous. Symbols are allowed (shape-generic kernels).
  std::vector<std::vector<ir::Expr>> input_strides;
  // Prefix of kernel names; callers make it unique per compilation (symbol names in the JIT).
  std::string name_prefix = "k";
  // Work (elements) below which a full reduction is not split into partials.
  int64_t split_reduction_min = 1 << 16;
  // Symbolic plans: the value each size symbol had when the graph was traced. Only
  // performance choices read them (split a full reduction, its chunk count); every size
  // the generated code depends on stays symbolic, so the plan is correct for all values.
  // A choice that depends on a symbol without a hint takes the plain path (no split).
  std::map<std::string, int64_t> hints;
  // Ops a registered lowering runs as an extern call (runtime/extend.h): the lowering's
  // name for such a node, "" otherwise. Their inputs are materialized; nothing fuses across.
  std::function<std::string(const ir::Node&)> extern_lowering;
};

// Fusion and kernel building: the plan's buffers and steps (no memory slots yet).
ir::ExecPlan build_kernels(const ir::Graph& g, const LowerOptions& opts = {});
// build_kernels then plan_memory.
ir::ExecPlan lower(const ir::Graph& g, const LowerOptions& opts = {});

// Memory planning: assigns Temp buffers to reusable slots by lifetime (a slot is reused once
// its previous buffer is dead and it is large enough), then lists in plan.params every
// symbol the plan reads at run time.
void plan_memory(ir::ExecPlan& plan);

}  // namespace kiln::passes
