// kiln/ir/expr.h — immutable, hash-consed scalar/index expressions.
//
// An Expr is a handle to an interned node: equal expressions are the same pointer, so ==
// and hashing are O(1). Constants below 2^62 in magnitude are held in the handle itself (no
// node, never interned), so sizes a long-running process meets do not accumulate. Construction goes through the simplifier (constant folding,
// identities, flattening and ordering of + and *), so every Expr is in a simplified form.
// Exprs serve symbolic sizes, guard predicates and kernel index math.
#pragma once

#include "base/int_array_ref.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::ir {

enum class ExprKind : uint8_t {
  Const,     // integer constant
  Symbol,    // named symbol (s0, s1, ...)
  Add,       // n-ary sum
  Mul,       // n-ary product
  FloorDiv,  // floor division (Python //)
  Mod,       // Python modulo (sign of divisor)
  Min,
  Max,
  Eq,  // comparisons evaluate to 0 or 1
  Ne,
  Lt,
  Le,
};

// Whether `k` is ==, !=, < or <= (kinds whose value is 0 or 1).
bool is_comparison(ExprKind k);

struct ExprNode;

class Expr {
 public:
  Expr() : Expr(int64_t{0}) {}
  Expr(int64_t v);  // NOLINT: implicit so that sizes read like numbers
  Expr(int v) : Expr(static_cast<int64_t>(v)) {}  // NOLINT
  static Expr symbol(std::string_view name);

  ExprKind kind() const;
  bool is_const() const { return kind() == ExprKind::Const; }
  bool is_symbol() const { return kind() == ExprKind::Symbol; }
  // The constant value; throws InternalError when not constant.
  int64_t as_const() const;
  std::optional<int64_t> maybe_const() const;
  const std::string& symbol_name() const;  // only for symbols
  const std::vector<Expr>& operands() const;
  // Levels of the expression tree: 1 for a constant or symbol. Recursive walks of an Expr go
  // this deep; the text parser refuses expressions over kMaxParsedHeight.
  int height() const;

  // Evaluates with the given symbol values; throws kiln::Error naming an unbound symbol or
  // a division by zero.
  int64_t evaluate(const std::map<std::string, int64_t>& bindings) const;
  // The same in exact arithmetic: nullopt when a step overflows int64 (evaluate wraps there).
  std::optional<int64_t> evaluate_exact(const std::map<std::string, int64_t>& bindings) const;
  // Replaces symbols by expressions (simplifying again).
  Expr substitute(const std::map<std::string, Expr>& repl) const;
  void collect_symbols(std::vector<std::string>& out) const;

  // Prints in the grammar the IR parser reads: 4*s0 + 2, (s0 + 1)//2, min(s0, 8), s0 == s1.
  std::string str() const;

  bool operator==(const Expr& o) const { return n_ == o.n_; }
  bool operator!=(const Expr& o) const { return n_ != o.n_; }
  size_t hash() const { return std::hash<const void*>()(n_); }
  const ExprNode* node() const { return n_; }

 private:
  explicit Expr(const ExprNode* n) : n_(n) {}
  friend Expr make_expr(ExprKind, std::vector<Expr>);
  friend struct ExprInterner;
  const ExprNode* n_;
};

Expr operator+(const Expr& a, const Expr& b);
Expr operator-(const Expr& a, const Expr& b);
Expr operator-(const Expr& a);
Expr operator*(const Expr& a, const Expr& b);
Expr floordiv(const Expr& a, const Expr& b);
Expr mod(const Expr& a, const Expr& b);
Expr min(const Expr& a, const Expr& b);
Expr max(const Expr& a, const Expr& b);
Expr eq(const Expr& a, const Expr& b);
Expr ne(const Expr& a, const Expr& b);
Expr lt(const Expr& a, const Expr& b);
Expr le(const Expr& a, const Expr& b);

// Builds an expression of `kind` from operands, simplifying (the one entry point of the
// simplifier; the operator functions above call it).
Expr make_expr(ExprKind kind, std::vector<Expr> operands);

// Nodes the process has interned (they live until exit): a diagnostic for leak tests.
size_t interned_exprs();

std::string str(const std::vector<Expr>& list);  // "[s0, 4]"
bool all_const(const std::vector<Expr>& list);
std::vector<int64_t> to_ints(const std::vector<Expr>& list);   // throws InternalError if symbolic
std::vector<Expr> to_exprs(IntArrayRef list);

}  // namespace kiln::ir

template <> struct std::hash<kiln::ir::Expr> {
  size_t operator()(const kiln::ir::Expr& e) const { return e.hash(); }
};
