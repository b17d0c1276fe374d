// kiln/passes/lower.cpp — kernel building: the fusion groups of a prim graph -> ExecPlan.
//
// The Lowerer takes the groups of passes/fuse.h in order. A kernel group becomes one kernel
// (two for a split reduction): its grid is the root's shape (pointwise) or the kept dims of
// its reductions (row kernels), and its body evaluates the root at the grid index, inlining
// producers through eval() and loading every value an earlier group put in memory. The
// group's reductions become Reduce stages. A call group becomes an extern or fallback step on
// its operands' buffers. Nothing is decided here that fusion did not decide: a reduction that
// cannot be a reduce stage of its kernel is an internal error.
#include "passes/lower.h"
#include "passes/schedule.h"

#include "base/error.h"
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


namespace {

// The dtype a reduction accumulates in. Floating sums and products accumulate in f64 and are
// rounded once to the result dtype, as the reference interpreter does: the error then neither
// grows with the length nor depends on the host's vector width (docs/decisions.md).
ScalarType accumulate_dtype(ir::ReductionOp op, ScalarType in_dt, ScalarType out_dt) {
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
bool integer_division(const Node* n) {
  if (n->info().family != OpFamily::Binary || is_floating_point(n->input(0)->type().dtype)) return false;
  const ir::BinaryOp b = ir::as_binary(n->op());
  return b == ir::BinaryOp::div || b == ir::BinaryOp::remainder || b == ir::BinaryOp::fmod;
}

// How a scatter kernel combines src's element with what its position holds: scatter stores it
// (no op); scatter_add and scatter_reduce fold it in with the interpreter's arithmetic
// (runtime/interpreter/scatter_fold.h: bools fold with or / and, integers wrap, NaN wins max
// and min). `reset`: positions restart from the fold's identity (include_self false).
struct ScatterFold {
  std::optional<OpKind> op;
  std::string reduce;  // sum, prod, amax, amin, mean
  bool reset = false;
  // mean: the fold is a sum; each position counts the values it received (self included
  // when it is), and a last pass divides it by that count (none: the position keeps self).
  bool mean = false;
  Scalar identity(ScalarType dt) const {
    const bool high = reduce == "prod" || reduce == "amin";  // starts from 1 / the greatest value
    if (dt == ScalarType::Bool) return Scalar(high);
    if (reduce == "sum" || reduce == "mean" || reduce == "prod") return Scalar(int64_t{high ? 1 : 0});
    if (is_floating_point(dt)) return Scalar((high ? 1.0 : -1.0) * std::numeric_limits<double>::infinity());
    const int bits = static_cast<int>(element_size(dt)) * 8;
    if (dt == ScalarType::UInt8) return Scalar(int64_t{high ? 255 : 0});
    const int64_t max = bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
    return Scalar(high ? max : -max - 1);
  }
};
ScatterFold scatter_fold(const Node* n) {
  ScatterFold f;
  if (n->op() == OpKind::scatter) return f;
  f.reduce = n->op() == OpKind::scatter_add ? "sum" : n->attr<std::string>("reduce");
  f.reset = n->op() == OpKind::scatter_reduce && !n->attr<bool>("include_self");
  const bool is_bool = n->output()->type().dtype == ScalarType::Bool;
  f.mean = f.reduce == "mean";
  if (f.reduce == "sum" || f.mean) f.op = is_bool ? OpKind::logical_or : OpKind::add;
  else if (f.reduce == "prod") f.op = is_bool ? OpKind::logical_and : OpKind::mul;
  else if (f.reduce == "amax") f.op = is_bool ? OpKind::logical_or : OpKind::maximum;
  else if (f.reduce == "amin") f.op = is_bool ? OpKind::logical_and : OpKind::minimum;
  else internal_fail("lower: scatter_reduce '{}' has no kernel", f.reduce);
  return f;
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
  // stage and loaded back, instead of being recomputed.
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
  // (sum/prod: to the result dtype first, then to the accumulator; any/all: to bool).
  int accumulator_input(ir::ReductionOp op, int x, ScalarType in_dt, ScalarType out_dt) {
    const ScalarType acc = accumulate_dtype(op, in_dt, out_dt);
    switch (op) {
      case ir::ReductionOp::sum:
      case ir::ReductionOp::prod:
        if (in_dt != out_dt) x = convert(x, out_dt);
        return acc != out_dt ? convert(x, acc) : x;
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
    KInst in;
    in.kind = KOp::Compute;
    in.op = op;
    in.dtype = dt;
    in.operands = std::move(operands);
    in.attrs = std::move(attrs);
    return emit(std::move(in));
  }
  int constant(ScalarType dt, Scalar v) {
    KInst in;
    in.kind = KOp::Const;
    in.dtype = dt;
    in.value = v;
    return emit(std::move(in));
  }
  int check_nonzero(int x, ScalarType dt, OpKind op) {
    KInst in;
    in.kind = KOp::Check;
    in.check = ir::CheckKind::NonZero;
    in.dtype = dt;
    in.op = op;
    in.operands = {x};
    return emit(std::move(in));
  }
  int check_in_bounds(int x, ScalarType dt, OpKind op, Expr bound, int64_t dim) {
    KInst in;
    in.kind = KOp::Check;
    in.check = ir::CheckKind::InBounds;
    in.dtype = dt;
    in.op = op;
    in.index = std::move(bound);
    in.value = Scalar(dim);
    in.operands = {x};
    return emit(std::move(in));
  }
  int index_value(ScalarType dt, Expr e) {
    KInst in;
    in.kind = KOp::Index;
    in.dtype = dt;
    in.index = e;
    return emit(std::move(in));
  }
  // A value carried through the current (ordered) stage's iterations, `first` at the first one;
  // update(c, x) gives it x for the next.
  int carry(ScalarType dt, Scalar first) {
    KInst in;
    in.kind = KOp::Carry;
    in.dtype = dt;
    in.value = first;
    return emit(std::move(in));
  }
  void update(int c, int x, ScalarType dt) {
    KInst in;
    in.kind = KOp::Update;
    in.dtype = dt;
    in.operands = {c, x};
    emit(std::move(in));
  }
  // A load of kernel argument `arg` (an output that this kernel also reads: a scatter's fold).
  int load(int arg, Expr index, ScalarType dt) {
    KInst in;
    in.kind = KOp::Load;
    in.dtype = dt;
    in.arg = arg;
    in.index = std::move(index);
    return emit(std::move(in));
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
  int kernel_count_ = 0;
};

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
    KInst in;
    in.kind = KOp::Load;
    in.dtype = v->type().dtype;
    in.arg = arg_for(b, false);
    in.index = linear_index(idx, l_.buffer(b).strides);
    id = emit(std::move(in));
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
  if (fwd_buffer_ < 0 || forwarded_ || idx != fwd_idx_ || v->type().dtype != l_.buffer(fwd_buffer_).type.dtype) return -1;
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
    KInst ld;
    ld.kind = KOp::Load;
    ld.dtype = v->type().dtype;
    ld.arg = out_arg;
    ld.index = fwd_linear_;
    forwarded_ = true;
    return emit(std::move(ld));
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
  std::vector<Expr> red_idx;
  for (size_t i = 0; i < cur_->extents.size(); ++i) red_idx.push_back(loop_var(cur_->extents[i], ir::stage_expr(i)));
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
      return eval(n->input(0), indexed_source(r, idx, ir::value_expr(picked)));
    }
    case OpFamily::Random: {
      // Element idx (row-major) of this call's draw number l_.draw(n) (ir/exec_plan.h).
      KInst in;
      in.kind = KOp::Random;
      in.op = n->op();
      in.dtype = dt;
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
  b.strides = contiguous_strides(b.type.sizes);
  plan_.buffers.push_back(std::move(b));
  const int id = static_cast<int>(plan_.buffers.size() - 1);
  buf_[v] = id;
  return id;
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
  const std::vector<Expr> grid = row_kernel ? dom.kept() : v->type().sizes;
  std::vector<Expr> grid_idx, stage_ext;
  for (size_t i = 0; i < grid.size(); ++i) grid_idx.push_back(loop_var(grid[i], ir::grid_expr(i)));
  kb.kernel().grid = grid;
  kb.row = row_kernel ? &dom : nullptr;
  kb.grid_idx = grid_idx;

  std::vector<Expr> store_idx = grid_idx;
  if (row_kernel && grp.row_shape == ir::RowShape::KeepDim) store_idx = dom.row_index(grid_idx, true);
  if (row_kernel && grp.row_shape == ir::RowShape::Full) stage_ext = dom.reduced();
  kb.open_stage(ir::StageKind::Loop, stage_ext);
  if (row_kernel && grp.row_shape == ir::RowShape::Full) {
    std::vector<Expr> red_idx;
    for (size_t i = 0; i < stage_ext.size(); ++i) red_idx.push_back(loop_var(stage_ext[i], ir::stage_expr(i)));
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
  const std::vector<Expr> grid(out_sizes.begin(), out_sizes.begin() + static_cast<std::ptrdiff_t>(dim));
  std::vector<Expr> grid_idx;
  for (size_t i = 0; i < grid.size(); ++i) grid_idx.push_back(loop_var(grid[i], ir::grid_expr(i)));
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
      for (size_t i = 0; i < extents.size(); ++i) idx.push_back(loop_var(extents[i], ir::stage_expr(i)));
      const int val = kb.eval(in, idx);
      idx[dim] = idx[dim] + offset;
      kb.store(out_buffer, linear_index(idx, plan_.buffers[out_buffer].strides), val, grp.root->type().dtype);
      kb.close_stage();
      offset = offset + sz[dim];
    }
    add_kernel(kb, grp);
  }
}

// out = scatter(self, index, src, dim) (scatter_add, scatter_reduce): self is copied into out,
// by a kernel of its own or, when the index spans self outside dim, by each grid point for its
// own line. Each grid point then walks its line of the index in order (an ordered stage): the
// position is checked (out of bounds is the op's error, and position 0 is written instead),
// and src's element is stored there or folded into what is there, as the interpreter's
// scatter_fold.h does. Without include_self, a first pass over the line resets each position
// it names to the fold's identity.
void Lowerer::build_scatter(const ir::FusionGroup& grp, int out_buffer) {
  const Node* n = grp.node;
  const Value* v = grp.root;
  const IndexedWrite w = indexed_write(n, opts_.line_tile);
  const ScalarType dt = v->type().dtype;
  const std::vector<Expr> out_strides = plan_.buffers[out_buffer].strides;
  const ScatterFold fold = scatter_fold(n);
  // mean: the count of values each position received, beside the output (a bool's mean is its
  // sum, as scatter_fold.h's mean_of has it).
  int count = -1;
  if (fold.mean && dt != ScalarType::Bool) {
    PlanBuffer cb;
    cb.role = BufferRole::Temp;
    cb.type = ir::TensorType(ScalarType::Int64, v->type().sizes);
    cb.strides = contiguous_strides(cb.type.sizes);
    plan_.buffers.push_back(std::move(cb));
    count = static_cast<int>(plan_.buffers.size() - 1);
  }
  // Element idx of self (and its count's start) into the output.
  auto copy_self = [&](KernelBuilder& kb, const std::vector<Expr>& idx) {
    kb.store(out_buffer, linear_index(idx, out_strides), kb.eval(n->input(0), idx), dt);
    if (count >= 0)
      kb.store(count, linear_index(idx, plan_.buffers[count].strides),
               kb.constant(ScalarType::Int64, Scalar(int64_t{fold.reset ? 0 : 1})), ScalarType::Int64);
  };
  // Element idx of the output divided by its count (mean_of in scatter_fold.h: floor division
  // of the int64 sum for integers, the division in f32 for f16/bf16).
  // (A kernel that also writes the counts reads them through the same argument: two arguments
  // of one buffer would break the backends' no-alias promise.)
  auto divide = [&](KernelBuilder& kb, const std::vector<Expr>& idx, bool writes_counts) {
    const Expr at = linear_index(idx, out_strides);
    const int sum = kb.load(kb.arg_for(out_buffer, true), at, dt);
    const int c = kb.load(kb.arg_for(count, writes_counts), linear_index(idx, plan_.buffers[count].strides), ScalarType::Int64);
    const int one = kb.constant(ScalarType::Int64, Scalar(int64_t{1}));
    const int d = kb.compute(OpKind::maximum, ScalarType::Int64, {c, one});  // no value: the position keeps self
    const ScalarType in = is_floating_point(dt) ? (dt == ScalarType::Double ? dt : ScalarType::Float) : ScalarType::Int64;
    const int num = kb.convert(sum, in), den = kb.convert(d, in);
    const ir::AttrValue mode = is_floating_point(dt) ? ir::AttrValue(std::monostate{}) : ir::AttrValue(std::string("floor"));
    const int q = kb.compute(OpKind::div, in, {num, den}, ir::AttrList({mode}));
    kb.store(out_buffer, at, kb.convert(q, dt), dt);
  };
  // A kernel over the whole output doing `body` at each element.
  auto over_output = [&](const auto& body) {
    KernelBuilder kb(*this, next_kernel_name());
    kb.covered.insert(n);
    const std::vector<Expr>& sizes = v->type().sizes;
    kb.kernel().grid = sizes;
    std::vector<Expr> idx;
    for (size_t i = 0; i < sizes.size(); ++i) idx.push_back(loop_var(sizes[i], ir::grid_expr(i)));
    kb.open_stage(ir::StageKind::Loop, {});
    body(kb, idx);
    kb.close_stage();
    add_kernel(kb, grp);
  };
  if (grp.copies_self) over_output(copy_self);
  KernelBuilder kb(*this, next_kernel_name());
  kb.covered.insert(n);
  kb.kernel().grid = w.grid;
  std::vector<Expr> grid_idx;
  for (size_t i = 0; i < w.grid.size(); ++i) grid_idx.push_back(loop_var(w.grid[i], ir::grid_expr(i)));
  // A stage over `extents`, returning the element of the index (or of self's line) it is at.
  auto open = [&](const Expr& positions, bool ordered) {
    kb.open_stage(ir::StageKind::Loop, w.line_extents(positions));
    kb.stage().ordered = ordered;
    std::vector<Expr> stage_idx;
    for (size_t i = 0; i < kb.stage().extents.size(); ++i) stage_idx.push_back(loop_var(kb.stage().extents[i], ir::stage_expr(i)));
    return w.at(grid_idx, stage_idx);
  };
  if (!grp.copies_self) {  // the grid point's line of self
    copy_self(kb, open(w.bound, false));
    kb.close_stage();
  }
  // One ordered pass over the line; `body` gets the index element and the checked position.
  auto pass = [&](const auto& body) {
    const std::vector<Expr> at = open(w.length, true);
    const int picked = kb.check_in_bounds(kb.eval(n->input(1), at), n->input(1)->type().dtype, n->op(), w.bound, w.dim);
    std::vector<Expr> dst = at;
    dst.at(static_cast<size_t>(w.dim)) = ir::value_expr(picked);
    body(at, dst);
    kb.close_stage();
  };
  if (fold.reset)
    pass([&](const std::vector<Expr>&, const std::vector<Expr>& dst) {
      kb.store(out_buffer, linear_index(dst, out_strides), kb.constant(dt, fold.identity(dt)), dt);
    });
  pass([&](const std::vector<Expr>& at, const std::vector<Expr>& dst) {
    const Expr pos = linear_index(dst, out_strides);
    int x = kb.eval(n->input(2), at);
    if (fold.op) x = kb.compute(*fold.op, dt, {kb.load(kb.arg_for(out_buffer, true), pos, dt), x});
    kb.store(out_buffer, pos, x, dt);
    if (count >= 0) {
      const Expr cpos = linear_index(dst, plan_.buffers[count].strides);
      const int c = kb.load(kb.arg_for(count, true), cpos, ScalarType::Int64);
      kb.store(count, cpos, kb.compute(OpKind::add, ScalarType::Int64, {c, kb.constant(ScalarType::Int64, Scalar(int64_t{1}))}),
               ScalarType::Int64);
    }
  });
  if (count >= 0 && !grp.copies_self) {  // the grid point's line, divided
    divide(kb, open(w.bound, false), true);
    kb.close_stage();
  }
  add_kernel(kb, grp);
  if (count >= 0 && grp.copies_self)  // the whole output, divided
    over_output([&](KernelBuilder& kd, const std::vector<Expr>& idx) { divide(kd, idx, false); });
}

// out = scan(x, dim) (cumsum, cumprod, cummax, cummin, logcumsumexp): each grid point walks its
// line along dim in order (an ordered stage; passes/lower_index.h's LineWalk), with x computed
// inline, folding each element into a running value that it stores there. The running value
// is carried in a register (ir::KOp::Carry); when the grid point walks a tile of the last dim
// instead (LowerOptions::line_tile: a scan along another dim, on the cpu), each column of the
// tile keeps its own in a temporary, set by a first pass. The arithmetic is the interpreter's
// (runtime/interpreter/interp_scan.cpp), so results agree bit for bit: floating sums and
// products in f64 and integers (bool included) in wrapping int64, rounded once per output;
// cummax and cummin keep the first NaN once one appears and otherwise replace the running
// value only by a strictly greater (less) one; logcumsumexp is a running logaddexp in f64.
void Lowerer::build_scan(const ir::FusionGroup& grp, int out_buffer) {
  const Node* n = grp.node;
  const Value* v = grp.root;
  const std::vector<Expr>& sizes = v->type().sizes;
  const ScalarType dt = v->type().dtype;
  const bool scalar = sizes.empty();  // a 0-dim tensor scans its one element
  const LineWalk lines = scalar ? LineWalk{} : line_walk(sizes, n->attr<int64_t>("dim"), opts_.line_tile);
  const bool extreme = n->op() == OpKind::cummax || n->op() == OpKind::cummin;
  const double inf = std::numeric_limits<double>::infinity();
  // The running value's dtype and its value before the first element.
  const ScalarType acc = extreme ? dt : n->op() == OpKind::logcumsumexp || is_floating_point(dt) ? ScalarType::Double : ScalarType::Int64;
  const Scalar first = n->op() == OpKind::logcumsumexp ? Scalar(-inf) : Scalar(int64_t{n->op() == OpKind::cumprod ? 1 : 0});

  KernelBuilder kb(*this, next_kernel_name());
  kb.covered.insert(n);
  kb.kernel().grid = lines.grid;
  std::vector<Expr> grid_idx;
  for (size_t i = 0; i < lines.grid.size(); ++i) grid_idx.push_back(loop_var(lines.grid[i], ir::grid_expr(i)));
  // A pass over `positions` of the line; returns the element it is at.
  auto open = [&](const Expr& positions, bool ordered) {
    kb.open_stage(ir::StageKind::Loop, scalar ? std::vector<Expr>{positions} : lines.line_extents(positions));
    kb.stage().ordered = ordered;
    if (scalar) return std::vector<Expr>{};
    std::vector<Expr> stage_idx;
    for (size_t i = 0; i < kb.stage().extents.size(); ++i) stage_idx.push_back(loop_var(kb.stage().extents[i], ir::stage_expr(i)));
    return lines.at(grid_idx, stage_idx);
  };
  // Tiles: the running values in a temporary over the dims other than dim (the column of idx).
  int running = -1;
  auto running_at = [&](std::vector<Expr> idx) {
    idx.erase(idx.begin() + lines.dim);
    return linear_index(idx, plan_.buffers[running].strides);
  };
  if (lines.tile > 0) {
    std::vector<Expr> rs = sizes;
    rs.erase(rs.begin() + lines.dim);
    PlanBuffer rb;
    rb.role = BufferRole::Temp;
    rb.type = ir::TensorType(acc, rs);
    rb.strides = contiguous_strides(rs);
    plan_.buffers.push_back(std::move(rb));
    running = static_cast<int>(plan_.buffers.size() - 1);
    const std::vector<Expr> at = open(Expr(1), false);
    kb.store(running, running_at(at), kb.constant(acc, first), acc);
    kb.close_stage();
  }
  const Expr length = scalar ? Expr(1) : sizes[static_cast<size_t>(lines.dim)];
  const std::vector<Expr> idx = open(length, true);
  const int x = kb.eval(n->input(0), idx);
  const int prev = running < 0 ? kb.carry(acc, first) : kb.load(kb.arg_for(running, true), running_at(idx), acc);
  int y = -1;
  switch (n->op()) {
    case OpKind::cumsum:
    case OpKind::cumprod: y = kb.compute(n->op() == OpKind::cumsum ? OpKind::add : OpKind::mul, acc, {prev, dt == acc ? x : kb.convert(x, acc)}); break;
    case OpKind::cummax:
    case OpKind::cummin: {
      // The running value takes x at the line's first element, where x is NaN while it is not,
      // and where x is strictly beyond it.
      int take = kb.compute(n->op() == OpKind::cummax ? OpKind::gt : OpKind::lt, ScalarType::Bool, {x, prev});
      if (is_floating_point(dt)) {
        const int x_nan = kb.compute(OpKind::isnan, ScalarType::Bool, {x});
        const int prev_num = kb.compute(OpKind::logical_not, ScalarType::Bool, {kb.compute(OpKind::isnan, ScalarType::Bool, {prev})});
        take = kb.compute(OpKind::logical_and, ScalarType::Bool,
                          {prev_num, kb.compute(OpKind::logical_or, ScalarType::Bool, {x_nan, take})});
      }
      const int at_start = kb.index_value(ScalarType::Bool, ir::eq(scalar ? Expr(0) : idx[static_cast<size_t>(lines.dim)], Expr(0)));
      take = kb.compute(OpKind::logical_or, ScalarType::Bool, {at_start, take});
      y = kb.compute(OpKind::where, dt, {take, x, prev});
      break;
    }
    case OpKind::logcumsumexp: {
      // log(exp(prev) + exp(x)) as scan_math.h's log_add_exp: hi + log1p(exp(lo - hi)), or hi
      // where lo is -inf or hi is +inf; NaN propagates through maximum and minimum.
      const ScalarType f64 = ScalarType::Double;
      const int xd = dt == f64 ? x : kb.convert(x, f64);
      const int hi = kb.compute(OpKind::maximum, f64, {prev, xd}), lo = kb.compute(OpKind::minimum, f64, {prev, xd});
      const int tail = kb.compute(OpKind::log1p, f64, {kb.compute(OpKind::exp, f64, {kb.compute(OpKind::sub, f64, {lo, hi})})});
      const int sum = kb.compute(OpKind::add, f64, {hi, tail});
      const int edge = kb.compute(OpKind::logical_or, ScalarType::Bool,
                                  {kb.compute(OpKind::eq, ScalarType::Bool, {lo, kb.constant(f64, Scalar(-inf))}),
                                   kb.compute(OpKind::eq, ScalarType::Bool, {hi, kb.constant(f64, Scalar(inf))})});
      y = kb.compute(OpKind::where, f64, {edge, hi, sum});
      break;
    }
    default: internal_fail("lower: {} is not a scan", n->info().name);
  }
  if (running < 0) kb.update(prev, y, acc);
  else kb.store(running, running_at(idx), y, acc);
  kb.store(out_buffer, linear_index(idx, plan_.buffers[out_buffer].strides), acc == dt ? y : kb.convert(y, dt), dt);
  kb.close_stage();
  add_kernel(kb, grp);
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
  std::vector<Expr> idx;
  for (size_t i = 0; i < sizes.size(); ++i) idx.push_back(loop_var(sizes[i], ir::grid_expr(i)));
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
    const int b = operand(o);
    if (plan_.buffers[b].role == BufferRole::Temp) plan_.buffers[b].role = BufferRole::Output;
    plan_.outputs.push_back({b});
  }
  return std::move(plan_);
}

}  // namespace

ExecPlan build_kernels(const ir::Graph& g, const ir::Fusion& fusion, const LowerOptions& opts) {
  return Lowerer(g, fusion, opts).run();
}

ExecPlan lower(const ir::Graph& g, const LowerOptions& opts, const ScheduleTarget& target) {
  ExecPlan plan = build_kernels(g, fuse(g, opts), opts);
  schedule_tiles(plan, target);
  plan_memory(plan);
  return plan;
}

}  // namespace kiln::passes
