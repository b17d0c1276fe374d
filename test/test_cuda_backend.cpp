// kiln/test/test_cuda_backend.cpp — the "cuda" backend's plans and its errors, on any machine.
//
// The backend lowers with the cpu backend's passes; what differs is which steps are library
// calls: mm/bmm on cuBLASLt, gather and index_select read inside kernels, every other library
// prim staged through the host, and no Core op taken whole (attention decomposes into bmm and
// a fused softmax). Without a GPU its
// compile() reports that CUDA is not available instead of throwing.
#include "kiln/kiln.h"
#include "codegen_cuda/cuda_emitter.h"
#include "codegen_cuda/nvrtc.h"
#include "ir/text.h"
#include "runtime/debug/run_graph.h"
#include "runtime/pipeline.h"
#include "test_support/linear_epilogues.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace kiln {
namespace {

rt::Compilation plan_for_cuda(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn,
                              const std::vector<Tensor>& in, bool stop = true) {
  TracedProgram p = trace(fn, in);
  rt::DriverOptions o;
  o.name = "cuda_plan";
  o.stop_before_compile = stop;
  return rt::compile_graph(p.graph, *rt::find_backend("cuda"), o);
}

TEST(CudaBackend, MatmulOnCublasLtAndIndexedReadsInKernels) {
  const Tensor x = randn({8, 16}), w = randn({16, 4});
  const Tensor idx = tensor({0, 3, 1, 2, 2, 0, 1, 3}, kInt64).reshape({8, 1});
  rt::Compilation c = plan_for_cuda(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{relu(in[0].matmul(in[1])).gather(1, in[2]) + 1};
      },
      {x, w, idx});
  ASSERT_TRUE(c.has_plan);
  std::string mm;
  int kernels = 0, host = 0;
  for (const ir::PlanStep& st : c.plan.steps) {
    if (st.kind == ir::StepKind::Kernel) ++kernels;
    if (st.op == ir::OpKind::mm && st.kind == ir::StepKind::Extern) mm = st.lowering;
    if (st.kind != ir::StepKind::Kernel && st.op != ir::OpKind::mm) ++host;
  }
  EXPECT_EQ(mm, "cublaslt") << c.plan.str();
  EXPECT_EQ(host, 0) << "the gather is read in the kernel that adds 1:\n" << c.plan.str();
  EXPECT_EQ(kernels, 1) << c.plan.str();
  EXPECT_NE(c.plan.str().find("check %"), std::string::npos) << "the index is bounds-checked:\n" << c.plan.str();
}

// Integer products, which cuBLASLt does not compute, are generated kernels (Matmul groups: a
// thread per element of the result sums its k products); f32 and f64 call cuBLASLt (f64 on its
// 64F compute type).
TEST(CudaBackend, IntegerProductsAreKernelsAndFloatsCallCublasLt) {
  for (ScalarType dt : {kDouble, kInt32, kInt64, kFloat}) {
    const bool lt = dt == kFloat || dt == kDouble;
    SCOPED_TRACE(std::string(dtype_name(dt)));
    const Tensor a = randint(-5, 5, {2, 6, 8}).to(dt), w = randint(-5, 5, {2, 8, 3}).to(dt);
    rt::Compilation c = plan_for_cuda(
        [](const std::vector<Tensor>& in) { return std::vector<Tensor>{bmm(in[0], in[1]), mm(in[0][0], in[1][1])}; }, {a, w});
    ASSERT_TRUE(c.has_plan);
    int products = 0;  // Matmul kernels (f32 plans copy the selected operands for cuBLASLt)
    for (const ir::PlanStep& st : c.plan.steps) {
      if (st.kind != ir::StepKind::Kernel) {
        EXPECT_TRUE(lt) << c.plan.str();
        EXPECT_EQ(st.lowering, "cublaslt");
        continue;
      }
      if (!st.kernel.schedule.outer_reduction) continue;
      ++products;
      EXPECT_EQ(st.kernel.schedule.launch.kind, ir::LaunchKind::ThreadPerPoint) << c.plan.str();
      std::string why;
      if (!cuda::nvrtc_available(&why)) continue;
      const cuda::NvrtcResult r = cuda::compile_for_device(cuda::emit_cuda(st.kernel), 90);
      EXPECT_TRUE(r.ok) << r.log << r.source;
    }
    EXPECT_EQ(products, lt ? 0 : 2) << c.plan.str();
    if (!lt) {
      EXPECT_EQ(c.plan.steps.size(), 2u) << "the selected operands are read in place:\n" << c.plan.str();
    }
  }
}

