// kiln/test/test_ir_expr_fuzz.cpp — seeded fuzzer for Expr: the simplifier and the facts layer
// against a plain tree evaluated directly with Python // and % semantics.
//
// Random trees over 3-4 symbols and small constants use every operator, with // and % by
// nonzero constants, by symbols and by subtrees. Each tree is built (a) through the Expr
// operators, which simplify, and (b) kept as a plain tree. Properties: the Expr evaluates like
// the plain tree on random bindings (skipping bindings where the plain tree divides by zero or
// overflows), substituting constants folds to the same value, and the printed Expr parses back
// to itself; under random facts (ranges, multiples, set directly or learned from guards),
// simplify() keeps the value, bound() contains it and decide() agrees whenever it answers, on
// bindings that satisfy the facts. Seed 20261122 by default; KILN_FUZZ_SEED and KILN_FUZZ_ITERS
// override the seed and the number of trees per property. Every failure names the seed.
#include "base/error.h"
#include "ir/expr.h"
#include "ir/expr_facts.h"
#include "ir/text.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace kiln::ir::expr_fuzz {
namespace {

struct FuzzConfig {
  uint64_t seed = 20261122;
  int iters = 1500;
};

const FuzzConfig& config() {
  static const FuzzConfig c = [] {
    FuzzConfig c;
    if (const char* s = std::getenv("KILN_FUZZ_SEED")) c.seed = std::strtoull(s, nullptr, 10);
    if (const char* s = std::getenv("KILN_FUZZ_ITERS")) c.iters = std::atoi(s);
    std::printf("expr fuzz: seed %llu, %d trees per property (KILN_FUZZ_SEED, KILN_FUZZ_ITERS)\n",
                static_cast<unsigned long long>(c.seed), c.iters);
    return c;
  }();
  return c;
}

constexpr int kMaxSymbols = 4;
using Values = std::array<int64_t, kMaxSymbols>;
const Expr kSyms[kMaxSymbols] = {Expr::symbol("s0"), Expr::symbol("s1"), Expr::symbol("s2"), Expr::symbol("s3")};

// ---- the plain tree ------------------------------------------------------------------------

enum class Op { Const, Sym, Add, Sub, Mul, Neg, FloorDiv, Mod, Min, Max, Eq, Ne, Lt, Le };
constexpr const char* kOpNames[] = {"", "", "+", "-", "*", "neg", "//", "%", "min", "max", "==", "!=", "<", "<="};

struct Tree {
  Op op;
  int64_t value = 0;  // the constant, or the symbol's index
  std::vector<Tree> kids;
};

std::string show(const Tree& t) {
  switch (t.op) {
    case Op::Const: return std::to_string(t.value);
    case Op::Sym: return "s" + std::to_string(t.value);
    case Op::Neg: return "(-" + show(t.kids[0]) + ")";
    case Op::Min:
    case Op::Max: return std::string(kOpNames[static_cast<int>(t.op)]) + "(" + show(t.kids[0]) + ", " + show(t.kids[1]) + ")";
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::FloorDiv:
    case Op::Mod:
    case Op::Eq:
    case Op::Ne:
    case Op::Lt:
    case Op::Le: break;
  }
  return "(" + show(t.kids[0]) + " " + kOpNames[static_cast<int>(t.op)] + " " + show(t.kids[1]) + ")";
}

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}
  int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  bool chance(int percent) { return uniform(1, 100) <= percent; }

  Tree tree(int depth, int nsyms) {
    if (depth == 0 || chance(25)) return leaf(nsyms);
    const Op last = ring_only_ ? Op::Neg : Op::Le;
    Tree t{static_cast<Op>(uniform(static_cast<int>(Op::Add), static_cast<int>(last))), 0, {}};
    t.kids.push_back(tree(depth - 1, nsyms));
    if (t.op == Op::Neg) return t;
    if (t.op == Op::FloorDiv || t.op == Op::Mod) {
      int64_t pick = uniform(0, 9);
      if (pick < 5) t.kids.push_back(Tree{Op::Const, nonzero(), {}});  // as in index math
      else if (pick < 8) t.kids.push_back(Tree{Op::Sym, uniform(0, nsyms - 1), {}});
      else t.kids.push_back(tree(depth - 1, nsyms));
      return t;
    }
    t.kids.push_back(tree(depth - 1, nsyms));
    return t;
  }
  Values values(int64_t magnitude) {
    Values v{};
    for (int64_t& x : v) x = extreme_ && chance(20) ? extreme() : uniform(-magnitude, magnitude);
    return v;
  }
  // Whether leaves and bindings sometimes take values near the ends of int64.
  void set_extreme(bool on) { extreme_ = on; }
  // Whether trees use only +, -, * and negation (the ring operations, exact under wrapping).
  void set_ring_only(bool on) { ring_only_ = on; }

 private:
  Tree leaf(int nsyms) {
    if (extreme_ && chance(10)) return Tree{Op::Const, extreme(), {}};
    if (chance(40)) return Tree{Op::Const, uniform(-8, 8), {}};
    return Tree{Op::Sym, uniform(0, nsyms - 1), {}};
  }
  int64_t nonzero() {
    int64_t d = 0;
    while (d == 0) d = uniform(-6, 8);
    return d;
  }
  int64_t extreme() {
    // Powers of two make wrapping products vanish (2^62 * 4 == 0); neighbours overflow sums.
    const int64_t ends[] = {INT64_MIN, INT64_MAX, INT64_MIN / 2, INT64_MAX / 3, int64_t{1} << 62, int64_t{1} << 32};
    int64_t v = ends[uniform(0, 5)];
    return chance(50) ? v : v + (v < 0 ? uniform(0, 2) : -uniform(0, 2));
  }
  std::mt19937_64 rng_;
  bool extreme_ = false, ring_only_ = false;
};

