// kiln/test/test_compile_indexed.cpp — gather and index_select read, and scatter writes, inside
// generated kernels.
//
// A compiled gather, index_select, embedding or cross_entropy loads the index, checks it
// against the indexed dimension (ir::CheckKind::InBounds) and loads the input at the checked
// position (ir::value_expr), fused with what surrounds it: cross_entropy's per-row loss reads
// the target's logit in the row kernel of the row's maximum and sum. Results equal eager mode;
// an index out of bounds raises the eager op's error, with its value, dimension and size.
//
// A compiled scatter, scatter_add or scatter_reduce (and what decomposes into them: index_add,
// index_put, embedding's backward) is a Scatter group: each grid point walks one line of the
// index in order (an ordered stage), so repeated positions end as in eager mode — the last
// write wins, folds run in order — and self, the index and src are computed inline.
#include "kiln/kiln.h"
#include "ir/text.h"
#include "runtime/debug/run_graph.h"
#include "runtime/eager/eager.h"
#include "runtime/pipeline.h"
#include "test_support/check.h"
#include "test_support/interp.h"
#include "test_support/plan.h"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

namespace kiln {
namespace {

using test::plan_of;
using test::error_of;

std::vector<Tensor> reads(const Tensor& x, const Tensor& t) {
  return {x.gather(1, t.unsqueeze(1)) * 2, x.index_select(1, t) + 1, embedding(x.t(), t).neg(), cross_entropy(x, t),
          cross_entropy(x, t, std::nullopt, "none")};
}

TEST(CompileIndexed, ReadsEqualEagerAndRunInKernels) {
  manual_seed(3);
  const Tensor x = randn({6, 10});
  const Tensor t = tensor({9, 0, 3, 3, 7, 1}, kInt64);
  auto f = compile([](const Tensor& a, const Tensor& b) { return reads(a, b); });
  const std::vector<Tensor> want = reads(x, t), got = f(x, t);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) test::expect_close(got[i], want[i].to(kDouble).to_vector<double>(), 1e-6, 1e-6);

