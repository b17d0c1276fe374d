// kiln/test/test_compile_random.cpp — random draws computed inside generated kernels.
//
// A compiled uniform or normal prim (rand, randn, dropout's mask) is an ir::KOp::Random
// instruction: element i of the Philox draw (seed, offset) of frontend/ops_random.h, computed
// inline wherever it is read, so dropout is one kernel. A call reserves one offset per draw of
// its plan, in graph order, as the eager ops would take them; the values then equal eager mode
// bit for bit in every floating dtype, and uniform's results stay below `high` where rounding
// to the dtype would reach it.
#include "kiln/kiln.h"
#include "frontend/ops_random.h"
#include "ir/graph.h"
#include "runtime/pipeline.h"
#include "test_support/check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace kiln {
namespace {

std::vector<Tensor> draws(const Tensor& x) { return {rand_like(x), randn_like(x), dropout(x, 0.3, true) * 2}; }

TEST(CompileRandom, DrawsEqualEagerBitForBit) {
  for (ScalarType dt : {kFloat, kDouble, kHalf, kBFloat16}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    const Tensor x = randn({37, 129}).to(dt);
    auto f = compile([](const Tensor& a) { return draws(a); });
    (void)f(x);  // traces (taking draws of its own) and compiles
    manual_seed(11);
    const std::vector<Tensor> got1 = f(x), got2 = f(x);
    manual_seed(11);
    const std::vector<Tensor> want1 = draws(x), want2 = draws(x);
    for (size_t i = 0; i < want1.size(); ++i) {
      SCOPED_TRACE(i);
      EXPECT_TRUE(equal(got1[i], want1[i]));
      EXPECT_TRUE(equal(got2[i], want2[i]));
      EXPECT_FALSE(equal(got1[i], got2[i]));
    }
    // The call reserved three offsets, as the eager ops took three: the next draw agrees.
    const Tensor after = rand({5});
    manual_seed(11);
    (void)draws(x), (void)draws(x);
    EXPECT_TRUE(equal(after, rand({5})));
  }
}

TEST(CompileRandom, DropoutIsOneKernelThatDrawsInline) {
  TracedProgram p = trace([](const std::vector<Tensor>& in) { return std::vector<Tensor>{dropout(in[0], 0.3, true)}; },
                          {randn({8, 16})});
  rt::DriverOptions o;
  o.name = "dropout";
  o.stop_before_compile = true;
  const ir::ExecPlan plan = rt::compile_graph(p.graph, *rt::find_backend("cpu"), o).plan;
  ASSERT_EQ(plan.steps.size(), 1u) << plan.str();
  EXPECT_EQ(plan.steps[0].kind, ir::StepKind::Kernel);
  EXPECT_EQ(plan.random_draws, 1);
  size_t random = 0;
  for (const ir::KStage& st : plan.steps[0].kernel.stages)
    for (const ir::KInst& in : st.body) random += in.kind == ir::KOp::Random ? 1 : 0;
  EXPECT_EQ(random, 1u) << plan.str();
}

// Eager rand and randn are generated kernels too (one per op, rank and dtype, drawing at the
// (seed, offset) the op took, from whichever generator it was given): every element equals the
// specification's, computed here directly.
template <typename T>
void check_eager_draws(ScalarType dt) {
  SCOPED_TRACE(std::string(dtype_name(dt)));
  for (const std::vector<int64_t>& size : {std::vector<int64_t>{1000}, std::vector<int64_t>{7, 33}, std::vector<int64_t>{}}) {
    Generator gen(1234);
    (void)gen.next_offset();
    const std::vector<double> u = rand(size, gen, TensorOptions(dt)).to(kDouble).to_vector<double>();
    const std::vector<double> n = randn(size, gen, TensorOptions(dt)).to(kDouble).to_vector<double>();
    ASSERT_EQ(gen.offset(), 3u);
    for (uint64_t i = 0; i < u.size(); ++i) {
      ASSERT_EQ(u[i], static_cast<double>(uniform_element<T>(0.0, 1.0, 1234, 1, i))) << "element " << i;
      ASSERT_EQ(n[i], static_cast<double>(normal_element<T>(0.0, 1.0, 1234, 2, i))) << "element " << i;
    }
  }
}

TEST(CompileRandom, EagerDrawsFollowTheSpecification) {
  check_eager_draws<float>(kFloat);
  check_eager_draws<double>(kDouble);
  check_eager_draws<Half>(kHalf);
  check_eager_draws<BFloat16>(kBFloat16);
  EXPECT_EQ(test::error_of([] { (void)rand({3}, TensorOptions(kInt32)); }).find("[rand]"), 0u);
}

// An eager dropout keeps the draw it took (its seed and offset attributes) on every call of a
// shape, so replaying after manual_seed gives the same masks, one offset per call; it is never
// run as a cached compiled program, which would reserve offsets of its own.
TEST(CompileRandom, EagerDropoutReplaysAfterManualSeed) {
  const Tensor x = ones({300});
  for (int round = 0; round < 3; ++round) {
    manual_seed(4);
    const Tensor a = dropout(x, 0.5, true), b = dropout(x, 0.5, true);
    EXPECT_EQ(default_generator().offset(), 2u);
    manual_seed(4);
    EXPECT_TRUE(equal(dropout(x, 0.5, true), a)) << "round " << round;
    EXPECT_TRUE(equal(dropout(x, 0.5, true), b)) << "round " << round;
    EXPECT_FALSE(equal(a, b));
  }
}

// uniform(low, high) where rounding to the dtype reaches high for about half the elements:
// those go one step down, as the specification says, and every element equals the reference.
template <typename T>
void check_uniform_bounds(ScalarType dt, double low, double high) {
  SCOPED_TRACE(std::string(dtype_name(dt)));
  auto g = std::make_shared<ir::Graph>();
  ir::Node* n = g->create(ir::OpKind::uniform, {},
                          ir::AttrList({ir::to_exprs({4096}), low, high, int64_t{0}, int64_t{0}, dt, Device()}));
  g->add_output(n->output());
  rt::DriverOptions o;
  o.name = "uniform_bounds";
  rt::Compilation c = rt::compile_graph(g, *rt::find_backend("cpu"), o);
  ASSERT_TRUE(c.status.ok()) << c.status.error;
  manual_seed(21);
  const Tensor r = c.status.exe->run({}).at(0).to(kDouble);
  const std::vector<double> got = r.to_vector<double>();
  // high lies less than one step of the dtype above low: every value rounds to low or to the
  // value above, which is >= high and must step down to low.
  int64_t rounded_up = 0;
  for (uint64_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i], static_cast<double>(uniform_element<T>(low, high, 21, 0, i))) << "element " << i;
    ASSERT_EQ(got[i], low) << "element " << i;
    const double u = std::is_same_v<T, double> ? uniform_f64(21, 0, i) : static_cast<double>(uniform_f32(21, 0, i));
    rounded_up += static_cast<double>(random_detail::round_to<T>(low + (high - low) * u)) >= high ? 1 : 0;
  }
  EXPECT_GT(rounded_up, 100);  // the step down was taken, not avoided
}

TEST(CompileRandom, UniformStaysBelowHighInEveryDtype) {
  check_uniform_bounds<float>(kFloat, 1.0, 1.0 + 1e-7);
  check_uniform_bounds<double>(kDouble, 1.0, std::nextafter(1.0, 2.0));
  check_uniform_bounds<Half>(kHalf, 1.0, 1.0009);
  check_uniform_bounds<BFloat16>(kBFloat16, 1.0, 1.007);
}

}  // namespace
}  // namespace kiln