// Python's // and % written from the definition: a == b*q + r with r zero or of b's sign and
// |r| < |b|. nullopt for b == 0 and for the one overflowing quotient.
std::optional<int64_t> py_div(int64_t a, int64_t b) {
  if (b == 0 || (a == INT64_MIN && b == -1)) return std::nullopt;
  int64_t q = a / b;  // truncates toward zero
  if (q * b != a && ((a < 0) != (b < 0))) q -= 1;
  return q;
}
std::optional<int64_t> py_mod(int64_t a, int64_t b) {
  auto q = py_div(a, b);
  if (!q) return std::nullopt;
  return a - b * *q;
}

// The plain tree's value; nullopt on a division by zero or an int64 overflow.
std::optional<int64_t> plain(const Tree& t, const Values& v) {
  if (t.op == Op::Const) return t.value;
  if (t.op == Op::Sym) return v[static_cast<size_t>(t.value)];
  auto a = plain(t.kids[0], v);
  if (!a) return std::nullopt;
  if (t.op == Op::Neg) return *a == INT64_MIN ? std::nullopt : std::optional<int64_t>(-*a);
  auto b = plain(t.kids[1], v);
  if (!b) return std::nullopt;
  int64_t r = 0;
  switch (t.op) {
    case Op::Add: return __builtin_add_overflow(*a, *b, &r) ? std::nullopt : std::optional<int64_t>(r);
    case Op::Sub: return __builtin_sub_overflow(*a, *b, &r) ? std::nullopt : std::optional<int64_t>(r);
    case Op::Mul: return __builtin_mul_overflow(*a, *b, &r) ? std::nullopt : std::optional<int64_t>(r);
    case Op::FloorDiv: return py_div(*a, *b);
    case Op::Mod: return py_mod(*a, *b);
    case Op::Min: return std::min(*a, *b);
    case Op::Max: return std::max(*a, *b);
    case Op::Eq: return *a == *b;
    case Op::Ne: return *a != *b;
    case Op::Lt: return *a < *b;
    case Op::Le: return *a <= *b;
    case Op::Const:
    case Op::Sym:
    case Op::Neg: break;
  }
  return std::nullopt;
}

