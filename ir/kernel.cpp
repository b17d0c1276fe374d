// kiln/ir/kernel.cpp — Kernel printing, loop-variable names and the kernel verifier.
#include "ir/kernel.h"

#include "base/error.h"
#include "ir/expr_facts.h"
#include "ir/text_attr.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <optional>
#include <set>

namespace kiln::ir {

std::string grid_var(size_t i) { return fmt::format("p{}", i); }
std::string stage_var(size_t i) { return fmt::format("r{}", i); }
Expr grid_expr(size_t i) { return Expr::symbol(grid_var(i)); }
Expr stage_expr(size_t i) { return Expr::symbol(stage_var(i)); }

ScalarType compute_dtype(ScalarType t) {
  return (t == ScalarType::Half || t == ScalarType::BFloat16) ? ScalarType::Float : t;
}

namespace {

std::string loop_nest(const std::vector<Expr>& extents, std::string (*var)(size_t)) {
  std::string s = "[";
  for (size_t i = 0; i < extents.size(); ++i) {
    if (i) s += ", ";
    s += fmt::format("{} < {}", var(i), extents[i].str());
  }
  return s + "]";
}

std::string operand_list(const std::vector<int>& ops) {
  std::string s;
  for (size_t i = 0; i < ops.size(); ++i) s += fmt::format("{}%{}", i ? ", " : "", ops[i]);
  return s;
}

void print_inst(std::string& out, const Kernel& k, const KInst& in, const std::string& indent) {
  const std::string_view ty = dtype_short_name(in.dtype);
  switch (in.kind) {
    case KOp::Load:
      out += fmt::format("{}%{} = load {}[{}] : {}\n", indent, in.id, k.args.at(in.arg).name, in.index.str(), ty);
      return;
    case KOp::Store:
      out += fmt::format("{}store {}[{}], %{}\n", indent, k.args.at(in.arg).name, in.index.str(), in.operands.at(0));
      return;
    case KOp::Const:
      out += fmt::format("{}%{} = const {} : {}\n", indent, in.id, in.value.str(), ty);
      return;
    case KOp::Index:
      out += fmt::format("{}%{} = index {} : {}\n", indent, in.id, in.index.str(), ty);
      return;
    case KOp::Compute:
      out += fmt::format("{}%{} = {} {}{} : {}\n", indent, in.id, op_name(in.op), operand_list(in.operands),
                         text::named_attrs_str(in.op, in.attrs), ty);
      return;
    case KOp::Random:
      out += fmt::format("{}%{} = random {}({}, {}) {} : {}\n", indent, in.id, op_name(in.op),
                         Scalar(in.attrs.get<double>(0)).str(), Scalar(in.attrs.get<double>(1)).str(),
                         operand_list(in.operands), ty);
      return;
    case KOp::Carry:
      out += fmt::format("{}%{} = carry {} : {}\n", indent, in.id, in.value.str(), ty);
      return;
    case KOp::Update:
      out += fmt::format("{}update %{}, %{}\n", indent, in.operands.at(0), in.operands.at(1));
      return;
    case KOp::Check:
      if (in.check == CheckKind::NonZero)
        out += fmt::format("{}%{} = check nonzero %{} for {} : {}\n", indent, in.id, in.operands.at(0), op_name(in.op), ty);
      else
        out += fmt::format("{}%{} = check %{} < {} for {} dim {} : {}\n", indent, in.id, in.operands.at(0),
                           in.index.str(), op_name(in.op), in.value.to_int(), ty);
      return;
  }
}

}  // namespace

Expr value_expr(int id) { return Expr::symbol("v" + std::to_string(id)); }

std::optional<int> value_symbol_id(std::string_view name) {
  if (name.size() < 2 || name[0] != 'v' || name.size() > 10) return std::nullopt;
  int id = 0;
  for (char c : name.substr(1)) {
    if (c < '0' || c > '9') return std::nullopt;
    id = id * 10 + (c - '0');
  }
  return id;
}

bool reads_values(const Expr& index) {
  std::vector<std::string> symbols;
  index.collect_symbols(symbols);
  for (const std::string& s : symbols)
    if (value_symbol_id(s)) return true;
  return false;
}

const KInst* body_inst(const KStage& st, int id) {
  for (const KInst& in : st.body)
    if (in.kind != KOp::Store && in.id == id) return &in;
  return nullptr;
}

std::vector<const KInst*> check_sites(const Kernel& k) {
  std::vector<const KInst*> out;
  for (const KStage& st : k.stages)
    for (const KInst& in : st.body)
      if (in.kind == KOp::Check) out.push_back(&in);
  return out;
}

bool has_checks(const Kernel& k) {
  for (const KStage& st : k.stages)
    for (const KInst& in : st.body)
      if (in.kind == KOp::Check) return true;
  return false;
}

std::string_view reduction_name(ReductionOp op) {
  if (std::optional<OpKind> k = family_member(OpFamily::Reduction, static_cast<uint16_t>(op))) return op_name(*k);
  internal_fail("reduction op {} has no row in ops.def", static_cast<int>(op));
}

namespace {

// The kernel header's schedule fields, each only when set (ir/kernel_text.h).
std::string schedule_str(const KSchedule& s) {
  std::string out;
  if (s.outer_reduction_tile > 0) out += fmt::format(" outer_reduction_tile({})", s.outer_reduction_tile);
  else if (s.outer_reduction) out += " outer_reduction";
  if (s.tile_rows > 0) out += fmt::format(" tile_rows({})", s.tile_rows);
  if (s.vector_bits > 0) out += fmt::format(" vector_bits({})", s.vector_bits);
  if (s.launch.kind != LaunchKind::None) {
    const KLaunch& l = s.launch;
    out += fmt::format(" launch({}", l.kind == LaunchKind::BlockPerPoint ? "block_per_point" : "thread_per_point");
    if (l.threads > 0) out += fmt::format(", threads={}", l.threads);
    if (l.kind == LaunchKind::BlockPerPoint) out += fmt::format(", work={}", l.work.str());
    if (l.sms > 0) out += fmt::format(", sms={}", l.sms);
    if (l.vector > 1) out += fmt::format(", vector={}", l.vector);
    if (l.row_split > 1) out += fmt::format(", row_split={}", l.row_split);
    if (l.row_items > 0) out += fmt::format(", row_items={}", l.row_items);
    if (l.row_cache) out += ", row_cache";
    if (l.index32) out += ", index32";
    out += ")";
  }
  return out;
}

std::string vectorize_str(const KVectorize& v) {
  if (v == KVectorize{}) return "";
  std::vector<std::string> parts;
  if (v.interleave > 0) parts.push_back(fmt::format("interleave={}", v.interleave));
  if (v.lanes > 0) parts.push_back(fmt::format("lanes={}", v.lanes));
  if (v.masked_tail) parts.push_back("masked_tail");
  if (v.partials > 0) parts.push_back(fmt::format("partials={}", v.partials));
  return fmt::format(" vectorize({})", fmt::join(parts, ", "));
}

}  // namespace

int64_t threads_for_work(int64_t work) {
  int64_t t = 32;
  while (t < 1024 && t * 4 < work) t *= 2;
  return t;
}

int64_t blocks_for(const KLaunch& l, int64_t points, int64_t threads, int64_t sms) {
  sms = std::max<int64_t>(sms, 1);
  int64_t blocks = 0;
  if (l.kind == LaunchKind::BlockPerPoint) blocks = std::min<int64_t>(points, sms * (2048 / threads) * 4);
  else {
    const int64_t per_block = l.vector * threads / l.row_split;  // points one block covers per pass
    blocks = std::min<int64_t>((points + per_block - 1) / per_block, sms * 16);
  }
  return std::max<int64_t>(blocks, 1);
}

namespace {

// Whether every symbol of `e` is one of the kernel's parameters (no grid, stage or value symbol).
bool params_only(const Kernel& k, const Expr& e) {
  std::vector<std::string> symbols;
  e.collect_symbols(symbols);
  for (const std::string& s : symbols)
    if (std::find(k.params.begin(), k.params.end(), s) == k.params.end()) return false;
  return true;
}

// Whether `e` is a sum of multiples of the grid variables and a term of parameters alone,
// each multiple's factor a constant or an expression of the parameters.
bool affine_in_grid(const Kernel& k, const Expr& e, size_t grid_dims) {
  if (params_only(k, e)) return true;
  switch (e.kind()) {
    case ExprKind::Symbol:
      for (size_t d = 0; d < grid_dims; ++d)
        if (e.symbol_name() == grid_var(d)) return true;
      return false;
    case ExprKind::Add:
      for (const Expr& o : e.operands())
        if (!affine_in_grid(k, o, grid_dims)) return false;
      return true;
    case ExprKind::Mul: {
      int variable = 0;
      for (const Expr& o : e.operands()) {
        if (params_only(k, o)) continue;
        if (!affine_in_grid(k, o, grid_dims)) return false;
        ++variable;
      }
      return variable <= 1;
    }
    default: return false;
  }
}

}  // namespace

LaneAccess lane_access(const Kernel& k, const Expr& index, int64_t lanes, std::vector<Expr>* runtime) {
  if (k.grid.empty()) return LaneAccess::Uniform;
  const size_t n = k.grid.size();
  std::vector<std::string> symbols;
  index.collect_symbols(symbols);
  if (std::find(symbols.begin(), symbols.end(), grid_var(n - 1)) == symbols.end()) return LaneAccess::Uniform;
  if (!affine_in_grid(k, index, n)) return LaneAccess::PerLane;
  std::map<std::string, Expr> at;
  for (size_t d = 0; d < n; ++d) at[grid_var(d)] = Expr(0);
  const Expr c0 = index.substitute(at);
  std::vector<Expr> terms = {c0};  // what must be a multiple of `lanes`
  for (size_t d = 0; d < n; ++d) {
    at[grid_var(d)] = Expr(1);
    const Expr coef = index.substitute(at) - c0;
    at[grid_var(d)] = Expr(0);
    if (d + 1 == n) {
      if (coef.maybe_const() != std::optional<int64_t>(1)) return LaneAccess::PerLane;
    } else {
      terms.push_back(coef);
    }
  }
  std::vector<Expr> symbolic;
  for (const Expr& t : terms) {
    if (const std::optional<int64_t> c = t.maybe_const()) {
      if (*c % lanes != 0) return LaneAccess::PerLane;
    } else {
      symbolic.push_back(t);
    }
  }
  if (!symbolic.empty() && !runtime) return LaneAccess::PerLane;
  if (runtime) runtime->insert(runtime->end(), symbolic.begin(), symbolic.end());
  return LaneAccess::Contiguous;
}

bool lanes_on_constants(const Kernel& k, int64_t lanes) {
  if (k.grid.empty() || !k.grid.back().maybe_const()) return false;
  for (const KStage& st : k.stages)
    for (const KInst& x : st.body)
      if ((x.kind == KOp::Load || x.kind == KOp::Store) && lane_access(k, x.index, lanes) == LaneAccess::Contiguous)
        return true;
  return false;
}

namespace {

// What an index of stage `st` names: one of its loop variables (r0, r1, ...), and a loaded value
// (v<id>: two stages of hand-written kernel text may each define their own %id, so equal text
// need not be the same element).
struct IndexNames {
  bool stage_var = false, value = false;
};
IndexNames names_in(const Expr& e, const KStage& st) {
  std::vector<std::string> symbols;
  e.collect_symbols(symbols);
  IndexNames n;
  for (const std::string& s : symbols) {
    n.value = n.value || value_symbol_id(s).has_value();
    for (size_t d = 0; d < st.extents.size(); ++d) n.stage_var = n.stage_var || s == stage_var(d);
  }
  return n;
}

// The stored-row entry for `arg` (RowCachedLoad::stored), or nullopt when its stores and loads
// do not qualify.
std::optional<RowCachedLoad> stored_row(const Kernel& k, int arg) {
  const ScalarType dt = k.args.at(static_cast<size_t>(arg)).dtype;
  std::optional<RowCachedLoad> row;
  bool loaded = false;
  for (size_t s = 0; s < k.stages.size(); ++s) {
    const KStage& st = k.stages[s];
    for (const KInst& in : st.body) {
      if ((in.kind != KOp::Load && in.kind != KOp::Store) || in.arg != arg) continue;
      if (st.extents.empty() || names_in(in.index, st).value) return std::nullopt;
      if (in.kind == KOp::Store) {
        const KInst* value = body_inst(st, in.operands.at(0));
        if (!value || value->dtype != dt) return std::nullopt;
        if (!row) row = RowCachedLoad{arg, dt, in.index, st.extents, s, true, s};
        else if (!(row->index == in.index) || !(row->extents == st.extents)) return std::nullopt;
        row->last_store = s;
      } else {
        // A load before the first store reads the buffer's old contents (an input written in place).
        if (!row || in.dtype != dt || !(row->index == in.index) || !(row->extents == st.extents)) return std::nullopt;
        loaded = true;
      }
    }
  }
  if (!loaded) return std::nullopt;
  return row;
}

}  // namespace

namespace {

// The largest magnitude any subexpression of e takes under `f` (every intermediate of the
// rendered arithmetic included: a sum's partial sums, a product's partial products), or
// nullopt when some value may leave [-2^31 + 1, 2^31 - 1].
std::optional<int64_t> magnitude32(const Expr& e, const ExprFacts& f) {
  constexpr int64_t kMax = 0x7FFFFFFF;
  const auto fits = [](int64_t m) { return m <= kMax ? std::optional<int64_t>(m) : std::nullopt; };
  switch (e.kind()) {
    case ExprKind::Const: {
      const int64_t c = e.as_const();
      return c >= -kMax && c <= kMax ? std::optional<int64_t>(c < 0 ? -c : c) : std::nullopt;
    }
    case ExprKind::Symbol: {
      const Range r = f.range_of(e.symbol_name());
      if (r.empty() || r.lo < -kMax || r.hi > kMax) return std::nullopt;
      return std::max(r.lo < 0 ? -r.lo : r.lo, r.hi < 0 ? -r.hi : r.hi);
    }
    case ExprKind::Add:
    case ExprKind::Mul: {
      const bool add = e.kind() == ExprKind::Add;
      int64_t m = add ? 0 : 1;
      for (const Expr& o : e.operands()) {
        const std::optional<int64_t> x = magnitude32(o, f);
        if (!x) return std::nullopt;
        if (add) m += *x;
        else if (*x != 0 && m > kMax / *x) return std::nullopt;
        else m *= *x;
        if (m > kMax) return std::nullopt;
      }
      return m;
    }
    case ExprKind::FloorDiv:  // |floor(a / b)| <= |a| for b != 0
    case ExprKind::Mod:       // |a mod b| < |b|
    case ExprKind::Min:
    case ExprKind::Max:
    case ExprKind::Eq:
    case ExprKind::Ne:
    case ExprKind::Lt:
    case ExprKind::Le: {
      const std::optional<int64_t> a = magnitude32(e.operands().at(0), f), b = magnitude32(e.operands().at(1), f);
      if (!a || !b) return std::nullopt;
      return fits(std::max(*a, *b));
    }
  }
  return std::nullopt;
}

}  // namespace

Expr at_lane(const Kernel& k, const Expr& index, int64_t lane) {
  if (lane == 0 || k.grid.empty()) return index;
  return index.substitute({{grid_var(k.grid.size() - 1), grid_expr(k.grid.size() - 1) + lane}});
}

bool indices_fit_32_bits(const Kernel& k) {
  ExprFacts grid;
  for (size_t i = 0; i < k.grid.size(); ++i) {
    const std::optional<int64_t> n = k.grid[i].maybe_const();
    if (!n) return false;
    grid.set_range(grid_var(i), Range{0, *n - 1});
  }
  for (const KStage& st : k.stages) {
    ExprFacts f = grid;
    for (size_t i = 0; i < st.extents.size(); ++i) {
      const std::optional<int64_t> n = st.extents[i].maybe_const();
      if (!n) return false;
      f.set_range(stage_var(i), Range{0, *n - 1});
    }
    for (const KInst& in : st.body) {
      if (in.kind == KOp::Check && in.check == CheckKind::InBounds)
        if (const std::optional<int64_t> b = in.index.maybe_const(); b && *b >= 1)
          f.set_range(value_expr(in.id).symbol_name(), Range{0, *b - 1});
      if (in.kind != KOp::Load && in.kind != KOp::Store) continue;
      for (int64_t lane = 0; lane < std::max<int64_t>(1, k.schedule.launch.vector); ++lane)
        if (!magnitude32(at_lane(k, in.index, lane), f)) return false;
    }
  }
  return true;
}

std::vector<RowCachedLoad> row_cached_loads(const Kernel& k) {
  std::set<int> stored;
  for (const KStage& st : k.stages)
    for (const KInst& in : st.body)
      if (in.kind == KOp::Store) stored.insert(in.arg);
  std::vector<RowCachedLoad> out;
  for (int arg : stored)
    if (std::optional<RowCachedLoad> row = stored_row(k, arg)) out.push_back(*row);
  std::vector<RowCachedLoad> seen;
  std::vector<int> stages_reading;  // per entry of `seen`: how many stages read it
  for (size_t s = 0; s < k.stages.size(); ++s) {
    const KStage& st = k.stages[s];
    if (st.extents.empty()) continue;
    std::set<int> counted;  // entries this stage has counted already
    for (const KInst& in : st.body) {
      if (in.kind != KOp::Load || stored.count(in.arg)) continue;
      const IndexNames names = names_in(in.index, st);
      if (!names.stage_var || names.value) continue;
      int slot = row_cached_slot(seen, st, in);
      if (slot < 0) {
        seen.push_back({in.arg, in.dtype, in.index, st.extents, s});
        stages_reading.push_back(0);
        slot = static_cast<int>(seen.size() - 1);
      }
      if (counted.insert(slot).second) ++stages_reading[static_cast<size_t>(slot)];
    }
  }
  for (size_t i = 0; i < seen.size(); ++i)
    if (stages_reading[i] >= 2) out.push_back(seen[i]);
  return out;
}

int row_cached_slot(const std::vector<RowCachedLoad>& loads, const KStage& st, const KInst& in) {
  for (size_t i = 0; i < loads.size(); ++i) {
    const RowCachedLoad& l = loads[i];
    if (l.arg == in.arg && (l.stored || l.dtype == in.dtype) && l.index == in.index && l.extents == st.extents)
      return static_cast<int>(i);
  }
  return -1;
}

std::string Kernel::str() const {
  std::string out = fmt::format("kernel {}(", name);
  for (size_t i = 0; i < args.size(); ++i)
    out += fmt::format("{}{}: {}{}", i ? ", " : "", args[i].name, args[i].output ? "out " : "",
                       dtype_short_name(args[i].dtype));
  out += ")";
  if (!params.empty()) {
    out += " params(";
    for (size_t i = 0; i < params.size(); ++i) out += fmt::format("{}{}", i ? ", " : "", params[i]);
    out += ")";
  }
  out += " grid" + loop_nest(grid, grid_var);
  out += schedule_str(schedule);
  out += " {\n";
  for (const KStage& st : stages) {
    if (st.kind == StageKind::Loop) {
      out += std::string("  loop ") + (st.ordered ? "ordered " : "") + loop_nest(st.extents, stage_var) +
             vectorize_str(st.vectorize) + " {\n";
      for (const KInst& in : st.body) print_inst(out, *this, in, "    ");
      out += "  }\n";
    } else {
      out += fmt::format("  %{} = reduce {} {}{} {{\n", st.result, reduction_name(st.reduce_op),
                         loop_nest(st.extents, stage_var), vectorize_str(st.vectorize));
      for (const KInst& in : st.body) print_inst(out, *this, in, "    ");
      out += fmt::format("    yield %{}\n  }} : {}", st.yield, dtype_short_name(st.acc_dtype));
      if (st.sum_exp >= 0) out += fmt::format(" sum_exp %{} : {}", st.sum_exp, dtype_short_name(st.sum_exp_dtype));
      out += "\n";
    }
  }
  out += "}\n";
  return out;
}

}  // namespace kiln::ir

