// kiln/passes/lower.cpp — fusion by index functions: graph of prims -> ExecPlan of kernels.
//
// The Lowerer walks the graph in order and materializes the values that must live in memory
// (graph outputs, inputs of extern/fallback ops). Materializing a value builds one kernel:
// its grid is the value's shape (pointwise) or the kept dims of its reductions (row
// kernels), and its body evaluates the value at the grid index, inlining producers through
// eval(). Reductions met on the way become Reduce stages when they are read at the kernel's
// own row index; otherwise they are materialized first and the kernel is rebuilt.
#include "passes/lower.h"

#include "base/error.h"
#include "passes/lower_index.h"

#include <fmt/format.h>

#include <algorithm>
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

bool is_inlinable(const Node* n) {
  switch (n->info().family) {
    case OpFamily::Unary:
    case OpFamily::Binary:
    case OpFamily::Ternary:
    case OpFamily::Cast:
    case OpFamily::View:
    case OpFamily::Factory:
    case OpFamily::Shape:
      return true;
    case OpFamily::Reduction:
    case OpFamily::Scan:
    case OpFamily::Index:
    case OpFamily::Random:
    case OpFamily::Matmul:
    case OpFamily::Decomposable:  // decomposed before lowering, or an extern lowering
    case OpFamily::Custom:
      return false;
  }
  return false;
}
bool is_reduction(const Node* n) { return n->info().family == OpFamily::Reduction; }

// The domain of a reduction: input sizes and the (sorted) reduced dims.
struct RowDomain {
  std::vector<Expr> sizes;
  std::vector<int64_t> dims;
  bool operator==(const RowDomain&) const = default;
  std::vector<Expr> kept() const { return pick(false); }
  std::vector<Expr> reduced() const { return pick(true); }
  bool is_reduced(size_t d) const {
    for (int64_t x : dims)
      if (static_cast<size_t>(x) == d) return true;
    return false;
  }
  std::vector<Expr> pick(bool red) const {
    std::vector<Expr> out;
    for (size_t d = 0; d < sizes.size(); ++d)
      if (is_reduced(d) == red) out.push_back(sizes[d]);
    return out;
  }
  // The full index from kept (grid) and reduced (stage) indices.
  std::vector<Expr> interleave(const std::vector<Expr>& kept_idx, const std::vector<Expr>& red_idx) const {
    std::vector<Expr> idx;
    size_t k = 0, r = 0;
    for (size_t d = 0; d < sizes.size(); ++d) idx.push_back(is_reduced(d) ? red_idx.at(r++) : kept_idx.at(k++));
    return idx;
  }
};

struct ReduceInfo {
  RowDomain dom;
  bool keepdim = false;
  ir::ReductionOp op = ir::ReductionOp::sum;
};

ReduceInfo reduce_info(const Node* n) {
  ReduceInfo ri;
  ri.dom.sizes = n->input(0)->type().sizes;
  ri.op = ir::as_reduction(n->op());
  ri.keepdim = n->attr<bool>("keepdim");
  if (ri.op == ir::ReductionOp::argmax || ri.op == ir::ReductionOp::argmin) {
    std::optional<int64_t> dim = n->attrs().get_opt<int64_t>(n->op(), "dim");
    if (dim && !ri.dom.sizes.empty()) {
      ri.dom.dims = {*dim};
    } else {
      for (size_t d = 0; d < ri.dom.sizes.size(); ++d) ri.dom.dims.push_back(static_cast<int64_t>(d));
    }
  } else {
    ri.dom.dims = n->attr<std::vector<int64_t>>("dims");
  }
  return ri;
}

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

// Thrown while building a kernel: this reduction must be materialized first.
struct Refuse {
  const Node* reduction;
};

