// kiln/test/test_compile_matmul_epilogues.cpp — a product's bias and relu folded into its
// library call on the cpu (passes/matmul_epilogues.h; runtime/cpu/parallel_gemm.h GemmEpilogue).
//
// The plan shows one extern addmm_activation step where the product, the bias's kernel and
// relu's were; what the epilogue cannot compute as the ops do stays as it was (gelu's tanh form
// is a kernel on the cpu, relu of an f16/bf16 sum is relu of the rounded value, a maximum with
// -0.0 is not relu). Results equal the interpreter's exactly: the same f32 sum and the same
// maximum, NaN and infinities included, on every split of the product across threads.
#include "kiln/kiln.h"
#include "frontend/tracer.h"
#include "ir/text.h"
#include "passes/matmul_epilogues.h"
#include "runtime/config.h"
#include "runtime/debug/run_graph.h"
#include "runtime/thread_pool.h"
#include "test_support/linear_epilogues.h"
#include "test_support/plan.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

namespace kiln {
namespace {

using test::plan_of;
using test::epilogues::Fn;

// fn traced on `in` and run on `backend` ("cpu": compiled; "interpreter": the reference).
std::vector<Tensor> run_on(const Fn& fn, const std::vector<Tensor>& in, const char* backend) {
  const TracedProgram p = trace(fn, in);
  const rt::RunResult r = rt::run_graph(*p.graph, in, backend);
  if (!r.ok()) ADD_FAILURE() << backend << ": " << r.message;
  return r.outputs;
}

// The activations of a plan's addmm_activation steps, and its count of kernels.
std::pair<std::vector<std::string>, int> folded_steps(const ir::ExecPlan& plan) {
  std::vector<std::string> acts;
  int kernels = 0;
  for (const ir::PlanStep& st : plan.steps) {
    if (st.kind == ir::StepKind::Kernel) ++kernels;
    else if (st.op == ir::OpKind::addmm_activation) acts.push_back(st.attrs.get<std::string>(ir::OpKind::addmm_activation, "activation"));
  }
  return {acts, kernels};
}

// Bitwise equality of two f32 tensors, NaNs equal to NaNs (the interpreter's maximum gives a
// canonical NaN, the epilogue the sum's).
void expect_same_floats(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.sizes().vec(), want.sizes().vec());
  const std::vector<float> g = got.contiguous().to_vector<float>(), w = want.contiguous().to_vector<float>();
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i])) {
      EXPECT_TRUE(std::isnan(g[i])) << "element " << i;
      continue;
    }
    uint32_t gb = 0, wb = 0;
    std::memcpy(&gb, &g[i], 4);
    std::memcpy(&wb, &w[i], 4);
    ASSERT_EQ(gb, wb) << "element " << i << ": " << g[i] << " vs " << w[i];
  }
}

using test::epilogues::relu_linear;

TEST(CompileMatmulEpilogues, TheBiasAndReluFoldIntoTheProductsCall) {
  using test::epilogues::gelu_tanh_linear, test::epilogues::plain, test::epilogues::saved, test::epilogues::shared;
  const Fn explicit_relu = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{addmm_activation(in[2], in[0], in[1].t(), "relu")};
  };
  // relu written with its operands the other way round: max(0, -0.0) is +0.0, not the epilogue's.
  const Fn zero_first = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{maximum(zeros({6, 5}), linear(in[0], in[1], in[2]))};
  };
  // An f32 linear whose result is then rounded folds (only a widened f16/bf16 product does not).
  const Fn then_half = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{linear(in[0], in[1], in[2]).to(kHalf)};
  };
  // A maximum with -0.0 gives -0.0 for a negative sum, where relu's epilogue gives +0.0.
  const Fn negative_zero = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{maximum(linear(in[0], in[1], in[2]), full({6, 5}, -0.0))};
  };
  struct Case {
    const char* name;
    Fn fn;
    ScalarType dt;
    std::vector<int64_t> x;
    std::vector<std::string> folded;
    int kernels;
  };
  const std::vector<Case> cases = {
      {"relu(linear) f32", relu_linear, kFloat, {6, 8}, {"relu"}, 0},
      {"linear f32", plain, kFloat, {6, 8}, {"none"}, 0},
      {"addmm_activation relu f32", explicit_relu, kFloat, {6, 8}, {"relu"}, 0},
      {"linear of [2, 3, 8] f32", relu_linear, kFloat, {2, 3, 8}, {"relu"}, 0},
      {"gelu_tanh(linear) f32: gelu is a kernel", gelu_tanh_linear, kFloat, {6, 8}, {"none"}, 1},
      // f16/bf16: the sum is rounded by a kernel, which adds the bias (and applies relu) for
      // free; nothing folds, and the widening kernels stay.
      {"relu(linear) f16", relu_linear, kHalf, {6, 8}, {}, 3},
      {"linear bf16", plain, kBFloat16, {6, 8}, {}, 3},
      {"pre-activation also returned", saved, kFloat, {6, 8}, {"none"}, 1},
      {"product also returned", shared, kFloat, {6, 8}, {}, 1},
      {"maximum(0, linear)", zero_first, kFloat, {6, 8}, {"none"}, 1},
      {"maximum(linear, -0.0)", negative_zero, kFloat, {6, 8}, {"none"}, 1},
      {"linear f32, then f16", then_half, kFloat, {6, 8}, {"none"}, 1},
      {"relu(linear) f64: no epilogue", relu_linear, kDouble, {6, 8}, {}, 1},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    manual_seed(5);
    const std::vector<Tensor> in{randn(k.x).to(k.dt), randn({5, 8}).to(k.dt), randn({5}).to(k.dt)};
    const ir::ExecPlan plan = plan_of(k.fn, in);
    const auto [folded, kernels] = folded_steps(plan);
    EXPECT_EQ(folded, k.folded) << plan.str();
    EXPECT_EQ(kernels, k.kernels) << plan.str();
    for (const ir::PlanStep& st : plan.steps)
      if (st.kind != ir::StepKind::Kernel && st.op == ir::OpKind::addmm_activation) {
        EXPECT_EQ(st.lowering, "openblas");
      }
    // Compiled, it computes what the function does eagerly (f32 exactly, as the ops' order is kept).
    const std::vector<Tensor> got = run_on(k.fn, in, "cpu");
    const std::vector<Tensor> want = run_on(k.fn, in, "interpreter");
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].dtype(), want[i].dtype());
      if (want[i].dtype() == kFloat) expect_same_floats(got[i], want[i]);
      else EXPECT_TRUE(allclose(got[i].to(kDouble), want[i].to(kDouble), 1e-2, 1e-2)) << got[i] << want[i];
    }
  }
}

