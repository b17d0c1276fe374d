// kiln/passes/fuse.cpp — the fusion decision: materialized values and their groups.
//
// The Fuser walks the graph in order and materializes the values that must live in memory
// (call operands, shared reductions, graph outputs). Materializing a value makes it the root
// of a kernel group: its grid is the root's shape (pointwise) or the kept dims of its
// reductions (a row kernel). The group is checked by walking the root's inlined computation
// with the index functions the kernel builder will use (views remap the index, cat and pad
// pick a source), without emitting anything: a reduction reached over another domain, or at
// another index than the kernel's own row, refuses the group; it is materialized first (a
// group of its own, earlier) and the root's group is tried again. The walks (here and in the
// kernel builder) recurse once per inlined producer, so a chain of inlined nodes is cut into
// groups at most kMaxInlineDepth deep: a traced loop of 100,000 `z = z + y` compiles into a
// few hundred kernels instead of overflowing the stack.
#include "passes/fuse.h"

#include "base/error.h"
#include "passes/equality_operands.h"
#include "passes/lower_index.h"
#include "passes/row_domain.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace kiln::passes {

using ir::Expr;
using ir::FusionGroup;
using ir::GroupKind;
using ir::Node;
using ir::OpFamily;
using ir::OpKind;
using ir::RowShape;
using ir::Value;

namespace {

// The longest chain of inlined producers a group may have (values this deep are materialized).
// The walks take under 2 KB of stack per level, so a group fits in a 512 KB thread stack
// (test_reliability_graphs.cpp compiles a 100,000-node chain on one).
constexpr int kMaxInlineDepth = 256;

// A value one group would compute inline at more distinct indices than this is materialized
// (GroupWalk::eval_node): a stencil of a stencil, as a recurrence over shifted rows builds (a
// dynamic program's step reads the previous step at s, s-1 and s-2), is evaluated at a number of
// points that grows with each step it is inlined through, so its kernels grew quadratically with
// the number of steps and their compile time past minutes. Ordinary stencils stay inline: an
// interpolation reads at most 16 points (bicubic), a pad or a shifted slice a few.
constexpr int kMaxInlinePoints = 16;

// A pointwise value that two or more kernels would compute inline is materialized once when
// its inlined computation reads at least this many tensors (passes/fuse.cpp,
// mark_shared_values).
constexpr size_t kSharedReads = 4;

// Thrown while checking a group: this reduction must be materialized first — or, where the
// walk reached it through a value of the reduction's own row shape (`row_value`), that value:
// its group is a row kernel of the reduction's domain that computes the reduction and the
// pointwise work on its result (cross_entropy's per-row loss, from the row maximum and sum),
// instead of a kernel for the reduction alone whose result the consumer reads back.
struct Refuse {
  const Node* reduction;
  const Value* row_value = nullptr;
  const Value* value = nullptr;  // a pointwise value to materialize (kMaxInlinePoints), reduction null
};

// One group's inlined computation, walked at the indices the kernel builder evaluates it.
class GroupWalk {
 public:
  GroupWalk(const std::unordered_set<const Value*>& in_memory, const RowDomain* row, std::vector<Expr> grid_idx)
      : mem_(in_memory), row_(row), grid_idx_(std::move(grid_idx)) {}