  // The plan: kernels alone, no library gather.
  TracedProgram p = trace([](const std::vector<Tensor>& in) { return reads(in[0], in[1]); }, {x, t});
  rt::DriverOptions o;
  o.name = "indexed";
  o.stop_before_compile = true;
  rt::Compilation c = rt::compile_graph(p.graph, *rt::find_backend("cpu"), o);
  for (const ir::PlanStep& st : c.plan.steps) EXPECT_EQ(st.kind, ir::StepKind::Kernel) << c.plan.str();
}

TEST(CompileIndexed, AnIndexOutOfBoundsRaisesTheEagerError) {
  const Tensor x = randn({4, 5});
  const Tensor bad = tensor({0, 5, 1, 2}, kInt64), negative = tensor({0, 1, -1, 2}, kInt64);
  auto g = compile([](const Tensor& a, const Tensor& b) { return a.gather(1, b.unsqueeze(1)); });
  auto s = compile([](const Tensor& a, const Tensor& b) { return a.index_select(1, b); });
  for (const Tensor& idx : {bad, negative}) {
    const std::string eager = error_of([&] { (void)x.gather(1, idx.unsqueeze(1)); });
    EXPECT_NE(eager, "<no error>");
    EXPECT_EQ(error_of([&] { (void)g(x, idx); }), eager);
    EXPECT_NE(error_of([&] { (void)s(x, idx); }).find("out of bounds for dimension 1 with size 5"), std::string::npos);
  }
  EXPECT_EQ(error_of([&] { (void)g(x, bad); }), "[gather] index 5 is out of bounds for dimension 1 with size 5");
  // The compiled function keeps working after the error.
  EXPECT_EQ(g(x, tensor({4, 3, 2, 1}, kInt64)).sizes().vec(), (std::vector<int64_t>{4, 1}));
}

size_t ordered_stages(const ir::ExecPlan& plan) {
  size_t n = 0;
  for (const ir::PlanStep& st : plan.steps)
    for (const ir::KStage& s : st.kernel.stages) n += s.ordered ? 1 : 0;
  return n;
}

// Writes with repeated positions in every line: 7 positions over 4 slots.
std::vector<Tensor> writes(const Tensor& self, const Tensor& idx, const Tensor& src) {
  std::vector<Tensor> out = {self.scatter(1, idx, src), self.scatter_add(1, idx, src + src), self.t().scatter_add(0, idx.t(), src.t())};
  for (const char* r : {"sum", "prod", "amax", "amin", "mean"})
    for (bool include_self : {true, false})
      if (self.dtype() != kBool || r != std::string("mean"))  // PyTorch has no bool mean: an error
        out.push_back(scatter_reduce(self, 1, idx, src, r, include_self));
  return out;
}

TEST(CompileIndexed, WritesEqualEagerAndRunInOrderedKernels) {
  manual_seed(5);
  const Tensor idx = tensor({0, 3, 3, 1, 0, 3, 2, 1, 1, 1, 0, 2, 2, 3, 3, 3, 0, 0, 0, 0, 1}, kInt64).reshape({3, 7});
  for (ScalarType dt : {kFloat, kHalf, kInt32, kInt8, kBool}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    const Tensor self = (randn({3, 4}) * 3).to(dt), src = (randn({3, 7}) * 3).to(dt);
    auto f = compile([](const Tensor& a, const Tensor& b, const Tensor& c) { return writes(a, b, c); });
    const std::vector<Tensor> want = writes(self, idx, src), got = f(self, idx, src);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      SCOPED_TRACE(i);
      EXPECT_EQ(got[i].to(kDouble).to_vector<double>(), want[i].to(kDouble).to_vector<double>());
    }
  }
  const Tensor flags = zeros({3, 4}, kBool);
  EXPECT_THROW((void)scatter_reduce(flags, 1, idx, flags.narrow(1, 0, 1).expand({3, 7}), "mean", true), Error);
  // Kernels alone; each write an ordered stage (two for a reset).
  const Tensor self = randn({3, 4}), src = randn({3, 7});
  const ir::ExecPlan plan = plan_of([](const std::vector<Tensor>& in) { return writes(in[0], in[1], in[2]); }, {self, idx, src});
  for (const ir::PlanStep& st : plan.steps) EXPECT_EQ(st.kind, ir::StepKind::Kernel) << plan.str();
  EXPECT_EQ(ordered_stages(plan), 13u + 5u) << plan.str();
}

TEST(CompileIndexed, AWriteComputesItsOperandsInline) {
  // index_add into zeros (embedding's backward): the zeros, the spread index and the scaled
  // source are computed by the one scatter kernel, which writes self's whole line first.
  const Tensor pos = tensor({2, 0, 2, 4}, kInt64), g = randn({4, 3});
  auto fn = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{index_add(zeros({5, 3}), 0, in[0], in[1] * 3)}; };
  const ir::ExecPlan plan = plan_of(fn, {pos, g});
  ASSERT_EQ(plan.steps.size(), 1u) << plan.str();
  EXPECT_EQ(plan.steps[0].kernel.stages.size(), 2u) << plan.str();
  EXPECT_TRUE(plan.steps[0].kernel.stages[1].ordered);
  auto f = compile([&](const Tensor& a, const Tensor& b) { return fn({a, b})[0]; });
  test::expect_close(f(pos, g), fn({pos, g})[0].to(kDouble).to_vector<double>(), 1e-6, 1e-6);
  std::vector<double> want(15, 0.0);
  const std::vector<float> gv = g.to_vector<float>();
  const int64_t rows[] = {2, 0, 2, 4};
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 3; ++c) want[static_cast<size_t>(rows[r] * 3 + c)] += 3.0 * gv[static_cast<size_t>(r * 3 + c)];
  test::expect_close(f(pos, g), want, 1e-6, 1e-6);

  // An index narrower than self outside dim: a first kernel copies self.
  const Tensor self = randn({4, 6}), idx = tensor({1, 1, 0, 5, 5, 5}, kInt64).reshape({2, 3}), src = randn({2, 3});
  const ir::ExecPlan narrow = plan_of([](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{in[0].scatter_add(1, in[1], in[2])};
  }, {self, idx, src});
  ASSERT_EQ(narrow.steps.size(), 2u) << narrow.str();
  EXPECT_EQ(ordered_stages(narrow), 1u);
  auto h = compile([](const Tensor& a, const Tensor& b, const Tensor& c) { return a.scatter_add(1, b, c); });
  EXPECT_EQ(h(self, idx, src).to_vector<float>(), self.scatter_add(1, idx, src).to_vector<float>());
}