// The same tree through the simplifying Expr operators.
Expr build(const Tree& t) {
  if (t.op == Op::Const) return Expr(t.value);
  if (t.op == Op::Sym) return kSyms[t.value];
  Expr a = build(t.kids[0]);
  if (t.op == Op::Neg) return -a;
  Expr b = build(t.kids[1]);
  switch (t.op) {
    case Op::Add: return a + b;
    case Op::Sub: return a - b;
    case Op::Mul: return a * b;
    case Op::FloorDiv: return floordiv(a, b);
    case Op::Mod: return mod(a, b);
    case Op::Min: return min(a, b);
    case Op::Max: return max(a, b);
    case Op::Eq: return eq(a, b);
    case Op::Ne: return ne(a, b);
    case Op::Lt: return lt(a, b);
    case Op::Le: return le(a, b);
    case Op::Const:
    case Op::Sym:
    case Op::Neg: break;
  }
  return a;
}

std::map<std::string, int64_t> bindings(const Values& v) {
  std::map<std::string, int64_t> m;
  for (int i = 0; i < kMaxSymbols; ++i) m[kSyms[i].symbol_name()] = v[i];
  return m;
}
std::string show(const Values& v) {
  return "s0=" + std::to_string(v[0]) + " s1=" + std::to_string(v[1]) + " s2=" + std::to_string(v[2]) +
         " s3=" + std::to_string(v[3]);
}

// e's value, or the kiln::Error it throws as text.
std::string eval_str(const Expr& e, const Values& v) {
  try {
    return std::to_string(e.evaluate(bindings(v)));
  } catch (const Error& err) {
    return err.what();
  }
}

// ---- property 1: make_expr against the plain tree -----------------------------------------

TEST(ExprTreeFuzz, OperatorsKeepThePlainValueAndPrintRoundTrips) {
  const FuzzConfig& cfg = config();
  SCOPED_TRACE(::testing::Message() << "KILN_FUZZ_SEED=" << cfg.seed);
  Gen gen(cfg.seed);
  int compared = 0;
  for (int i = 0; i < cfg.iters; ++i) {
    const int nsyms = static_cast<int>(gen.uniform(3, 4));
    Tree t = gen.tree(static_cast<int>(gen.uniform(1, 4)), nsyms);
    Expr e = build(t);
    auto ctx = [&] { return "seed " + std::to_string(cfg.seed) + ", tree " + std::to_string(i) + ": " + show(t) + " -> " + e.str(); };
    ASSERT_EQ(parse_expr(e.str()), e) << ctx() << "\n  reads back as " << parse_expr(e.str()).str();
    for (int b = 0; b < 8; ++b) {
      Values v = gen.values(gen.chance(80) ? 4 : 12);
      auto want = plain(t, v);
      if (!want) continue;
      ASSERT_EQ(eval_str(e, v), std::to_string(*want)) << ctx() << " at " << show(v);
      std::map<std::string, Expr> consts;
      for (int s = 0; s < kMaxSymbols; ++s) consts[kSyms[s].symbol_name()] = Expr(v[s]);
      ASSERT_EQ(e.substitute(consts), Expr(*want)) << ctx() << " at " << show(v);
      ++compared;
    }
  }
  EXPECT_GT(compared, cfg.iters * 8 / 2);  // skipped bindings stay the exception
}

// The value of a ring-only tree in two's complement (wrapping) arithmetic.
int64_t plain_wrapping(const Tree& t, const Values& v) {
  auto arg = [&](size_t i) { return static_cast<uint64_t>(plain_wrapping(t.kids[i], v)); };
  switch (t.op) {
    case Op::Const: return t.value;
    case Op::Sym: return v[static_cast<size_t>(t.value)];
    case Op::Add: return static_cast<int64_t>(arg(0) + arg(1));
    case Op::Sub: return static_cast<int64_t>(arg(0) - arg(1));
    case Op::Mul: return static_cast<int64_t>(arg(0) * arg(1));
    case Op::Neg: return static_cast<int64_t>(uint64_t{0} - arg(0));
    case Op::FloorDiv:
    case Op::Mod:
    case Op::Min:
    case Op::Max:
    case Op::Eq:
    case Op::Ne:
    case Op::Lt:
    case Op::Le: break;
  }
  ADD_FAILURE() << "plain_wrapping: not a ring-only tree: " << show(t);
  return 0;
}

