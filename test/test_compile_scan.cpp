// kiln/test/test_compile_scan.cpp — cumsum, cumprod, cummax, cummin and logcumsumexp inside
// generated kernels.
//
// A compiled scan is a Scan group: each grid point walks one line along the scan's dim in an
// ordered stage, folding each element into a carried running value (ir::KOp::Carry) that it
// stores there, with the input computed inline; on the cpu, a scan along another dim than the
// last walks a tile of 64 columns at each position, their running values in a temporary. The
// arithmetic is the interpreter's, so the results equal the reference interpreter's bit for
// bit, NaN where it puts NaN, in every dtype and along every dim, compiled and eager (eager
// scans are the same kernels, shape-generic) — except logcumsumexp, whose exp and log1p are
// libmvec's in kernels and libm's in the interpreter (codegen_cpu/llvm_math.h): within a few
// ulp.
#include "kiln/kiln.h"
#include "runtime/pipeline.h"
#include "test_support/check.h"
#include "test_support/plan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace kiln {
namespace {

using test::plan_of;
// The elements as doubles, with every NaN the same (so that vectors compare with ==).
std::vector<double> values(const Tensor& t) {
  std::vector<double> v = t.to(kDouble).to_vector<double>();
  for (double& x : v)
    if (std::isnan(x)) x = 12345.678;  // no test value
  return v;
}

// Equal results; `libmvec_last`: the last result is logcumsumexp, whose exp and log1p the
// kernels compute with libmvec (in f64 for every float dtype): f64 within 16 ulp, the others
// within one rounding step, relative and absolute (NaN and infinities exactly).
void expect_same(const std::vector<Tensor>& got, const std::vector<Tensor>& want, bool libmvec_last = false) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(got[i].dtype(), want[i].dtype());
    EXPECT_EQ(got[i].sizes().vec(), want[i].sizes().vec());
    if (libmvec_last && i + 1 == want.size()) {
      const ScalarType t = want[i].dtype();
      const double tol = (t == kDouble ? 16 : 1) * finfo_eps(t);
      test::expect_close(got[i], want[i].to(kDouble).to_vector<double>(), tol, tol);
    } else
      EXPECT_EQ(values(got[i]), values(want[i]));
  }
}

std::vector<Tensor> scans(const Tensor& x, int64_t dim) {
  auto [mx, imx] = cummax(x, dim);
  auto [mn, imn] = cummin(x, dim);
  std::vector<Tensor> out = {cumsum(x, dim), cumprod(x, dim), mx, imx, mn, imn};
  if (is_floating_point(x.dtype())) out.push_back(logcumsumexp(x, dim));
  return out;
}

// fn run by the reference interpreter (the "interpreter" backend: interp_scan.cpp).
template <typename F> std::vector<Tensor> reference(const F& fn, const Tensor& x) {
  CompileOptions o;
  o.backend = "interpreter";
  return compile(fn, o)(x);
}

// Floating inputs hold NaN, -inf and +inf, and repeated values (ties of cummax / cummin).
Tensor sample(ScalarType dt) {
  manual_seed(11);
  const bool fp = is_floating_point(dt);
  std::vector<double> v = ((randn({60}) * 2).round() + (fp ? randn({60}) * 0.25 : zeros({60}))).to(kDouble).to_vector<double>();
  if (fp) {
    v[7] = v[30] = std::numeric_limits<double>::quiet_NaN();
    v[12] = -std::numeric_limits<double>::infinity();
    v[44] = std::numeric_limits<double>::infinity();
  }
  Tensor x = tensor(v, {3, 5, 4}, kDouble);
  if (dt == kUInt8) x = x.abs();
  return x.to(dt);
}

TEST(CompileScan, EveryScanEqualsEagerInEveryDtypeAlongEveryDim) {
  for (ScalarType dt : {kFloat, kDouble, kHalf, kBFloat16, kInt32, kInt64, kInt8, kUInt8, kBool}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    const Tensor x = sample(dt);
    for (int64_t dim : {0, 1, 2, -1}) {
      SCOPED_TRACE(dim);
      auto fn = [dim](const Tensor& a) { return scans(a, dim); };
      const std::vector<Tensor> want = reference(fn, x);
      const bool lcse = is_floating_point(dt);  // scans() ends with logcumsumexp
      expect_same(compile(fn)(x), want, lcse);
      expect_same(scans(x, dim), want, lcse);  // eager
      // A strided input (the transpose, read in place).
      auto gn = [dim](const Tensor& a) { return scans(a.transpose(0, 2), dim); };
      const std::vector<Tensor> want_t = reference(gn, x);
      expect_same(compile(gn)(x), want_t, lcse);
      expect_same(scans(x.transpose(0, 2), dim), want_t, lcse);
    }
  }
}