// scatter_reduce's mean with a narrow index: a kernel copies self (counts at 1, or 0 without
// self), the ordered kernel sums and counts, and a last kernel divides; positions no value
// reached keep self. Integers divide with floor, as PyTorch's CPU kernel does.
TEST(CompileIndexed, AMeanCountsAndDividesInALastKernel) {
  const Tensor idx = tensor({1, 1, 0, 5, 5, 5, 2, 2, 2, 2, 0, 1}, kInt64).reshape({2, 6});
  for (ScalarType dt : {kFloat, kHalf, kInt32, kDouble}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    const Tensor self = (randn({4, 7}) * 5).to(dt), src = (randn({2, 6}) * 5).to(dt);
    for (bool include_self : {true, false}) {
      auto f = [include_self](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{scatter_reduce(in[0], 1, in[1], in[2], "mean", include_self)};
      };
      const ir::ExecPlan plan = plan_of(f, {self, idx, src});
      ASSERT_EQ(plan.steps.size(), 3u) << plan.str();
      auto g = compile([&](const Tensor& a, const Tensor& b, const Tensor& c) { return f({a, b, c})[0]; });
      EXPECT_EQ(g(self, idx, src).to(kDouble).to_vector<double>(), f({self, idx, src})[0].to(kDouble).to_vector<double>());
    }
  }
}

