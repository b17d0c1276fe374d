// kiln/passes/kernel_builder.h — the kernel builder's classes, shared by the files of passes/lower.
//
// Internal to passes/lower*.cpp: KernelBuilder builds one kernel (its stages, instruction ids
// and argument list) by evaluating graph values inline; Lowerer turns the fusion groups into
// an ExecPlan, one build_* per group kind. passes/lower.cpp holds the builder's evaluation and
// the pointwise, row, split-reduction, concat and matmul kernels; passes/lower_ordered.cpp the
// kernels whose grid points walk lines in order (scatter, scan).
#pragma once

#include "passes/lower.h"

#include "base/error.h"
#include "ir/exec_plan.h"
#include "ir/fusion.h"
#include "ir/kernel.h"
#include "passes/lower_index.h"
#include "passes/row_domain.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln::passes::lowering {

using ir::Expr;
using ir::KInst;
using ir::KOp;
using ir::Node;
using ir::OpFamily;
using ir::OpKind;
using ir::Value;
using ir::BufferRole;
using ir::ExecPlan;
using ir::PlanBuffer;
using ir::PlanStep;
using ir::StepKind;
using ir::contiguous_strides;

// The dtype a reduction accumulates in. Floating sums and products accumulate in f64 and are
// rounded once to the result dtype, as the reference interpreter does: the error then neither
// grows with the length nor depends on the host's vector width (docs/decisions.md).
inline ScalarType accumulate_dtype(ir::ReductionOp op, ScalarType in_dt, ScalarType out_dt) {
  switch (op) {
    case ir::ReductionOp::sum:
    case ir::ReductionOp::prod: return is_floating_point(out_dt) ? ScalarType::Double : out_dt;
    case ir::ReductionOp::amax:
    case ir::ReductionOp::amin: return out_dt;
    case ir::ReductionOp::any:
    case ir::ReductionOp::all: return ScalarType::Bool;
    case ir::ReductionOp::argmax:
    case ir::ReductionOp::argmin: return in_dt;
  }
  internal_fail("lower: unknown reduction {}", static_cast<int>(op));
}

class Lowerer;

// div (trunc, floor), remainder and fmod of integers (bool included): the interpreter raises
// ZeroDivisionError for a zero divisor.
inline bool integer_division(const Node* n) {
  if (n->info().family != OpFamily::Binary || is_floating_point(n->input(0)->type().dtype)) return false;
  const ir::BinaryOp b = ir::as_binary(n->op());
  return b == ir::BinaryOp::div || b == ir::BinaryOp::remainder || b == ir::BinaryOp::fmod;
}

// Builds one kernel: the stages, the instruction ids and the argument list.
class KernelBuilder {
 public:
  KernelBuilder(Lowerer& l, std::string name) : l_(l) { k_.name = std::move(name); }

  ir::Kernel& kernel() { return k_; }
  // Row-kernel context: the domain whose kept dims are the grid (null for pointwise).
  const RowDomain* row = nullptr;
  std::vector<Expr> grid_idx;