// Constants near the ends of int64 exercise the structure of the simplifier: whatever it folds,
// the result prints and parses back to itself, and on +, -, * (exact modulo 2^64) it keeps the
// wrapped value. (// % min max and comparisons of values that overflow have no such promise:
// make_expr reasons over mathematical integers, e.g. (s0 - 5) % 3 -> (s0 + 1) % 3 is off at
// s0 = INT64_MAX.)
TEST(ExprTreeFuzz, ExtremeConstantsRoundTripAndWrapConsistentlyOnRingOps) {
  const FuzzConfig& cfg = config();
  SCOPED_TRACE(::testing::Message() << "KILN_FUZZ_SEED=" << cfg.seed);
  Gen gen(cfg.seed ^ 0xe7e7e7e7);
  gen.set_extreme(true);
  ExprFacts extreme_facts;
  extreme_facts.set_range("s0", {2, Range::kPosInf});
  extreme_facts.set_range("s1", {Range::kNegInf, INT64_MIN / 2});
  extreme_facts.set_range("s2", {INT64_MAX - 8, INT64_MAX});
  extreme_facts.set_multiple_of("s3", int64_t{1} << 62);
  for (int i = 0; i < cfg.iters; ++i) {
    const bool ring = gen.chance(50);
    gen.set_ring_only(ring);
    Tree t = gen.tree(static_cast<int>(gen.uniform(1, 4)), 4);
    Expr e = build(t);
    auto ctx = [&] { return "seed " + std::to_string(cfg.seed) + ", tree " + std::to_string(i) + ": " + show(t) + " -> " + e.str(); };
    ASSERT_EQ(parse_expr(e.str()), e) << ctx() << "\n  reads back as " << parse_expr(e.str()).str();
    // No value promise here, but the facts layer must stay total (and UB-free under UBSan).
    ASSERT_NO_THROW({
      simplify(e, extreme_facts);
      bound(e, extreme_facts);
      decide(e, extreme_facts);
    }) << ctx();
    if (!ring) continue;
    for (int b = 0; b < 4; ++b) {
      Values v = gen.values(12);
      ASSERT_EQ(eval_str(e, v), std::to_string(plain_wrapping(t, v))) << ctx() << " at " << show(v);
    }
  }
}

// ---- property 2: facts ------------------------------------------------------------------------

// Random facts that a witness binding satisfies, and a sampler of bindings satisfying them.
struct RandomFacts {
  ExprFacts facts;
  std::array<Range, kMaxSymbols> range;
  std::array<int64_t, kMaxSymbols> multiple{1, 1, 1, 1};

  RandomFacts(Gen& gen, int nsyms) {
    for (int s = 0; s < nsyms; ++s) {
      const Expr& sym = kSyms[s];
      const std::string& name = sym.symbol_name();
      int64_t w = gen.uniform(-6, 10);
      Range r;
      switch (gen.uniform(0, 4)) {
        case 0: break;                                               // unknown
        case 1: r = w >= 2 ? Range{2, Range::kPosInf} : Range{}; break;  // a dynamic size
        case 2: r.lo = w - gen.uniform(0, 6); break;
        case 3: r.hi = w + gen.uniform(0, 6); break;
        default: r = {w - gen.uniform(0, 6), w + gen.uniform(0, 6)}; break;
      }
      int64_t k = 1;
      if (gen.chance(40)) {
        const int64_t ks[] = {2, 3, 4, 6};
        int64_t pick = ks[gen.uniform(0, 3)];
        if (w % pick == 0) k = pick;
      }
      range[s] = r;
      multiple[s] = k;
      if (gen.chance(50)) {  // set directly
        if (!r.unbounded() || gen.chance(50)) facts.set_range(name, r);
        if (k != 1) facts.set_multiple_of(name, k);
        continue;
      }
      // Learned from guards, as ShapeEnv records them.
      if (r.is_const()) facts.learn(eq(sym, r.lo));
      if (r.lo != Range::kNegInf) facts.learn(gen.chance(50) ? le(r.lo, sym) : lt(r.lo - 1, sym));
      if (r.hi != Range::kPosInf) facts.learn(gen.chance(50) ? le(sym, r.hi) : lt(2 * sym, 2 * r.hi + 1));
      if (k != 1) facts.learn(eq(mod(sym, k), 0));
    }
  }
  // Values within [-12, 12] satisfying the facts (the witness keeps each set nonempty).
  Values sample(Gen& gen) const {
    Values v{};
    for (int s = 0; s < kMaxSymbols; ++s) {
      std::vector<int64_t> ok;
      for (int64_t x = -12; x <= 12; ++x)
        if (range[s].contains(x) && x % multiple[s] == 0) ok.push_back(x);
      v[s] = ok[static_cast<size_t>(gen.uniform(0, static_cast<int64_t>(ok.size()) - 1))];
    }
    return v;
  }
};

