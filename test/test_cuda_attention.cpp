// kiln/test/test_cuda_attention.cpp — the fused attention kernel (runtime/cuda/cuda_attention.h).
//
// Everywhere: its CUDA C compiles with NVRTC for the architectures packages carry, and the cuda
// backend keeps f16 and bf16 attention whole for it (others decompose). On a device (a real one,
// or the emulated device of test/emulated_cuda, which runs the kernel's shuffle form of the
// tensor-core operations): eager and compiled attention agree with the math computed in f64 on
// the cpu, over ragged lengths, causal blocks, masks of both kinds with rows that see no key,
// NaN, broadcast batches, transposed views and decoding (keys split among blocks), with nothing
// staged through the host. The backward's kernels likewise: compiled, kept whole, and on a device
// the gradients of q, k and v (eager, compiled, and through autograd) agree with the math.
#include "codegen_cuda/cuda_attention_source.h"
#include "codegen_cuda/nvrtc.h"
#include "ir/exec_plan.h"
#include "kiln/kiln.h"
#include "runtime/backend.h"
#include "runtime/cuda/cuda_attention.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/pipeline.h"
#include "runtime/program.h"

#include "test_support/make.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace kiln {
namespace {

// The module compiles to cubins (so ptxas accepts its mma and ldmatrix) for each element type, a
// spread of head dims and the architectures packages carry.
TEST(CudaAttention, KernelCompilesToCubins) {
  std::string why;
  if (!cuda::nvrtc_available(&why)) GTEST_SKIP() << "NVRTC is not available: " << why;
  struct Module {
    ScalarType dt;
    int64_t e, ev;
    int sm;
  };
  for (const auto& [dt, e, ev, sm] : {Module{kHalf, 64, 64, 80}, Module{kHalf, 64, 64, 90}, Module{kBFloat16, 128, 128, 80},
                                      Module{kBFloat16, 128, 128, 90}, Module{kHalf, 20, 72, 90}, Module{kBFloat16, 1, 1, 80}}) {
    SCOPED_TRACE(::testing::Message() << dtype_name(dt) << " " << e << "x" << ev << " sm_" << sm);
    const cuda::NvrtcResult r = cuda::compile_for_device(cuda::attention_source({dt, e, ev, false}), sm);
    EXPECT_TRUE(r.ok) << r.log;
    EXPECT_FALSE(r.cubin.empty());
  }
  // The backward's module: both query tiles (64 rows; 32 past head dims of 64), odd head dims.
  for (const auto& [dt, e, ev, sm] : {Module{kHalf, 64, 64, 90}, Module{kBFloat16, 128, 128, 80}, Module{kHalf, 20, 72, 90}}) {
    SCOPED_TRACE(::testing::Message() << "backward " << dtype_name(dt) << " " << e << "x" << ev << " sm_" << sm);
    const cuda::NvrtcResult r = cuda::compile_for_device(cuda::attention_source({dt, e, ev, true}), sm);
    EXPECT_TRUE(r.ok) << r.log;
    EXPECT_FALSE(r.cubin.empty());
  }
}

// Packages name modules by their text; the backward's is a module of its own.
TEST(CudaAttention, ModulesParseBackTheirNames) {
  for (const cuda::AttentionModule& m : std::vector<cuda::AttentionModule>{{kHalf, 64, 64, false}, {kBFloat16, 20, 128, true}})
    EXPECT_EQ(cuda::AttentionModule::parse(m.str()), std::optional<cuda::AttentionModule>(m)) << m.str();
  EXPECT_EQ((cuda::AttentionModule{kBFloat16, 20, 128, true}.str()), "bf16 20 128 backward");
  for (const char* bad : {"f16 64", "f16 64 64 forward", "f32 64 64", "f16 64 256 backward", "f16 64 64backward"})
    EXPECT_FALSE(cuda::AttentionModule::parse(bad)) << bad;
}

std::vector<const ir::PlanStep*> attention_steps(const ir::ExecPlan& plan,
                                                 ir::OpKind op = ir::OpKind::scaled_dot_product_attention) {
  std::vector<const ir::PlanStep*> out;
  for (const ir::PlanStep& st : plan.steps)
    if (st.kind == ir::StepKind::Extern && st.op == op) out.push_back(&st);
  return out;
}

ir::ExecPlan cuda_plan(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  TracedProgram p = trace(
      [causal](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{scaled_dot_product_attention(in[0], in[1], in[2], std::nullopt, 0.0, causal)};
      },
      {q, k, v});
  rt::DriverOptions o;
  o.name = "attention_plan";
  o.stop_before_compile = true;
  return rt::compile_graph(p.graph, *rt::find_backend("cuda"), o).plan;
}

// Keys are split among blocks only when the query blocks leave most SMs idle, two tiles a split
// at least.
TEST(CudaAttention, KeysAreSplitWhenFewBlocksWouldLeaveTheDeviceIdle) {
  EXPECT_EQ(cuda::attention_splits(4096, 32, 132), 1);   // training shapes fill the device
  EXPECT_EQ(cuda::attention_splits(32, 64, 132), 9);     // 8 heads x 4 sequences decoding: ~2 blocks an SM
  EXPECT_EQ(cuda::attention_splits(32, 6, 132), 3);      // short rows: two tiles a split
  EXPECT_EQ(cuda::attention_splits(1, 1000, 132), cuda::kMaxAttentionSplits);
  EXPECT_EQ(cuda::attention_splits(8, 3, 132), 1);
  EXPECT_EQ(cuda::attention_key_tile(64, 64), 64);
  EXPECT_EQ(cuda::attention_key_tile(128, 64), 32);
}

// f16 and bf16 with head dims up to 128 stay one step for the fused kernel; f32, f64 and wider
// heads decompose into products and a fused softmax.
TEST(CudaAttention, TheCudaBackendKeepsWhatTheKernelComputesWhole) {
  for (ScalarType dt : {kHalf, kBFloat16}) {
    const Tensor q = randn({2, 4, 33, 64}).to(dt), kv = randn({2, 4, 17, 64}).to(dt);
    const ir::ExecPlan plan = cuda_plan(q, kv, kv, true);
    const std::vector<const ir::PlanStep*> steps = attention_steps(plan);
    ASSERT_EQ(steps.size(), 1u) << plan.str();
    EXPECT_EQ(steps[0]->lowering, "fused attention");
    EXPECT_EQ(plan.kernels().size(), 0u) << plan.str();
  }
  const Tensor wide = randn({2, 8, 256}).to(kHalf);
  for (const Tensor& q : {randn({2, 8, 64}), randn({2, 8, 64}).to(kDouble), wide}) {
    const ir::ExecPlan plan = cuda_plan(q, q, q, false);
    EXPECT_TRUE(attention_steps(plan).empty()) << plan.str();
  }
}

ir::ExecPlan cuda_backward_plan(const Tensor& q) {
  TracedProgram p = trace(
      [](const std::vector<Tensor>& in) {
        const double s = 1.0 / std::sqrt(static_cast<double>(in[0].size(-1)));
        AttentionGrads r = scaled_dot_product_attention_backward(in[1], in[0], in[0], in[0], in[1], std::nullopt, true, s);
        return std::vector<Tensor>{r.query, r.key, r.value};
      },
      {q, q});
  rt::DriverOptions o;
  o.name = "attention_backward_plan";
  o.stop_before_compile = true;
  return rt::compile_graph(p.graph, *rt::find_backend("cuda"), o).plan;
}

// So does the backward: one step for f16 and bf16, the decomposition's products otherwise.
TEST(CudaAttention, TheCudaBackendKeepsTheBackwardWholeToo) {
  for (ScalarType dt : {kHalf, kBFloat16}) {
    const ir::ExecPlan plan = cuda_backward_plan(randn({2, 4, 33, 64}).to(dt));
    const std::vector<const ir::PlanStep*> steps = attention_steps(plan, ir::OpKind::scaled_dot_product_attention_backward);
    ASSERT_EQ(steps.size(), 1u) << plan.str();
    EXPECT_EQ(steps[0]->lowering, "fused attention");
    EXPECT_EQ(plan.kernels().size(), 0u) << plan.str();
  }
  for (const Tensor& q : {randn({2, 8, 64}), randn({2, 8, 256}).to(kHalf)}) {
    const ir::ExecPlan plan = cuda_backward_plan(q);
    EXPECT_TRUE(attention_steps(plan, ir::OpKind::scaled_dot_product_attention_backward).empty()) << plan.str();
  }
}

#define KILN_SKIP_WITHOUT_GPU() \
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device: " << cuda::unavailable_reason()

using test::kGpu;

// "" when got (on any device) matches want within atol + rtol * |want|, NaN for NaN; else the
// first element that does not.
std::string mismatch(const Tensor& want, const Tensor& got, double tol) {
  if (want.sizes().vec() != got.sizes().vec()) return "sizes " + shape_str(got.sizes());
  const std::vector<double> w = want.to(kDouble).to_vector<double>(), g = got.cpu().to(kDouble).to_vector<double>();
  for (size_t i = 0; i < w.size(); ++i) {
    const bool ok = std::isnan(w[i]) ? std::isnan(g[i]) : std::abs(w[i] - g[i]) <= tol + tol * std::abs(w[i]);
    if (!ok) return "element " + std::to_string(i) + " is " + std::to_string(g[i]) + ", expected " + std::to_string(w[i]);
  }
  return "";
}

struct Case {
  Case(std::string n, Tensor q_, Tensor k_, Tensor v_, std::optional<Tensor> m = std::nullopt, bool c = false,
       std::optional<double> s = std::nullopt)
      : name(std::move(n)), q(std::move(q_)), k(std::move(k_)), v(std::move(v_)), mask(std::move(m)), causal(c), scale(s) {}
  std::string name;
  Tensor q, k, v;
  std::optional<Tensor> mask;
  bool causal;
  std::optional<double> scale;
};

// Cases in f32 on the cpu; each runs in f16 and bf16.
std::vector<Case> cases() {
  manual_seed(21);
  std::vector<Case> out;
  out.push_back(Case("ragged lengths", randn({2, 3, 70, 64}), randn({2, 3, 130, 64}), randn({2, 3, 130, 64})));
  out.push_back(Case{"causal, head dim 128", randn({1, 2, 100, 128}), randn({1, 2, 100, 128}), randn({1, 2, 100, 128}),
                 std::nullopt, true});
  out.push_back(Case{"causal, more queries than keys", randn({2, 90, 32}), randn({2, 40, 32}), randn({2, 40, 48}),
                 std::nullopt, true, 0.3});
  // A bool mask over [L, S] with row 5 seeing no key (zeros), rows of 20 elements (40 bytes:
  // the tile copies go element by element).
  Tensor allowed = rand({67, 75}) < 0.7;
  allowed.select(0, 5).fill_(false);
  out.push_back(Case("bool mask", randn({2, 67, 20}), randn({2, 75, 20}), randn({2, 75, 24}), allowed));
  // Added values over [B, 1, L, S] with -inf entries and a row of -inf.
  Tensor added = randn({2, 1, 40, 70});
  added = where(rand({2, 1, 40, 70}) < 0.2, full({}, -INFINITY), added);
  added.select(2, 7).fill_(-INFINITY);
  out.push_back(Case("added mask", randn({2, 3, 40, 16}), randn({2, 3, 70, 16}), randn({2, 3, 70, 16}), added));
  // Masks filled with bf16's lowest value (finfo.min, as Hugging Face fills them): a row of it
  // averages v evenly, one that mixes it with finite values ignores those keys (in f16 the
  // value is -inf).
  Tensor lowest = randn({24, 50});
  lowest.select(0, 3).fill_(-3.3895313892515355e38);
  lowest.select(0, 9).narrow(0, 0, 30).fill_(-3.3895313892515355e38);
  out.push_back(Case("lowest mask", randn({2, 24, 32}), randn({2, 50, 32}), randn({2, 50, 32}), lowest));
  // NaN in a query row and in a key: their rows are NaN.
  Tensor qn = randn({1, 1, 50, 16}), kn = randn({1, 1, 60, 16});
  qn.select(2, 3).select(-1, 2).fill_(NAN);
  out.push_back(Case("NaN", qn, kn, randn({1, 1, 60, 16})));
  // Broadcast batch dims: k and v shared by the first dim.
  out.push_back(Case("broadcast batch", randn({2, 3, 30, 32}), randn({1, 3, 80, 32}), randn({1, 3, 80, 32})));
  // Decoding: one query row (and few query blocks) over long rows of keys, split among blocks
  // whose shares are merged; with an added mask, one row of it all -inf (zeros).
  out.push_back(Case("decoding", randn({2, 2, 1, 64}), randn({2, 2, 400, 64}), randn({2, 2, 400, 64})));
  Tensor decode_mask = randn({4, 2, 500});
  decode_mask.select(1, 1).select(0, 2).fill_(-INFINITY);
  out.push_back(Case("decoding, added mask", randn({4, 2, 40}), randn({4, 500, 40}), randn({4, 500, 40}), decode_mask));
  // [B, L, H, E] projections transposed to [B, H, L, E]: read in place.
  out.push_back(Case{"transposed views", randn({2, 65, 4, 64}).transpose(1, 2), randn({2, 65, 4, 64}).transpose(1, 2),
                 randn({2, 65, 4, 64}).transpose(1, 2), std::nullopt, true});
  return out;
}

Tensor attention(const Case& c, const Tensor& q, const Tensor& k, const Tensor& v, const std::optional<Tensor>& mask) {
  return scaled_dot_product_attention(q, k, v, mask, 0.0, c.causal, c.scale);
}

// A case's inputs in `dt` (an added mask too), and the mask the f64 math takes.
struct Inputs {
  Inputs(const Case& c, ScalarType dt) : q(c.q.to(dt)), k(c.k.to(dt)), v(c.v.to(dt)), mask(c.mask), wide_mask(c.mask) {
    if (mask && mask->dtype() != kBool) {
      mask = mask->to(dt);
      wide_mask = mask->to(kDouble);
    }
  }
  Tensor q, k, v;
  std::optional<Tensor> mask, wide_mask;
};

// Eager and compiled attention on the device against the math in f64 on the cpu.
TEST(CudaGpu, FusedAttentionAgreesWithTheMath) {
  KILN_SKIP_WITHOUT_GPU();
  const int64_t staged = rt::staged_steps();
  for (const Case& c : cases())
    for (ScalarType dt : {kHalf, kBFloat16}) {
      SCOPED_TRACE(c.name + " " + std::string(dtype_name(dt)));
      const Inputs in(c, dt);
      const Tensor &q = in.q, &k = in.k, &v = in.v;
      const std::optional<Tensor>& mask = in.mask;
      const std::optional<Tensor>& wide_mask = in.wide_mask;
      const Tensor want = attention(c, q.to(kDouble), k.to(kDouble), v.to(kDouble), wide_mask);
      const double tol = dt == kHalf ? 1e-2 : 4e-2;
      std::optional<Tensor> dmask = mask ? std::optional<Tensor>(mask->to(kGpu)) : std::nullopt;
      const Tensor gq = q.to(kGpu), gk = k.to(kGpu), gv = v.to(kGpu);

      const int64_t before = rt::attention_kernel_launches();
      const Tensor eager = attention(c, gq, gk, gv, dmask);
      EXPECT_EQ(rt::attention_kernel_launches(), before + 1) << "eager attention did not run the fused kernel";
      EXPECT_EQ(eager.dtype(), dt);
      EXPECT_EQ(mismatch(want, eager, tol), "") << "eager";

      const int64_t before_compiled = rt::attention_kernel_launches();
      const Tensor compiled =
          dmask ? compile([&c](const Tensor& a, const Tensor& b, const Tensor& d, const Tensor& m) {
                    return attention(c, a, b, d, m);
                  })(gq, gk, gv, *dmask)
                : compile([&c](const Tensor& a, const Tensor& b, const Tensor& d) {
                    return attention(c, a, b, d, std::nullopt);
                  })(gq, gk, gv);
      EXPECT_EQ(rt::attention_kernel_launches(), before_compiled + 1) << "the compiled step did not run the fused kernel";
      EXPECT_EQ(mismatch(want, compiled, tol), "") << "compiled";
    }
  EXPECT_EQ(rt::staged_steps(), staged) << "attention was staged through the host";
}

// t summed to `sizes` over the dims that broadcast (leading dims, and dims of size 1).
Tensor reduce_to(Tensor t, const std::vector<int64_t>& sizes) {
  while (t.dim() > static_cast<int64_t>(sizes.size())) t = t.sum({0});
  for (int64_t d = 0; d < t.dim(); ++d)
    if (sizes[d] == 1 && t.size(d) != 1) t = t.sum({d}, true);
  return t;
}

// "" when got matches want within tol * (the largest |want| + |want|), NaN for NaN: gradients sum
// over every key or query, so their rounding grows with their scale.
std::string grad_mismatch(const Tensor& want, const Tensor& got, double tol) {
  const double top = want.isnan().any().item<bool>() ? where(want.isnan(), zeros({}, want.dtype()), want).abs().max().item<double>()
                                                     : want.abs().max().item<double>();
  if (want.sizes().vec() != got.sizes().vec()) return "sizes " + shape_str(got.sizes());
  const std::vector<double> w = want.to(kDouble).to_vector<double>(), g = got.cpu().to(kDouble).to_vector<double>();
  for (size_t i = 0; i < w.size(); ++i) {
    const bool ok = std::isnan(w[i]) ? std::isnan(g[i]) : std::abs(w[i] - g[i]) <= tol * (top + std::abs(w[i]));
    if (!ok) return "element " + std::to_string(i) + " is " + std::to_string(g[i]) + ", expected " + std::to_string(w[i]);
  }
  return "";
}

// The backward's kernels on the device (eager, compiled, and through autograd) against the
// decomposition's math in f64 on the cpu, over the forward's cases but the longest.
TEST(CudaGpu, FusedAttentionBackwardAgreesWithTheMath) {
  KILN_SKIP_WITHOUT_GPU();
  const int64_t staged = rt::staged_steps();
  std::vector<Case> all = cases();
  for (const Case& c : all) {
    if (c.name == "decoding" || c.name == "decoding, added mask" || c.name == "ragged lengths") continue;  // the forward's
    for (ScalarType dt : {kHalf, kBFloat16}) {
      SCOPED_TRACE(c.name + " " + std::string(dtype_name(dt)));
      const Inputs in(c, dt);
      const Tensor &q = in.q, &k = in.k, &v = in.v;
      const std::optional<Tensor>& mask = in.mask;
      const std::optional<Tensor>& wide_mask = in.wide_mask;
      const double s = c.scale.value_or(1.0 / std::sqrt(static_cast<double>(q.size(-1))));
      const Tensor o = attention(c, q.to(kDouble), k.to(kDouble), v.to(kDouble), wide_mask);
      const Tensor g = randn(o.sizes().vec()).to(dt);
      // The want from the f64 output; the device's from the device's own output.
      const AttentionGrads want = scaled_dot_product_attention_backward(
          g.to(kDouble), q.to(kDouble), k.to(kDouble), v.to(kDouble), o, wide_mask, c.causal, s);
      const double tol = dt == kHalf ? 1e-2 : 3e-2;
      std::optional<Tensor> dmask = mask ? std::optional<Tensor>(mask->to(kGpu)) : std::nullopt;
      const Tensor gq = q.to(kGpu), gk = k.to(kGpu), gv = v.to(kGpu), gg = g.to(kGpu);
      const Tensor go = attention(c, gq, gk, gv, dmask);
      auto check = [&](const AttentionGrads& got, const char* how) {
        EXPECT_EQ(got.query.dtype(), dt) << how;
        EXPECT_EQ(grad_mismatch(want.query, got.query, tol), "") << how << ": dq";
        EXPECT_EQ(grad_mismatch(want.key, got.key, tol), "") << how << ": dk";
        EXPECT_EQ(grad_mismatch(want.value, got.value, tol), "") << how << ": dv";
      };

      int64_t before = rt::attention_backward_kernel_launches();
      check(scaled_dot_product_attention_backward(gg, gq, gk, gv, go, dmask, c.causal, s), "eager");
      EXPECT_EQ(rt::attention_backward_kernel_launches(), before + 1) << "eager: not the fused kernels";

      before = rt::attention_backward_kernel_launches();
      auto grads = [causal = c.causal, s](const Tensor& g, const Tensor& q, const Tensor& k, const Tensor& v,
                                          const Tensor& o, const std::optional<Tensor>& m) {
        AttentionGrads r = scaled_dot_product_attention_backward(g, q, k, v, o, m, causal, s);
        return std::vector<Tensor>{r.query, r.key, r.value};
      };
      const std::vector<Tensor> compiled =
          dmask ? compile([&](const Tensor& g, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o,
                              const Tensor& m) { return grads(g, q, k, v, o, m); })(gg, gq, gk, gv, go, *dmask)
                : compile([&](const Tensor& g, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o) {
                    return grads(g, q, k, v, o, std::nullopt);
                  })(gg, gq, gk, gv, go);
      check({compiled.at(0), compiled.at(1), compiled.at(2)}, "compiled");
      EXPECT_EQ(rt::attention_backward_kernel_launches(), before + 1) << "compiled: not the fused kernels";

      // Autograd sums the gradients of broadcast batch dims to the inputs' shapes.
      before = rt::attention_backward_kernel_launches();
      const Tensor lq = gq.detach().requires_grad_(), lk = gk.detach().requires_grad_(), lv = gv.detach().requires_grad_();
      attention(c, lq, lk, lv, dmask).backward(gg);
      EXPECT_EQ(rt::attention_backward_kernel_launches(), before + 1) << "autograd: not the fused kernels";
      EXPECT_EQ(grad_mismatch(reduce_to(want.key, c.k.sizes().vec()), lk.grad(), tol), "") << "autograd: dk";
      EXPECT_EQ(grad_mismatch(want.query, lq.grad(), tol), "") << "autograd: dq";
      EXPECT_EQ(grad_mismatch(reduce_to(want.value, c.v.sizes().vec()), lv.grad(), tol), "") << "autograd: dv";
    }
  }
  EXPECT_EQ(rt::staged_steps(), staged) << "attention's backward was staged through the host";
}

// No key: zeros, as the products with an empty v are. No query: an empty result.
TEST(CudaGpu, FusedAttentionOfEmptyLengths) {
  KILN_SKIP_WITHOUT_GPU();
  const Tensor q = randn({2, 5, 16}).to(kHalf).to(kGpu), none = empty({2, 0, 16}, TensorOptions(kHalf).device(kGpu));
  const Tensor z = scaled_dot_product_attention(q, none, none);
  EXPECT_EQ(z.sizes().vec(), (std::vector<int64_t>{2, 5, 16}));
  EXPECT_EQ(z.cpu().to(kFloat).abs().sum().item<double>(), 0.0);
  EXPECT_EQ(scaled_dot_product_attention(none, q, q).numel(), 0);
  // The backward: no key gives zero dq, no query zero dk and dv.
  const double s = 0.25;
  AttentionGrads r = scaled_dot_product_attention_backward(z, q, none, none, z, std::nullopt, false, s);
  EXPECT_EQ(r.query.cpu().to(kFloat).abs().sum().item<double>(), 0.0);
  EXPECT_EQ(r.key.numel(), 0);
  const Tensor nothing = empty({2, 0, 16}, TensorOptions(kHalf).device(kGpu));
  r = scaled_dot_product_attention_backward(nothing, none, q, q, nothing, std::nullopt, false, s);
  EXPECT_EQ(r.key.sizes().vec(), (std::vector<int64_t>{2, 5, 16}));
  EXPECT_EQ(r.key.cpu().to(kFloat).abs().sum().item<double>(), 0.0);
  EXPECT_EQ(r.value.cpu().to(kFloat).abs().sum().item<double>(), 0.0);
}

}  // namespace
}  // namespace kiln
