// kiln/ir/fusion.h — fusion groups: which values live in memory and what computes each.
//
// The fuse pass (passes/fuse.h) decides the groups on a prim graph; a kernel builder
// (passes/lower.h) turns each group into kernels or a call, in the order given. A group
// is either a generated kernel that computes one value (its root) into memory, inlining every
// producer that does not live in memory, or one op run as a call (a library function or the
// reference interpreter) on operands in memory. The groups only point into the graph they
// were made for, so they live as long as one compilation.
#pragma once

#include "ir/graph.h"

#include <string>
#include <vector>

namespace kiln::ir {

class ShapeEnv;

enum class GroupKind : uint8_t {
  Pointwise,       // one kernel over the root's shape, no reductions
  Row,             // one kernel over the kept dims of `reductions`' common domain
  SplitReduction,  // a full reduction of a large input: partials kernel + final kernel
  Concat,          // a cat of many inputs (`node`): kernels copying runs of kConcatInputsPerKernel
                   // inputs (each computed inline) into their slices of `root`'s buffer
  Scatter,         // scatter, scatter_add or scatter_reduce (`node`) into `root`'s buffer: a kernel
                   // whose grid points walk the index's lines in order (passes/lower_index.h),
                   // after a kernel copying self there unless that one copies self's lines itself
  Scan,            // cumsum, cumprod, cummax, cummin or logcumsumexp (`node`) into `root`'s buffer: a
                   // kernel whose grid points walk the lines along the scan's dim in order, carrying
                   // the running value (ir::KOp::Carry), the input computed inline
  Matmul,          // mm or bmm (`node`) of integers (or f64 on a GPU) into `root`'s buffer: a kernel over
                   // the result whose reduce stage sums the products along k, operands in memory
  Extern,          // `node` runs as a library call (mm, bmm, a custom op, a registered lowering)
  Fallback,        // `node` runs in the reference interpreter (prims no kernel computes)
};

// Row kernels: how the root's shape relates to the row domain (sizes, reduced dims).
enum class RowShape : uint8_t {
  Kept,     // the kept dims only (sum(x, {1}))
  KeepDim,  // the kept dims with each reduced dim of size 1 (sum(x, {1}, keepdim))
  Full,     // the whole domain (softmax: reduce stages, then a loop over the row)
};

// A cat of more inputs than this is not evaluated inline (each element would read every
// input): it is a Concat group of its own.
inline constexpr size_t kMaxInlineCatInputs = 8;
// Inputs a Concat group's kernel copies, one loop stage each.
inline constexpr size_t kConcatInputsPerKernel = 64;

struct FusionGroup {
  GroupKind kind = GroupKind::Pointwise;
  const Value* root = nullptr;          // Pointwise, Row, SplitReduction: the value stored
  // Pointwise: more values the kernel stores over the root's grid (sibling groups merged so
  // that their common inputs are read once; passes/fuse_siblings.cpp).
  std::vector<const Value*> extra_roots;
  RowShape row_shape = RowShape::Kept;  // Row
  // Row: the reductions computed as reduce stages (one domain), in the order a walk from the
  // root meets them (inputs left to right, stopping at each reduction).
  std::vector<const Node*> reductions;
  const Node* node = nullptr;  // Extern, Fallback, Concat, Scatter, Scan, Matmul
  bool copies_self = false;    // Scatter: a first kernel copies self into the root's buffer
  bool divides = false;        // Scatter (scatter_reduce "mean"): with copies_self, a last kernel divides by the counts
  // Extern, Fallback: which implementation runs ("blas", "custom op", "lowering NAME",
  // "interpreter").
  std::string lowering;
  // Extern: operand i is read in place as a strided view of its permute's input.
  std::vector<bool> operand_views;
  std::vector<int> nodes;  // positions in Graph::nodes() the group computes (sorted)

  // Generated kernels: 1, 2 for a split reduction or a scatter that copies self first (3 when
  // it then divides), one per run of a Concat, 0 for a call.
  int kernels() const;
};

struct Fusion {
  std::vector<FusionGroup> groups;  // in execution order
  // Kernel labels as a kernel builder names them in order: "k0", "k1, k2" (split), "extern mm".
  std::vector<std::string> labels() const;
};

// The graph's text with each node line marked by the groups that compute it ("  # k0",
// "  # k1, k2", "  # extern mm"; a node two kernels recompute shows both): KILN_DEBUG_DIR's
// 020_fused.kir. Still parses as the graph ('#' starts a comment); with the trace's ShapeEnv it
// starts with its symbols and guards, as print_graph's text does.
std::string print_fused_graph(const Graph& g, const Fusion& fusion, const ShapeEnv* env = nullptr);

}  // namespace kiln::ir