// A node of an op the user lowers on the backend (register_lowering's extern call) is never
// folded away: with relu's maximum lowered only the bias folds; with the product lowered,
// nothing does.
TEST(CompileMatmulEpilogues, OpsAUserLowersAreNotFoldedAway) {
  const std::string text = R"(graph(%x : f32[6, 8], %w : f32[8, 5], %b : f32[5]) {
  %p : f32[6, 5] = mm(%x, %w)
  %e : f32[6, 5] = expand(%b, size=[6, 5])
  %s : f32[6, 5] = add(%p, %e)
  %z : f32[6, 5] = full(size=[6, 5], value=0, dtype=f32, device=cpu)
  %y : f32[6, 5] = maximum(%s, %z)
  return (%y)
})";
  auto acts = [&](std::function<bool(ir::OpKind)> lowered) {
    std::shared_ptr<ir::Graph> g = ir::parse_graph(text);
    passes::fold_matmul_epilogues(*g, {.relu = true, .user_lowered = std::move(lowered)});
    std::vector<std::string> out;
    for (const ir::Node* n : g->nodes())
      if (n->op() == ir::OpKind::addmm_activation) out.push_back(n->attr<std::string>("activation"));
    return out;
  };
  EXPECT_EQ(acts(nullptr), std::vector<std::string>{"relu"});
  EXPECT_EQ(acts([](ir::OpKind k) { return k == ir::OpKind::maximum; }), std::vector<std::string>{"none"});
  EXPECT_EQ(acts([](ir::OpKind k) { return k == ir::OpKind::mm; }), std::vector<std::string>{});
  EXPECT_EQ(acts([](ir::OpKind k) { return k == ir::OpKind::add; }), std::vector<std::string>{});
}

// Large enough to split across the pool, by rows and by columns, on each SGEMM; NaN, infinities
// and signed zeros in the sums: every element equals the interpreter's relu(x W^T + b).
TEST(CompileMatmulEpilogues, EverySplitMatchesTheInterpreterBitForBit) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const int threads_before = rt::num_threads();
  for (const char* sgemm : {"onednn", "kiln"}) {
    setenv("KILN_SGEMM", sgemm, 1);
    rt::reload_config_for_testing();
    for (const auto& [m, k, n] : {std::tuple{64, 512, 300}, {300, 64, 70}, {3, 40, 7}, {130, 96, 1000}}) {
      for (int threads : {1, 2}) {
        SCOPED_TRACE(fmt::format("KILN_SGEMM={} {}x{}x{} on {} threads", sgemm, m, k, n, threads));
        rt::set_num_threads(threads);
        manual_seed(m + n);
        Tensor x = randn({m, k}), w = randn({n, k}), b = randn({n});
        // A zero row of x and a -0.0 bias (a library's sums start from +0.0: the sum is +0.0);
        // a NaN bias, an infinite one and an infinite input give NaN and infinite sums.
        x.narrow(0, 1, 1).zero_();
        b.narrow(0, 0, 1).fill_(-0.0);
        b.narrow(0, 1, 1).fill_(nan);
        b.narrow(0, 2, 1).fill_(-inf);
        x.narrow(0, 2, 1).narrow(1, 0, 1).fill_(inf);
        const std::vector<Tensor> in{x, w, b};
        const ir::ExecPlan plan = plan_of(relu_linear, in);
        EXPECT_EQ(folded_steps(plan).first, std::vector<std::string>{"relu"}) << plan.str();
        const std::vector<Tensor> got = run_on(relu_linear, in, "cpu");
        expect_same_floats(got.at(0), run_on(relu_linear, in, "interpreter").at(0));
        // A transposed operand (read in place) and the bias alone.
        const Fn transposed = [](const std::vector<Tensor>& v) {
          return std::vector<Tensor>{linear(v[0].t().contiguous().t(), v[1], v[2])};
        };
        expect_same_floats(run_on(transposed, in, "cpu").at(0), run_on(transposed, in, "interpreter").at(0));
      }
    }
  }
  rt::set_num_threads(threads_before);
  unsetenv("KILN_SGEMM");
  rt::reload_config_for_testing();
}

}  // namespace
}  // namespace kiln
