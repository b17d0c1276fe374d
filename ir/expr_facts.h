// kiln/ir/expr_facts.h — what is known about symbols (ranges, divisibility) and what follows.
//
// make_expr simplifies without context; ShapeEnv knows more: a dynamic size is >= 2, a guard
// says `s0 % 4 == 0`. ExprFacts records such facts per symbol, and one analysis recursing over
// the Expr kinds derives from them, for any expression, an interval of its values and a
// congruence (e == r mod m). bound() returns the interval, decide() the truth of a predicate
// when the facts prove it, and simplify() rewrites an expression using both: min/max and
// comparisons decided, x // d -> 0 and x % d -> x for 0 <= x < d, (s0 // 4) * 4 -> s0 and
// s0 % 4 -> 0 when 4 divides s0, floordiv and mod of sums split along the multiples of the
// divisor. Interval ends saturate: INT64_MIN and INT64_MAX stand for -inf and +inf. Results
// hold on every binding that satisfies the facts and whose intermediate values fit in int64;
// an expression that divides by zero on a binding promises nothing there.
#pragma once

#include "ir/expr.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::ir {

// An inclusive interval [lo, hi]; lo > hi is empty (contradictory facts).
struct Range {
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();
  int64_t lo = kNegInf, hi = kPosInf;

  static Range point(int64_t v) { return {v, v}; }
  bool contains(int64_t v) const { return lo <= v && v <= hi; }
  bool is_const() const { return lo == hi; }
  bool empty() const { return lo > hi; }
  bool unbounded() const { return lo == kNegInf && hi == kPosInf; }
  Range intersect(const Range& o) const;
  // "[2, inf]", "[-inf, 64]", "[3, 3]", "empty".
  std::string str() const;
  bool operator==(const Range& o) const { return lo == o.lo && hi == o.hi; }
};

// Known facts about symbols: each has a range (unbounded when unknown) and a divisor (1 when
// unknown). Facts only accumulate: a new range intersects the old, a new divisor combines by lcm.
class ExprFacts {
 public:
  void set_range(std::string_view sym, Range r);
  // sym % k == 0; k > 0 (an InternalError otherwise). When the lcm would overflow int64 the
  // old divisor stays (knowing less is still sound).
  void set_multiple_of(std::string_view sym, int64_t k);
  Range range_of(std::string_view sym) const;
  int64_t multiple_of(std::string_view sym) const;

  // Learns from a predicate known to hold. Understood: a comparison (<, <=, ==) between a linear
  // form k*s + c of one symbol and a constant (`s0 <= 64`, `2 <= s0`, `2*s0 < 9`, `s0 == 7`),
  // and `s % k == 0`. Returns whether something was learned; other predicates are ignored.
  bool learn(const Expr& pred);

  // "s0 in [2, inf], s0 % 4 == 0; s1 in [0, 7]" (symbols in name order), "" when empty.
  std::string str() const;

 private:
  std::map<std::string, Range, std::less<>> ranges_;
  std::map<std::string, int64_t, std::less<>> multiples_;
};

// A sound interval of e's values on every binding satisfying f.
Range bound(const Expr& e, const ExprFacts& f);

// The truth of a predicate when the facts prove it, else nullopt. A comparison is decided as
// such; any other expression is read as "e != 0".
std::optional<bool> decide(const Expr& pred, const ExprFacts& f);

// e rewritten with the facts; it evaluates equal to e on every binding satisfying f.
Expr simplify(const Expr& e, const ExprFacts& f);

}  // namespace kiln::ir