  int eval(const Value* v, const std::vector<Expr>& idx);
  // Evaluates the value a kernel computes (its own buffer is where the result goes).
  int eval_root(const Value* v, const std::vector<Expr>& idx) { return eval_node(v->producer(), v, idx); }
  int emit(KInst in) {
    in.id = in.kind == KOp::Store || in.kind == KOp::Update ? -1 : next_id_++;
    cur_->body.push_back(std::move(in));
    return cur_->body.back().id;
  }
  int arg_for(int buffer, bool output);
  std::vector<int> arg_buffers;  // plan buffer id of each kernel argument
  std::set<const Node*> covered;  // the nodes this kernel computes (its fusion group)
  // Values this kernel stores (a pointwise group's roots): computed inline wherever read here,
  // never loaded from their buffers, which the kernel writes last.
  std::set<const Value*> stores;
  // Opens a stage: instructions go there until close_stage.
  void open_stage(ir::StageKind kind, std::vector<Expr> extents) {
    stack_.push_back({ir::KStage{}, {}});
    cur_ = &stack_.back().stage;
    cur_->kind = kind;
    cur_->extents = std::move(extents);
    memo_ = &stack_.back().memo;
  }
  ir::KStage& stage() { return *cur_; }
  void close_stage() {
    k_.stages.push_back(std::move(stack_.back().stage));
    closed_memos_.push_back(std::move(stack_.back().memo));
    stack_.pop_back();
    cur_ = stack_.empty() ? nullptr : &stack_.back().stage;
    memo_ = stack_.empty() ? nullptr : &stack_.back().memo;
  }
  int new_id() { return next_id_++; }
  // Row kernels: the final stage stores buffer `out` at `idx`. One value that an earlier
  // reduce stage already computed at that same index (softmax's exp) is stored there by that
  // stage and loaded back by every later stage, instead of being recomputed.
  void allow_forwarding(int out, std::vector<Expr> idx, Expr linear) {
    fwd_buffer_ = out;
    fwd_idx_ = std::move(idx);
    fwd_linear_ = std::move(linear);
  }
  // Closes the current Reduce stage folding `x` with `op`; returns the result id.
  int finish_reduce(ir::ReductionOp op, int x, ScalarType acc) {
    cur_->reduce_op = op;
    cur_->yield = x;
    cur_->acc_dtype = acc;
    const int result = cur_->result = new_id();
    close_stage();
    return result;
  }
  // The value folded by a reduction: `x` (of in_dt) converted as the reduction accumulates
  // (sum/prod: to the result dtype, which a float accumulator widens as it folds: the stage
  // yields an f32 value into an f64 accumulator; any/all: to bool).
  int accumulator_input(ir::ReductionOp op, int x, ScalarType in_dt, ScalarType out_dt) {
    const ScalarType acc = accumulate_dtype(op, in_dt, out_dt);
    switch (op) {
      case ir::ReductionOp::sum:
      case ir::ReductionOp::prod: return in_dt != out_dt ? convert(x, out_dt) : x;
      case ir::ReductionOp::any:
      case ir::ReductionOp::all: return in_dt != acc ? convert(x, acc) : x;
      case ir::ReductionOp::amax:
      case ir::ReductionOp::amin:
      case ir::ReductionOp::argmax:
      case ir::ReductionOp::argmin: return x;
    }
    internal_fail("lower: unknown reduction {}", static_cast<int>(op));
  }
  // A reduction's result (`result`, in its accumulator dtype) in its result dtype, computed in
  // the current stage.
  int reduction_output(ir::ReductionOp op, int result, ScalarType in_dt, ScalarType out_dt) {
    const bool value = op != ir::ReductionOp::argmax && op != ir::ReductionOp::argmin;
    return value && accumulate_dtype(op, in_dt, out_dt) != out_dt ? convert(result, out_dt) : result;
  }
  int convert(int x, ScalarType dt) { return compute(OpKind::convert_element_type, dt, {x}, ir::AttrList({dt})); }
  // A final Loop stage with no extents storing `value` into `buffer` at `index`.
  void store_stage(int buffer, Expr index, int value, ScalarType dt) {
    open_stage(ir::StageKind::Loop, {});
    store(buffer, std::move(index), value, dt);
    close_stage();
  }
  void store(int buffer, Expr index, int value, ScalarType dt) {
    KInst st;
    st.kind = KOp::Store;
    st.dtype = dt;
    st.arg = arg_for(buffer, true);
    st.index = std::move(index);
    st.operands = {value};
    emit(std::move(st));
  }