// Dynamic::True: the gradient's width is a symbol, but index_add's shape check pins it to the
// captured 8 (a guard `s1 == 8`), so the compiled graph says 8 and the scatter is a kernel
// rather than a library call over a materialized index; the guard still checks the width.
TEST(CompileIndexed, ADynamicEntryWhoseGuardsPinAWidthScattersInAKernel) {
  CompileOptions o;
  o.dynamic = Dynamic::True;
  auto f = compile([](const Tensor& g, const Tensor& ids) { return index_add(zeros({5, 8}), 0, ids, g); }, o);
  const Tensor g = randn({6, 8}), ids = tensor({4, 0, 4, 1, 2, 2}, kInt64);
  EXPECT_EQ(f(g, ids).to_vector<float>(), index_add(zeros({5, 8}), 0, ids, g).to_vector<float>());
  const std::string plan = f.explain(g, ids);
  EXPECT_NE(plan.find("loop ordered"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("extern scatter_add"), std::string::npos) << plan;
  EXPECT_NE(plan.find("arg0.size(1) == 8"), std::string::npos) << plan;
  // Another width fails the guard, and its trace raises index_add's error.
  EXPECT_NE(test::error_of([&] { (void)f(randn({6, 9}), ids); }), "<no error>");
}

TEST(CompileIndexed, AWriteOutOfBoundsRaisesTheEagerError) {
  const Tensor self = zeros({2, 4}), src = ones({2, 3});
  auto f = compile([](const Tensor& a, const Tensor& b, const Tensor& c) { return a.scatter_add(1, b, c); });
  for (const Tensor& idx : {tensor({0, 1, 4, 0, 0, 0}, kInt64).reshape({2, 3}), tensor({0, 1, 2, 3, -2, 0}, kInt64).reshape({2, 3})}) {
    const std::string eager = error_of([&] { (void)self.scatter_add(1, idx, src); });
    EXPECT_NE(eager.find("out of bounds for dimension 1 with size 4"), std::string::npos) << eager;
    EXPECT_EQ(error_of([&] { (void)f(self, idx, src); }), eager);
  }
  const Tensor ok = tensor({3, 3, 3, 0, 1, 2}, kInt64).reshape({2, 3});
  EXPECT_EQ(f(self, ok, src).to_vector<float>(), (std::vector<float>{0, 0, 0, 3, 1, 1, 1, 0}));
}

// Eager index prims are duck-sized programs (runtime/eager/eager_key.h, size_classes): one
// symbol per distinct size among the inputs' dims, so a gather is one kernel reading inside
// it, reused for every call with the same pattern of equal sizes. An index smaller than self
// is a kernel too: its sizes do not prove the other coordinates in bounds, so the kernel checks
// them (the shape check at the call already did). Results equal the reference interpreter's
// exactly, and errors are the ops' own.
TEST(CompileIndexed, EagerIndexPrimsRunAsDuckSizedPrograms) {
  using ir::OpKind;
  manual_seed(8);
  // Each op eagerly, against the interpreter's prim; returns the kernels built for them.
  auto check = [](int64_t rows, int64_t cols, int64_t irows, int64_t icols) {
    SCOPED_TRACE(testing::Message() << rows << "x" << cols << " index " << irows << "x" << icols);
    const Tensor x = randn({rows, cols}, kDouble), src = randn({irows, icols}, kDouble);
    const Tensor pos = randint(0, cols, {irows, icols}), rowpos = randint(0, rows, {irows, icols});
    const Tensor ids = randint(0, cols, {icols});
    const rt::EagerStats before = rt::eager_stats();
    std::vector<Tensor> got = {x.gather(1, pos), x.index_select(1, ids), x.scatter_add(0, rowpos, src), x.scatter(1, pos, src)};
    const char* folds[] = {"sum", "amax", "mean"};
    for (const char* r : folds) got.push_back(scatter_reduce(x, 1, pos, src, r, false));
    const rt::EagerStats after = rt::eager_stats();
    // Kernels alone: no library call, no interpreted step.
    EXPECT_EQ(after.interpreted_calls, before.interpreted_calls);
    std::vector<Tensor> want = {test::run(OpKind::gather, {x, pos}, {int64_t{1}}),
                                test::run(OpKind::index_select, {x, ids}, {int64_t{1}}),
                                test::run(OpKind::scatter_add, {x, rowpos, src}, {int64_t{0}}),
                                test::run(OpKind::scatter, {x, pos, src}, {int64_t{1}})};
    for (const char* r : folds) want.push_back(test::run(OpKind::scatter_reduce, {x, pos, src}, {int64_t{1}, std::string(r), false}));
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i].to_vector<double>(), want[i].to_vector<double>()) << i;
    return after.kernels_compiled - before.kernels_compiled;
  };
  EXPECT_GT(check(6, 9, 6, 9), 0);   // the index spans self: kernels
  EXPECT_EQ(check(11, 5, 11, 5), 0);  // the same pattern of equal sizes: the same programs
  EXPECT_GT(check(6, 9, 4, 3), 0);    // a smaller index: kernels checking self's other coordinates
  EXPECT_EQ(check(7, 8, 3, 2), 0);    // ... reused for the same pattern
  check(5, 5, 5, 5);                  // one size for every dim
  // Errors are the ops' own.
  const Tensor x = randn({4, 5});
  EXPECT_EQ(error_of([&] { (void)x.gather(1, tensor({0, 5, 1, 2}, kInt64).reshape({4, 1})); }),
            "[gather] index 5 is out of bounds for dimension 1 with size 5");
  EXPECT_EQ(error_of([&] { (void)x.index_select(0, tensor({-1}, kInt64)); }),
            error_of([&] { (void)test::run(OpKind::index_select, {x, tensor({-1}, kInt64)}, {int64_t{0}}); }));
}

