// kiln/passes/lower_ordered.cpp — the kernels whose grid points walk lines in order: scatter,
// scatter_add and scatter_reduce (an index's lines), and the scans (a result's lines).
//
// Each is one ordered stage per pass over a line (ir::KStage::ordered), so that repeated
// positions and running values end exactly as the interpreter's do on every backend and
// thread count; passes/lower_index.h's LineWalk lays out the grid and the lines.
#include "passes/kernel_builder.h"

#include <limits>
#include <optional>
#include <string>

namespace kiln::passes::lowering {

namespace {

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

}  // namespace

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
    std::vector<Expr> idx = loop_vars(sizes, ir::grid_expr);
    kb.open_stage(ir::StageKind::Loop, {});
    body(kb, idx);
    kb.close_stage();
    add_kernel(kb, grp);
  };
  if (grp.copies_self) over_output(copy_self);
  KernelBuilder kb(*this, next_kernel_name());
  kb.covered.insert(n);
  kb.kernel().grid = w.grid;
  std::vector<Expr> grid_idx = loop_vars(w.grid, ir::grid_expr);
  // A stage over `extents`, returning the element of the index (or of self's line) it is at.
  auto open = [&](const Expr& positions, bool ordered) {
    kb.open_stage(ir::StageKind::Loop, w.line_extents(positions));
    kb.stage().ordered = ordered;
    std::vector<Expr> stage_idx = loop_vars(kb.stage().extents, ir::stage_expr);
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
    std::vector<Expr> dst = at, from = at;
    dst.at(static_cast<size_t>(w.dim)) = ir::value_expr(picked);
    kb.checked_coordinates(dst, w.unproven_self, v->type().sizes, n->op());
    kb.checked_coordinates(from, w.unproven_src, n->input(2)->type().sizes, n->op());
    body(from, dst);
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
  std::vector<Expr> grid_idx = loop_vars(lines.grid, ir::grid_expr);
  // A pass over `positions` of the line; returns the element it is at.
  auto open = [&](const Expr& positions, bool ordered) {
    kb.open_stage(ir::StageKind::Loop, scalar ? std::vector<Expr>{positions} : lines.line_extents(positions));
    kb.stage().ordered = ordered;
    if (scalar) return std::vector<Expr>{};
    std::vector<Expr> stage_idx = loop_vars(kb.stage().extents, ir::stage_expr);
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

}  // namespace kiln::passes::lowering