  // Single instructions.
  int compute(OpKind op, ScalarType dt, std::vector<int> operands, ir::AttrList attrs = {}) {
    KInst in = inst(KOp::Compute, dt, std::move(operands));
    in.op = op;
    in.attrs = std::move(attrs);
    return emit(std::move(in));
  }
  int constant(ScalarType dt, Scalar v) {
    KInst in = inst(KOp::Const, dt);
    in.value = v;
    return emit(std::move(in));
  }
  int check_nonzero(int x, ScalarType dt, OpKind op) {
    KInst in = inst(KOp::Check, dt, {x});
    in.check = ir::CheckKind::NonZero;
    in.op = op;
    return emit_check(std::move(in));
  }
  int check_in_bounds(int x, ScalarType dt, OpKind op, Expr bound, int64_t dim) {
    KInst in = inst(KOp::Check, dt, {x});
    in.check = ir::CheckKind::InBounds;
    in.op = op;
    in.index = std::move(bound);
    in.value = Scalar(dim);
    return emit_check(std::move(in));
  }
  // Replaces coordinate d of `at` by itself checked against sizes[d], for each d of `dims`: the
  // coordinates of an operand an index op reads or writes that its shapes do not prove in
  // bounds (passes/lower_index.h).
  void checked_coordinates(std::vector<Expr>& at, const std::vector<int64_t>& dims, const std::vector<Expr>& sizes, OpKind op) {
    for (int64_t d : dims) {
      const auto u = static_cast<size_t>(d);
      at.at(u) = ir::value_expr(check_in_bounds(index_value(ScalarType::Int64, at.at(u)), ScalarType::Int64, op, sizes.at(u), d));
    }
  }
  // A check the current stage already makes of the same value (a gather read at two columns of
  // one row: a norm's element and its shift) is that check, and a check of a constant that
  // holds (a remainder by 30) is none: each site costs the code generator a flag, a range and
  // their reductions.
  int emit_check(KInst in) {
    for (const KInst& c : cur_->body)
      if (c.id == in.operands.at(0) && c.kind == KOp::Const && !is_floating_point(c.dtype)) {
        const int64_t v = c.value.to_int();
        const std::optional<int64_t> bound = in.index.maybe_const();
        if (in.check == ir::CheckKind::NonZero ? v != 0 : (bound && v >= 0 && v < *bound)) return c.id;
      }
    for (const KInst& c : cur_->body)
      if (c.kind == KOp::Check && c.operands == in.operands && c.check == in.check && c.op == in.op &&
          c.dtype == in.dtype && c.index == in.index && c.value == in.value)
        return c.id;
    return emit(std::move(in));
  }
  int index_value(ScalarType dt, Expr e) {
    KInst in = inst(KOp::Index, dt);
    in.index = std::move(e);
    return emit(std::move(in));
  }
  // A value carried through the current (ordered) stage's iterations, `first` at the first one;
  // update(c, x) gives it x for the next.
  int carry(ScalarType dt, Scalar first) {
    KInst in = inst(KOp::Carry, dt);
    in.value = first;
    return emit(std::move(in));
  }
  void update(int c, int x, ScalarType dt) { emit(inst(KOp::Update, dt, {c, x})); }
  // A load of kernel argument `arg` (an output that this kernel also reads: a scatter's fold).
  int load(int arg, Expr index, ScalarType dt) {
    KInst in = inst(KOp::Load, dt);
    in.arg = arg;
    in.index = std::move(index);
    return emit(std::move(in));
  }
  // An instruction of `kind` and result dtype `dt` reading `operands`; the emitters set the rest.
  static KInst inst(KOp kind, ScalarType dt, std::vector<int> operands = {}) {
    KInst in;
    in.kind = kind;
    in.dtype = dt;
    in.operands = std::move(operands);
    return in;
  }

  // Builds the reduce stage of reduction `n` (of this row kernel) now, at its own row.
  void prepare_reduction(const Node* n) { reduce_stage(n, row->row_index(grid_idx, reduce_info(n).keepdim)); }

 private:
  int eval_node(const Node* n, const Value* v, const std::vector<Expr>& idx);
  int forwardable(const std::pair<const Value*, std::vector<const void*>>& mk, const Value* v,
                  const std::vector<Expr>& idx);
  // The reduce stage of n, built once per kernel; returns its result in the accumulator dtype.
  int reduce_stage(const Node* n, const std::vector<Expr>& idx);
  // n's value in its result dtype, in the current stage.
  int reduce_result(const Node* n, const std::vector<Expr>& idx) {
    const int raw = reduce_stage(n, idx);
    return reduction_output(reduce_info(n).op, raw, n->input(0)->type().dtype, n->output()->type().dtype);
  }