  // v evaluated at idx: loads stop the walk; everything else is inlined.
  void eval(const Value* v, const std::vector<Expr>& idx) {
    if (mem_.count(v)) return;
    if (v->is_input()) internal_fail("fuse: graph input {} is not in memory", v->name());
    path_.push_back(v);
    eval_node(v->producer(), idx);
    path_.pop_back();
  }
  // The root: computed here even though it is in memory (its buffer is the destination).
  void eval_root(const Value* v, const std::vector<Expr>& idx) { eval_node(v->producer(), idx); }
  // A reduce stage of this row kernel, read at the row itself.
  void reduce_at_row(const Node* n) { reduce_stage(n, row_->row_index(grid_idx_, reduce_info(n).keepdim)); }
  std::vector<int> nodes(const std::unordered_map<const Node*, int>& index) const {
    std::vector<int> out;
    for (const Node* n : covered_) out.push_back(index.at(n));
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  void eval_node(const Node* n, const std::vector<Expr>& idx) {
    std::vector<const void*> key;
    for (const Expr& e : idx) key.push_back(e.node());
    if (!seen_.insert({n, std::move(key)}).second) return;
    covered_.insert(n);
    const OpFamily family = n->info().family;
    const bool computes = family == OpFamily::Unary || family == OpFamily::Binary || family == OpFamily::Ternary ||
                          family == OpFamily::Index;
    if (computes && !path_.empty() && path_.back()->producer() == n && ++points_[n] > kMaxInlinePoints)
      throw Refuse{nullptr, nullptr, path_.back()};
    switch (family) {
      case OpFamily::Unary:
      case OpFamily::Binary:
      case OpFamily::Ternary:
        for (const Value* in : n->inputs()) eval(in, idx);
        return;
      case OpFamily::Cast: return eval(n->input(0), idx);
      case OpFamily::View: return eval(n->input(0), view_source_index(n, idx));
      case OpFamily::Factory:
      case OpFamily::Random: return;
      case OpFamily::Shape:
        for (const PieceIndex& p : shape_source_pieces(n, idx))
          if (p.input >= 0) eval(n->input(static_cast<size_t>(p.input)), p.index);
        return;
      case OpFamily::Reduction:
        if (reduce_info(n).dom.dims.empty()) {  // reduces nothing: the element itself
          const ir::ReductionOp op = ir::as_reduction(n->op());
          if (op != ir::ReductionOp::argmax && op != ir::ReductionOp::argmin) eval(n->input(0), idx);
          return;
        }
        return reduce_stage(n, idx);
      case OpFamily::Index: {
        if (!indexed_read_inlinable(n)) break;
        // The position is data: any symbol stands for it here (a reduction reached at it is
        // not at the kernel's row and is materialized first).
        // So is a coordinate the lowering checks (IndexedRead::unproven).
        const IndexedRead r = indexed_read(n, idx);
        eval(n->input(1), r.index_at);
        std::vector<Expr> src = indexed_source(r, idx, Expr::symbol("kiln_indexed"));
        for (int64_t d : r.unproven) src.at(static_cast<size_t>(d)) = Expr::symbol("kiln_indexed");
        eval(n->input(0), src);
        return;
      }
      case OpFamily::Scan:
      case OpFamily::Matmul:
      case OpFamily::Conv:
      case OpFamily::Sort:
      KILN_CASE_COMPOSITE_FAMILIES:
      case OpFamily::Custom: break;
    }
    internal_fail("fuse: {} is not in memory and cannot be inlined", n->info().name);
  }

  // A reduction becomes a reduce stage only over this kernel's row domain, read at its row.
  void reduce_stage(const Node* n, const std::vector<Expr>& idx) {
    const ReduceInfo ri = reduce_info(n);
    if (!row_ || !(ri.dom == *row_) || idx != ri.dom.row_index(grid_idx_, ri.keepdim)) throw Refuse{n, row_value(ri)};
    if (!reduced_.insert(n).second) return;
    covered_.insert(n);
    const std::vector<Expr> extents = ri.dom.reduced();
    std::vector<Expr> red_idx = loop_vars(extents, ir::stage_expr);
    eval(n->input(0), ri.dom.interleave(grid_idx_, red_idx));
  }

  // The outermost value on the walk's path that has the reduction's row shape (its kept dims,
  // with or without the reduced dims as 1) and is computed inline, or null.
  const Value* row_value(const ReduceInfo& ri) const {
    std::vector<Expr> keep1 = ri.dom.sizes;
    for (int64_t d : ri.dom.dims) keep1[static_cast<size_t>(d)] = 1;
    const std::vector<Expr> kept = ri.dom.kept();
    for (const Value* v : path_) {
      const std::vector<Expr>& sz = v->type().sizes;
      if ((sz == kept || sz == keep1) && !is_reduction(v->producer())) return v;
    }
    return nullptr;
  }

  const std::unordered_set<const Value*>& mem_;
  const RowDomain* row_;
  std::vector<const Value*> path_;  // the values being evaluated, outermost first
  std::vector<Expr> grid_idx_;
  std::set<std::pair<const Node*, std::vector<const void*>>> seen_;
  std::set<const Node*> reduced_;
  std::set<const Node*> covered_;
  std::unordered_map<const Node*, int> points_;  // distinct indices each computing node is evaluated at
};

class Fuser {
 public:
  Fuser(const ir::Graph& g, const LowerOptions& o) : g_(g), opts_(o) {
    for (const Node* n : g.nodes()) index_.emplace(n, static_cast<int>(index_.size()));
  }
  ir::Fusion run();

