// kiln/ir/shape_env.cpp — symbols, hints and guards of one trace.
#include "ir/shape_env.h"

#include "base/error.h"

#include <algorithm>

namespace kiln::ir {

namespace {

thread_local ShapeEnv* t_current = nullptr;

// A comparison as written, or e != 0 for any other expression.
Expr as_predicate(const Expr& e) { return is_comparison(e.kind()) ? e : ne(e, Expr(0)); }

// The negation of a predicate: !(a < b) is b <= a.
Expr negate(const Expr& pred) {
  const Expr p = as_predicate(pred);
  if (auto c = p.maybe_const()) return Expr(*c != 0 ? 0 : 1);
  const auto& o = p.operands();
  if (p.kind() == ExprKind::Eq) return ne(o[0], o[1]);
  if (p.kind() == ExprKind::Ne) return eq(o[0], o[1]);
  if (p.kind() == ExprKind::Lt) return le(o[1], o[0]);
  return lt(o[1], o[0]);  // Le
}

}  // namespace

Expr ShapeEnv::create_symbol(int64_t hint, const std::string& source, bool duck) {
  if (hint < 2) internal_fail("ShapeEnv: {} has size {}; sizes 0 and 1 are never symbolic", source, hint);
  if (duck)
    for (SymbolInfo& s : symbols_)
      if (s.hint == hint) {
        s.sources.push_back(source);
        return Expr::symbol(s.name);
      }
  SymbolInfo info;
  info.name = "s" + std::to_string(symbols_.size());
  info.sources.push_back(source);
  info.hint = hint;
  hints_[info.name] = hint;
  facts_.set_range(info.name, Range{2, INT64_MAX});
  symbols_.push_back(info);
  return Expr::symbol(symbols_.back().name);
}

const SymbolInfo* ShapeEnv::find(std::string_view name) const {
  for (const SymbolInfo& s : symbols_)
    if (s.name == name) return &s;
  return nullptr;
}

bool ShapeEnv::guard_bool(const Expr& pred_in) {
  const Expr pred = simplify(as_predicate(pred_in), facts_);
  if (auto c = pred.maybe_const()) return *c != 0;
  if (auto d = decide(pred, facts_)) return *d;
  const bool value = pred.evaluate(hints_) != 0;
  add_guard(value ? pred : negate(pred));
  return value;
}

bool ShapeEnv::known(const Expr& pred_in) const {
  const Expr pred = simplify(as_predicate(pred_in), facts_);
  if (auto c = pred.maybe_const()) return *c != 0;
  if (auto d = decide(pred, facts_)) return *d;
  return std::find(guards_.begin(), guards_.end(), pred) != guards_.end();
}

int64_t ShapeEnv::specialize(const Expr& e) {
  const int64_t v = hint(e);
  if (!e.is_const()) guard_bool(eq(e, Expr(v)));
  return v;
}

void ShapeEnv::assume(const Expr& pred) {
  if (!is_comparison(pred.kind())) fail("ShapeEnv", "a guard must be a comparison, got '{}'", pred.str());
  // Exactly: a guard that holds only because int64 wraps (2*s0*4611686018427387904 == 0) would
  // teach the facts a range the sizes are not in.
  const std::optional<int64_t> holds = pred.evaluate_exact(hints_);
  if (!holds) fail("ShapeEnv", "the guard '{}' overflows int64 at the symbols' sizes", pred.str());
  if (*holds == 0) fail("ShapeEnv", "the guard '{}' does not hold for the symbols' sizes", pred.str());
  add_guard(pred);
}

void ShapeEnv::add_guard(const Expr& pred) {
  if (std::find(guards_.begin(), guards_.end(), pred) != guards_.end()) return;
  guards_.push_back(pred);
  facts_.learn(pred);
}

ShapeEnv* ShapeEnv::current() { return t_current; }

ShapeEnvScope::ShapeEnvScope(ShapeEnv* env) : prev_(t_current) { t_current = env; }
ShapeEnvScope::~ShapeEnvScope() { t_current = prev_; }

bool guard_bool(const Expr& pred, std::string_view what) {
  if (auto c = pred.maybe_const()) return *c != 0;
  if (ShapeEnv* env = ShapeEnv::current()) return env->guard_bool(pred);
  internal_fail("{}: cannot decide '{}' on symbolic sizes without a ShapeEnv", what, pred.str());
}

bool known_true(const Expr& pred) {
  if (auto c = pred.maybe_const()) return *c != 0;
  ShapeEnv* env = ShapeEnv::current();
  return env && env->known(pred);
}

bool known_one(const Expr& size) {
  if (auto c = size.maybe_const()) return *c == 1;
  return known_true(eq(size, Expr(1)));
}

bool sym_eq(const Expr& a, const Expr& b) { return a == b || guard_bool(eq(a, b), "sym_eq"); }
bool sym_lt(const Expr& a, const Expr& b) { return guard_bool(lt(a, b), "sym_lt"); }
bool sym_le(const Expr& a, const Expr& b) { return a == b || guard_bool(le(a, b), "sym_le"); }

}  // namespace kiln::ir