// PyTorch's 0-dim operands act as 1-element 1-D ones: the frontend records the prims on
// 1-element views of them, so they run as kernels like any other (no library call, none staged
// through the host on cuda: every step of the cpu's and the cuda backend's plans is a kernel),
// eager and compiled, with PyTorch's result shapes (torch 2.15). CudaGpu.IndexingOpsOnTheDevice
// runs them eagerly on the (emulated) device.
TEST(CompileIndexed, ZeroDimOperandsRunAsKernels) {
  using In = std::vector<Tensor>;
  // s: 0-dim, v: [3], i0 and i2: 0-dim positions, one: [1] position, t: 0-dim value.
  const In in = {scalar_tensor(5.0, kDouble), tensor({1.0, 2.0, 3.0}, kDouble), scalar_tensor(0, kInt64),
                 scalar_tensor(2, kInt64), tensor({0}, kInt64), scalar_tensor(7.0, kDouble)};
  struct Case {
    const char* what;
    std::function<Tensor(const In&)> fn;
    std::vector<int64_t> sizes;
    std::vector<double> values;
  };
  const std::vector<Case> cases = {
      {"gather 0-dim self, 0-dim index", [](const In& a) { return a[0].gather(0, a[2]); }, {}, {5}},
      {"gather 0-dim self, [1] index", [](const In& a) { return a[0].gather(-1, a[4]); }, {1}, {5}},
      {"gather [3] self, 0-dim index", [](const In& a) { return a[1].gather(0, a[3]); }, {}, {3}},
      {"scatter 0-dim", [](const In& a) { return a[0].scatter(0, a[2], a[5]); }, {}, {7}},
      {"scatter value, 0-dim index", [](const In& a) { return a[1].scatter(0, a[3], 7.0); }, {3}, {1, 2, 7}},
      {"scatter_add 0-dim index and src", [](const In& a) { return a[1].scatter_add(0, a[3], a[5]); }, {3}, {1, 2, 10}},
      {"scatter_reduce 0-dim self", [](const In& a) { return scatter_reduce(a[0], 0, a[4], a[5].reshape({1}), "amax"); }, {}, {7}},
      {"index_select 0-dim self", [](const In& a) { return a[0].index_select(0, a[4]); }, {}, {5}},
      {"index_select 0-dim index", [](const In& a) { return a[1].index_select(0, a[2] + 1); }, {1}, {2}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const Tensor eager = c.fn(in);  // index prims of rank >= 1: duck-sized one-node programs (kernels)
    EXPECT_EQ(eager.sizes().vec(), c.sizes);
    EXPECT_EQ(eager.to_vector<double>(), c.values);
    auto fn = [&](const In& a) { return In{c.fn(a)}; };
    for (const char* backend : {"cpu", "cuda"})
      for (const ir::PlanStep& st : plan_of(fn, in, backend).steps)
        EXPECT_EQ(st.kind, ir::StepKind::Kernel) << backend << ": " << ir::op_name(st.op) << " " << st.lowering;
    auto f = compile([&](const Tensor& a, const Tensor& b, const Tensor& c0, const Tensor& d, const Tensor& e, const Tensor& t) {
      return c.fn({a, b, c0, d, e, t});
    });
    const Tensor compiled = f(in[0], in[1], in[2], in[3], in[4], in[5]);
    EXPECT_EQ(compiled.sizes().vec(), c.sizes);
    EXPECT_EQ(compiled.to_vector<double>(), c.values);
  }
  const Tensor s = in[0], i0 = in[2];
  // The gradient flows through the views (d gather / d self: 1 at the position read).
  const Tensor x = scalar_tensor(5.0, kDouble).requires_grad_();
  const Tensor g = autograd::grad({x.gather(0, i0) * 3}, {x}).at(0);
  EXPECT_EQ(g.dim(), 0);
  EXPECT_EQ(g.item<double>(), 3.0);
  EXPECT_EQ(error_of([&] { (void)s.index_select(0, tensor({0, 0}, kInt64)); }),
            "[index_select] index_select(): Index to scalar can have only 1 value, got 2 value(s)");
  EXPECT_EQ(error_of([&] { (void)s.gather(0, scalar_tensor(1, kInt64)); }),
            "[gather] index 1 is out of bounds for dimension 0 with size 1");
}

// A graph whose sizes do not prove an index op's other coordinates in bounds (here one read
// from text, compiled for its symbols, which no trace related) reads and writes inside kernels
// that check those coordinates: sizes that break the rule raise the op's error instead of
// reading or writing outside a tensor. Under a trace, the shape function guards the relation
// instead, so a later call whose index outgrows self traces again and fails with PyTorch's
// message, and the kernel needs no check.
TEST(CompileIndexed, UnprovenCoordinatesAreCheckedInTheKernel) {
  // The graph compiled for the cpu with every size a parameter read off its inputs.
  auto compile_symbolic = [](const char* text, std::string* plan) {
    std::shared_ptr<ir::Graph> g = ir::parse_graph(text);
    rt::DriverOptions o;
    o.name = "unproven";
    for (size_t i = 0; i < g->inputs().size(); ++i)
      for (size_t d = 0; d < 2; ++d)
        o.params.emplace(g->inputs()[i]->type().sizes[d].symbol_name(), rt::ParamSource{static_cast<int>(i), static_cast<int>(d), false});
    rt::Compilation c = rt::compile_graph(std::move(g), *rt::find_backend("cpu"), o);
    EXPECT_TRUE(c.status.ok()) << c.status.error;
    *plan = c.plan.str();
    return std::shared_ptr<rt::Executable>(std::move(c.status.exe));
  };
  std::string gather_plan, scatter_plan;
  const auto gather = compile_symbolic(R"(graph(%in0 : f64[s0, s1], %in1 : i64[s2, s3]) {
  %0 : f64[s2, s3] = gather(%in0, %in1, dim=1)
  return (%0)
})", &gather_plan);
  const auto scatter = compile_symbolic(R"(graph(%in0 : f64[s0, s1], %in1 : i64[s2, s3], %in2 : f64[s4, s5]) {
  %0 : f64[s0, s1] = scatter_add(%in0, %in1, %in2, dim=0)
  return (%0)
})", &scatter_plan);
  // A gather of a row's sum in the kernel that computes it: fusion sees the checked
  // coordinate as data, as the lowering does, so the sum is materialized first.
  std::string reduced_plan;
  const auto reduced = compile_symbolic(R"(graph(%in0 : f64[s0, s1], %in1 : i64[s2, s3]) {
  %0 : f64[s0, 1] = sum(%in0, dims=[1], keepdim=true)
  %1 : f64[s0, s1] = expand(%0, size=[s0, s1])
  %2 : f64[s2, s3] = gather(%1, %in1, dim=1)
  return (%2)
})", &reduced_plan);
  EXPECT_NE(gather_plan.find("for gather dim 0"), std::string::npos) << gather_plan;
  EXPECT_NE(scatter_plan.find("for scatter_add dim 1"), std::string::npos) << scatter_plan;
  EXPECT_EQ(gather_plan.find("extern"), std::string::npos) << gather_plan;
  EXPECT_EQ(scatter_plan.find("extern"), std::string::npos) << scatter_plan;
  manual_seed(2);
  const Tensor x = randn({5, 4}, kDouble), small = randint(0, 4, {3, 2}), tall = randint(0, 4, {6, 2});
  EXPECT_EQ(gather->run({x, small}).at(0).to_vector<double>(), x.gather(1, small).to_vector<double>());
  EXPECT_EQ(reduced->run({x, small}).at(0).to_vector<double>(),
            x.sum(1, true).expand({5, 4}).gather(1, small).to_vector<double>());
  // Index rows 5 past self's 5: an error, not a read past self.
  EXPECT_EQ(error_of([&] { (void)gather->run({x, tall}); }), "[gather] index 5 is out of bounds for dimension 0 with size 5");
  const Tensor rows = randint(0, 5, {2, 3}), src = randn({2, 4}, kDouble), narrow_src = randn({2, 2}, kDouble);
  EXPECT_EQ(scatter->run({x, rows, src}).at(0).to_vector<double>(), x.scatter_add(0, rows, src).to_vector<double>());
  // The index is 3 wide, src 2: src's column 2 does not exist; self's dim 1 (4) is not passed.
  EXPECT_EQ(error_of([&] { (void)scatter->run({x, rows, narrow_src}); }),
            "[scatter_add] index 2 is out of bounds for dimension 1 with size 2");
  EXPECT_EQ(error_of([&] { (void)scatter->run({x.slice(1, 0, 2).contiguous(), rows, src}); }),
            "[scatter_add] index 2 is out of bounds for dimension 1 with size 2");

  // Under a trace the relation is a guard, and the kernel has no check of it.
  CompileOptions dyn;
  dyn.dynamic = Dynamic::True;
  auto f = compile([](const Tensor& a, const Tensor& i) { return a.gather(1, i) * 2; }, dyn);
  EXPECT_EQ(f(x, small).to_vector<double>(), (x.gather(1, small) * 2).to_vector<double>());
  const std::string explained = f.explain(x, small);
  EXPECT_NE(explained.find("arg1.size(0) <= arg0.size(0)"), std::string::npos) << explained;
  EXPECT_EQ(explained.find("for gather dim 0"), std::string::npos) << explained;
  const Tensor wide = randint(0, 4, {7, 3});
  EXPECT_EQ(error_of([&] { (void)f(x, wide); }),
            error_of([&] { (void)x.gather(1, wide); }) + "\n  (while tracing compiled function 'fn' called with (f64[5, 4], i64[7, 3]))");
}

