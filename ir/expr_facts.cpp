// kiln/ir/expr_facts.cpp — interval + congruence analysis of Exprs under facts about symbols.
//
// One analysis (Analyzer::analyze) recurses over the node kinds and gives each expression an
// Info: an interval of its values (ends saturate; INT64_MIN/INT64_MAX are -inf/+inf) and a
// congruence e == r (mod m), where m == 0 means e is exactly r. The two refine each other: a
// congruence tightens the interval ends to the residue class, a one-point interval makes the
// congruence exact. bound(), decide() and simplify() are thin layers over it; simplify() is a
// bottom-up pass of local rewrites (each justified by the analysis) repeated to a fixpoint.
#include "ir/expr_facts.h"

#include "base/error.h"

#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln::ir {

namespace {

using i128 = __int128;
constexpr int64_t kNegInf = Range::kNegInf, kPosInf = Range::kPosInf;
constexpr Range kEmpty{kPosInf, kNegInf};

bool is_inf(int64_t v) { return v == kNegInf || v == kPosInf; }
int64_t sat(i128 v) { return v <= kNegInf ? kNegInf : v >= kPosInf ? kPosInf : static_cast<int64_t>(v); }
i128 abs128(i128 v) { return v < 0 ? -v : v; }
i128 gcd128(i128 a, i128 b) {
  a = abs128(a);
  b = abs128(b);
  while (b != 0) a = std::exchange(b, a % b);
  return a;
}
// Python's // and % on 128-bit values (b != 0).
i128 floor_div(i128 a, i128 b) {
  i128 q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}
i128 floor_mod(i128 a, i128 b) { return a - b * floor_div(a, b); }

// ---- interval arithmetic with saturating ends ------------------------------------------------

int64_t neg_end(int64_t v) { return v == kNegInf ? kPosInf : v == kPosInf ? kNegInf : -v; }
Range neg(Range x) { return {neg_end(x.hi), neg_end(x.lo)}; }
Range hull(std::optional<Range> a, Range b) { return a ? Range{std::min(a->lo, b.lo), std::max(a->hi, b.hi)} : b; }

// An end of a + b: an infinite operand wins, the one toward the side being bounded first.
int64_t add_end(int64_t a, int64_t b, bool upper) {
  const int64_t win = upper ? kPosInf : kNegInf, lose = upper ? kNegInf : kPosInf;
  if (a == win || b == win) return win;
  if (a == lose || b == lose) return lose;
  return sat(i128{a} + b);
}
Range add(Range x, Range y) { return {add_end(x.lo, y.lo, false), add_end(x.hi, y.hi, true)}; }

int64_t mul_end(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  bool negative = (a < 0) != (b < 0);
  if (is_inf(a) || is_inf(b)) return negative ? kNegInf : kPosInf;
  return sat(i128{a} * b);
}
Range mul(Range x, Range y) {
  const int64_t c[] = {mul_end(x.lo, y.lo), mul_end(x.lo, y.hi), mul_end(x.hi, y.lo), mul_end(x.hi, y.hi)};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

// x // y for y >= 1: +-inf // finite keeps the infinity, finite // +inf is 0 or -1, and inf // inf
// (unknown) gives the end being bounded.
int64_t div_end(int64_t x, int64_t y, bool upper) {
  if (y == kPosInf) {
    if (is_inf(x)) return upper ? (x == kPosInf ? kPosInf : -1) : (x == kNegInf ? kNegInf : 0);
    return x >= 0 ? 0 : -1;
  }
  if (is_inf(x)) return x;
  return static_cast<int64_t>(floor_div(x, y));
}
// x // y for y in [pl, ph], pl >= 1: increasing in x; for fixed x it moves toward 0 / -1 as y grows.
Range div_pos(Range x, int64_t pl, int64_t ph) {
  int64_t lo = x.lo >= 0 ? div_end(x.lo, ph, false) : div_end(x.lo, pl, false);
  int64_t hi = x.hi >= 0 ? div_end(x.hi, pl, true) : div_end(x.hi, ph, true);
  return {lo, hi};
}
// x % y for y in [pl, ph], pl >= 1: Python's result lies in [0, y).
Range mod_pos(Range x, int64_t pl, int64_t ph) {
  if (x.lo >= 0 && x.hi < pl) return x;
  if (pl == ph && !is_inf(pl) && !is_inf(x.lo) && !is_inf(x.hi) && floor_div(x.lo, pl) == floor_div(x.hi, pl))
    return {static_cast<int64_t>(floor_mod(x.lo, pl)), static_cast<int64_t>(floor_mod(x.hi, pl))};
  int64_t hi = ph == kPosInf ? kPosInf : ph - 1;
  if (x.lo >= 0) hi = std::min(hi, x.hi);
  return {0, hi};
}
// Over the positive and negative parts of the divisor: x // y == -x // -y, x % y == -(-x % -y).
template <typename PosFn> Range over_divisor(Range x, Range y, bool negate_result, PosFn pos) {
  std::optional<Range> out;
  if (y.hi >= 1) out = pos(x, std::max<int64_t>(y.lo, 1), y.hi);
  if (y.lo <= -1) {
    Range r = pos(neg(x), neg_end(std::min<int64_t>(y.hi, -1)), neg_end(y.lo));
    out = hull(out, negate_result ? neg(r) : r);
  }
  return out ? *out : Range{};  // y == 0: never evaluates
}

// ---- congruences ------------------------------------------------------------------------------

struct Cong {
  int64_t m = 1, r = 0;  // value == r (mod m), 0 <= r < m; m == 0: value == r exactly
};
Cong cong(i128 m, i128 r) {
  m = abs128(m);
  if (m == 0) return r >= kNegInf && r <= kPosInf ? Cong{0, static_cast<int64_t>(r)} : Cong{};
  if (m > kPosInf) return Cong{};
  return Cong{static_cast<int64_t>(m), static_cast<int64_t>(floor_mod(r, m))};
}
// Whether every value of the class is a multiple of k (k != 0).
bool divides(i128 k, Cong c) { return c.r % k == 0 && (c.m == 0 || c.m % k == 0); }

struct Info {
  Range range;
  Cong c;
  bool exact() const { return c.m == 0; }
};

// Makes range and congruence agree: ends move into the residue class, one point is exact.
Info finish(Range r, Cong c) {
  if (r.empty()) return {kEmpty, {}};
  if (c.m == 0) {
    r = r.intersect(Range::point(c.r));
  } else if (c.m > 1) {
    if (r.lo != kNegInf) r.lo = sat(i128{r.lo} + floor_mod(i128{c.r} - r.lo, c.m));
    if (r.hi != kPosInf) r.hi = sat(i128{r.hi} - floor_mod(i128{r.hi} - c.r, c.m));
  }
  if (r.empty()) return {kEmpty, {}};
  if (r.is_const() && !is_inf(r.lo)) c = Cong{0, r.lo};
  return {r, c};
}

class Analyzer {
 public:
  explicit Analyzer(const ExprFacts& f) : f_(f) {}

  Info analyze(const Expr& e) {
    if (auto it = memo_.find(e.node()); it != memo_.end()) return it->second;
    Info i = compute(e);
    memo_.emplace(e.node(), i);
    return i;
  }

  // Whether the facts prove a predicate (read as "!= 0" unless it is a comparison).
  std::optional<bool> decide(const Expr& pred) {
    Info i = analyze(pred);
    if (i.exact()) return i.c.r != 0;
    if (!i.range.empty() && !i.range.contains(0)) return true;
    if (i.c.m > 1 && i.c.r != 0) return true;
    return std::nullopt;
  }
  bool proves(const Expr& pred) { return decide(pred) == true; }
  // Whether k divides every value of e.
  bool multiple(const Expr& e, int64_t k) { return k != 0 && divides(k, analyze(e).c); }

 private:
  Info compute(const Expr& e) {
    const auto& ops = e.operands();
    std::vector<Info> in;
    for (const Expr& o : ops) {
      in.push_back(analyze(o));
      if (in.back().range.empty()) return {kEmpty, {}};
    }
    switch (e.kind()) {
      case ExprKind::Const: return finish(Range::point(e.as_const()), Cong{0, e.as_const()});
      case ExprKind::Symbol:
        return finish(f_.range_of(e.symbol_name()), cong(f_.multiple_of(e.symbol_name()), 0));
      case ExprKind::Add: {
        Range r = Range::point(0);
        Cong c{0, 0};
        for (const Info& x : in) {
          r = add(r, x.range);
          c = cong(gcd128(c.m, x.c.m), i128{c.r} + x.c.r);
        }
        return finish(r, c);
      }
      case ExprKind::Mul: {
        Range r = Range::point(1);
        Cong c{0, 1};
        for (const Info& x : in) {
          r = mul(r, x.range);
          // (r1 + m1*i)(r2 + m2*j) == r1*r2 mod gcd(m1*m2, r1*m2, r2*m1).
          i128 m = gcd128(gcd128(i128{c.m} * x.c.m, i128{c.r} * x.c.m), i128{x.c.r} * c.m);
          c = cong(m, i128{c.r} * x.c.r);
        }
        return finish(r, c);
      }
      case ExprKind::FloorDiv: {
        const Info &x = in[0], &y = in[1];
        Range r = over_divisor(x.range, y.range, false, div_pos);
        Cong c;
        if (y.exact() && y.c.r != 0 && (x.exact() || x.c.m % abs128(y.c.r) == 0))
          c = cong(x.c.m / abs128(y.c.r), floor_div(x.c.r, y.c.r));  // (r + m*i) // d == r // d + (m/d)*i
        return finish(r, c);
      }
      case ExprKind::Mod: {
        const Info &x = in[0], &y = in[1];
        Range r = over_divisor(x.range, y.range, true, mod_pos);
        Cong c;
        if (y.exact() && y.c.r != 0 && (x.exact() || x.c.m % abs128(y.c.r) == 0)) {
          c = cong(0, floor_mod(x.c.r, y.c.r));
        } else {
          // y is a multiple of g = gcd(m2, r2), so x % y == x - y*(x // y) == r1 mod gcd(m1, g).
          i128 g = gcd128(x.c.m, gcd128(y.c.m, y.c.r));
          if (g != 0) c = cong(g, x.c.r);
        }
        return finish(r, c);
      }
      case ExprKind::Min:
      case ExprKind::Max: {
        const Info &x = in[0], &y = in[1];
        Range r = e.kind() == ExprKind::Min ? Range{std::min(x.range.lo, y.range.lo), std::min(x.range.hi, y.range.hi)}
                                            : Range{std::max(x.range.lo, y.range.lo), std::max(x.range.hi, y.range.hi)};
        i128 g = gcd128(gcd128(x.c.m, y.c.m), i128{x.c.r} - y.c.r);  // either operand's class
        return finish(r, cong(g, x.c.r));
      }
      case ExprKind::Eq:
      case ExprKind::Ne:
      case ExprKind::Lt:
      case ExprKind::Le: {
        std::optional<bool> d = compare(e.kind(), ops[0], ops[1], in[0], in[1]);
        return d ? finish(Range::point(*d), Cong{0, *d}) : finish(Range{0, 1}, Cong{});
      }
    }
    internal_fail("expr_facts: bad expression kind {}", static_cast<int>(e.kind()));
  }

  // Decides a comparison from the range of a - b (as an expression, so common terms cancel, and
  // as a difference of intervals) and, for == and !=, the congruence of a - b.
  std::optional<bool> compare(ExprKind k, const Expr& a, const Expr& b, const Info& ia, const Info& ib) {
    Info diff = analyze(a - b);
    Range d = diff.range.intersect(add(ia.range, neg(ib.range)));
    if (d.empty()) return std::nullopt;  // no binding evaluates both: nothing to say
    switch (k) {
      case ExprKind::Lt:
        if (d.hi <= -1) return true;
        if (d.lo >= 0) return false;
        return std::nullopt;
      case ExprKind::Le:
        if (d.hi <= 0) return true;
        if (d.lo >= 1) return false;
        return std::nullopt;
      case ExprKind::Eq:
      case ExprKind::Ne: {
        std::optional<bool> equal;
        if (d == Range::point(0)) equal = true;
        else if (!d.contains(0) || (diff.c.m != 1 && diff.c.r != 0)) equal = false;
        if (!equal) return std::nullopt;
        return k == ExprKind::Eq ? *equal : !*equal;
      }
      case ExprKind::Const:
      case ExprKind::Symbol:
      case ExprKind::Add:
      case ExprKind::Mul:
      case ExprKind::FloorDiv:
      case ExprKind::Mod:
      case ExprKind::Min:
      case ExprKind::Max: break;
    }
    internal_fail("expr_facts: compare on a non-comparison kind {}", static_cast<int>(k));
  }

  const ExprFacts& f_;
  std::unordered_map<const ExprNode*, Info> memo_;
};

// ---- simplification -------------------------------------------------------------------------

Expr sum_of(std::vector<Expr> terms) { return terms.empty() ? Expr(0) : make_expr(ExprKind::Add, std::move(terms)); }

class Simplifier {
 public:
  explicit Simplifier(const ExprFacts& f) : a_(f) {}

  Expr run(Expr e) {
    for (int i = 0; i < 8; ++i) {  // rewrites expose new nodes; a few passes reach the fixpoint
      memo_.clear();
      Expr next = pass(e);
      if (next == e) break;
      e = next;
    }
    return e;
  }
  Analyzer& analyzer() { return a_; }

 private:
  Expr pass(const Expr& e) {
    if (auto it = memo_.find(e.node()); it != memo_.end()) return it->second;
    Expr r = e;
    if (!e.operands().empty()) {
      std::vector<Expr> ops;
      for (const Expr& o : e.operands()) ops.push_back(pass(o));
      r = rewrite(make_expr(e.kind(), std::move(ops)));
    }
    if (Info i = a_.analyze(r); i.exact()) r = Expr(i.c.r);
    memo_.emplace(e.node(), r);
    return r;
  }

  // One local rewrite of a node whose operands are simplified.
  Expr rewrite(const Expr& e) {
    const auto& ops = e.operands();
    switch (e.kind()) {
      case ExprKind::Const:
      case ExprKind::Symbol:
      case ExprKind::Add:
      case ExprKind::Eq:  // comparisons and exact values: the analysis in pass() decides them
      case ExprKind::Ne:
      case ExprKind::Lt:
      case ExprKind::Le: return e;
      case ExprKind::Mul: return rewrite_mul(e);
      case ExprKind::FloorDiv:
      case ExprKind::Mod: return rewrite_div(e);
      case ExprKind::Min:
      case ExprKind::Max: {
        // a_first: a <= b. Where that is open, b <= a may still hold (max(2*p3, 0) with p3 >= 0).
        std::optional<bool> a_first = a_.decide(le(ops[0], ops[1]));
        if (!a_first && a_.decide(le(ops[1], ops[0])) == true) a_first = false;
        if (!a_first) return e;
        return (e.kind() == ExprKind::Min) == *a_first ? ops[0] : ops[1];
      }
    }
    internal_fail("expr_facts: bad expression kind {}", static_cast<int>(e.kind()));
  }

  // c * (x // k) * ... -> (c / k) * x * ... when k divides both c and x.
  Expr rewrite_mul(const Expr& e) {
    std::vector<Expr> ops = e.operands();
    auto c = ops[0].maybe_const();
    if (!c) return e;
    for (size_t i = 1; i < ops.size(); ++i) {
      if (ops[i].kind() != ExprKind::FloorDiv) continue;
      auto k = ops[i].operands()[1].maybe_const();
      if (!k || *k == 0 || i128{*c} % *k != 0 || !a_.multiple(ops[i].operands()[0], *k)) continue;
      if (*c == kNegInf && *k == -1) continue;  // the one quotient that does not fit
      ops[0] = Expr(*c / *k);
      ops[i] = ops[i].operands()[0];
      return make_expr(ExprKind::Mul, std::move(ops));
    }
    return e;
  }

  Expr rewrite_div(const Expr& e) {
    const ExprKind kind = e.kind();
    const Expr &x = e.operands()[0], &y = e.operands()[1];
    const bool is_div = kind == ExprKind::FloorDiv;
    // 0 <= x < y or y < x <= 0: x // y == 0 and x % y == x.
    if ((a_.proves(le(0, x)) && a_.proves(lt(x, y))) || (a_.proves(lt(y, x)) && a_.proves(le(x, 0))))
      return is_div ? Expr(0) : x;
    if (x == y && a_.proves(ne(y, 0))) return is_div ? Expr(1) : Expr(0);
    // A sum whose terms are partly multiples of d: (A + R) // d == A/d + R // d, (A + R) % d == R % d.
    auto d = y.maybe_const();
    if (!d || *d == 0 || x.kind() != ExprKind::Add) return e;
    std::vector<Expr> multiples, rest;
    for (const Expr& t : x.operands()) (a_.multiple(t, *d) ? multiples : rest).push_back(t);
    if (multiples.empty()) return e;
    Expr r = make_expr(kind, {sum_of(std::move(rest)), y});
    if (!is_div) return r;
    std::vector<Expr> q{r};
    for (const Expr& t : multiples) q.push_back(floordiv(t, y));
    return sum_of(std::move(q));
  }

  Analyzer a_;
  std::unordered_map<const ExprNode*, Expr> memo_;
};

// For learn(): e == k*s + c with one symbol s.
struct Linear {
  std::string sym;
  int64_t k = 0, c = 0;
};
std::optional<Linear> linear(const Expr& e) {
  auto term = [](const Expr& t) -> std::optional<Linear> {
    if (t.is_symbol()) return Linear{t.symbol_name(), 1, 0};
    if (t.kind() == ExprKind::Mul && t.operands().size() == 2 && t.operands()[0].is_const() && t.operands()[1].is_symbol())
      return Linear{t.operands()[1].symbol_name(), t.operands()[0].as_const(), 0};
    return std::nullopt;
  };
  if (e.kind() == ExprKind::Add && e.operands().size() == 2 && e.operands()[0].is_const()) {
    auto l = term(e.operands()[1]);
    if (l) l->c = e.operands()[0].as_const();
    return l;
  }
  return term(e);
}

}  // namespace

Range Range::intersect(const Range& o) const { return {std::max(lo, o.lo), std::min(hi, o.hi)}; }

std::string Range::str() const {
  if (empty()) return "empty";
  auto end = [](int64_t v) { return v == kNegInf ? std::string("-inf") : v == kPosInf ? std::string("inf") : std::to_string(v); };
  return "[" + end(lo) + ", " + end(hi) + "]";
}

void ExprFacts::set_range(std::string_view sym, Range r) {
  auto it = ranges_.find(sym);
  if (it == ranges_.end()) ranges_.emplace(std::string(sym), r);
  else it->second = it->second.intersect(r);
}

void ExprFacts::set_multiple_of(std::string_view sym, int64_t k) {
  if (k <= 0) internal_fail("ExprFacts::set_multiple_of: divisor {} of '{}' is not positive", k, sym);
  auto it = multiples_.find(sym);
  if (it == multiples_.end()) {
    multiples_.emplace(std::string(sym), k);
    return;
  }
  i128 lcm = i128{it->second} / gcd128(it->second, k) * k;
  if (lcm <= kPosInf) it->second = static_cast<int64_t>(lcm);
}

Range ExprFacts::range_of(std::string_view sym) const {
  auto it = ranges_.find(sym);
  return it == ranges_.end() ? Range{} : it->second;
}

int64_t ExprFacts::multiple_of(std::string_view sym) const {
  auto it = multiples_.find(sym);
  return it == multiples_.end() ? 1 : it->second;
}

bool ExprFacts::learn(const Expr& pred) {
  const ExprKind k = pred.kind();
  if (k != ExprKind::Eq && k != ExprKind::Lt && k != ExprKind::Le) return false;
  const Expr& a = pred.operands()[0];
  const Expr& b = pred.operands()[1];
  if (k == ExprKind::Eq && a.kind() == ExprKind::Mod && a.operands()[0].is_symbol() && b == Expr(0)) {
    auto d = a.operands()[1].maybe_const();
    if (!d || *d == 0 || *d == kNegInf) return false;
    set_multiple_of(a.operands()[0].symbol_name(), *d < 0 ? -*d : *d);
    return true;
  }
  auto l = linear(a - b);
  if (!l || l->k == 0) return false;
  if (k == ExprKind::Eq) {  // k*s + c == 0
    if (i128{l->c} % l->k != 0) return false;  // no integer solution: a contradiction, ignored
    set_range(l->sym, Range::point(sat(-i128{l->c} / l->k)));
    return true;
  }
  // k*s + c <= t with t = 0 (<=) or -1 (<): k*s <= v.
  i128 v = i128{k == ExprKind::Lt ? -1 : 0} - l->c;
  if (l->k > 0) set_range(l->sym, Range{kNegInf, sat(floor_div(v, l->k))});
  else set_range(l->sym, Range{sat(-floor_div(v, -i128{l->k})), kPosInf});
  return true;
}

std::string ExprFacts::str() const {
  std::string out;
  std::map<std::string, std::string> parts;
  for (const auto& [s, r] : ranges_) parts[s] = s + " in " + r.str();
  for (const auto& [s, m] : multiples_) {
    std::string& p = parts[s];
    p += (p.empty() ? "" : ", ") + s + " % " + std::to_string(m) + " == 0";
  }
  for (const auto& [s, p] : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

Range bound(const Expr& e, const ExprFacts& f) { return Analyzer(f).analyze(e).range; }

std::optional<bool> decide(const Expr& pred, const ExprFacts& f) {
  Simplifier s(f);
  return s.analyzer().decide(s.run(pred));
}

Expr simplify(const Expr& e, const ExprFacts& f) { return Simplifier(f).run(e); }

}  // namespace kiln::ir