// cross_entropy on a GPU is kernels alone: the per-row loss reads the target's logit through
// the checked index in the row kernel of the row's maximum and sum, then the mean; nothing is
// staged through the host (it was a host gather of the whole logits before).
TEST(CudaBackend, CrossEntropyRunsInKernelsOnly) {
  const Tensor x = randn({16, 100});
  const Tensor t = tensor({0, 99, 5, 7, 3, 2, 1, 0, 8, 9, 10, 11, 12, 13, 14, 15}, kInt64);
  for (const Tensor& weight : {Tensor(), randn({100}).abs()}) {
    rt::Compilation c = plan_for_cuda(
        [&](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{
              cross_entropy(in[0], in[1], weight.defined() ? std::optional<Tensor>(weight) : std::nullopt)};
        },
        {x, t});
    ASSERT_TRUE(c.has_plan);
    for (const ir::PlanStep& st : c.plan.steps)
      EXPECT_EQ(st.kind, ir::StepKind::Kernel) << "a step on the host:\n" << c.plan.str();
  }
}

TEST(CudaBackend, AttentionDecomposesIntoBmmAndAFusedSoftmax) {
  const Tensor q = randn({2, 8, 16}), k = randn({2, 8, 16}), v = randn({2, 8, 16});
  rt::Compilation c = plan_for_cuda(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{scaled_dot_product_attention(in[0], in[1], in[2])};
      },
      {q, k, v});
  int bmm = 0;
  for (const ir::PlanStep& st : c.plan.steps) {
    EXPECT_NE(st.op, ir::OpKind::scaled_dot_product_attention) << c.plan.str();
    if (st.kind == ir::StepKind::Extern && st.op == ir::OpKind::bmm) {
      ++bmm;
      EXPECT_EQ(st.lowering, "cublaslt");
    }
  }
  EXPECT_EQ(bmm, 2) << c.plan.str();
}

