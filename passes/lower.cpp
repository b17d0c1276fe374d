// kiln/passes/lower.cpp — kernel building: the fusion groups of a prim graph -> ExecPlan.
//
// The Lowerer takes the groups of passes/fuse.h in order. A kernel group becomes one kernel
// (two for a split reduction): its grid is the root's shape (pointwise) or the kept dims of
// its reductions (row kernels), and its body evaluates the root at the grid index, inlining
// producers through eval() and loading every value an earlier group put in memory. The
// group's reductions become Reduce stages. A call group becomes an extern or fallback step on
// its operands' buffers. Nothing is decided here that fusion did not decide: a reduction that
// cannot be a reduce stage of its kernel is an internal error. The classes are in
// passes/kernel_builder.h; the scatter and scan kernels in passes/lower_ordered.cpp.
#include "passes/lower.h"
#include "passes/kernel_builder.h"
#include "passes/schedule.h"

#include "base/error.h"
#include "base/tensor_impl.h"
#include "passes/fuse.h"
#include "passes/lower_index.h"
#include "passes/row_domain.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

namespace kiln::passes {

namespace lowering {

// ---------------------------------------------------------------------------------------------
// KernelBuilder

int KernelBuilder::arg_for(int buffer, bool output) {
  for (size_t i = 0; i < arg_buffers.size(); ++i)
    if (arg_buffers[i] == buffer && k_.args[i].output == output) return static_cast<int>(i);
  arg_buffers.push_back(buffer);
  const PlanBuffer& b = l_.buffer(buffer);
  size_t n_in = 0, n_out = 0;
  for (const ir::KernelArg& a : k_.args) (a.output ? n_out : n_in)++;
  k_.args.push_back({output ? fmt::format("out{}", n_out) : fmt::format("in{}", n_in), b.type.dtype, output});
  return static_cast<int>(k_.args.size() - 1);
}

int KernelBuilder::eval(const Value* v, const std::vector<Expr>& idx) {
  std::vector<const void*> key;
  for (const Expr& e : idx) key.push_back(e.node());
  auto mk = std::make_pair(v, key);
  if (auto it = memo_->find(mk); it != memo_->end()) return it->second;
  int id;
  if (int b = l_.buffer_of(v); b >= 0 && !stores.count(v)) {
    id = load(arg_for(b, false), linear_index(idx, l_.buffer(b).strides), v->type().dtype);
  } else if (v->is_input()) {
    internal_fail("lower: graph input {} has no buffer", v->name());
  } else if (int f = forwardable(mk, v, idx); f >= 0) {
    id = f;
  } else {
    id = eval_node(v->producer(), v, idx);
  }
  (*memo_)[mk] = id;
  return id;
}

int KernelBuilder::forwardable(const std::pair<const Value*, std::vector<const void*>>& mk, const Value* v,
                               const std::vector<Expr>& idx) {
  if (fwd_buffer_ < 0 || idx != fwd_idx_ || v->type().dtype != l_.buffer(fwd_buffer_).type.dtype) return -1;
  auto load_back = [&] {
    KInst ld;
    ld.kind = KOp::Load;
    ld.dtype = v->type().dtype;
    ld.arg = arg_for(fwd_buffer_, true);
    ld.index = fwd_linear_;
    return emit(std::move(ld));
  };
  // The value already stored: every later stage loads it back (a layer norm's input, computed
  // by the mean's stage, is read by the variance's stage and by the output loop).
  if (forwarded_) return mk == fwd_key_ ? load_back() : -1;
  for (size_t s = 0; s < closed_memos_.size(); ++s) {
    auto it = closed_memos_[s].find(mk);
    if (it == closed_memos_[s].end() || k_.stages[s].kind != ir::StageKind::Reduce) continue;
    const int out_arg = arg_for(fwd_buffer_, true);
    KInst st;
    st.kind = KOp::Store;
    st.dtype = v->type().dtype;
    st.arg = out_arg;
    st.index = fwd_linear_;
    st.operands = {it->second};
    k_.stages[s].body.push_back(std::move(st));
    forwarded_ = true;
    fwd_key_ = mk;
    return load_back();
  }
  return -1;
}

int KernelBuilder::reduce_stage(const Node* n, const std::vector<Expr>& idx) {
  const ReduceInfo ri = reduce_info(n);
  // Fusion made this reduction a stage of this kernel: its domain and the index its consumer
  // reads it at are the kernel's row.
  if (!row || !(ri.dom == *row) || idx != ri.dom.row_index(grid_idx, ri.keepdim))
    internal_fail("lower: reduction {} is not a reduce stage of kernel {} (fusion and kernel building disagree)",
                  n->output()->name(), k_.name);
  if (auto it = reduce_results_.find(n); it != reduce_results_.end()) return it->second;

  open_stage(ir::StageKind::Reduce, ri.dom.reduced());
  std::vector<Expr> red_idx = loop_vars(cur_->extents, ir::stage_expr);
  const ScalarType out_dt = n->output()->type().dtype;
  const ScalarType in_dt = n->input(0)->type().dtype;
  const int x = accumulator_input(ri.op, eval(n->input(0), ri.dom.interleave(grid_idx, red_idx)), in_dt, out_dt);
  const int result = finish_reduce(ri.op, x, accumulate_dtype(ri.op, in_dt, out_dt));
  reduce_results_[n] = result;
  return result;
}

int KernelBuilder::eval_node(const Node* n, const Value* v, const std::vector<Expr>& idx) {
  covered.insert(n);
  const ScalarType dt = v->type().dtype;
  switch (n->info().family) {
    case OpFamily::Unary:
    case OpFamily::Binary:
    case OpFamily::Ternary: {
      std::vector<int> ops;
      for (const Value* in : n->inputs()) ops.push_back(eval(in, idx));
      // An integer division by zero is the op's ZeroDivisionError, as in the interpreter: the
      // divisor passes a check (1 where it is 0, so the division itself stays defined).
      if (integer_division(n)) ops[1] = check_nonzero(ops[1], n->input(1)->type().dtype, n->op());
      return compute(n->op(), dt, std::move(ops), n->attrs());
    }
    case OpFamily::Cast:
      if (n->op() == OpKind::clone || n->op() == OpKind::detach || n->input(0)->type().dtype == dt)
        return eval(n->input(0), idx);
      return compute(n->op(), dt, {eval(n->input(0), idx)}, n->attrs());
    case OpFamily::View: return eval(n->input(0), view_source_index(n, idx));
    case OpFamily::Factory: {
      if (n->op() == OpKind::full) return constant(dt, n->attr<Scalar>("value"));
      // iota: start + step * i, computed in the result dtype as PyTorch's arange does.
      const Scalar start = n->attr<Scalar>("start"), step = n->attr<Scalar>("step");
      if (!is_floating_point(dt) && !start.is_floating_point() && !step.is_floating_point())
        return index_value(dt, Expr(start.to_int()) + Expr(step.to_int()) * idx.at(0));
      const int i = index_value(dt, idx.at(0));
      const int mul = compute(OpKind::mul, dt, {i, constant(dt, step)});
      return compute(OpKind::add, dt, {mul, constant(dt, start)});
    }
    case OpFamily::Shape: {
      std::vector<PieceIndex> pieces = shape_source_pieces(n, idx);
      // A cat of inputs that are all empty along its dim is empty: never evaluated.
      if (pieces.empty()) return constant(dt, Scalar(int64_t{0}));
      // Value of the last piece, then select earlier pieces where their predicate holds.
      int result = -1;
      for (size_t i = pieces.size(); i-- > 0;) {
        const PieceIndex& p = pieces[i];
        int val = p.input < 0 ? constant(dt, n->attr<Scalar>("value")) : eval(n->input(p.input), p.index);
        if (result < 0 || p.always) {
          result = val;
          continue;
        }
        const int pred = index_value(ScalarType::Bool, p.predicate);
        result = compute(OpKind::where, dt, {pred, val, result});
      }
      return result;
    }
    case OpFamily::Reduction: {
      const ReduceInfo ri = reduce_info(n);
      if (ri.dom.dims.empty()) {  // reduces nothing: the element itself, in the result dtype
        if (ri.op == ir::ReductionOp::argmax || ri.op == ir::ReductionOp::argmin) return constant(dt, Scalar(int64_t{0}));
        const int x = eval(n->input(0), idx);
        if (n->input(0)->type().dtype == dt) return x;
        return compute(OpKind::convert_element_type, dt, {x}, ir::AttrList({dt}));
      }
      return reduce_result(n, idx);
    }
    case OpFamily::Index: {
      if (!indexed_read_inlinable(n)) break;
      // self at the position the index holds there, checked first: out of bounds is the op's
      // error (and the load reads position 0 instead).
      const IndexedRead r = indexed_read(n, idx);
      const int picked = check_in_bounds(eval(n->input(1), r.index_at), n->input(1)->type().dtype, n->op(), r.bound, r.dim);
      std::vector<Expr> src = indexed_source(r, idx, ir::value_expr(picked));
      checked_coordinates(src, r.unproven, n->input(0)->type().sizes, n->op());
      return eval(n->input(0), src);
    }
    case OpFamily::Random: {
      // Element idx (row-major) of this call's draw number l_.draw(n) (ir/exec_plan.h).
      KInst in = inst(KOp::Random, dt);
      in.op = n->op();
      const bool uniform = n->op() == OpKind::uniform;
      in.attrs = ir::AttrList({n->attr<double>(uniform ? "low" : "mean"), n->attr<double>(uniform ? "high" : "std")});
      in.operands = {index_value(ScalarType::Int64, linear_index(idx, contiguous_strides(v->type().sizes))),
                     index_value(ScalarType::Int64, Expr::symbol(ir::kRandomSeedParam)),
                     index_value(ScalarType::Int64, Expr::symbol(ir::kRandomBaseParam) + l_.draw(n))};
      return emit(std::move(in));
    }
    case OpFamily::Scan:
    case OpFamily::Matmul:
    case OpFamily::Conv:
    case OpFamily::Sort:
    KILN_CASE_COMPOSITE_FAMILIES:
    case OpFamily::Custom: break;
  }
  internal_fail("lower: {} reached eval without a buffer", n->info().name);
}

// ---------------------------------------------------------------------------------------------
// Lowerer

int Lowerer::new_buffer(const Value* v, BufferRole role) {
  PlanBuffer b;
  b.role = role;
  b.type = v->type();
  b.strides = role == BufferRole::Temp && channels_last_.count(v) ? channels_last_strides(b.type.sizes)
                                                                 : contiguous_strides(b.type.sizes);
  plan_.buffers.push_back(std::move(b));
  const int id = static_cast<int>(plan_.buffers.size() - 1);
  buf_[v] = id;
  return id;
}

// Whether constant `strides` over constant `sizes` give every element its own place; false
// when any is symbolic.
static bool one_to_one(const std::vector<Expr>& strides, const std::vector<Expr>& sizes) {
  std::vector<int64_t> st, sz;
  for (size_t d = 0; d < strides.size(); ++d) {
    const std::optional<int64_t> a = strides[d].maybe_const(), b = sizes[d].maybe_const();
    if (!a || !b) return false;
    st.push_back(*a);
    sz.push_back(*b);
  }
  return !overlaps_itself(sz, st);
}

bool Lowerer::read_by_kernels_only(const Value* v) const {
  for (const ir::Use& u : v->uses()) {
    if (!u.user) continue;  // a graph output
    const auto it = group_kind_.find(node_index(u.user));
    if (it != group_kind_.end() && (it->second == ir::GroupKind::Extern || it->second == ir::GroupKind::Fallback))
      return false;
    if (u.user->info().family == OpFamily::View)
      for (const Value* o : u.user->outputs())
        if (!read_by_kernels_only(o)) return false;
  }
  return true;
}

void Lowerer::adopt_donor_strides(int buffer, const Value* v) {
  PlanBuffer& b = plan_.buffers[static_cast<size_t>(buffer)];
  if (b.role != BufferRole::Output) return;
  if (auto it = donor_strides_.find(v); it != donor_strides_.end()) b.strides = it->second;
}

// A value an earlier group put in memory.
int Lowerer::operand(const Value* v) const {
  const int b = buffer_of(v);
  if (b < 0) internal_fail("lower: {} is read before a fusion group computes it", v->name());
  return b;
}

// A call operand read in place (passes/fuse.cpp, view_base): a permute of a reshape of a
// buffer, as a strided view of it (no copy).
int Lowerer::view_operand(const Value* v) {
  PlanBuffer b;
  b.role = BufferRole::View;
  b.type = v->type();
  b.strides = view_strides(v, b.base);
  plan_.buffers.push_back(std::move(b));
  const int id = static_cast<int>(plan_.buffers.size() - 1);
  buf_[v] = id;
  return id;
}

// The strides of v read from the buffer *base, through the permutes and reshapes above it.
std::vector<Expr> Lowerer::view_strides(const Value* v, int& base) const {
  if (const int b = buffer_of(v); b >= 0) {
    base = plan_.buffers[b].role == BufferRole::View ? plan_.buffers[b].base : b;
    return plan_.buffers[b].strides;
  }
  const Node* n = v->producer();
  const std::vector<Expr> inner = view_strides(n->input(0), base);
  if (n->op() == OpKind::reshape) {  // of a contiguous buffer (view_base checked)
    if (inner != ir::contiguous_strides(n->input(0)->type().sizes))
      internal_fail("lower: a reshape read in place from a buffer that is not contiguous");
    return ir::contiguous_strides(v->type().sizes);
  }
  if (n->op() != OpKind::permute) internal_fail("lower: a call operand view through {}", n->info().name);
  std::vector<Expr> out;
  for (int64_t d : n->attr<std::vector<int64_t>>("dims")) out.push_back(inner.at(static_cast<size_t>(d)));
  return out;
}

void Lowerer::add_kernel(KernelBuilder& kb, const ir::FusionGroup& grp) {
  PlanStep st;
  st.kind = StepKind::Kernel;
  for (const Node* n : kb.covered) st.nodes.push_back(node_index(n));
  std::sort(st.nodes.begin(), st.nodes.end());
  // The kernel computes exactly the group fusion decided (a split reduction's two kernels
  // and a concat's kernels each compute part of it).
  if (grp.kind != ir::GroupKind::SplitReduction && grp.kind != ir::GroupKind::Concat &&
      grp.kind != ir::GroupKind::Scatter && st.nodes != grp.nodes)
    internal_fail("lower: kernel {} computes other nodes than its fusion group", kb.kernel().name);
  st.kernel = std::move(kb.kernel());
  st.kernel.params = collect_params(st.kernel);
  ir::verify_kernel(st.kernel);
  st.buffers = kb.arg_buffers;
  plan_.steps.push_back(std::move(st));
}

// The kernel computing the group's root into out_buffer (and a pointwise group's extra roots
// into extra_buffers: every value is computed before any is stored, so that a store into an
// input's memory (passes/donate.h) follows every read of it).
void Lowerer::build_kernel(const ir::FusionGroup& grp, int out_buffer, const std::vector<int>& extra_buffers) {
  const Value* v = grp.root;
  KernelBuilder kb(*this, next_kernel_name());
  const bool row_kernel = grp.kind == ir::GroupKind::Row;
  const RowDomain dom = row_kernel ? reduce_info(grp.reductions.front()).dom : RowDomain{};
  const std::vector<Expr> extents = row_kernel ? dom.kept() : v->type().sizes;
  // A channels-last output is walked in memory order: the grid is [N, H, W, C].
  std::vector<size_t> order;
  const std::vector<Expr>& out_strides = plan_.buffers[out_buffer].strides;
  if (!row_kernel && extents.size() == 4 && out_strides != contiguous_strides(extents) &&
      out_strides == channels_last_strides(extents))
    order = {0, 2, 3, 1};
  std::vector<Expr> grid, stage_ext;
  std::vector<Expr> grid_idx = grid_vars(extents, order, &grid);
  kb.kernel().grid = grid;
  kb.row = row_kernel ? &dom : nullptr;
  kb.grid_idx = grid_idx;

  std::vector<Expr> store_idx = grid_idx;
  if (row_kernel && grp.row_shape == ir::RowShape::KeepDim) store_idx = dom.row_index(grid_idx, true);
  if (row_kernel && grp.row_shape == ir::RowShape::Full) stage_ext = dom.reduced();
  kb.open_stage(ir::StageKind::Loop, stage_ext);
  if (row_kernel && grp.row_shape == ir::RowShape::Full) {
    std::vector<Expr> red_idx = loop_vars(stage_ext, ir::stage_expr);
    store_idx = dom.interleave(grid_idx, red_idx);
    kb.allow_forwarding(out_buffer, store_idx, linear_index(store_idx, plan_.buffers[out_buffer].strides));
    // Reduce stages first, so that the final stage can reuse what they computed.
    for (auto it = grp.reductions.rbegin(); it != grp.reductions.rend(); ++it) kb.prepare_reduction(*it);
  }
  kb.stores.insert(grp.extra_roots.begin(), grp.extra_roots.end());
  const int val = kb.eval_root(v, store_idx);
  std::vector<int> extra_vals;
  for (const Value* x : grp.extra_roots) extra_vals.push_back(kb.eval_root(x, store_idx));
  kb.store(out_buffer, linear_index(store_idx, plan_.buffers[out_buffer].strides), val, v->type().dtype);
  for (size_t i = 0; i < grp.extra_roots.size(); ++i)
    kb.store(extra_buffers[i], linear_index(store_idx, plan_.buffers[extra_buffers[i]].strides), extra_vals[i],
             grp.extra_roots[i]->type().dtype);
  kb.close_stage();

  // A lone reduction over outer dims (a column sum) iterates its rows outside a tile of
  // columns, accumulating each row's tile into the tile's accumulators (in cache), so that
  // the input is read row by row, contiguously, as a stream.
  ir::Kernel& k = kb.kernel();
  if (row_kernel && grp.reductions.size() == 1 && grp.reductions.front()->output() == v && k.stages.size() == 2 &&
      !grid.empty() && !dom.is_reduced(dom.sizes.size() - 1) && tile_supported(reduce_info(grp.reductions.front()).op)) {
    k.schedule.outer_reduction = true;  // tiled by passes/schedule_tiles.cpp
  }
  add_kernel(kb, grp);
}

// out = reduce(x) over everything, as partials over grid chunks then one final reduce
// (row_domain.h's SplitLayout), in a fixed order: deterministic results.
void Lowerer::build_split_reduction(const ir::FusionGroup& grp, int out_buffer) {
  const Value* v = grp.root;
  const Node* n = v->producer();
  const ReduceInfo ri = reduce_info(n);
  const ScalarType out_dt = v->type().dtype;
  const ScalarType in_dt = n->input(0)->type().dtype;
  const SplitLayout layout = split_layout(ri.dom.sizes, opts_.hints, opts_.split_by_columns);
  // Partial buffer: one value per chunk, in the accumulation dtype.
  const ScalarType acc = accumulate_dtype(ri.op, in_dt, out_dt);
  PlanBuffer pb;
  pb.role = BufferRole::Temp;
  pb.type = ir::TensorType(acc, {layout.chunks});
  pb.strides = {Expr(1)};
  plan_.buffers.push_back(pb);
  const int partial = static_cast<int>(plan_.buffers.size() - 1);

  {  // partials: grid [chunks], each reducing a row, a column or a contiguous run of the input
    KernelBuilder kb(*this, next_kernel_name());
    kb.covered.insert(n);
    kb.kernel().grid = {layout.chunks};
    kb.open_stage(ir::StageKind::Reduce, layout.partial_extents(ri.dom.sizes));
    int x = kb.eval(n->input(0), layout.partial_index(ri.dom.sizes));
    x = kb.accumulator_input(ri.op, x, in_dt, out_dt);
    kb.store_stage(partial, ir::grid_expr(0), kb.finish_reduce(ri.op, x, acc), acc);
    // Column partials: the reduction over dim 0 runs on the column-sum schedule.
    if (layout.by_columns) kb.kernel().schedule.outer_reduction = true;
    add_kernel(kb, grp);
  }
  {  // final: one reduce over the partials, in a fixed order
    KernelBuilder kb(*this, next_kernel_name());
    kb.covered.insert(n);
    kb.open_stage(ir::StageKind::Reduce, {layout.chunks});
    KInst ld;
    ld.kind = KOp::Load;
    ld.dtype = acc;
    ld.arg = kb.arg_for(partial, false);
    ld.index = ir::stage_expr(0);
    const int x = kb.emit(std::move(ld));
    // Partials combine with the same op; the sum is rounded once, at the end.
    const int total_acc = kb.finish_reduce(ri.op, x, acc);
    kb.open_stage(ir::StageKind::Loop, {});
    kb.store(out_buffer, Expr(0), kb.reduction_output(ri.op, total_acc, in_dt, out_dt), out_dt);
    kb.close_stage();
    add_kernel(kb, grp);
  }
}

// out = cat(inputs, dim) of many inputs: per run of kConcatInputsPerKernel inputs one kernel
// over the dims before `dim`, with a loop stage per input that computes it (inline) at each
// of its elements and stores it at its offset along `dim`. Inputs the cat skips (empty
// along `dim`, or legacy empty 1-D ones) get no stage.
void Lowerer::build_concat(const ir::FusionGroup& grp, int out_buffer) {
  const Node* n = grp.node;
  const auto dim = static_cast<size_t>(n->attr<int64_t>("dim"));
  const std::vector<Expr>& out_sizes = grp.root->type().sizes;
  std::vector<Expr> grid;
  const std::vector<Expr> grid_idx =
      grid_vars(std::vector<Expr>(out_sizes.begin(), out_sizes.begin() + static_cast<std::ptrdiff_t>(dim)), {}, &grid);
  Expr offset = 0;
  const int kernels = grp.kernels();
  for (int r = 0; r < kernels; ++r) {
    KernelBuilder kb(*this, next_kernel_name());
    kb.covered.insert(n);
    kb.kernel().grid = grid;
    const size_t first = static_cast<size_t>(r) * ir::kConcatInputsPerKernel;
    for (size_t j = first; j < std::min(n->inputs().size(), first + ir::kConcatInputsPerKernel); ++j) {
      const Value* in = n->input(j);
      const std::vector<Expr>& sz = in->type().sizes;
      if (sz.size() != out_sizes.size() || sz[dim] == Expr(0)) continue;
      const std::vector<Expr> extents(sz.begin() + static_cast<std::ptrdiff_t>(dim), sz.end());
      kb.open_stage(ir::StageKind::Loop, extents);
      std::vector<Expr> idx = grid_idx;
      for (const Expr& v : loop_vars(extents, ir::stage_expr)) idx.push_back(v);
      const int val = kb.eval(in, idx);
      idx[dim] = idx[dim] + offset;
      kb.store(out_buffer, linear_index(idx, plan_.buffers[out_buffer].strides), val, grp.root->type().dtype);
      kb.close_stage();
      offset = offset + sz[dim];
    }
    add_kernel(kb, grp);
  }
}
// out = mm(a, w) ([n, k] @ [k, m]) or bmm ([b, n, k] @ [b, k, m]): a kernel over the result
// whose reduce stage sums the k products of each element in increasing k order, as the
// interpreter does (runtime/interpreter/interp_matmul.cpp): integers in their own dtype (which
// wraps as its int64 sum does, modulo the width), f64 in f64. The kernel is an outer reduction
// (a column sum's structure: neighbouring elements read neighbouring columns of w), so the cpu
// walks k outside a tile of columns and a GPU gives each element a thread, reading a's row
// once per warp.
void Lowerer::build_matmul(const ir::FusionGroup& grp, int out_buffer) {
  const Node* n = grp.node;
  const Value* v = grp.root;
  const std::vector<Expr>& sizes = v->type().sizes;
  const ScalarType dt = v->type().dtype;
  const ScalarType acc = !is_floating_point(dt) ? dt : dt == ScalarType::Double ? dt : ScalarType::Float;
  const Expr k = n->input(0)->type().sizes.back();
  KernelBuilder kb(*this, next_kernel_name());
  kb.covered.insert(n);
  kb.kernel().grid = sizes;
  std::vector<Expr> idx = loop_vars(sizes, ir::grid_expr);
  kb.open_stage(ir::StageKind::Reduce, {k});
  const Expr r = loop_var(k, ir::stage_expr(0));
  std::vector<Expr> a_idx = idx, w_idx = idx;
  a_idx.back() = r;
  w_idx[w_idx.size() - 2] = r;
  int a = kb.eval(n->input(0), a_idx), w = kb.eval(n->input(1), w_idx);
  if (acc != dt) {
    a = kb.convert(a, acc);
    w = kb.convert(w, acc);
  }
  const int sum = kb.finish_reduce(ir::ReductionOp::sum, kb.compute(OpKind::mul, acc, {a, w}), acc);
  kb.store_stage(out_buffer, linear_index(idx, plan_.buffers[out_buffer].strides), acc != dt ? kb.convert(sum, dt) : sum, dt);
  if (!sizes.empty()) kb.kernel().schedule.outer_reduction = true;
  add_kernel(kb, grp);
}

// An extern call (a library, a registered lowering, a custom op) or an interpreter fallback.
void Lowerer::add_call(const ir::FusionGroup& grp) {
  const Node* n = grp.node;
  PlanStep st;
  st.kind = grp.kind == ir::GroupKind::Extern ? StepKind::Extern : StepKind::Fallback;
  st.lowering = grp.lowering;
  st.op = n->op();
  st.nodes = grp.nodes;
  st.attrs = n->attrs();
  if (n->info().family == OpFamily::Random)  // its offset: this call's rng_base + its draw number
    st.attrs.values()[static_cast<size_t>(n->info().schema.attr_index("offset"))] = draw(n);
  for (size_t i = 0; i < n->inputs().size(); ++i) {
    const Value* in = n->input(i);
    const bool as_view = i < grp.operand_views.size() && grp.operand_views[i];
    st.buffers.push_back(as_view ? view_operand(in) : operand(in));
  }
  for (const Value* out : n->outputs()) st.buffers.push_back(new_buffer(out, BufferRole::Temp));
  plan_.steps.push_back(std::move(st));
}

ExecPlan Lowerer::run() {
  if (opts_.channels_last) channels_last_ = channels_last_values(g_, fusion_);
  for (size_t i = 0; i < g_.inputs().size(); ++i) {
    const Value* in = g_.inputs()[i];
    PlanBuffer b;
    b.role = BufferRole::Input;
    b.type = in->type();
    b.input_index = static_cast<int>(i);
    b.strides = i < opts_.input_strides.size() && !opts_.input_strides[i].empty() ? opts_.input_strides[i]
                                                                                   : contiguous_strides(b.type.sizes);
    plan_.buffers.push_back(std::move(b));
    buf_[in] = static_cast<int>(plan_.buffers.size() - 1);
  }
  std::set<const Value*> outputs(g_.outputs().begin(), g_.outputs().end());
  for (const ir::FusionGroup& grp : fusion_.groups)
    for (int n : grp.nodes) group_kind_[n] = grp.kind;
  for (const Donation& d : opts_.donations) {
    if (d.input < 0 || d.output < 0 || static_cast<size_t>(d.input) >= g_.inputs().size() ||
        static_cast<size_t>(d.output) >= g_.outputs().size())
      continue;
    const Value* in = g_.inputs()[static_cast<size_t>(d.input)];
    const Value* out = g_.outputs()[static_cast<size_t>(d.output)];
    const std::vector<Expr>& st = plan_.buffers[static_cast<size_t>(buf_.at(in))].strides;
    if (out == in || !(in->type() == out->type()) || st == contiguous_strides(in->type().sizes) ||
        std::count(g_.outputs().begin(), g_.outputs().end(), out) != 1)
      continue;
    // Only a value that generated kernels read, through views or not (they index it with its
    // strides; a library call may read a view of a kernel's output in place as if it were
    // contiguous: passes/fuse.cpp), and a layout whose elements have a place each: constant
    // strides that do not overlap, or a caller that checks it per call.
    if (!read_by_kernels_only(out)) continue;
    if (!d.checked_at_run_time && !one_to_one(st, in->type().sizes)) continue;
    donor_strides_[out] = st;
  }
  for (const ir::FusionGroup& grp : fusion_.groups) {
    switch (grp.kind) {
      case ir::GroupKind::Pointwise:
      case ir::GroupKind::Row:
      case ir::GroupKind::SplitReduction:
      case ir::GroupKind::Concat:
      case ir::GroupKind::Scatter:
      case ir::GroupKind::Scan:
      case ir::GroupKind::Matmul: {
        const int out = new_buffer(grp.root, outputs.count(grp.root) ? BufferRole::Output : BufferRole::Temp);
        std::vector<int> extra;
        for (const Value* x : grp.extra_roots) extra.push_back(new_buffer(x, outputs.count(x) ? BufferRole::Output : BufferRole::Temp));
        if (grp.kind == ir::GroupKind::Pointwise) {
          adopt_donor_strides(out, grp.root);
          for (size_t i = 0; i < extra.size(); ++i) adopt_donor_strides(extra[i], grp.extra_roots[i]);
        }
        if (grp.kind == ir::GroupKind::SplitReduction) build_split_reduction(grp, out);
        else if (grp.kind == ir::GroupKind::Concat) build_concat(grp, out);
        else if (grp.kind == ir::GroupKind::Scatter) build_scatter(grp, out);
        else if (grp.kind == ir::GroupKind::Scan) build_scan(grp, out);
        else if (grp.kind == ir::GroupKind::Matmul) build_matmul(grp, out);
        else build_kernel(grp, out, extra);
        break;
      }
      case ir::GroupKind::Extern:
      case ir::GroupKind::Fallback: add_call(grp); break;
    }
  }
  for (const Value* o : g_.outputs()) {
    int b = buffer_of(o);
    if (b < 0) b = view_operand(o);  // a reshape of a call's result (passes/fuse.cpp): a view of its buffer
    // A view returned (made here, or as a call's operand read in place) keeps its base's memory
    // past this call: the base is an output, never a reused slot.
    if (plan_.buffers[b].role == BufferRole::View) {
      PlanBuffer& base = plan_.buffers[static_cast<size_t>(plan_.buffers[static_cast<size_t>(b)].base)];
      if (base.role == BufferRole::Temp) base.role = BufferRole::Output;
    }
    if (plan_.buffers[b].role == BufferRole::Temp) plan_.buffers[b].role = BufferRole::Output;
    plan_.outputs.push_back({b});
  }
  return std::move(plan_);
}

}  // namespace lowering

ir::ExecPlan build_kernels(const ir::Graph& g, const ir::Fusion& fusion, const LowerOptions& opts) {
  return lowering::Lowerer(g, fusion, opts).run();
}

ir::ExecPlan lower(const ir::Graph& g, const LowerOptions& opts, const ScheduleTarget& target) {
  ir::ExecPlan plan = build_kernels(g, fuse(g, opts), opts);
  schedule_tiles(plan, target);
  plan_memory(plan);
  return plan;
}

}  // namespace kiln::passes