TEST(ExprTreeFuzz, FactsKeepValuesBoundsContainThemAndDecisionsAgree) {
  const FuzzConfig& cfg = config();
  SCOPED_TRACE(::testing::Message() << "KILN_FUZZ_SEED=" << cfg.seed);
  Gen gen(cfg.seed ^ 0x5eedfac7);
  int compared = 0, decided = 0, simplified = 0;
  for (int i = 0; i < cfg.iters; ++i) {
    const int nsyms = static_cast<int>(gen.uniform(3, 4));
    RandomFacts rf(gen, nsyms);
    for (int s = 0; s < kMaxSymbols; ++s) {  // learn() recorded what the guards say
      ASSERT_EQ(rf.facts.multiple_of(kSyms[s].symbol_name()), rf.multiple[s]) << "seed " << cfg.seed << ": " << rf.facts.str();
      ASSERT_EQ(rf.facts.range_of(kSyms[s].symbol_name()), rf.range[s]) << "seed " << cfg.seed << ": " << rf.facts.str();
    }
    Tree t = gen.tree(static_cast<int>(gen.uniform(1, 4)), nsyms);
    Tree u = gen.tree(static_cast<int>(gen.uniform(0, 2)), nsyms);
    const Op cmp = static_cast<Op>(gen.uniform(static_cast<int>(Op::Eq), static_cast<int>(Op::Le)));
    Tree pt{cmp, 0, {t, u}};
    Expr e = build(t), p = build(pt);
    Expr se = simplify(e, rf.facts), sp = simplify(p, rf.facts);
    Range re = bound(e, rf.facts), rse = bound(se, rf.facts);
    std::optional<bool> de = decide(e, rf.facts), dp = decide(p, rf.facts);
    simplified += se != e;
    decided += de.has_value() + dp.has_value();
    auto ctx = [&] {
      return "seed " + std::to_string(cfg.seed) + ", tree " + std::to_string(i) + ": " + show(pt) + "\n  facts: " +
             rf.facts.str() + "\n  e = " + e.str() + " -> " + se.str() + " bound " + re.str() + "\n  p = " + p.str() +
             " -> " + sp.str();
    };
    for (int b = 0; b < 8; ++b) {
      Values v = rf.sample(gen);
      auto want = plain(t, v);
      if (!want) continue;
      ++compared;
      ASSERT_EQ(eval_str(se, v), std::to_string(*want)) << ctx() << "\n  at " << show(v);
      ASSERT_TRUE(re.contains(*want)) << ctx() << "\n  at " << show(v) << ": " << *want;
      ASSERT_TRUE(rse.contains(*want)) << ctx() << "\n  at " << show(v) << ": " << *want << " not in " << rse.str();
      if (de) {
        ASSERT_EQ(*de, *want != 0) << ctx() << "\n  at " << show(v);
      }
      auto pv = plain(pt, v);
      if (!pv) continue;
      ASSERT_EQ(eval_str(sp, v), std::to_string(*pv)) << ctx() << "\n  at " << show(v);
      if (dp) {
        ASSERT_EQ(*dp, *pv != 0) << ctx() << "\n  at " << show(v);
      }
    }
  }
  // The facts do something: many trees simplify further and many predicates are decided.
  EXPECT_GT(compared, cfg.iters * 8 / 2);
  EXPECT_GT(simplified, cfg.iters / 10);
  EXPECT_GT(decided, cfg.iters / 10);
}

}  // namespace
}  // namespace kiln::ir::expr_fuzz