// Few results with long rows (passes/split_reductions.h): partials over chunks of the rows, then
// a reduction of the partials, so that the grid fills the device; the graph the plan is made from
// computes what the op does (run here on the interpreter).
TEST(CudaBackend, FewLongReductionsSplitIntoPartials) {
  manual_seed(3);
  const Tensor cols = randn({262144, 4}), rows = randn({4, 262144}).to(kHalf);
  auto fn = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{in[0].sum({0}), amax(in[1], {1}, /*keepdim=*/true), (in[0] * in[0]).mean({0}, true),
                               (in[1] > 3).any(1), in[0].sum({0, 1})};
  };
  const std::vector<Tensor> in{cols, rows};
  rt::Compilation c = plan_for_cuda(fn, in);
  ASSERT_TRUE(c.has_plan);
  std::map<std::vector<int64_t>, int> grids;  // partial kernels by grid
  for (const ir::PlanStep& st : c.plan.steps) {
    ASSERT_EQ(st.kind, ir::StepKind::Kernel) << c.plan.str();
    std::vector<int64_t> g;
    for (const ir::Expr& e : st.kernel.grid) g.push_back(e.maybe_const().value_or(-1));
    ++grids[g];
  }
  // Columns: 4 results of 262144 rows in 4096 chunks of 64 rows; rows: 4 results in 16 chunks of
  // 16384 elements (sum, mean's sum; amax, any).
  EXPECT_EQ(grids[(std::vector<int64_t>{4096, 4})], 2) << c.plan.str();
  EXPECT_EQ(grids[(std::vector<int64_t>{4, 16})], 2) << c.plan.str();
  const std::vector<Tensor> want = fn(in);
  const rt::RunResult got = rt::run_graph(*c.graph, in, "interpreter");
  ASSERT_TRUE(got.ok()) << got.message;
  ASSERT_EQ(got.outputs.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(got.outputs[i].sizes().vec(), want[i].sizes().vec());
    EXPECT_EQ(got.outputs[i].dtype(), want[i].dtype());
    EXPECT_TRUE(allclose(got.outputs[i].to(kDouble), want[i].to(kDouble), 1e-6, 1e-6)) << got.outputs[i] << want[i];
  }
  // The sum of all elements stays one reduction here: fusion splits a full reduction itself.
  EXPECT_EQ(ir::print_graph(*c.graph).find("f64[2048, 512]"), std::string::npos);
  // Few rows of 4194304: split to fill the device (64 chunks), then cut to chunks of 32768, so
  // that the partials' row kernel unrolls its 32 items a thread.
  rt::Compilation wide = plan_for_cuda(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0].any(1)}; }, {zeros({16, 4194304}, kBool)});
  ASSERT_TRUE(wide.has_plan);
  ASSERT_EQ(wide.plan.kernels().size(), 2u) << wide.plan.str();
  const ir::Kernel& partials = *wide.plan.kernels()[0];
  EXPECT_EQ(partials.grid.size(), 2u);
  EXPECT_EQ(partials.grid.back().maybe_const().value_or(-1), 128) << wide.plan.str();
  EXPECT_EQ(partials.schedule.launch.row_items, 32) << wide.plan.str();
  // Rows of 8192 stay whole, so that a row kernel that also normalizes stays one kernel.
  rt::Compilation ln = plan_for_cuda(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{layer_norm(in[0], {8192})}; }, {randn({64, 8192})});
  ASSERT_TRUE(ln.has_plan);
  EXPECT_EQ(ln.plan.kernels().size(), 1u) << ln.plan.str();
}