  struct Frame {
    ir::KStage stage;
    std::map<std::pair<const Value*, std::vector<const void*>>, int> memo;
  };
  Lowerer& l_;
  ir::Kernel k_;
  std::vector<Frame> stack_;
  ir::KStage* cur_ = nullptr;
  std::map<std::pair<const Value*, std::vector<const void*>>, int>* memo_ = nullptr;
  std::map<const Node*, int> reduce_results_;
  std::vector<std::map<std::pair<const Value*, std::vector<const void*>>, int>> closed_memos_;
  int fwd_buffer_ = -1;
  bool forwarded_ = false;
  std::pair<const Value*, std::vector<const void*>> fwd_key_;  // the value forwarded
  std::vector<Expr> fwd_idx_;
  Expr fwd_linear_;
  int next_id_ = 0;
};

class Lowerer {
 public:
  Lowerer(const ir::Graph& g, const ir::Fusion& f, const LowerOptions& o) : g_(g), fusion_(f), opts_(o) {
    for (const Node* n : g.nodes()) {
      node_index_.emplace(n, static_cast<int>(node_index_.size()));
      if (n->info().family == OpFamily::Random) draw_.emplace(n, plan_.random_draws++);
    }
  }
  // The position of random node n among the graph's draws (ir/exec_plan.h).
  int64_t draw(const Node* n) const { return draw_.at(n); }
  ExecPlan run();
  int node_index(const Node* n) const { return node_index_.at(n); }

  // The plan buffer of v, or -1.
  int buffer_of(const Value* v) const {
    auto it = buf_.find(v);
    return it == buf_.end() ? -1 : it->second;
  }
  const PlanBuffer& buffer(int b) const { return plan_.buffers.at(b); }

 private:
  int new_buffer(const Value* v, BufferRole role);
  // An output buffer of a pointwise kernel takes the strides of the strided input it replaces
  // (LowerOptions::donations).
  void adopt_donor_strides(int buffer, const Value* v);
  // Whether only generated kernels read v, directly or through views (no Extern or Fallback group).
  bool read_by_kernels_only(const Value* v) const;
  int operand(const Value* v) const;
  int view_operand(const Value* v);
  std::vector<Expr> view_strides(const Value* v, int& base) const;
  void build_kernel(const ir::FusionGroup& grp, int out_buffer, const std::vector<int>& extra_buffers = {});
  void build_split_reduction(const ir::FusionGroup& grp, int out_buffer);
  void build_concat(const ir::FusionGroup& grp, int out_buffer);
  void build_scatter(const ir::FusionGroup& grp, int out_buffer);
  void build_scan(const ir::FusionGroup& grp, int out_buffer);
  void build_matmul(const ir::FusionGroup& grp, int out_buffer);
  void add_call(const ir::FusionGroup& grp);
  std::string next_kernel_name() { return fmt::format("{}{}", opts_.name_prefix, kernel_count_++); }
  void add_kernel(KernelBuilder& kb, const ir::FusionGroup& grp);
  const ir::Graph& g_;
  const ir::Fusion& fusion_;
  std::unordered_map<const Node*, int> node_index_;  // position in g_.nodes()
  std::unordered_map<const Node*, int64_t> draw_;     // random nodes: their draw number
  LowerOptions opts_;
  ExecPlan plan_;
  std::unordered_map<const Value*, int> buf_;
  std::set<const Value*> channels_last_;  // values stored NHWC (LowerOptions::channels_last)
  std::unordered_map<const Value*, std::vector<Expr>> donor_strides_;  // outputs replacing strided inputs
  std::unordered_map<int, ir::GroupKind> group_kind_;  // node position -> the kind of its group
  int kernel_count_ = 0;
};

}  // namespace kiln::passes::lowering