 private:
  void materialize(const Value* v);
  bool extern_operand(const Value* v);
  const Value* view_base(const Value* v) const;
  bool contiguous_in_memory(const Value* v) const;
  FusionGroup try_group(const Value* v);
  FusionGroup scatter_group(const Value* v, const Node* n);
  FusionGroup scan_group(const Value* v, const Node* n);
  FusionGroup matmul_group(const Value* v, const Node* n);
  bool view_of_memory(const Value* v) const;
  bool output_reshapes_call_result(const Value* o) const;
  void walk_at_each(const std::vector<const Value*>& values, const std::vector<Expr>& sizes, std::set<int>& nodes) const;
  void find_reductions(const Value* v, std::vector<const Node*>& out, std::set<const Value*>& seen, bool root) const;
  void mark_shared_reductions();
  void mark_shared_values();

  const ir::Graph& g_;
  const LowerOptions& opts_;
  std::unordered_map<const Node*, int> index_;  // position in g_.nodes()
  std::unordered_set<const Value*> mem_;        // values in memory: inputs, roots, call results
  std::unordered_set<const Value*> views_;      // call operands read in place as strided views
  std::set<const Node*> force_;                 // reductions materialized rather than fused
  std::unordered_set<const Value*> cut_;        // values materialized to bound the inline depth
  std::unordered_set<const Value*> shared_;     // pointwise values materialized rather than recomputed
  std::unordered_set<const Node*> scatters_;    // scatters computed by kernels (Scatter groups)
  std::unordered_set<const Node*> scans_;       // scans computed by kernels (Scan groups)
  std::unordered_set<const Node*> matmuls_;     // matrix products computed by kernels (Matmul groups)
  std::unordered_set<const Value*> call_results_;  // results of extern and fallback calls
  void mark_deep_values();
  ir::Fusion out_;
};

// The reductions v's inlined computation reaches (stopping at values in memory and at each
// reduction), in the order a walk over inputs left to right meets them. The root itself is what the group computes: in memory, yet walked.
void Fuser::find_reductions(const Value* v, std::vector<const Node*>& out, std::set<const Value*>& seen,
                            bool root) const {
  if (!seen.insert(v).second || v->is_input() || (!root && mem_.count(v))) return;
  const Node* n = v->producer();
  if (is_reduction(n)) {
    if (!reduce_info(n).dom.dims.empty()) {
      out.push_back(n);
      return;
    }
  } else if (!is_inlinable(n)) {
    return;
  }
  for (const Value* in : n->inputs()) find_reductions(in, out, seen, false);
}

// The nodes computed inline when `values` are evaluated at each element of `sizes`.
void Fuser::walk_at_each(const std::vector<const Value*>& values, const std::vector<Expr>& sizes,
                         std::set<int>& nodes) const {
  std::vector<Expr> idx = loop_vars(sizes, ir::stage_expr);
  GroupWalk walk(mem_, nullptr, {});
  for (const Value* x : values) walk.eval(x, idx);
  for (int k : walk.nodes(index_)) nodes.insert(k);
}

// A Scatter group: self computed inline at each element of the result (by the kernel that
// copies it, or line by line by the scatter kernel), index and src at each element of the index.
FusionGroup Fuser::scatter_group(const Value* v, const Node* n) {
  FusionGroup grp;
  grp.kind = GroupKind::Scatter;
  grp.root = v;
  grp.node = n;
  grp.copies_self = !indexed_write(n).whole_lines;
  grp.divides = grp.copies_self && n->op() == OpKind::scatter_reduce && n->attr<std::string>("reduce") == "mean" &&
                v->type().dtype != ScalarType::Bool;
  std::set<int> nodes = {index_.at(n)};
  walk_at_each({n->input(0)}, v->type().sizes, nodes);
  walk_at_each({n->input(1), n->input(2)}, n->input(1)->type().sizes, nodes);
  grp.nodes.assign(nodes.begin(), nodes.end());
  return grp;
}

// A Scan group: the input computed inline at each element of its line.
FusionGroup Fuser::scan_group(const Value* v, const Node* n) {
  FusionGroup grp;
  grp.kind = GroupKind::Scan;
  grp.root = v;
  grp.node = n;
  std::set<int> nodes = {index_.at(n)};
  walk_at_each({n->input(0)}, n->input(0)->type().sizes, nodes);
  grp.nodes.assign(nodes.begin(), nodes.end());
  return grp;
}

// v is a chain of views over a value in memory: a kernel reads it in place, by index remapping.
bool Fuser::view_of_memory(const Value* v) const {
  while (!mem_.count(v)) {
    const Node* p = v->producer();
    if (!p || p->info().family != OpFamily::View) return false;
    v = p->input(0);
  }
  return true;
}

// A Matmul group: the product, its operands in memory or views of memory (an operand computed
// inline would be recomputed for every column of the result).
FusionGroup Fuser::matmul_group(const Value* v, const Node* n) {
  FusionGroup grp;
  grp.kind = GroupKind::Matmul;
  grp.root = v;
  grp.node = n;
  std::set<int> nodes = {index_.at(n)};
  for (const Value* in : n->inputs()) walk_at_each({in}, in->type().sizes, nodes);
  grp.nodes.assign(nodes.begin(), nodes.end());
  return grp;
}

FusionGroup Fuser::try_group(const Value* v) {
  if (const Node* n = v->producer(); n && scatters_.count(n)) return scatter_group(v, n);
  if (const Node* n = v->producer(); n && scans_.count(n)) return scan_group(v, n);
  if (const Node* n = v->producer(); n && matmuls_.count(n)) return matmul_group(v, n);
  if (const Node* n = v->producer(); n && n->op() == OpKind::cat && n->inputs().size() > ir::kMaxInlineCatInputs) {
    // Each input is computed inline at its own index and stored into its slice.
    FusionGroup grp;
    grp.kind = GroupKind::Concat;
    grp.root = v;
    grp.node = n;
    std::set<int> nodes = {index_.at(n)};
    for (const Value* in : n->inputs()) {
      std::vector<Expr> idx = loop_vars(in->type().sizes, ir::stage_expr);
      GroupWalk walk(mem_, nullptr, {});
      walk.eval(in, idx);
      for (int k : walk.nodes(index_)) nodes.insert(k);
    }
    grp.nodes.assign(nodes.begin(), nodes.end());
    return grp;
  }
  std::vector<const Node*> reds;
  std::set<const Value*> seen;
  find_reductions(v, reds, seen, /*root=*/true);
  for (const Node* r : reds)
    if (force_.count(r) && r->output() != v) throw Refuse{r};

  FusionGroup grp;
  grp.root = v;
  const std::vector<Expr>& vs = v->type().sizes;
  std::vector<Expr> grid;
  RowDomain dom;
  if (reds.empty()) {
    grp.kind = GroupKind::Pointwise;
    grid = vs;
  } else {
    // The row domain: the one of the reduction found first.
    dom = reduce_info(reds.front()).dom;
    for (const Node* r : reds)
      if (!(reduce_info(r).dom == dom)) throw Refuse{r};
    std::vector<Expr> keep1 = dom.sizes;
    for (int64_t d : dom.dims) keep1[static_cast<size_t>(d)] = 1;
    // keepdim first: when every reduced dim has size 1, the full domain and the keepdim shape
    // coincide, and a lone reduction must stay a reduce stage plus a store (no loop stage).
    if (vs == keep1) grp.row_shape = RowShape::KeepDim;
    else if (vs == dom.sizes) grp.row_shape = RowShape::Full;
    else if (vs == dom.kept()) grp.row_shape = RowShape::Kept;
    else throw Refuse{reds.front()};
    // A large reduction to a single point is split so that it runs in parallel (symbolic
    // sizes: judged by their hints; the split kernels are correct for every size).
    const std::optional<int64_t> work = hinted_numel(dom.reduced(), opts_.hints);
    if (dom.kept().empty() && work && *work >= opts_.split_reduction_min) {
      const bool alone = reds.size() == 1 && reds.front()->output() == v;
      if (alone && split_supported(reduce_info(reds.front()).op)) {
        // The partials read the input at a flat chunk index: no reduce stage can fuse there.
        grp.kind = GroupKind::SplitReduction;
        GroupWalk walk(mem_, nullptr, {});
        walk.eval(v->producer()->input(0), split_layout(dom.sizes, opts_.hints, opts_.split_by_columns).partial_index(dom.sizes));
        grp.nodes = walk.nodes(index_);
        grp.nodes.push_back(index_.at(v->producer()));
        std::sort(grp.nodes.begin(), grp.nodes.end());
        return grp;
      }
      // Materialized on its own first (split there); argmax/argmin, whose partials do not
      // combine, stay one serial kernel.
      if (!alone) throw Refuse{reds.front()};
    }
    grp.kind = GroupKind::Row;
    grp.reductions = reds;
    grid = dom.kept();
  }

  // Walk the computation as the kernel builder will evaluate it.
  std::vector<Expr> grid_idx = loop_vars(grid, ir::grid_expr);
  GroupWalk walk(mem_, reds.empty() ? nullptr : &dom, grid_idx);
  std::vector<Expr> store_idx = grid_idx;
  if (grp.kind == GroupKind::Row && grp.row_shape == RowShape::KeepDim) store_idx = dom.row_index(grid_idx, true);
  if (grp.kind == GroupKind::Row && grp.row_shape == RowShape::Full) {
    const std::vector<Expr> ext = dom.reduced();
    std::vector<Expr> red_idx = loop_vars(ext, ir::stage_expr);
    store_idx = dom.interleave(grid_idx, red_idx);
    for (auto it = reds.rbegin(); it != reds.rend(); ++it) walk.reduce_at_row(*it);
  }
  walk.eval_root(v, store_idx);
  grp.nodes = walk.nodes(index_);
  return grp;
}

void Fuser::materialize(const Value* v) {
  if (!mem_.insert(v).second) return;
  // Every refusal materializes a value or forces a reduction that was not before, so the
  // attempts are bounded by twice the graph's values (a backward graph of a 3-D bicubic
  // resampling refuses hundreds of times).
  const size_t bound = 2 * (g_.inputs().size() + 4 * g_.num_nodes()) + 2;
  for (size_t attempt = 0; attempt < bound; ++attempt) {
    try {
      out_.groups.push_back(try_group(v));
      return;
    } catch (const Refuse& r) {
      if (r.value) {
        materialize(r.value);
      } else if (r.row_value && r.row_value != v && !mem_.count(r.row_value)) {
        materialize(r.row_value);
      } else {
        force_.insert(r.reduction);
        materialize(r.reduction->output());
      }
    }
  }
  internal_fail("fuse: the group of a value of type {} did not converge", v->type().str());
}

// The value a library call's operand v can be read from in place, as a strided view: v is a
// permute of a reshape of it (either may be missing; simplify_algebra has merged repeats), and
// a reshape needs the value's contiguous layout. Null when v is no such chain. Reading a
// reshape in place matters beyond the copy it saves: the value reshaped (a linear's output
// gradient, [B, T, N]) is then in memory for its other readers (its bias gradient's column
// sum), which would otherwise compute it again.
const Value* Fuser::view_base(const Value* v) const {
  // A value in memory ends the chain, unless it is a view itself: then the chain goes on to
  // that view's base.
  auto computed = [&](const Value* x) { return x->is_input() || (mem_.count(x) && !views_.count(x)); };
  const Value* cur = v;
  if (!computed(cur) && cur->producer()->op() == OpKind::permute) cur = cur->producer()->input(0);
  if (!computed(cur) && cur->producer()->op() == OpKind::reshape) {
    cur = cur->producer()->input(0);
    if (!contiguous_in_memory(cur)) return nullptr;
  }
  return cur == v || views_.count(cur) ? nullptr : cur;
}

// Whether v, once in memory, has contiguous strides: every buffer a kernel or call writes
// does; a graph input unless the caller passed other strides.
bool Fuser::contiguous_in_memory(const Value* v) const {
  if (views_.count(v)) return false;
  if (!v->is_input()) return true;
  const auto& ins = g_.inputs();
  const size_t i = static_cast<size_t>(std::find(ins.begin(), ins.end(), v) - ins.begin());
  return i >= opts_.input_strides.size() || opts_.input_strides[i].empty() ||
         opts_.input_strides[i] == ir::contiguous_strides(v->type().sizes);
}

// An operand of a library call: read in place as a view where view_base allows, else computed
// into memory.
bool Fuser::extern_operand(const Value* v) {
  const Value* base = mem_.count(v) ? nullptr : view_base(v);
  if (!base) {
    materialize(v);
    return false;
  }
  materialize(base);
  mem_.insert(v);
  views_.insert(v);
  return true;
}

// A reduction read by the inlined computations of two or more materialized values would be
// computed once per consumer kernel; materialize it instead.
void Fuser::mark_shared_reductions() {
  std::set<const Value*> roots;
  for (const Value* o : g_.outputs()) roots.insert(o);
  roots.insert(shared_.begin(), shared_.end());
  for (const Node* n : g_.nodes())
    if (!is_inlinable(n) && !is_reduction(n))
      for (const Value* in : n->inputs()) roots.insert(in);
  std::map<const Node*, std::set<const Value*>> reached;
  for (const Value* root : roots) {
    std::vector<const Value*> stack{root};
    std::set<const Value*> seen;
    while (!stack.empty()) {
      const Value* v = stack.back();
      stack.pop_back();
      if (!seen.insert(v).second || v->is_input()) continue;
      const Node* n = v->producer();
      if (v != root && roots.count(v)) continue;
      if (is_reduction(n) && v != root) {
        reached[n].insert(root);
        continue;
      }
      if (!is_inlinable(n) && !is_reduction(n)) continue;
      for (const Value* in : n->inputs()) stack.push_back(in);
    }
  }
  for (const auto& [n, rs] : reached)
    if (rs.size() > 1) force_.insert(n);
}

// A pointwise value that the inlined computations of two or more groups reach is computed by
// each of them: a transformer's residual stream, x_i = x_(i-1) + f_i(norm(x_(i-1))), read by
// the next block's norm and by the next sum, was recomputed from the embedding in every norm
// kernel (each layer's kernel one term longer, and three times per row: both statistics and
// the output). Such a value is materialized when its computation reads kSharedReads or more
// tensors: one store and one load per reader, instead of every reader loading them all. The
// walk runs backwards over the graph, each value taking the set of groups that reach it
// (capped at two) from its consumers, so a value materialized here is one group to what it
// reads, and a value below it is not counted twice (x_(i-1) is reached by its own norm and by
// x_i's kernel). What a value reads is counted forwards, against the tensors in memory before
// fusion, capped at kSharedReads.
void Fuser::mark_shared_values() {
  std::vector<const Node*> nodes;
  for (const Node* n : g_.nodes()) nodes.push_back(n);
  auto inlined = [&](const Node* n) {
    return (is_inlinable(n) || is_reduction(n)) && !(opts_.extern_lowering && !opts_.extern_lowering(*n).empty());
  };
  // Forwards: the tensors each inlined value's computation loads (capped).
  std::unordered_map<const Value*, std::set<const Value*>> reads;
  for (const Node* n : nodes) {
    if (!inlined(n)) continue;
    std::set<const Value*> r;
    for (const Value* in : n->inputs()) {
      if (r.size() >= kSharedReads) break;
      auto it = reads.find(in);
      if (it == reads.end()) {
        r.insert(in);  // a graph input or a call's result
      } else {
        for (const Value* x : it->second) {
          if (r.size() >= kSharedReads) break;
          r.insert(x);
        }
      }
    }
    for (const Value* o : n->outputs()) reads[o] = r;
  }
  // Backwards: the groups (named by their stored value, at most two) whose computation reaches
  // each value. A consumer that is not inlined (a call, a scatter) counts as a group of its own.
  std::unordered_set<const Value*> outputs(g_.outputs().begin(), g_.outputs().end());
  std::unordered_map<const Value*, std::vector<const void*>> reached;
  auto reach = [&](const Value* v, const void* group) {
    std::vector<const void*>& r = reached[v];
    if (r.size() < 2 && std::find(r.begin(), r.end(), group) == r.end()) r.push_back(group);
  };
  for (const Value* o : outputs) reach(o, o);
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    const Node* n = *it;
    if (!inlined(n)) {
      for (const Value* in : n->inputs()) reach(in, n);
      continue;
    }
    std::vector<const void*> groups;
    for (const Value* o : n->outputs()) {
      std::vector<const void*>& r = reached[o];
      // A value compared for equality is computed once whatever it reads, even by one group (a
      // row kernel's two passes), and so is a saved output that amax or amin reduces: the
      // backward compares the two (equality_operands.h).
      const bool once = is_inlinable(n) && computes_inexactly(*n) &&
                        (compared_for_equality(o) || (outputs.count(o) && reduced_to_extremum(o)));
      if ((once && !r.empty()) ||
          (r.size() >= 2 && is_inlinable(n) && reads[o].size() >= kSharedReads && !outputs.count(o))) {
        shared_.insert(o);
        r = {o};
      }
      for (const void* grp : r)
        if (std::find(groups.begin(), groups.end(), grp) == groups.end()) groups.push_back(grp);
    }
    for (const Value* in : n->inputs())
      for (const void* grp : groups) reach(in, grp);
  }
}

// Values whose chain of inlined producers reaches kMaxInlineDepth are cut: materialized in
// graph order, so that each group's walk (and the kernel builder's) stays shallow. Depths
// count every inlinable or reduction node on the longest path from a value in memory.
void Fuser::mark_deep_values() {
  std::unordered_map<const Value*, int> depth;
  for (const Node* n : g_.nodes()) {
    int d = 0;
    if (is_inlinable(n) || is_reduction(n)) {
      for (const Value* in : n->inputs()) {
        auto it = depth.find(in);
        if (it != depth.end()) d = std::max(d, it->second);
      }
      ++d;
    }
    // A cat of many inputs is a Concat group of its own (ir/fusion.h).
    const bool cut = d >= kMaxInlineDepth ||
                     (n->op() == OpKind::cat && n->inputs().size() > ir::kMaxInlineCatInputs);
    for (const Value* o : n->outputs()) {
      depth[o] = cut ? 0 : d;
      if (cut) cut_.insert(o);
    }
  }
}

ir::Fusion Fuser::run() {
  for (const Value* in : g_.inputs()) mem_.insert(in);
  mark_shared_values();
  mark_shared_reductions();
  mark_deep_values();
  for (const Node* n : g_.nodes()) {
    // A node a registered lowering runs as an extern call is a call even when it could fuse.
    const std::string lowering = opts_.extern_lowering ? opts_.extern_lowering(*n) : std::string();
    if (lowering.empty() && (is_inlinable(n) || is_reduction(n))) {
      // Reductions shared by several consumers are computed once, where they are defined;
      // values at the depth bound, in order.
      if ((is_reduction(n) && force_.count(n)) || cut_.count(n->output()) || shared_.count(n->output()))
        materialize(n->output());
      continue;
    }
    if (lowering.empty() && indexed_write_kernelable(n)) {  // a Scatter group, its operands inline
      scatters_.insert(n);
      materialize(n->output());
      continue;
    }
    if (lowering.empty() && n->info().family == OpFamily::Scan) {  // a Scan group, its input inline
      scans_.insert(n);
      materialize(n->output());
      continue;
    }
    // A Matmul group, its operands in memory, where the backend asks for one.
    if (opts_.extern_lowering && lowering.empty() && matmul_kernelable(n)) {
      for (const Value* in : n->inputs())
        if (!view_of_memory(in)) materialize(in);
      matmuls_.insert(n);
      materialize(n->output());
      continue;
    }
    FusionGroup grp;
    grp.node = n;
    grp.kind = !lowering.empty() || n->info().has(ir::traits::Extern) ? GroupKind::Extern : GroupKind::Fallback;
    grp.lowering = !lowering.empty()                       ? lowering
                   : grp.kind == GroupKind::Fallback       ? "interpreter"
                   : n->info().family == OpFamily::Matmul ? "blas"
                   : n->info().family == OpFamily::Conv   ? "onednn"
                   : n->info().family == OpFamily::Sort   ? "sort"
                                                           : "custom op";
    for (const Value* in : n->inputs()) {
      if (grp.kind == GroupKind::Extern) {
        grp.operand_views.push_back(extern_operand(in));
      } else {
        materialize(in);
      }
    }
    for (const Value* o : n->outputs()) mem_.insert(o), call_results_.insert(o);
    grp.nodes = {index_.at(n)};
    out_.groups.push_back(std::move(grp));
  }
  // A graph output that reshapes a call's result (a matmul of a 3-D input, rows split back) is
  // that result's memory: lowering makes it a view of the call's buffer, which becomes an
  // output (passes/lower.cpp), instead of a kernel copying it.
  for (const Value* o : g_.outputs())
    if (!output_reshapes_call_result(o)) materialize(o);
  return std::move(out_);
}

bool Fuser::output_reshapes_call_result(const Value* o) const {
  if (mem_.count(o) || o->is_input() || o->producer()->op() != OpKind::reshape) return false;
  const Value* base = o->producer()->input(0);
  return call_results_.count(base) && view_base(o) == base;
}

}  // namespace

ir::Fusion fuse(const ir::Graph& g, const LowerOptions& opts) {
  ir::Fusion f = Fuser(g, opts).run();
  merge_sibling_groups(g, f);
  return f;
}

}  // namespace kiln::passes