class Lowerer;

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
    in.id = in.kind == KOp::Store ? -1 : next_id_++;
    cur_->body.push_back(std::move(in));
    return cur_->body.back().id;
  }
  int arg_for(int buffer, bool output);
  std::vector<int> arg_buffers;  // plan buffer id of each kernel argument
  std::set<const Node*> covered;  // the nodes this kernel computes (its fusion group)
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

 private:
  int eval_node(const Node* n, const Value* v, const std::vector<Expr>& idx);
 public:
  // Builds the reduce stage of reduction `n` (of this row kernel) now, at its own row.
  void prepare_reduction(const Node* n) {
    const ReduceInfo ri = reduce_info(n);
    std::vector<Expr> at = grid_idx;
    if (ri.keepdim) at = ri.dom.interleave(grid_idx, std::vector<Expr>(ri.dom.dims.size(), Expr(0)));
    reduce_stage(n, at);
  }

 private:
  int forwardable(const std::pair<const Value*, std::vector<const void*>>& mk, const Value* v,
                  const std::vector<Expr>& idx);
  // The reduce stage of n, built once per kernel; returns its result in the accumulator dtype.
  int reduce_stage(const Node* n, const std::vector<Expr>& idx);
  // n's value in its result dtype, in the current stage.
  int reduce_result(const Node* n, const std::vector<Expr>& idx) {
    const int raw = reduce_stage(n, idx);
    return reduction_output(reduce_info(n).op, raw, n->input(0)->type().dtype, n->output()->type().dtype);
  }
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
  int index_value(ScalarType dt, Expr e) {
    KInst in;
    in.kind = KOp::Index;
    in.dtype = dt;
    in.index = e;
    return emit(std::move(in));
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
  Lowerer(const ir::Graph& g, const LowerOptions& o) : g_(g), opts_(o) {
    for (const Node* n : g.nodes()) node_index_.emplace(n, static_cast<int>(node_index_.size()));
  }
  ExecPlan run();
  int node_index(const Node* n) const { return node_index_.at(n); }

  // The plan buffer of v, or -1.
  int buffer_of(const Value* v) const {
    auto it = buf_.find(v);
    return it == buf_.end() ? -1 : it->second;
  }
  const PlanBuffer& buffer(int b) const { return plan_.buffers.at(b); }
  int materialize(const Value* v, BufferRole role);
  // An extern call's operand: a permute of a buffer is passed as a strided view, no copy.
  int extern_operand(const Value* v);
  const LowerOptions& opts() const { return opts_; }
  // The value of a size at trace time (symbols take their hints), or nothing when a symbol
  // has no hint: for performance choices only.
  std::optional<int64_t> hinted(const Expr& e) const {
    if (auto c = e.maybe_const()) return *c;
    std::vector<std::string> syms;
    e.collect_symbols(syms);
    std::map<std::string, int64_t> b;
    for (const std::string& s : syms) {
      auto it = opts_.hints.find(s);
      if (it == opts_.hints.end()) return std::nullopt;
      b[s] = it->second;
    }
    return e.evaluate(b);
  }
  std::optional<int64_t> hinted_numel(const std::vector<Expr>& sizes) const {
    Expr n = 1;
    for (const Expr& e : sizes) n = n * e;
    return hinted(n);
  }

 private:
  int new_buffer(const Value* v, BufferRole role);
  void build_kernel(const Value* v, int out_buffer);
  bool try_build(const Value* v, int out_buffer);
  void build_split_reduction(const Value* v, int out_buffer);
  void add_kernel(KernelBuilder& kb);
  void mark_shared_reductions();

  const ir::Graph& g_;
  std::unordered_map<const Node*, int> node_index_;  // position in g_.nodes()
  LowerOptions opts_;
  ExecPlan plan_;
  std::unordered_map<const Value*, int> buf_;
  std::set<const Node*> force_;  // reductions that are materialized rather than fused
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
  if (int b = l_.buffer_of(v); b >= 0) {
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
  if (!row || !(ri.dom == *row)) throw Refuse{n};
  // The index at which the consumer reads the reduction must be this kernel's row.
  std::vector<Expr> expect = grid_idx;
  if (ri.keepdim) expect = ri.dom.interleave(grid_idx, std::vector<Expr>(ri.dom.dims.size(), Expr(0)));
  if (idx != expect) throw Refuse{n};
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
      return compute(n->op(), dt, std::move(ops), n->attrs());
    }
    case OpFamily::Cast:
      if (n->op() == OpKind::clone || n->input(0)->type().dtype == dt) return eval(n->input(0), idx);
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
    case OpFamily::Scan:
    case OpFamily::Index:
    case OpFamily::Random:
    case OpFamily::Matmul:
    case OpFamily::Decomposable:
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

int Lowerer::materialize(const Value* v, BufferRole role) {
  if (int b = buffer_of(v); b >= 0) {
    if (role == BufferRole::Output && plan_.buffers[b].role == BufferRole::Temp) plan_.buffers[b].role = BufferRole::Output;
    return b;
  }
  const int b = new_buffer(v, role);
  build_kernel(v, b);
  return b;
}

int Lowerer::extern_operand(const Value* v) {
  if (buffer_of(v) >= 0 || v->is_input() || v->producer()->op() != OpKind::permute) return materialize(v, BufferRole::Temp);
  const Node* n = v->producer();
  const int base = materialize(n->input(0), BufferRole::Temp);
  if (plan_.buffers[base].role == BufferRole::View) return materialize(v, BufferRole::Temp);
  PlanBuffer b;
  b.role = BufferRole::View;
  b.type = v->type();
  b.base = base;
  const auto& dims = n->attr<std::vector<int64_t>>("dims");
  for (int64_t d : dims) b.strides.push_back(plan_.buffers[base].strides.at(static_cast<size_t>(d)));
  plan_.buffers.push_back(std::move(b));
  const int id = static_cast<int>(plan_.buffers.size() - 1);
  buf_[v] = id;
  return id;
}

void Lowerer::add_kernel(KernelBuilder& kb) {
  PlanStep st;
  st.kind = StepKind::Kernel;
  for (const Node* n : kb.covered) st.nodes.push_back(node_index(n));
  std::sort(st.nodes.begin(), st.nodes.end());
  st.kernel = std::move(kb.kernel());
  st.kernel.params = collect_params(st.kernel);
  ir::verify_kernel(st.kernel);
  st.buffers = kb.arg_buffers;
  plan_.steps.push_back(std::move(st));
}

// Builds the kernel computing v into out_buffer, materializing refused reductions first.
void Lowerer::build_kernel(const Value* v, int out_buffer) {
  for (int attempt = 0; attempt < 64; ++attempt) {
    try {
      if (try_build(v, out_buffer)) return;
    } catch (const Refuse& r) {
      force_.insert(r.reduction);
      materialize(r.reduction->output(), BufferRole::Temp);
    }
  }
  internal_fail("lower: kernel for a value of type {} did not converge", v->type().str());
}

// Finds the reductions v's inlined computation reaches (stopping at buffers).
// The root itself is what the kernel computes: its buffer is the destination, not a source.
void find_reductions(const Lowerer& l, const Value* v, std::vector<const Node*>& out, std::set<const Value*>& seen,
                     bool root = false) {
  if (!seen.insert(v).second || v->is_input() || (!root && l.buffer_of(v) >= 0)) return;
  const Node* n = v->producer();
  if (is_reduction(n)) {
    if (!reduce_info(n).dom.dims.empty()) {
      out.push_back(n);
      return;
    }
  } else if (!is_inlinable(n)) {
    return;
  }
  for (const Value* in : n->inputs()) find_reductions(l, in, out, seen);
}

bool Lowerer::try_build(const Value* v, int out_buffer) {
  std::vector<const Node*> reds;
  std::set<const Value*> seen;
  find_reductions(*this, v, reds, seen, /*root=*/true);
  for (const Node* r : reds)
    if (force_.count(r) && r->output() != v) throw Refuse{r};

  KernelBuilder kb(*this, fmt::format("{}{}", opts_.name_prefix, kernel_count_));
  const std::vector<Expr>& vs = v->type().sizes;
  std::vector<Expr> grid, stage_ext, grid_idx;
  RowDomain dom;
  enum { Pointwise, Full, KeepDim, Kept } shape_case = Pointwise;
  if (!reds.empty()) {
    // The row domain: the one of the reduction nearest to v (found first).
    dom = reduce_info(reds.front()).dom;
    for (const Node* r : reds)
      if (!(reduce_info(r).dom == dom)) throw Refuse{r};
    std::vector<Expr> keep1 = dom.sizes;
    for (int64_t d : dom.dims) keep1[d] = 1;
    // keepdim first: when every reduced dim has size 1, the full domain and the keepdim shape
    // coincide, and a lone reduction must stay a reduce stage plus a store (no loop stage).
    if (vs == keep1) shape_case = KeepDim;
    else if (vs == dom.sizes) shape_case = Full;
    else if (vs == dom.kept()) shape_case = Kept;
    else throw Refuse{reds.front()};
    // A large reduction to a single point is split so that it runs in parallel (symbolic
    // sizes: judged by their hints; the split kernels are correct for every size).
    const std::vector<Expr> kept = dom.kept();
    const std::optional<int64_t> work = hinted_numel(dom.reduced());
    if (kept.empty() && work && *work >= opts_.split_reduction_min) {
      const bool alone = reds.size() == 1 && reds.front()->output() == v;
      if (alone && split_supported(reduce_info(reds.front()).op)) {
        build_split_reduction(v, out_buffer);
        return true;
      }
      // Materialized on its own first (split there); argmax/argmin, whose partials do not
      // combine, stay one serial kernel.
      if (!alone) throw Refuse{reds.front()};
    }
    grid = kept;
  } else {
    grid = vs;
  }
  for (size_t i = 0; i < grid.size(); ++i) grid_idx.push_back(loop_var(grid[i], ir::grid_expr(i)));
  kb.kernel().grid = grid;
  kb.row = reds.empty() ? nullptr : &dom;
  kb.grid_idx = grid_idx;

  std::vector<Expr> store_idx;
  switch (shape_case) {
    case Pointwise:
    case Kept: store_idx = grid_idx; break;
    case KeepDim: store_idx = dom.interleave(grid_idx, std::vector<Expr>(dom.dims.size(), Expr(0))); break;
    case Full: stage_ext = dom.reduced(); break;
  }
  kb.open_stage(ir::StageKind::Loop, stage_ext);
  if (shape_case == Full) {
    std::vector<Expr> red_idx;
    for (size_t i = 0; i < stage_ext.size(); ++i) red_idx.push_back(loop_var(stage_ext[i], ir::stage_expr(i)));
    store_idx = dom.interleave(grid_idx, red_idx);
    kb.allow_forwarding(out_buffer, store_idx, linear_index(store_idx, plan_.buffers[out_buffer].strides));
    // Reduce stages first, so that the final stage can reuse what they computed.
    for (auto it = reds.rbegin(); it != reds.rend(); ++it) kb.prepare_reduction(*it);
  }
  const int val = kb.eval_root(v, store_idx);
  kb.store(out_buffer, linear_index(store_idx, plan_.buffers[out_buffer].strides), val, v->type().dtype);
  kb.close_stage();

  // A lone reduction over outer dims (a column sum) iterates its rows outside a tile of
  // columns so that loads are contiguous.
  ir::Kernel& k = kb.kernel();
  if (reds.size() == 1 && reds.front()->output() == v && k.stages.size() == 2 && !grid.empty() &&
      !dom.is_reduced(dom.sizes.size() - 1) && tile_supported(reduce_info(reds.front()).op))
    k.schedule.outer_reduction_tile = 64;
  ++kernel_count_;
  add_kernel(kb);
  return true;
}

// out = reduce(x) over everything, as partials over grid chunks then one final reduce.
void Lowerer::build_split_reduction(const Value* v, int out_buffer) {
  const Node* n = v->producer();
  const ReduceInfo ri = reduce_info(n);
  const ScalarType out_dt = v->type().dtype;
  const ScalarType in_dt = n->input(0)->type().dtype;
  const std::vector<Expr>& sz = ri.dom.sizes;
  Expr total = 1;
  for (const Expr& e : sz) total = total * e;
  // Partials over dim 0 when it is long enough (each partial reduces the inner dims with
  // plain index arithmetic), else over a fixed number of chunks of the flattened input, each
  // ceil(total / chunks) long (the last ones shorter or empty). With symbolic sizes the
  // choice and the chunk count come from the hints; the lengths stay symbolic.
  const bool by_rows = sz.size() >= 2 && hinted(sz[0]).value_or(0) >= 16;
  const Expr chunks =
      by_rows ? sz[0] : Expr(std::min<int64_t>(256, std::max<int64_t>(1, hinted(total).value_or(0) / 16384)));
  const Expr chunk = total.is_const() ? Expr((total.as_const() + chunks.as_const() - 1) / chunks.as_const())
                                      : ir::floordiv(total + chunks - 1, chunks);
  // Partial buffer: one value per chunk, in the accumulation dtype.
  const ScalarType acc = accumulate_dtype(ri.op, in_dt, out_dt);
  PlanBuffer pb;
  pb.role = BufferRole::Temp;
  pb.type = ir::TensorType(acc, {chunks});
  pb.strides = {Expr(1)};
  plan_.buffers.push_back(pb);
  const int partial = static_cast<int>(plan_.buffers.size() - 1);

  {  // partial sums: grid [chunks], each reducing a contiguous run of the flattened input
    KernelBuilder kb(*this, fmt::format("{}{}", opts_.name_prefix, kernel_count_++));
    kb.covered.insert(n);
    kb.kernel().grid = {chunks};
    const Expr p0 = ir::grid_expr(0);
    int x;
    if (by_rows) {
      const std::vector<Expr> inner(sz.begin() + 1, sz.end());
      kb.open_stage(ir::StageKind::Reduce, inner);
      std::vector<Expr> idx{p0};
      for (size_t i = 0; i < inner.size(); ++i) idx.push_back(loop_var(inner[i], ir::stage_expr(i)));
      x = kb.eval(n->input(0), idx);
    } else {
      // Static sizes: no chunk is empty. Symbolic: a chunk past the end has length 0.
      Expr len = ir::min(chunk, total - p0 * chunk);
      if (!total.is_const()) len = ir::max(Expr(0), len);
      kb.open_stage(ir::StageKind::Reduce, {len});
      const Expr flat = p0 * chunk + ir::stage_expr(0);
      x = kb.eval(n->input(0), unravel(flat, ri.dom.sizes));  // the reduction's input
    }
    x = kb.accumulator_input(ri.op, x, in_dt, out_dt);
    kb.store_stage(partial, p0, kb.finish_reduce(ri.op, x, acc), acc);
    add_kernel(kb);
  }
  {  // final: one reduce over the partials, in a fixed order
    KernelBuilder kb(*this, fmt::format("{}{}", opts_.name_prefix, kernel_count_++));
    kb.covered.insert(n);
    kb.open_stage(ir::StageKind::Reduce, {chunks});
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
    add_kernel(kb);
  }
}

// A reduction read by the inlined computations of two or more materialized values would be
// computed once per consumer kernel; materialize it instead.
void Lowerer::mark_shared_reductions() {
  std::set<const Value*> roots;
  for (const Value* o : g_.outputs()) roots.insert(o);
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
  mark_shared_reductions();
  std::set<const Value*> outputs(g_.outputs().begin(), g_.outputs().end());
  for (const Node* n : g_.nodes()) {
    // A node a registered lowering runs as an extern call is a step even when it could fuse.
    const bool lowered_extern = opts_.extern_lowering && !opts_.extern_lowering(*n).empty();
    if (!lowered_extern && (is_inlinable(n) || is_reduction(n))) {
      // Reductions shared by several consumers are computed once, where they are defined.
      if (is_reduction(n) && force_.count(n)) materialize(n->output(), BufferRole::Temp);
      continue;
    }
    PlanStep st;
    st.kind = n->info().has(ir::traits::Extern) ? StepKind::Extern : StepKind::Fallback;
    if (opts_.extern_lowering) st.lowering = opts_.extern_lowering(*n);
    if (!st.lowering.empty()) st.kind = StepKind::Extern;
    else if (st.kind == StepKind::Fallback) st.lowering = "interpreter";
    else st.lowering = n->info().family == OpFamily::Matmul ? "blas" : "custom op";
    st.op = n->op();
    st.nodes = {node_index(n)};
    st.attrs = n->attrs();
    for (const Value* in : n->inputs())
      st.buffers.push_back(st.kind == StepKind::Extern ? extern_operand(in) : materialize(in, BufferRole::Temp));
    for (const Value* out : n->outputs()) st.buffers.push_back(new_buffer(out, BufferRole::Temp));
    plan_.steps.push_back(std::move(st));
  }
  for (const Value* o : g_.outputs()) plan_.outputs.push_back({materialize(o, BufferRole::Output)});
  return std::move(plan_);
}

}  // namespace

ExecPlan build_kernels(const ir::Graph& g, const LowerOptions& opts) { return Lowerer(g, opts).run(); }

ExecPlan lower(const ir::Graph& g, const LowerOptions& opts) {
  ExecPlan plan = build_kernels(g, opts);
  plan_memory(plan);
  return plan;
}

}  // namespace kiln::passes