// A product's bias and gelu's tanh form fold into its cuBLASLt call (passes/matmul_epilogues.h;
// relu stays a kernel, since cuBLASLt's RELU epilogue maps NaN to 0): the plan is one extern
// step and no kernel (the bias row is read in place, not copied out as a
// matrix), an f16/bf16 linear keeps its low-precision operands
// (tensor cores; the sum rounds once), and what the pattern cannot take stays as it was. The
// lowered graph computes what the function does (run here on the interpreter, which decomposes
// addmm_activation again).
TEST(CudaBackend, LinearBiasAndActivationFoldIntoTheCublasLtCall) {
  using namespace test::epilogues;
  const Fn explicit_op = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{addmm_activation(in[2], in[0], in[1].t(), "gelu_tanh")};
  };
  const Fn full_self = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{addmm_activation(in[0].narrow(1, 0, 5), in[0], in[1].t(), "relu")};
  };
  // gelu's erf form has no epilogue: the bias folds and gelu is a kernel.
  const Fn gelu_erf = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{gelu(linear(in[0], in[1], in[2]))}; };
  // A bias along the columns (one value per row) is no epilogue's.
  const Fn column = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{relu(in[0].matmul(in[1].t()) + in[0].narrow(1, 0, 1))};
  };
  struct Case {
    const char* name;
    Fn fn;
    ScalarType dt;
    std::vector<int64_t> x;
    std::vector<std::string> folded;  // the activations of the addmm_activation steps
    int kernels;                      // -1: any number
  };
  const std::vector<Case> cases = {
      {"relu(linear) f32", relu_linear, kFloat, {6, 8}, {"none"}, 1},  // relu: a kernel (NaN)
      {"gelu_tanh(linear) f32", gelu_tanh_linear, kFloat, {6, 8}, {"gelu_tanh"}, 0},
      {"addmm_activation f32", explicit_op, kFloat, {6, 8}, {"gelu_tanh"}, 0},
      {"addmm_activation f16", explicit_op, kHalf, {6, 8}, {"gelu_tanh"}, 0},
      {"addmm_activation with a full self", full_self, kFloat, {6, 8}, {}, -1},
      {"linear f16", plain, kHalf, {6, 8}, {"none"}, 0},
      {"relu(linear) f16", relu_linear, kHalf, {6, 8}, {"none"}, 1},
      {"gelu_tanh(linear) bf16", gelu_tanh_linear, kBFloat16, {6, 8}, {"gelu_tanh"}, 0},
      {"linear of [2, 3, 8] f32", plain, kFloat, {2, 3, 8}, {"none"}, 0},
      {"gelu_tanh(linear of [2, 3, 8]) f16", gelu_tanh_linear, kHalf, {2, 3, 8}, {"gelu_tanh"}, 0},
      {"gelu(linear) f32", gelu_erf, kFloat, {6, 8}, {"none"}, 1},
      {"pre-activation also returned", saved, kFloat, {6, 8}, {"none"}, 1},
      {"product also returned", shared, kFloat, {6, 8}, {}, -1},
      {"bias along the columns", column, kFloat, {6, 8}, {}, -1},
      {"relu(linear) f64", relu_linear, kDouble, {6, 8}, {}, -1},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    manual_seed(5);
    const std::vector<Tensor> in{randn(k.x).to(k.dt), randn({5, 8}).to(k.dt), randn({5}).to(k.dt)};
    rt::Compilation c = plan_for_cuda(k.fn, in);
    ASSERT_TRUE(c.has_plan);
    std::vector<std::string> folded;
    int kernels = 0;
    for (const ir::PlanStep& st : c.plan.steps) {
      if (st.kind == ir::StepKind::Kernel) ++kernels;
      if (st.kind != ir::StepKind::Kernel && st.op == ir::OpKind::addmm_activation) {
        EXPECT_EQ(st.lowering, "cublaslt") << c.plan.str();
        folded.push_back(st.attrs.get<std::string>(ir::OpKind::addmm_activation, "activation"));
      }
    }
    EXPECT_EQ(folded, k.folded) << c.plan.str();
    if (k.kernels >= 0) {
      EXPECT_EQ(kernels, k.kernels) << c.plan.str();
    }
    // An f16/bf16 product keeps its operands: no widened copies, no f32 product.
    if (!k.folded.empty() && k.dt != kFloat) {
      EXPECT_EQ(c.plan.str().find("f32["), std::string::npos) << c.plan.str();
    }
    const std::vector<Tensor> want = k.fn(in);
    const rt::RunResult got = rt::run_graph(*c.graph, in, "interpreter");
    ASSERT_TRUE(got.ok()) << got.message;
    ASSERT_EQ(got.outputs.size(), want.size());
    // The folded low-precision form rounds once where the unfolded one rounds twice.
    const double tol = k.dt == kFloat ? 1e-5 : k.dt == kDouble ? 1e-12 : k.dt == kHalf ? 4e-3 : 3e-2;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got.outputs[i].dtype(), want[i].dtype());
      EXPECT_TRUE(allclose(got.outputs[i].to(kDouble), want[i].to(kDouble), tol, tol)) << got.outputs[i] << want[i];
    }
  }
}

TEST(CudaBackend, CompileWithoutAGpuReportsWhy) {
  if (cuda::is_available()) GTEST_SKIP() << "a GPU is present: test_cuda_gpu.cpp runs the backend";
  rt::Compilation c = plan_for_cuda([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 2}; },
                                    {randn({4})}, /*stop=*/false);
  EXPECT_FALSE(c.status.ok());
  EXPECT_NE(c.status.error.find("backend 'cuda' cannot compile 'cuda_plan"), std::string::npos) << c.status.error;
  EXPECT_NE(c.status.error.find("CUDA is not available: " + cuda::unavailable_reason()), std::string::npos)
      << c.status.error;
}

}  // namespace
}  // namespace kiln
