// kiln/ir/expr.cpp — the Expr interner, the one simplifier (make_expr), evaluation and printing.
//
// Every node lives in a global, thread-safe intern table keyed by kind + constant/name +
// operand nodes, and is never freed, so equal expressions share one pointer. make_expr is the
// only place that builds composite nodes: it folds constants, flattens and orders sums and
// products (constants first, then a structural order that never looks at pointer values),
// collects like terms (and d*(x // d) + x % d back into x), pulls multiples of the divisor out
// of // and %, and folds comparisons and min/max whose operands differ by a constant. Integer
// arithmetic wraps (two's complement) rather than invoking undefined behaviour; // and % follow
// Python. min, max, == and != order their operands structurally with a constant last, so
// min(s0, 8) reads as written.
// The rewrites hold over mathematical integers: + - * agree with wrapped evaluation always, but
// where an intermediate overflows, // % min max and comparisons may not ((s0 - 5) % 3 becomes
// (s0 + 1) % 3, which differs at s0 = INT64_MAX). test_ir_expr_fuzz.cpp checks both.
#include "ir/expr.h"

#include "base/error.h"

#include <algorithm>
#include <array>
#include <limits>
#include <mutex>
#include <unordered_set>

namespace kiln::ir {

struct ExprNode {
  ExprKind kind;
  int64_t value = 0;       // Const
  std::string name;        // Symbol
  std::vector<Expr> ops;   // composite kinds
  size_t hash = 0;
  int height = 1;          // 1 for leaves, 1 + the highest operand's otherwise
};

namespace {

size_t combine(size_t seed, size_t v) { return seed ^ (v + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2)); }

size_t node_hash(const ExprNode& n) {
  size_t h = std::hash<int>()(static_cast<int>(n.kind));
  h = combine(h, std::hash<int64_t>()(n.value));
  h = combine(h, std::hash<std::string>()(n.name));
  for (const Expr& e : n.ops) h = combine(h, e.hash());
  return h;
}

struct NodeHash {
  size_t operator()(const ExprNode* n) const { return n->hash; }
};
struct NodeEq {
  bool operator()(const ExprNode* a, const ExprNode* b) const {
    return a->kind == b->kind && a->value == b->value && a->name == b->name && a->ops == b->ops;
  }
};

// Wrapping arithmetic: overflow is two's complement, never undefined behaviour.
int64_t wadd(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
int64_t wmul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }

// Python's // and % (b != 0).
int64_t py_floordiv(int64_t a, int64_t b) {
  if (b == -1) return wmul(a, -1);
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t py_mod(int64_t a, int64_t b) {
  if (b == -1 || b == 1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

}  // namespace

// Owns the intern table; the friend of Expr that turns nodes into handles.
struct ExprInterner {
  std::mutex mu;
  std::unordered_set<const ExprNode*, NodeHash, NodeEq> table;

  static ExprInterner& get() {
    static ExprInterner* const instance = new ExprInterner();  // never destroyed: nodes outlive statics
    return *instance;
  }
  Expr intern(ExprNode proto) {
    proto.hash = node_hash(proto);
    for (const Expr& o : proto.ops) proto.height = std::max(proto.height, o.height() + 1);
    std::lock_guard<std::mutex> lock(mu);
    auto it = table.find(&proto);
    if (it != table.end()) return Expr(*it);
    const ExprNode* n = new ExprNode(std::move(proto));
    table.insert(n);
    return Expr(n);
  }
  static Expr raw(ExprKind k, std::vector<Expr> ops) { return get().intern(ExprNode{k, 0, {}, std::move(ops), 0}); }
  static Expr constant(int64_t v) { return get().intern(ExprNode{ExprKind::Const, v, {}, {}, 0}); }
  static Expr symbol(std::string_view name) {
    return get().intern(ExprNode{ExprKind::Symbol, 0, std::string(name), {}, 0});
  }
};

namespace {

// Constants in [-2^62, 2^62) live in the handle itself: the pointer's low bit set, the value
// in the other 63 bits. They allocate nothing and are never interned, so a process that meets
// ever new sizes does not grow by a node per size; hash-consing still holds (equal values,
// equal bits). Wider constants (INT64_MIN, say) are interned nodes.
constexpr int64_t kInlineMin = -(int64_t{1} << 62), kInlineMax = (int64_t{1} << 62) - 1;

bool is_inline(const ExprNode* n) { return (reinterpret_cast<uintptr_t>(n) & 1u) != 0; }
const ExprNode* inline_constant(int64_t v) {
  return reinterpret_cast<const ExprNode*>((static_cast<uintptr_t>(v) << 1) | 1u);
}
int64_t inline_value(const ExprNode* n) { return static_cast<int64_t>(reinterpret_cast<uintptr_t>(n)) >> 1; }

// Symbols order by length, then lexically: s2 < s10.
int compare_names(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  int c = a.compare(b);
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

// A total order on expressions by structure (never by address): kind, then constant, name or
// operands.
int compare(const Expr& a, const Expr& b) {
  if (a == b) return 0;
  if (a.kind() != b.kind()) return a.kind() < b.kind() ? -1 : 1;
  if (a.is_const()) return a.as_const() < b.as_const() ? -1 : 1;
  if (a.is_symbol()) return compare_names(a.symbol_name(), b.symbol_name());
  const auto& x = a.operands();
  const auto& y = b.operands();
  for (size_t i = 0; i < x.size() && i < y.size(); ++i)
    if (int c = compare(x[i], y[i])) return c;
  if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;
  return 0;
}
bool less(const Expr& a, const Expr& b) { return compare(a, b) < 0; }

// Splits a term of a sum into coefficient and base: 3*s0*s1 -> (3, s0*s1), s0 -> (1, s0).
std::pair<int64_t, Expr> split_coef(const Expr& t) {
  if (t.kind() == ExprKind::Mul && t.operands()[0].is_const()) {
    const auto& ops = t.operands();
    std::vector<Expr> rest(ops.begin() + 1, ops.end());
    Expr base = rest.size() == 1 ? rest[0] : ExprInterner::raw(ExprKind::Mul, std::move(rest));
    return {ops[0].as_const(), base};
  }
  return {1, t};
}

std::vector<Expr> terms_of(const Expr& e) {
  if (e.kind() == ExprKind::Add) return e.operands();
  return {e};
}

Expr simplify_add(const std::vector<Expr>& in) {
  int64_t c = 0;
  std::vector<std::pair<Expr, int64_t>> terms;  // base, coefficient
  auto add_term = [&](const Expr& t) {
    if (t.is_const()) {
      c = wadd(c, t.as_const());
      return;
    }
    auto [coef, base] = split_coef(t);
    for (auto& [b, k] : terms)
      if (b == base) {
        k = wadd(k, coef);
        return;
      }
    terms.emplace_back(base, coef);
  };
  for (const Expr& e : in)
    for (const Expr& t : terms_of(e)) add_term(t);
  // k*d*(x // d) + k*(x % d) == k*x (floor division and Python's %, any d != 0), where x % d may
  // have simplified further ((s0 % 64) % 8 is s0 % 8): the index of a view that splits dims and
  // merges them back (a reshape of a reshape) returns to the flat index instead of a division
  // and a remainder per element.
  for (size_t i = 0; i < terms.size(); ++i) {
    const Expr q = terms[i].first;
    const int64_t kq = terms[i].second;
    if (q.kind() != ExprKind::FloorDiv || !q.operands()[1].is_const() || kq == 0) continue;
    const Expr x = q.operands()[0], d = q.operands()[1];
    if (d.as_const() == 0 || kq % d.as_const() != 0) continue;
    const int64_t k = kq / d.as_const();
    const Expr m = make_expr(ExprKind::Mod, {x, d});
    for (auto& [base, km] : terms) {
      if (km != k || base != m) continue;
      km = 0;
      terms[i].second = 0;
      for (const Expr& t : terms_of(make_expr(ExprKind::Mul, {Expr(k), x}))) add_term(t);
      i = static_cast<size_t>(-1);  // the new terms may complete another pair: look again
      break;
    }
  }
  std::stable_sort(terms.begin(), terms.end(), [](const auto& x, const auto& y) { return less(x.first, y.first); });
  std::vector<Expr> ops;
  if (c != 0) ops.push_back(Expr(c));
  for (auto& [base, coef] : terms) {
    if (coef == 0) continue;
    ops.push_back(coef == 1 ? base : make_expr(ExprKind::Mul, {Expr(coef), base}));
  }
  if (ops.empty()) return Expr(0);
  if (ops.size() == 1) return ops[0];
  return ExprInterner::raw(ExprKind::Add, std::move(ops));
}

Expr simplify_mul(const std::vector<Expr>& in) {
  int64_t c = 1;
  std::vector<Expr> factors;
  for (const Expr& e : in) {
    const std::vector<Expr> parts = e.kind() == ExprKind::Mul ? e.operands() : std::vector<Expr>{e};
    for (const Expr& f : parts) {
      if (f.is_const()) c = wmul(c, f.as_const());
      else factors.push_back(f);
    }
  }
  if (c == 0) return Expr(0);
  if (factors.empty()) return Expr(c);
  std::stable_sort(factors.begin(), factors.end(), less);
  if (c == 1 && factors.size() == 1) return factors[0];
  // A constant goes into the first sum among the factors: 2*(a + b)*x -> (2*a + 2*b)*x. So a
  // product never holds both a constant and a sum, whatever order it was built in.
  auto sum = std::find_if(factors.begin(), factors.end(), [](const Expr& f) { return f.kind() == ExprKind::Add; });
  if (c != 1 && sum != factors.end()) {
    std::vector<Expr> terms;
    for (const Expr& t : sum->operands()) terms.push_back(make_expr(ExprKind::Mul, {Expr(c), t}));
    *sum = make_expr(ExprKind::Add, std::move(terms));
    // Wrapping products can cancel terms (2^62 * 4 == 0), so the distributed sum may have become a
    // constant or a product: build the product again, which flattens it (c is now 1 or lies in
    // the next sum).
    return make_expr(ExprKind::Mul, std::move(factors));
  }
  std::vector<Expr> ops;
  if (c != 1) ops.push_back(Expr(c));
  ops.insert(ops.end(), factors.begin(), factors.end());
  return ExprInterner::raw(ExprKind::Mul, std::move(ops));
}

// Splits the terms of `a` into those whose coefficient `d` divides (their quotients by d), the
// other non-constant terms, and the sum of the constant terms.
struct DivSplit {
  std::vector<Expr> quotient, rest;
  int64_t const_rest = 0;
};
DivSplit split_divisible(const Expr& a, int64_t d) {
  DivSplit s;
  for (const Expr& t : terms_of(a)) {
    if (t.is_const()) {
      s.const_rest = wadd(s.const_rest, t.as_const());
      continue;
    }
    auto [coef, base] = split_coef(t);
    if (coef % d == 0) s.quotient.push_back(make_expr(ExprKind::Mul, {Expr(coef / d), base}));
    else s.rest.push_back(t);
  }
  return s;
}

Expr simplify_floordiv(const Expr& a, const Expr& b) {
  if (auto bc = b.maybe_const()) {
    int64_t d = *bc;
    if (d == 0) return ExprInterner::raw(ExprKind::FloorDiv, {a, b});  // evaluate() reports it
    if (auto ac = a.maybe_const()) return Expr(py_floordiv(*ac, d));
    if (d == 1) return a;
    if (d == -1) return make_expr(ExprKind::Mul, {Expr(-1), a});
    if (d > 0) {
      // floor((d*q + r) / d) == q + floor(r / d) for integers q, r.
      DivSplit s = split_divisible(a, d);
      if (!s.quotient.empty()) {
        int64_t cq = py_floordiv(s.const_rest, d);
        s.rest.push_back(Expr(py_mod(s.const_rest, d)));
        s.quotient.push_back(Expr(cq));
        Expr rest = make_expr(ExprKind::Add, std::move(s.rest));
        s.quotient.push_back(make_expr(ExprKind::FloorDiv, {rest, b}));
        return make_expr(ExprKind::Add, std::move(s.quotient));
      }
      // (x // k) // d == x // (k*d) for positive k, d.
      if (a.kind() == ExprKind::FloorDiv) {
        if (auto k = a.operands()[1].maybe_const(); k && *k > 0 && *k <= INT64_MAX / d)
          return make_expr(ExprKind::FloorDiv, {a.operands()[0], Expr(*k * d)});
      }
    }
  }
  return ExprInterner::raw(ExprKind::FloorDiv, {a, b});
}

Expr simplify_mod(const Expr& a, const Expr& b) {
  if (auto bc = b.maybe_const()) {
    int64_t d = *bc;
    if (d == 0) return ExprInterner::raw(ExprKind::Mod, {a, b});  // evaluate() reports it
    if (auto ac = a.maybe_const()) return Expr(py_mod(*ac, d));
    if (d == 1 || d == -1) return Expr(0);
    // Python's % depends only on the residue class: drop multiples of d, reduce the constant.
    DivSplit s = split_divisible(a, d);
    int64_t reduced = py_mod(s.const_rest, d);
    if (!s.quotient.empty() || reduced != s.const_rest) {
      s.rest.push_back(Expr(reduced));
      return make_expr(ExprKind::Mod, {make_expr(ExprKind::Add, std::move(s.rest)), b});
    }
    // (x % e) % d == x % d when d divides e: x % e differs from x by a multiple of e.
    if (a.kind() == ExprKind::Mod) {
      if (auto e = a.operands()[1].maybe_const(); e && *e % d == 0) {
        if (*e == d) return a;
        return make_expr(ExprKind::Mod, {a.operands()[0], b});
      }
    }
  }
  return ExprInterner::raw(ExprKind::Mod, {a, b});
}

// Orders the operands of min, max, == and !=: non-constants in structural order, a constant last.
std::pair<Expr, Expr> order_pair(const Expr& a, const Expr& b) {
  if (a.is_const() && !b.is_const()) return {b, a};
  if (!a.is_const() && !b.is_const() && less(b, a)) return {b, a};
  return {a, b};
}

// For a comparison: whether it holds for a and b; for min/max: whether it picks a.
bool decide(ExprKind k, int64_t a, int64_t b) {
  switch (k) {
    case ExprKind::Min: return a <= b;
    case ExprKind::Max: return a >= b;
    case ExprKind::Eq: return a == b;
    case ExprKind::Ne: return a != b;
    case ExprKind::Lt: return a < b;
    case ExprKind::Le: return a <= b;
    case ExprKind::Const:
    case ExprKind::Symbol:
    case ExprKind::Add:
    case ExprKind::Mul:
    case ExprKind::FloorDiv:
    case ExprKind::Mod: break;
  }
  internal_fail("decide: kind {} is not min, max or a comparison", static_cast<int>(k));
}

Expr simplify_binary(ExprKind k, const Expr& a, const Expr& b) {
  bool picks = k == ExprKind::Min || k == ExprKind::Max;
  auto ac = a.maybe_const(), bc = b.maybe_const();
  if (ac && bc) {
    bool r = decide(k, *ac, *bc);
    return picks ? (r ? a : b) : Expr(r ? 1 : 0);
  }
  // Operands that differ by a constant decide the result: min(s0 + 1, s0) = s0.
  std::optional<int64_t> diff = a == b ? std::optional<int64_t>(0) : (a - b).maybe_const();
  if (diff) {
    bool r = decide(k, *diff, 0);
    return picks ? (r ? a : b) : Expr(r ? 1 : 0);
  }
  if (k == ExprKind::Lt || k == ExprKind::Le) return ExprInterner::raw(k, {a, b});
  auto [x, y] = order_pair(a, b);
  return ExprInterner::raw(k, {x, y});
}

}  // namespace

bool is_comparison(ExprKind k) {
  switch (k) {
    case ExprKind::Eq:
    case ExprKind::Ne:
    case ExprKind::Lt:
    case ExprKind::Le: return true;
    case ExprKind::Const:
    case ExprKind::Symbol:
    case ExprKind::Add:
    case ExprKind::Mul:
    case ExprKind::FloorDiv:
    case ExprKind::Mod:
    case ExprKind::Min:
    case ExprKind::Max: return false;
  }
  return false;
}

Expr::Expr(int64_t v) {
  if (v >= kInlineMin && v <= kInlineMax) n_ = inline_constant(v);
  else n_ = ExprInterner::constant(v).n_;
}

Expr Expr::symbol(std::string_view name) {
  if (name.empty()) internal_fail("Expr::symbol: empty name");
  return ExprInterner::symbol(name);
}

ExprKind Expr::kind() const { return is_inline(n_) ? ExprKind::Const : n_->kind; }

int64_t Expr::as_const() const {
  if (is_inline(n_)) return inline_value(n_);
  if (n_->kind != ExprKind::Const) internal_fail("Expr::as_const on non-constant '{}'", str());
  return n_->value;
}

std::optional<int64_t> Expr::maybe_const() const {
  if (is_inline(n_)) return inline_value(n_);
  return n_->kind == ExprKind::Const ? std::optional<int64_t>(n_->value) : std::nullopt;
}

const std::string& Expr::symbol_name() const {
  if (kind() != ExprKind::Symbol) internal_fail("Expr::symbol_name on non-symbol '{}'", str());
  return n_->name;
}

const std::vector<Expr>& Expr::operands() const {
  static const std::vector<Expr> none;
  return is_inline(n_) ? none : n_->ops;
}
int Expr::height() const { return is_inline(n_) ? 1 : n_->height; }

size_t interned_exprs() {
  ExprInterner& in = ExprInterner::get();
  std::lock_guard<std::mutex> lock(in.mu);
  return in.table.size();
}

Expr make_expr(ExprKind kind, std::vector<Expr> ops) {
  switch (kind) {
    case ExprKind::Const:
    case ExprKind::Symbol: internal_fail("make_expr: constants and symbols have their own constructors");
    case ExprKind::Add: return simplify_add(ops);
    case ExprKind::Mul: return simplify_mul(ops);
    case ExprKind::FloorDiv:
    case ExprKind::Mod:
    case ExprKind::Min:
    case ExprKind::Max:
    case ExprKind::Eq:
    case ExprKind::Ne:
    case ExprKind::Lt:
    case ExprKind::Le: break;
  }
  if (ops.size() != 2) internal_fail("make_expr: kind {} takes 2 operands, got {}", static_cast<int>(kind), ops.size());
  if (kind == ExprKind::FloorDiv) return simplify_floordiv(ops[0], ops[1]);
  if (kind == ExprKind::Mod) return simplify_mod(ops[0], ops[1]);
  return simplify_binary(kind, ops[0], ops[1]);
}

Expr operator+(const Expr& a, const Expr& b) { return make_expr(ExprKind::Add, {a, b}); }
Expr operator-(const Expr& a, const Expr& b) { return make_expr(ExprKind::Add, {a, make_expr(ExprKind::Mul, {Expr(-1), b})}); }
Expr operator-(const Expr& a) { return make_expr(ExprKind::Mul, {Expr(-1), a}); }
Expr operator*(const Expr& a, const Expr& b) { return make_expr(ExprKind::Mul, {a, b}); }
Expr floordiv(const Expr& a, const Expr& b) { return make_expr(ExprKind::FloorDiv, {a, b}); }
Expr mod(const Expr& a, const Expr& b) { return make_expr(ExprKind::Mod, {a, b}); }
Expr min(const Expr& a, const Expr& b) { return make_expr(ExprKind::Min, {a, b}); }
Expr max(const Expr& a, const Expr& b) { return make_expr(ExprKind::Max, {a, b}); }
Expr eq(const Expr& a, const Expr& b) { return make_expr(ExprKind::Eq, {a, b}); }
Expr ne(const Expr& a, const Expr& b) { return make_expr(ExprKind::Ne, {a, b}); }
Expr lt(const Expr& a, const Expr& b) { return make_expr(ExprKind::Lt, {a, b}); }
Expr le(const Expr& a, const Expr& b) { return make_expr(ExprKind::Le, {a, b}); }

namespace {

// Evaluates `e`; messages name the whole expression `root`. With `overflow` set, a step that
// overflows int64 sets it (the result is then meaningless); without, arithmetic wraps.
int64_t eval_node(const Expr& e, const std::map<std::string, int64_t>& bindings, const Expr& root,
                  bool* overflow = nullptr) {
  const auto& ops = e.operands();
  auto arg = [&](size_t i) { return eval_node(ops[i], bindings, root, overflow); };
  switch (e.kind()) {
    case ExprKind::Const: return e.as_const();
    case ExprKind::Symbol: {
      auto it = bindings.find(e.symbol_name());
      if (it == bindings.end()) fail("expr", "unbound symbol '{}' in '{}'", e.symbol_name(), root.str());
      return it->second;
    }
    case ExprKind::Add:
    case ExprKind::Mul: {
      const bool add = e.kind() == ExprKind::Add;
      int64_t acc = add ? 0 : 1;
      for (size_t i = 0; i < ops.size(); ++i) {
        const int64_t x = arg(i);
        if (!overflow) acc = add ? wadd(acc, x) : wmul(acc, x);
        else if (add ? __builtin_add_overflow(acc, x, &acc) : __builtin_mul_overflow(acc, x, &acc)) *overflow = true;
      }
      return acc;
    }
    case ExprKind::FloorDiv:
    case ExprKind::Mod: {
      int64_t a = arg(0), b = arg(1);
      if (b == 0) fail("expr", "division by zero in '{}'", root.str());
      if (overflow && e.kind() == ExprKind::FloorDiv && b == -1 && a == std::numeric_limits<int64_t>::min())
        *overflow = true;
      return e.kind() == ExprKind::FloorDiv ? py_floordiv(a, b) : py_mod(a, b);
    }
    case ExprKind::Min: return std::min(arg(0), arg(1));
    case ExprKind::Max: return std::max(arg(0), arg(1));
    case ExprKind::Eq: return arg(0) == arg(1) ? 1 : 0;
    case ExprKind::Ne: return arg(0) != arg(1) ? 1 : 0;
    case ExprKind::Lt: return arg(0) < arg(1) ? 1 : 0;
    case ExprKind::Le: return arg(0) <= arg(1) ? 1 : 0;
  }
  internal_fail("Expr::evaluate: bad kind {}", static_cast<int>(e.kind()));
}

}  // namespace

int64_t Expr::evaluate(const std::map<std::string, int64_t>& bindings) const { return eval_node(*this, bindings, *this); }

std::optional<int64_t> Expr::evaluate_exact(const std::map<std::string, int64_t>& bindings) const {
  bool overflow = false;
  const int64_t v = eval_node(*this, bindings, *this, &overflow);
  if (overflow) return std::nullopt;
  return v;
}

Expr Expr::substitute(const std::map<std::string, Expr>& repl) const {
  if (is_const()) return *this;
  if (is_symbol()) {
    auto it = repl.find(symbol_name());
    return it == repl.end() ? *this : it->second;
  }
  std::vector<Expr> ops;
  for (const Expr& e : operands()) ops.push_back(e.substitute(repl));
  return make_expr(kind(), std::move(ops));
}

void Expr::collect_symbols(std::vector<std::string>& out) const {
  if (is_symbol() && std::find(out.begin(), out.end(), symbol_name()) == out.end()) out.push_back(symbol_name());
  for (const Expr& e : operands()) e.collect_symbols(out);
}

// ---- printing ------------------------------------------------------------------------------
// Precedence levels of the grammar (higher binds tighter): comparisons, sums, products and
// // and %, unary minus, atoms (constants, symbols, min(...), max(...), parentheses).
namespace {

enum Prec { kCmp = 1, kSum = 2, kProd = 3, kUnary = 4, kAtom = 5 };

Prec prec_of(const Expr& e) {
  switch (e.kind()) {
    case ExprKind::Const: return e.as_const() < 0 ? kUnary : kAtom;
    case ExprKind::Symbol:
    case ExprKind::Min:
    case ExprKind::Max: return kAtom;
    case ExprKind::Add: return kSum;
    case ExprKind::Mul: {
      // -s0 prints as a unary minus; 2*s0, -2*s0 and s0*s1 as products.
      const auto& ops = e.operands();
      if (ops.size() == 2 && ops[0].maybe_const() == -1) return kUnary;
      return kProd;
    }
    case ExprKind::FloorDiv:
    case ExprKind::Mod: return kProd;
    case ExprKind::Eq:
    case ExprKind::Ne:
    case ExprKind::Lt:
    case ExprKind::Le: return kCmp;
  }
  return kAtom;
}

void print(const Expr& e, Prec min_prec, std::string& out);

// The first factor binds as a product's left operand (`first`); later ones must be unary or
// atoms.
void print_product(const std::vector<Expr>& factors, std::string& out, Prec first = kProd) {
  for (size_t i = 0; i < factors.size(); ++i) {
    if (i) out += "*";
    print(factors[i], i == 0 ? first : kUnary, out);
  }
}

void print_mul(const Expr& e, std::string& out) {
  const auto& ops = e.operands();
  if (auto c = ops[0].maybe_const(); c == -1) {
    out += "-";
    std::vector<Expr> rest(ops.begin() + 1, ops.end());
    // Unary minus binds tighter than * and //: -(s0//2)*s1, not -s0//2*s1.
    print_product(rest, out, kUnary);
    return;
  }
  print_product(ops, out);
}

// A term of a sum with its sign pulled out: returns true when negative and prints |term|.
bool print_term_abs(const Expr& t, std::string& out) {
  if (auto c = t.maybe_const(); c && *c < 0 && *c != INT64_MIN) {
    out += fmt::format("{}", -*c);
    return true;
  }
  if (t.kind() == ExprKind::Mul) {
    const auto& ops = t.operands();
    if (auto c = ops[0].maybe_const(); c && *c < 0 && *c != INT64_MIN) {
      std::vector<Expr> rest(ops.begin() + 1, ops.end());
      if (*c == -1) {
        print_product(rest, out);
      } else {
        rest.insert(rest.begin(), Expr(-*c));
        print_product(rest, out);
      }
      return true;
    }
  }
  print(t, kProd, out);
  return false;
}

void print_add(const Expr& e, std::string& out) {
  // Stored constant-first; printed constant-last: 2*s0 + s1 - 3.
  std::vector<Expr> terms(e.operands().begin(), e.operands().end());
  if (terms[0].is_const()) std::rotate(terms.begin(), terms.begin() + 1, terms.end());
  for (size_t i = 0; i < terms.size(); ++i) {
    if (i == 0) {
      print(terms[0], kProd, out);
      continue;
    }
    std::string abs;
    bool neg = print_term_abs(terms[i], abs);
    out += neg ? " - " : " + ";
    out += abs;
  }
}

void print(const Expr& e, Prec min_prec, std::string& out) {
  Prec p = prec_of(e);
  bool paren = p < min_prec;
  if (paren) out += "(";
  const auto& ops = e.operands();
  switch (e.kind()) {
    case ExprKind::Const: out += fmt::format("{}", e.as_const()); break;
    case ExprKind::Symbol: out += e.symbol_name(); break;
    case ExprKind::Add: print_add(e, out); break;
    case ExprKind::Mul: print_mul(e, out); break;
    case ExprKind::FloorDiv:
      print(ops[0], kProd, out);
      out += "//";
      print(ops[1], kUnary, out);
      break;
    case ExprKind::Mod:
      print(ops[0], kProd, out);
      out += " % ";
      print(ops[1], kUnary, out);
      break;
    case ExprKind::Min:
    case ExprKind::Max:
      out += e.kind() == ExprKind::Min ? "min(" : "max(";
      print(ops[0], kCmp, out);
      out += ", ";
      print(ops[1], kCmp, out);
      out += ")";
      break;
    case ExprKind::Eq:
    case ExprKind::Ne:
    case ExprKind::Lt:
    case ExprKind::Le: {
      static constexpr const char* kOps[] = {" == ", " != ", " < ", " <= "};
      print(ops[0], kSum, out);
      out += kOps[static_cast<int>(e.kind()) - static_cast<int>(ExprKind::Eq)];
      print(ops[1], kSum, out);
      break;
    }
  }
  if (paren) out += ")";
}

}  // namespace

std::string Expr::str() const {
  std::string out;
  print(*this, kCmp, out);
  return out;
}

std::string str(const std::vector<Expr>& list) {
  std::string out = "[";
  for (size_t i = 0; i < list.size(); ++i) out += (i ? ", " : "") + list[i].str();
  return out + "]";
}

bool all_const(const std::vector<Expr>& list) {
  return std::all_of(list.begin(), list.end(), [](const Expr& e) { return e.is_const(); });
}

std::vector<int64_t> to_ints(const std::vector<Expr>& list) {
  std::vector<int64_t> out;
  for (const Expr& e : list) {
    if (!e.is_const()) internal_fail("to_ints: {} is symbolic", str(list));
    out.push_back(e.as_const());
  }
  return out;
}

std::vector<Expr> to_exprs(IntArrayRef list) { return std::vector<Expr>(list.begin(), list.end()); }

}  // namespace kiln::ir