namespace kiln::ir {

namespace {

struct KernelChecker {
  const Kernel& k;
  std::set<int> defined;           // ids in scope
  std::set<std::string> vars;      // loop variables in scope (grid, params, current stage)
  const KStage* stage = nullptr;   // the stage being checked
  std::map<int, std::pair<ScalarType, bool>> carries;  // the stage's carries: dtype, updated yet
  std::map<int, ScalarType> types;  // every result's dtype

  [[noreturn]] void bad(const std::string& what) const { internal_fail("kernel {}: {}", k.name, what); }

  void check_expr(const Expr& e, const char* where) const {
    std::vector<std::string> syms;
    e.collect_symbols(syms);
    for (const std::string& s : syms) {
      if (vars.count(s)) continue;
      if (const std::optional<int> id = value_symbol_id(s); id && defined.count(*id)) continue;
      bad(fmt::format("{} index {} uses {}, which is not in scope", where, e.str(), s));
    }
  }

  void check_inst(const KInst& in) {
    for (int op : in.operands)
      if (!defined.count(op)) bad(fmt::format("%{} is used before it is defined", op));
    switch (in.kind) {
      case KOp::Load:
      case KOp::Store:
        if (in.arg < 0 || static_cast<size_t>(in.arg) >= k.args.size())
          bad(fmt::format("buffer argument {} is out of range", in.arg));
        check_expr(in.index, in.kind == KOp::Load ? "load" : "store");
        if (in.kind == KOp::Store) {
          if (!k.args[in.arg].output) bad(fmt::format("store to {}, which is not an output", k.args[in.arg].name));
          if (in.operands.size() != 1) bad("store takes one operand");
        }
        break;
      case KOp::Index: check_expr(in.index, "index"); break;
      case KOp::Const: break;
      case KOp::Carry:
      case KOp::Update: {
        const bool carry = in.kind == KOp::Carry;
        if (!stage->ordered) bad(fmt::format("{} outside an ordered loop stage", carry ? "carry" : "update"));
        if (carry) {
          if (!in.operands.empty()) bad("carry takes no operands");
          carries[in.id] = {in.dtype, false};
          break;
        }
        if (in.operands.size() != 2) bad("update takes two operands (the carry and its next value)");
        auto it = carries.find(in.operands[0]);
        if (it == carries.end()) bad(fmt::format("update of %{}, which is not a carry of this stage", in.operands[0]));
        if (it->second.second) bad(fmt::format("carry %{} is updated twice", in.operands[0]));
        if (types.at(in.operands[1]) != it->second.first)
          bad(fmt::format("update of %{} ({}) with a {} value", in.operands[0], dtype_short_name(it->second.first),
                          dtype_short_name(types.at(in.operands[1]))));
        it->second.second = true;
        break;
      }
      case KOp::Random:
        if (in.op != OpKind::uniform && in.op != OpKind::normal) bad(fmt::format("random {} is not uniform or normal", op_name(in.op)));
        if (in.operands.size() != 3) bad("random takes three operands (index, seed, offset)");
        if (!is_floating_point(in.dtype)) bad(fmt::format("random of dtype {}", dtype_short_name(in.dtype)));
        if (in.attrs.size() != 2 || !std::holds_alternative<double>(in.attrs.values()[0]) ||
            !std::holds_alternative<double>(in.attrs.values()[1]))
          bad("random takes two float parameters");
        break;
      case KOp::Check:
        if (in.operands.size() != 1) bad("check takes one operand");
        if (!is_integral(in.dtype, /*include_bool=*/true)) bad(fmt::format("check of a {} value", dtype_short_name(in.dtype)));
        if (in.check == CheckKind::InBounds) check_expr(in.index, "check bound");
        break;
      case KOp::Compute: {
        const OpFamily f = op_info(in.op).family;
        if (f != OpFamily::Unary && f != OpFamily::Binary && f != OpFamily::Ternary && f != OpFamily::Cast)
          bad(fmt::format("{} is not an elementwise prim", op_name(in.op)));
        const size_t n = f == OpFamily::Binary ? 2 : f == OpFamily::Ternary ? 3 : 1;
        if (in.operands.size() != n) bad(fmt::format("{} takes {} operands", op_name(in.op), n));
        break;
      }
    }
    if (in.kind != KOp::Store && in.kind != KOp::Update) {
      if (in.id < 0 || defined.count(in.id)) bad(fmt::format("result id %{} is missing or defined twice", in.id));
      defined.insert(in.id);
      types[in.id] = in.dtype;
    }
  }

