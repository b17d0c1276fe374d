// kiln/test/test_ir_expr_facts.cpp — facts about symbols: learning guards, bounds, decisions
// and simplification under ranges and divisibility, on hand-computed cases.
#include "base/error.h"
#include "ir/expr.h"
#include "ir/expr_facts.h"
#include "ir/text.h"

#include <gtest/gtest.h>

namespace kiln::ir::expr_facts {
namespace {

const Expr s0 = Expr::symbol("s0");
const Expr s1 = Expr::symbol("s1");
const Expr x = Expr::symbol("x");
constexpr int64_t kInf = Range::kPosInf, kNegInf = Range::kNegInf;

ExprFacts dynamic_size() {  // s0 >= 2, as ShapeEnv records a dynamic dim
  ExprFacts f;
  f.set_range("s0", {2, kInf});
  return f;
}
ExprFacts multiple_of_4() {
  ExprFacts f;
  f.set_multiple_of("s0", 4);
  return f;
}
ExprFacts x_below_8() {
  ExprFacts f;
  f.set_range("x", {0, 7});
  return f;
}

// ---- Range and ExprFacts ------------------------------------------------------------------

TEST(ExprFactsRange, HelpersAndPrinting) {
  Range r{2, 5};
  EXPECT_TRUE(r.contains(2));
  EXPECT_TRUE(r.contains(5));
  EXPECT_FALSE(r.contains(6));
  EXPECT_FALSE(r.is_const());
  EXPECT_TRUE(Range::point(3).is_const());
  EXPECT_TRUE(Range{}.unbounded());
  EXPECT_EQ(r.str(), "[2, 5]");
  EXPECT_EQ((Range{2, kInf}).str(), "[2, inf]");
  EXPECT_EQ((Range{kNegInf, -1}).str(), "[-inf, -1]");
  EXPECT_EQ(r.intersect({4, 9}), (Range{4, 5}));
  EXPECT_TRUE(r.intersect({6, 9}).empty());
  EXPECT_EQ(r.intersect({6, 9}).str(), "empty");
}

TEST(ExprFactsStore, RangesIntersectAndMultiplesCombineByLcm) {
  ExprFacts f;
  EXPECT_TRUE(f.range_of("s0").unbounded());
  EXPECT_EQ(f.multiple_of("s0"), 1);
  f.set_range("s0", {2, kInf});
  f.set_range("s0", {0, 64});
  EXPECT_EQ(f.range_of("s0"), (Range{2, 64}));
  f.set_multiple_of("s0", 4);
  f.set_multiple_of("s0", 6);
  EXPECT_EQ(f.multiple_of("s0"), 12);
  f.set_multiple_of("s1", 3);
  EXPECT_EQ(f.str(), "s0 in [2, 64], s0 % 12 == 0; s1 % 3 == 0");
  EXPECT_THROW(f.set_multiple_of("s0", 0), InternalError);
}

TEST(ExprFactsLearn, ReadsTheGuardForms) {
  ExprFacts f;
  EXPECT_TRUE(f.learn(parse_expr("s0 <= 64")));
  EXPECT_TRUE(f.learn(parse_expr("2 <= s0")));
  EXPECT_EQ(f.range_of("s0"), (Range{2, 64}));
  EXPECT_TRUE(f.learn(parse_expr("s0 % 4 == 0")));
  EXPECT_EQ(f.multiple_of("s0"), 4);
  EXPECT_TRUE(f.learn(parse_expr("s1 == 7")));
  EXPECT_EQ(f.range_of("s1"), Range::point(7));
  // Strict and scaled forms: 2*s2 < 9 -> s2 <= 4; 3 < 2*s2 -> s2 >= 2; -s2 <= -1 -> s2 >= 1.
  EXPECT_TRUE(f.learn(lt(2 * Expr::symbol("s2"), 9)));
  EXPECT_TRUE(f.learn(lt(3, 2 * Expr::symbol("s2"))));
  EXPECT_TRUE(f.learn(le(-Expr::symbol("s2"), -1)));
  EXPECT_EQ(f.range_of("s2"), (Range{2, 4}));
  EXPECT_TRUE(f.learn(eq(s1 + 3, 10)));  // s1 == 7 again
  EXPECT_EQ(f.range_of("s1"), Range::point(7));
}

TEST(ExprFactsLearn, IgnoresWhatItCannotRead) {
  ExprFacts f;
  EXPECT_FALSE(f.learn(ne(s0, 3)));
  EXPECT_FALSE(f.learn(le(s0, s1)));
  EXPECT_FALSE(f.learn(eq(mod(s0, 4), 1)));
  EXPECT_FALSE(f.learn(eq(2 * s0, 7)));  // no integer solution
  EXPECT_FALSE(f.learn(s0 + 1));
  EXPECT_FALSE(f.learn(Expr(1)));
  EXPECT_EQ(f.str(), "");
}

// ---- with s0 >= 2 ----------------------------------------------------------------------------

TEST(ExprFactsDynamicSize, DecidesComparisonsAgainstTheLowerBound) {
  ExprFacts f = dynamic_size();
  EXPECT_EQ(decide(le(1, s0), f), true);  // s0 >= 1
  EXPECT_EQ(decide(eq(s0, 0), f), false);
  EXPECT_EQ(decide(ne(s0, 1), f), true);
  EXPECT_EQ(decide(lt(s0, 2), f), false);
  EXPECT_EQ(decide(lt(s0, 3), f), std::nullopt);
  EXPECT_EQ(decide(le(s0, 64), f), std::nullopt);
  EXPECT_EQ(decide(s0 - 1, f), true);  // a non-comparison reads as "!= 0"
  EXPECT_EQ(decide(lt(s0, s0 * s1), f), std::nullopt);
  EXPECT_EQ(decide(lt(s0 + 1, 2 * s0), f), true);  // s0 - 1 >= 1
}

TEST(ExprFactsDynamicSize, SimplifiesMinMaxAndDivisions) {
  ExprFacts f = dynamic_size();
  EXPECT_EQ(simplify(max(s0, 1), f), s0);
  EXPECT_EQ(simplify(min(s0, 1), f), Expr(1));
  EXPECT_EQ(simplify(min(s0, 8), f), min(s0, 8));
  EXPECT_EQ(simplify(floordiv(s0 - 1, s0), f), Expr(0));  // 0 <= s0 - 1 < s0
  EXPECT_EQ(simplify(mod(s0 - 1, s0), f), s0 - 1);
  EXPECT_EQ(simplify(floordiv(s0, s0), f), Expr(1));
  EXPECT_EQ(simplify(mod(s0, s0), f), Expr(0));
  EXPECT_EQ(simplify(floordiv(1, s0), f), Expr(0));  // 0 <= 1 < 2 <= s0
  EXPECT_EQ(simplify(eq(s0, 0) + le(2, s0), f), Expr(1));
  EXPECT_EQ(bound(3 * s0 - 1, f), (Range{5, kInf}));
  EXPECT_EQ(bound(-s0, f), (Range{kNegInf, -2}));
  EXPECT_EQ(bound(floordiv(s0, 2), f), (Range{1, kInf}));
  EXPECT_EQ(bound(mod(s1, s0), f), (Range{0, kInf}));
  // Without facts: (s0 - 1) // s0 is -2 at s0 = -1, so it stays.
  EXPECT_EQ(simplify(floordiv(s0 - 1, s0), ExprFacts{}), floordiv(s0 - 1, s0));
}

// A min or max whose operands may be equal: 2*p <= 0 is open for a loop variable p >= 0, but
// 0 <= 2*p holds, which decides both (a padded read's clamp, passes/simplify_indices.h).
TEST(ExprFactsLoopVariable, MinMaxDecidedWhereTheOperandsMayBeEqual) {
  ExprFacts f;
  f.set_range("p", {0, 55});
  const Expr p = Expr::symbol("p");
  EXPECT_EQ(simplify(max(2 * p, 0), f), 2 * p);
  EXPECT_EQ(simplify(max(0, 2 * p), f), 2 * p);
  EXPECT_EQ(simplify(min(2 * p, 0), f), Expr(0));
  EXPECT_EQ(simplify(min(2 * p, 110), f), 2 * p);
  EXPECT_EQ(simplify(max(2 * p - 1, 0), f), max(2 * p - 1, 0));  // -1 at p = 0
  EXPECT_EQ(simplify(min(2 * p + 1, 110), f), min(2 * p + 1, 110));  // 111 at p = 55
}

// ---- with 4 | s0 ------------------------------------------------------------------------------

TEST(ExprFactsMultiple, RemovesRoundingAndRemainders) {
  ExprFacts f = multiple_of_4();
  EXPECT_EQ(simplify(floordiv(s0, 4) * 4, f), s0);
  EXPECT_EQ(simplify(floordiv(s0, 4) * 8 * s1, f), 2 * s0 * s1);
  EXPECT_EQ(simplify(floordiv(s0, 2) * 2, f), s0);
  EXPECT_EQ(simplify(mod(s0, 4), f), Expr(0));
  EXPECT_EQ(simplify(mod(s0, 2), f), Expr(0));
  EXPECT_EQ(simplify(mod(s0 + 8, 4), f), Expr(0));
  EXPECT_EQ(simplify(mod(s0 + 6, 4), f), Expr(2));
  EXPECT_EQ(simplify(mod(s0 + s1, 4), f), mod(s1, 4));
  EXPECT_EQ(simplify(floordiv(s0 + 3, 4), f), floordiv(s0, 4));
  EXPECT_EQ(simplify(floordiv(s0 + s1, 4), f), floordiv(s0, 4) + floordiv(s1, 4));
  EXPECT_EQ(simplify(floordiv(s0, 8) * 8, f), floordiv(s0, 8) * 8);  // 8 need not divide s0
  EXPECT_EQ(simplify(mod(s0, 3), f), mod(s0, 3));
  EXPECT_EQ(decide(eq(s0, 6), f), false);
  EXPECT_EQ(decide(eq(mod(s0 * s1, 4), 0), f), true);
  EXPECT_EQ(decide(ne(s0 + 1, 0), f), true);
  // Divisibility through sums and products.
  ExprFacts g;
  g.set_multiple_of("s1", 2);
  EXPECT_EQ(simplify(mod(4 * s0 + 8 * s1, 4), g), Expr(0));
  EXPECT_EQ(simplify(mod(2 * s0 + 3 * s1, 2), g), Expr(0));
  EXPECT_EQ(simplify(mod(2 * s0 + 3 * s1, 4), g), mod(2 * s0 + 3 * s1, 4));
  EXPECT_EQ(simplify(mod(s0 * s1, 2), g), Expr(0));
  EXPECT_EQ(simplify(floordiv(2 * s0 + s1, 2), g), s0 + floordiv(s1, 2));
}

TEST(ExprFactsMultiple, RangeAndMultipleTogether) {
  ExprFacts f = multiple_of_4();
  f.set_range("s0", {2, 7});  // so s0 == 4
  EXPECT_EQ(bound(s0, f), Range::point(4));
  EXPECT_EQ(simplify(s0 * s1 + s0, f), 4 * s1 + 4);
  f.set_range("s1", {1, 3});
  f.set_multiple_of("s1", 2);
  EXPECT_EQ(simplify(s1, f), Expr(2));
}

// ---- with 0 <= x < 8 ----------------------------------------------------------------------------

TEST(ExprFactsSmallIndex, DivisionAndModByALargerConstant) {
  ExprFacts f = x_below_8();
  EXPECT_EQ(simplify(floordiv(x, 8), f), Expr(0));
  EXPECT_EQ(simplify(mod(x, 8), f), x);
  EXPECT_EQ(simplify(floordiv(x, 4), f), floordiv(x, 4));
  EXPECT_EQ(bound(floordiv(x, 4), f), (Range{0, 1}));
  EXPECT_EQ(bound(mod(x, 4), f), (Range{0, 3}));
  EXPECT_EQ(bound(mod(x + 8, 16), f), (Range{8, 15}));
  EXPECT_EQ(simplify(mod(x + 8, 16), f), x + 8);  // same period: 8 <= x + 8 < 16
  EXPECT_EQ(simplify(floordiv(x + 8, 16), f), Expr(0));
  EXPECT_EQ(simplify(floordiv(8 * s0 + x, 8), f), s0);
  EXPECT_EQ(simplify(mod(8 * s0 + x, 8), f), x);
  EXPECT_EQ(simplify(floordiv(x - 8, 8), f), Expr(-1));
  EXPECT_EQ(simplify(mod(x, -8), f), mod(x, -8));  // x - 8, except 0 at x = 0
  EXPECT_EQ(bound(mod(x, -8), f), (Range{-7, 0}));
  EXPECT_EQ(simplify(mod(x - 7, -8), f), x - 7);     // -8 < x - 7 <= 0
  EXPECT_EQ(simplify(min(x, 7), f), x);
  EXPECT_EQ(simplify(lt(x, 8) * le(0, x), f), Expr(1));
  EXPECT_EQ(bound(x * x - 2 * x, f), (Range{-14, 49}));
  EXPECT_EQ(bound(max(x, s1), f), (Range{0, kInf}));
}

}  // namespace
}  // namespace kiln::ir::expr_facts