TEST(CompileScan, ScansRunInOrderedKernelsWithTheirInputInline) {
  const Tensor x = randn({6, 9});
  auto fn = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{cumsum(in[0] * 2 + 1, 1), std::get<1>(cummax(in[0].abs(), 0)), logcumsumexp(in[0], 0)};
  };
  const ir::ExecPlan plan = plan_of(fn, {x});
  size_t ordered = 0, carries = 0;
  for (const ir::PlanStep& st : plan.steps) {
    EXPECT_EQ(st.kind, ir::StepKind::Kernel) << plan.str();
    for (const ir::KStage& s : st.kernel.stages) {
      ordered += s.ordered ? 1 : 0;
      for (const ir::KInst& in : s.body) carries += in.kind == ir::KOp::Carry ? 1 : 0;
    }
  }
  // cumsum of the inline x * 2 + 1: one kernel; cummax's values and positions: one scan each.
  // Along dim 0 a cpu grid point walks a tile of 64 columns row by row, each column's running
  // value in a temporary (LowerOptions::line_tile); along the last dim it is carried.
  EXPECT_EQ(ordered, 4u) << plan.str();
  EXPECT_EQ(carries, 1u) << plan.str();
  // Nine columns are one tile (p0 < 1): its width min(-64*p0 + 9, 64) simplifies to 9.
  EXPECT_NE(plan.str().find("loop ordered [r0 < 6, r1 < 9]"), std::string::npos) << plan.str();
  EXPECT_NE(plan.str().find("carry 0 : f64"), std::string::npos) << plan.str();
  auto f = compile([&](const Tensor& a) { return fn({a}); });
  expect_same(f(x), reference([&](const Tensor& a) { return fn({a}); }, x));
  // Known values: cumsum of 2x + 1 along a row.
  const Tensor r = tensor({1.0, -2.0, 0.5});
  test::expect_close(f(r.reshape({1, 3}))[0], {3.0, 0.0, 2.0}, 0, 0);
}

TEST(CompileScan, KnownValues) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  auto f = compile([](const Tensor& a) { return scans(a, 0); });
  const std::vector<Tensor> r = f(tensor({2.0, nan, 5.0, 1.0}, kDouble));
  EXPECT_EQ(values(r[0]), values(tensor({2.0, nan, nan, nan}, kDouble)));
  EXPECT_EQ(values(r[2]), values(tensor({2.0, nan, nan, nan}, kDouble)));
  EXPECT_EQ(r[3].to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 1, 1}));
  const std::vector<Tensor> t = f(tensor({1.0, 3.0, 3.0, -inf, 2.0}, kDouble));
  EXPECT_EQ(t[0].to_vector<double>(), (std::vector<double>{1, 4, 7, -inf, -inf}));
  EXPECT_EQ(t[2].to_vector<double>(), (std::vector<double>{1, 3, 3, 3, 3}));
  EXPECT_EQ(t[3].to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 2, 2}));  // ties: the latest position
  EXPECT_EQ(t[4].to_vector<double>(), (std::vector<double>{1, 1, 1, -inf, -inf}));
  const std::vector<double> lse = t[6].to_vector<double>();
  EXPECT_DOUBLE_EQ(lse[1], std::log(std::exp(1.0) + std::exp(3.0)));
  EXPECT_DOUBLE_EQ(lse[4], std::log(std::exp(1.0) + 2 * std::exp(3.0) + std::exp(2.0)));
  // Integers wrap around as eager's do; bools accumulate as integers.
  auto p = compile([](const Tensor& a) { return cumprod(a, 0); });
  const Tensor big = full({5}, Scalar(int64_t{1000003}), kInt64);
  EXPECT_EQ(p(big).to_vector<int64_t>(), cumprod(big, 0).to_vector<int64_t>());
  const int64_t b3 = int64_t{1000003} * 1000003 * 1000003;
  EXPECT_EQ(p(big).to_vector<int64_t>()[2], b3);
  auto s = compile([](const Tensor& a) { return cumsum(a, 0); });
  EXPECT_EQ(s(tensor({true, false, true, true}, kBool)).to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 2, 3}));
}

TEST(CompileScan, EmptyLinesAndZeroDimTensors) {
  auto fn1 = [](const Tensor& a) { return scans(a, 1); };
  auto f = compile(fn1);
  for (const std::vector<int64_t>& sizes : {std::vector<int64_t>{3, 0}, std::vector<int64_t>{0, 4}, std::vector<int64_t>{2, 0, 3}}) {
    const Tensor x = zeros(sizes);
    expect_same(f(x), reference(fn1, x));
    expect_same(fn1(x), reference(fn1, x));
  }
  auto fn0 = [](const Tensor& a) { return scans(a, 0); };
  const Tensor s = full({}, 2.5);
  expect_same(compile(fn0)(s), reference(fn0, s));
  expect_same(fn0(s), reference(fn0, s));
}

TEST(CompileScan, DynamicLengthsAndLines) {
  CompileOptions o;
  o.dynamic = Dynamic::True;
  auto fn = [](const Tensor& a) { return scans(a, 1); };
  auto f = compile(fn, o);
  for (int64_t rows : {3, 7})
    for (int64_t len : {2, 5, 130}) {
      SCOPED_TRACE(len);
      const Tensor x = randn({rows, len});
      expect_same(f(x), reference(fn, x));
    }
  EXPECT_EQ(f.stats().compiles, 1);
}

}  // namespace
}  // namespace kiln
