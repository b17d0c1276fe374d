// kiln/ir/shape_env.h — the symbols of a trace with dynamic sizes, and the guards it records.
//
// A ShapeEnv lives for one trace (kiln::compile's build installs it with ShapeEnvScope).
// Every dynamic input dim gets a symbol (s0, s1, ...) named after its source ("a.size(0)")
// with its hint (the size seen at trace time) and its range (dynamic sizes are >= 2: 0 and 1
// stay static). Dims with equal hints share one symbol (duck sizing); the guard program
// checks that they are still equal. When a shape function must decide a question about
// symbols (is s0 == s1? is s0 % 4 == 0? is 5 <= s0?), it calls guard_bool(): the answer is
// read off the hints and, unless the ranges and earlier guards prove it, recorded as a guard
// that every later call must satisfy. So a trace never assumes: it decides and remembers.
#pragma once

#include "ir/expr.h"
#include "ir/expr_facts.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln::ir {

struct SymbolInfo {
  std::string name;                  // "s0"
  std::vector<std::string> sources;  // "a.size(0)" first; later ones joined by duck sizing
  int64_t hint = 0;                  // the value seen at trace time
};

class ShapeEnv {
 public:
  // The symbol for a dynamic dim seen with size `hint` (>= 2) at `source`: with duck sizing,
  // the symbol of an earlier dim with the same hint, else a new one.
  Expr create_symbol(int64_t hint, const std::string& source, bool duck = true);

  const std::vector<SymbolInfo>& symbols() const { return symbols_; }
  const SymbolInfo* find(std::string_view name) const;
  const std::map<std::string, int64_t>& hints() const { return hints_; }
  int64_t hint(const Expr& e) const { return e.evaluate(hints_); }

  // The truth of `pred` (a comparison, or an expression read as "!= 0") at the hints. Unless
  // the facts already decide it, the predicate (or its negation) becomes a guard.
  bool guard_bool(const Expr& pred);
  // Whether `pred` is known to hold without a new guard: the facts prove it, or it is one of the
  // guards recorded so far (such as `s0*s1//6 == 1`, which the facts cannot learn).
  bool known(const Expr& pred) const;
  // The value of `e` at the hints, guarding that it keeps that value (PyTorch's guard_int).
  int64_t specialize(const Expr& e);
  // Records a guard decided before, as a graph's text carries it (ir/text.h): `pred` as written,
  // which must hold at the hints, evaluated without wrapping (kiln::Error naming it otherwise,
  // or an unknown symbol).
  void assume(const Expr& pred);

  // Guards recorded so far, in order, each true at the hints. Symbol ranges (2 <= s0) are
  // not included: they are implied by symbols().
  const std::vector<Expr>& guards() const { return guards_; }
  const ExprFacts& facts() const { return facts_; }

  // The environment of the trace running on this thread, or null.
  static ShapeEnv* current();

 private:
  void add_guard(const Expr& pred);
  std::vector<SymbolInfo> symbols_;
  std::map<std::string, int64_t> hints_;
  std::vector<Expr> guards_;
  ExprFacts facts_;  // symbol ranges and what the guards taught
};

// Installs `env` as ShapeEnv::current() for this thread while alive (nests).
class ShapeEnvScope {
 public:
  explicit ShapeEnvScope(ShapeEnv* env);
  ~ShapeEnvScope();
  ShapeEnvScope(const ShapeEnvScope&) = delete;
  ShapeEnvScope& operator=(const ShapeEnvScope&) = delete;

 private:
  ShapeEnv* prev_;
};

// Decisions for shape functions. Constant predicates answer directly; symbolic ones go to the
// current ShapeEnv (recording a guard). Without one, a symbolic question has no answer:
// known_true() says false and guard_bool() throws an InternalError naming `what`.
bool guard_bool(const Expr& pred, std::string_view what);
// Whether `pred` holds for every binding the current trace allows so far: the facts prove it or
// it was guarded already (ShapeEnv::known; no guard recorded).
bool known_true(const Expr& pred);
// Whether a size is 1: a constant 1, or a symbolic size (such as s0 - 1 or s1 // 2) that the
// trace already knows is 1 because it was guarded so (known_true; no guard recorded).
bool known_one(const Expr& size);
// Shorthands of guard_bool for sizes.
bool sym_eq(const Expr& a, const Expr& b);
bool sym_lt(const Expr& a, const Expr& b);
bool sym_le(const Expr& a, const Expr& b);

}  // namespace kiln::ir