  void run() {
    for (size_t i = 0; i < k.args.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (k.args[i].name == k.args[j].name) bad("two arguments are called " + k.args[i].name);
    for (const std::string& p : k.params) vars.insert(p);
    for (const Expr& e : k.grid) check_expr(e, "grid");
    if (const KLaunch& l = k.schedule.launch; l.vector != 1) {
      // A symbolic last extent (an eager kernel's) is checked at run time.
      const std::optional<int64_t> last = k.grid.empty() ? std::nullopt : k.grid.back().maybe_const();
      const bool sized = !k.grid.empty() && (!last || *last % l.vector == 0);
      if (l.vector < 1 || l.kind != LaunchKind::ThreadPerPoint || !sized || has_checks(k))
        bad(fmt::format("vector={} needs a thread_per_point launch without checks and a last grid extent it "
                        "divides, or one of symbolic size", l.vector));
      for (const KStage& st : k.stages)
        if (st.kind != StageKind::Loop || !st.extents.empty()) bad("vector= needs stages without loops");
    }
    if (const KLaunch& l = k.schedule.launch; l.row_split != 1) {
      if (l.row_split < 1 || (l.row_split & (l.row_split - 1)) != 0 || l.kind != LaunchKind::ThreadPerPoint ||
          !k.schedule.outer_reduction || l.threads % (32 * l.row_split) != 0 || l.vector != 1)
        bad(fmt::format("row_split={} needs a thread_per_point outer reduction whose threads hold whole warps of "
                        "points per row group (a power of two)", l.row_split));
    }
    if (const KLaunch& l = k.schedule.launch; l.row_items != 0) {
      bool covered = l.row_items > 0 && l.kind == LaunchKind::BlockPerPoint && l.threads > 0;
      for (const KStage& st : k.stages) {
        std::optional<int64_t> n = 1;
        for (const Expr& e : st.extents) n = n && e.maybe_const() ? std::optional<int64_t>(*n * *e.maybe_const()) : std::nullopt;
        covered = covered && n && *n <= l.threads * l.row_items;
      }
      if (!covered)
        bad(fmt::format("row_items={} needs a block_per_point launch with constant threads whose threads * row_items "
                        "covers every stage's constant extent", l.row_items));
    }
    if (k.schedule.launch.row_cache && k.schedule.launch.row_items <= 0) bad("row_cache needs row_items");
    if (k.schedule.launch.index32 && !indices_fit_32_bits(k))
      bad("index32 needs every load's and store's index to fit in 32 bits by its variables' constant ranges");
    for (size_t i = 0; i < k.grid.size(); ++i) vars.insert(grid_var(i));
    for (const KStage& st : k.stages) {
      for (const Expr& e : st.extents) check_expr(e, "stage extent");
      std::set<int> outer = defined;
      for (size_t i = 0; i < st.extents.size(); ++i) vars.insert(stage_var(i));
      stage = &st;
      carries.clear();
      for (const KInst& in : st.body) check_inst(in);
      for (const auto& [id, c] : carries)
        if (!c.second) bad(fmt::format("carry %{} is never updated", id));
      for (size_t i = 0; i < st.extents.size(); ++i) vars.erase(stage_var(i));
      if (st.kind == StageKind::Loop && st.sum_exp >= 0) bad(fmt::format("a loop stage has sum_exp %{}", st.sum_exp));
      if (st.kind == StageKind::Reduce) {
        if (!defined.count(st.yield)) bad(fmt::format("reduce yields %{}, which its body does not define", st.yield));
        outer.insert(st.result);
        types[st.result] = st.reduce_op == ReductionOp::argmax || st.reduce_op == ReductionOp::argmin ? ScalarType::Int64 : st.acc_dtype;
        if (defined.count(st.result)) bad(fmt::format("reduce result %{} is defined twice", st.result));
        if (st.sum_exp >= 0) {
          const ScalarType y = types.count(st.yield) ? types.at(st.yield) : st.acc_dtype;
          if (st.reduce_op != ReductionOp::amax || !is_floating_point(y) || !is_floating_point(st.sum_exp_dtype) ||
              element_size(st.sum_exp_dtype) < element_size(compute_dtype(y)))
            bad(fmt::format("sum_exp %{} needs an amax of a float and a sum dtype at least as wide as its compute dtype",
                            st.sum_exp));
          if (defined.count(st.sum_exp) || outer.count(st.sum_exp) || st.sum_exp == st.result)
            bad(fmt::format("reduce result %{} is defined twice", st.sum_exp));
          outer.insert(st.sum_exp);
          types[st.sum_exp] = st.sum_exp_dtype;
        }
      }
      defined = std::move(outer);  // values inside a stage do not escape it
    }
    const KSchedule& s = k.schedule;
    if (s.outer_reduction || s.outer_reduction_tile > 0) {
      if (k.grid.empty() || k.stages.size() != 2 || k.stages[0].kind != StageKind::Reduce ||
          k.stages[1].kind != StageKind::Loop || !k.stages[1].extents.empty())
        bad("an outer reduction needs a grid, one reduce stage and one loop stage with no extents");
    }
    if (s.outer_reduction_tile < 0 || (s.outer_reduction_tile > 0 && !s.outer_reduction))
      bad("outer_reduction_tile is set on a kernel that is not an outer reduction");
    if (s.tile_rows < 0 || (s.tile_rows > 0 && s.outer_reduction_tile == 0)) bad("tile_rows without a tile");
    if ((s.tile_rows & (s.tile_rows - 1)) != 0) bad(fmt::format("tile_rows {} is not a power of two", s.tile_rows));
    if (s.vector_bits != 0 && s.vector_bits != 128 && s.vector_bits != 256 && s.vector_bits != 512)
      bad(fmt::format("vector_bits {} is not 128, 256 or 512", s.vector_bits));
    for (const KStage& st : k.stages) {
      if (st.vectorize.interleave < 0 || st.vectorize.lanes < 0) bad("negative vectorize field");
      // A float sum or product may yield a narrower float, which its accumulator widens as it
      // folds (f32 values into f64), but nothing wider and nothing else.
      const bool float_fold = st.kind == StageKind::Reduce && is_floating_point(st.acc_dtype) &&
                              (st.reduce_op == ReductionOp::sum || st.reduce_op == ReductionOp::prod);
      if (float_fold && types.count(st.yield) && types.at(st.yield) != st.acc_dtype) {
        const ScalarType y = types.at(st.yield);
        if (!is_floating_point(y) || element_size(y) > element_size(st.acc_dtype))
          bad(fmt::format("reduce {} into {} yields %{} of dtype {}, not a float it can widen",
                          reduction_name(st.reduce_op), dtype_short_name(st.acc_dtype), st.yield, dtype_short_name(y)));
      }
      const int np = st.vectorize.partials;
      if (np != 0 && (np < 2 || (np & (np - 1)) != 0)) bad(fmt::format("partials {} is not a power of two above 1", np));
      if (np != 0 && (st.kind != StageKind::Reduce || st.reduce_op != ReductionOp::sum ||
                      !is_floating_point(st.acc_dtype) || st.extents.empty() || s.outer_reduction))
        bad("partials are for the reduce stage of a float sum with a loop nest, not an outer reduction");
      if (st.ordered && (st.kind != StageKind::Loop || !(st.vectorize == KVectorize{})))
        bad("an ordered stage is a loop stage without vectorize fields");
      if (st.ordered && s.launch.kind == LaunchKind::BlockPerPoint)
        bad("an ordered stage cannot share its loop among a block's threads (block_per_point)");
    }
    if (s.launch.kind == LaunchKind::None && (s.launch.threads != 0 || s.launch.sms != 0))
      bad("launch fields without a launch kind");
    if (s.launch.threads != 0 && (s.launch.threads < 32 || s.launch.threads > 1024 || s.launch.threads % 32 != 0))
      bad(fmt::format("launch threads {} is not a multiple of 32 in [32, 1024]", s.launch.threads));
    if (s.launch.kind == LaunchKind::ThreadPerPoint && s.launch.threads == 0)
      bad("a thread_per_point launch needs its threads");
    if (s.launch.kind == LaunchKind::BlockPerPoint) check_expr(s.launch.work, "launch work");
  }
};

}  // namespace

void verify_kernel(const Kernel& k) { KernelChecker{k, {}, {}, nullptr, {}, {}}.run(); }

}  // namespace kiln::ir
