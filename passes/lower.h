// kiln/passes/lower.h — kernel building: fusion groups of a prim graph -> an ExecPlan of
// ir::Kernels, and memory planning.
//
// Before: a graph of prims (after decompose and simplify) and its ir::Fusion (passes/fuse.h).
// After: an ExecPlan whose steps are generated kernels (one per group, two for a split
// reduction), extern library calls (mm, bmm, registered lowerings, custom ops) and
// interpreter fallbacks, in the groups' order. Inlined producers are evaluated at the
// kernel's index (views are index remapping); a row kernel's reductions are Reduce stages
// followed by its epilogue, so softmax, log_softmax, rms_norm and layer_norm are one kernel.
#pragma once

#include "ir/graph.h"
#include "ir/exec_plan.h"
#include "ir/fusion.h"
#include "passes/donate.h"
#include "passes/schedule.h"

#include <functional>
#include <map>
#include <set>
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
  // A full reduction of an input with a long dim 0 and at least kColumnSplitMin elements per
  // row splits into column partials (a reduction over dim 0 on the tiled schedule above, then
  // one over the partials) instead of one partial per row. The CPU backend sets it: the tiled
  // kernel (passes/schedule_tiles.cpp) reads four rows at once, which this host streams faster than one row per thread
  // (bench/HISTORY.md: a [4096, 4096] sum, 2.36 ms as row partials against 2.0 ms as columns).
  // A GPU would get one thread per column from it.
  bool split_by_columns = false;
  // Scatter and scan kernels walk the last dim (when it is not the one their lines run along)
  // in tiles of this many elements at each position of a line (passes/lower_index.h,
  // LineWalk::tile), so that a thread reads and writes rows. 0: one element per grid point,
  // each thread a column (a GPU's threads then cover the row together, coalesced). The CPU
  // backend sets it.
  int64_t line_tile = 0;
  // Symbolic plans: the value each size symbol had when the graph was traced. Only
  // performance choices read them (split a full reduction, its chunk count); every size
  // the generated code depends on stays symbolic, so the plan is correct for all values.
  // A choice that depends on a symbol without a hint takes the plain path (no split).
  std::map<std::string, int64_t> hints;
  // Ops the backend runs as extern calls — a registered lowering (runtime/extend.h) or one of
  // its library kernels — named for plans ("lowering gelu_lib", "blas"); "" for the rest.
  // Their inputs are materialized (a permute read in place); nothing fuses across. mm and bmm
  // are library calls unless this returns "" for them (a Matmul kernel; passes/row_domain.h).
  std::function<std::string(const ir::Node&)> extern_lowering;
  // Keep the 4-D f32 activations between oneDNN convolutions channels-last (NHWC strides),
  // so that the calls read and write them without reorders (passes/channels_last.cpp). The
  // CPU backend sets it.
  bool channels_last = false;
  // Buffer donation requests (passes/donate.h). An output that replaces an input passed with
  // strides other than contiguous (an updated view: a column of a matrix), computed by a
  // pointwise kernel and read by nothing else, is stored with that input's strides when they
  // give each element its own place (constant and not overlapping, or checked per call by the
  // requester), so that donation may compute it in the input's memory; the program allocates
  // it with them otherwise (runtime/program.cpp), at the view's whole span.
  std::vector<Donation> donations;
};

// The values a plan with LowerOptions::channels_last stores with NHWC strides: 4-D f32 outputs
// of non-transposed "onednn" convolutions and of pointwise kernels, not graph outputs, read only
// by pointwise kernels and as such a convolution's input (passes/channels_last.cpp).
std::set<const ir::Value*> channels_last_values(const ir::Graph& g, const ir::Fusion& fusion);
// The strides of an [N, C, H, W] tensor stored as [N, H, W, C].
std::vector<ir::Expr> channels_last_strides(const std::vector<ir::Expr>& sizes);

// Kernel building: the plan's buffers and steps for fusion's groups (no memory slots yet).
ir::ExecPlan build_kernels(const ir::Graph& g, const ir::Fusion& fusion, const LowerOptions& opts = {});
// fuse (passes/fuse.h), build_kernels, schedule_tiles (passes/schedule.h), then plan_memory: the
// target-independent part of what a kernel backend runs (tests; the driver runs each stage).
ir::ExecPlan lower(const ir::Graph& g, const LowerOptions& opts = {}, const ScheduleTarget& target = {});

// Memory planning: assigns Temp buffers to reusable slots by lifetime (a slot is reused once
// its previous buffer is dead and it is large enough; a pointwise kernel's result takes the slot
// of a temporary of its type that dies at that kernel, which then reads it through its output
// argument, when it reads it only where it writes: passes/donate.h writes_over), then lists in
// plan.params every symbol the plan reads at run time. Kernels may change (read_through).
void plan_memory(ir::ExecPlan& plan);

}  // namespace kiln::passes