// A failed check of a position along an empty dim has no position to fall back on: the kernel
// does not access the tensor there (the accesses at that position are masked), and raises the
// op's error. The empty self here lies at the start of a page that cannot be read, so a
// gather's read at position 0 would fault; the scatters write into fresh outputs, whose
// storage has room (CpuChecks.AFailedCheckAgainstABoundOfZeroTouchesNoMemory tests the store).
TEST(CompileIndexed, AFailedCheckAlongAnEmptyDimTouchesNoMemory) {
  const long page = sysconf(_SC_PAGESIZE);
  void* mem = mmap(nullptr, static_cast<size_t>(2 * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  char* guard = static_cast<char*>(mem) + page;
  ASSERT_EQ(mprotect(guard, static_cast<size_t>(page), PROT_NONE), 0);
  for (ScalarType dt : {kFloat, kDouble}) {
    Tensor empty = from_blob(guard, {3, 0}, TensorOptions(dt));
    const Tensor idx = zeros({3, 1}, kInt64), src = ones({3, 1}, TensorOptions(dt));
    EXPECT_EQ(error_of([&] { (void)empty.gather(1, idx); }), "[gather] index 0 is out of bounds for dimension 1 with size 0");
    EXPECT_EQ(error_of([&] { (void)empty.scatter(1, idx, src); }),
              "[scatter] index 0 is out of bounds for dimension 1 with size 0");
    EXPECT_EQ(error_of([&] { (void)empty.scatter_add(1, idx, src); }),
              "[scatter_add] index 0 is out of bounds for dimension 1 with size 0");
  }
  munmap(mem, static_cast<size_t>(2 * page));
}

// Eager constant_pad is a duck-sized program too (one kernel per pad and pattern of equal
// sizes; it ran on the interpreter before), and so is cat on cuda; the cpu copies a cat's
// slices with its library.
TEST(CompileIndexed, EagerPadIsADuckSizedKernel) {
  for (const std::vector<int64_t>& sizes : {std::vector<int64_t>{4, 7}, std::vector<int64_t>{9, 3}, std::vector<int64_t>{5, 5}}) {
    const Tensor x = randn(sizes, kDouble);
    const rt::EagerStats before = rt::eager_stats();
    const Tensor y = constant_pad_nd(x, {1, 2, 0, 3}, 0.5), z = constant_pad_nd(x, {-1, 1}, -2.0);
    EXPECT_EQ(rt::eager_stats().interpreted_calls, before.interpreted_calls);
    EXPECT_EQ(y.to_vector<double>(),
              test::run(ir::OpKind::constant_pad, {x}, {std::vector<int64_t>{1, 2, 0, 3}, Scalar(0.5)}).to_vector<double>());
    EXPECT_EQ(z.to_vector<double>(),
              test::run(ir::OpKind::constant_pad, {x}, {std::vector<int64_t>{-1, 1}, Scalar(-2.0)}).to_vector<double>());
  }
  const Tensor a = randn({3, 4}), b = randn({3, 2});
  EXPECT_EQ(cat({a, b}, 1).to_vector<float>(), test::run(ir::OpKind::cat, {a, b}, {int64_t{1}}).to_vector<float>());
}

}  // namespace
}  // namespace kiln
