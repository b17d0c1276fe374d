// kiln/test/test_ir_plan_text.cpp — the ExecPlan text format read back (ir::parse_plan).
//
// Plans of every kind the cpu backend makes (static and symbolic, with library calls and their
// attributes, interpreter fallbacks, random draws, views and memory slots) print, parse and
// print again to the same text, with the same buffers per step; a parsed plan runs to the same
// results as the plan it was printed from. Malformed plans are errors at their line:col, and
// no truncation or damage of a plan's text crashes the parser.
#include "codegen_cpu/kernel_codegen.h"
#include "kiln/kiln.h"
#include "ir/exec_plan.h"
#include "ir/shape_env.h"
#include "ir/text.h"
#include "runtime/pipeline.h"
#include "runtime/program.h"
#include "test_support/check.h"
#include "test_support/files.h"
#include "test_support/plan.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>

namespace kiln {
namespace {

namespace fs = std::filesystem;

// Which part of two kernels differs (for a failure's message).
std::string kernel_difference(const ir::Kernel& a, const ir::Kernel& b) {
  if (a.name != b.name) return "name";
  if (!(a.args == b.args)) return "args";
  if (a.params != b.params) return "params";
  if (a.grid != b.grid) return "grid";
  if (!(a.schedule == b.schedule)) return "schedule";
  for (size_t s = 0; s < std::min(a.stages.size(), b.stages.size()); ++s) {
    const ir::KStage &x = a.stages[s], &y = b.stages[s];
    if (x.kind != y.kind || x.extents != y.extents || x.ordered != y.ordered || !(x.vectorize == y.vectorize)) return fmt::format("stage {} head", s);
    for (size_t i = 0; i < std::min(x.body.size(), y.body.size()); ++i)
      if (!(x.body[i] == y.body[i])) return fmt::format("stage {} instruction {}: kind {} vs {}, dtype {} vs {}, arg {} vs {}, index {} vs {}, operands {} vs {}", s, i,
                           static_cast<int>(x.body[i].kind), static_cast<int>(y.body[i].kind), static_cast<int>(x.body[i].dtype),
                           static_cast<int>(y.body[i].dtype), x.body[i].arg, y.body[i].arg, x.body[i].index.str(),
                           y.body[i].index.str(), x.body[i].operands.size(), y.body[i].operands.size());
    if (x.reduce_op != y.reduce_op || x.yield != y.yield || x.result != y.result || x.acc_dtype != y.acc_dtype) return fmt::format("stage {} reduce", s);
  }
  return a.stages.size() != b.stages.size() ? "stage count" : "?";
}

// Parses p's text and checks that it prints back the same, step for step.
ir::ExecPlan round_trip(const ir::ExecPlan& p) {
  const std::string text = p.str();
  ir::ExecPlan q = ir::parse_plan(text);
  EXPECT_EQ(q.str(), text);
  EXPECT_EQ(q.params, p.params);
  EXPECT_EQ(q.random_draws, p.random_draws);
  EXPECT_EQ(q.buffers.size(), p.buffers.size());
  EXPECT_EQ(q.steps.size(), p.steps.size());
  for (size_t i = 0; i < std::min(q.steps.size(), p.steps.size()); ++i) {
    EXPECT_EQ(q.steps[i].kind, p.steps[i].kind) << "step " << i;
    EXPECT_EQ(q.steps[i].buffers, p.steps[i].buffers) << "step " << i;
    EXPECT_TRUE(q.steps[i].attrs == p.steps[i].attrs) << "step " << i;
    EXPECT_TRUE(q.steps[i].kernel == p.steps[i].kernel) << "step " << i << ": " << kernel_difference(q.steps[i].kernel, p.steps[i].kernel);
    EXPECT_EQ(q.steps[i].lowering, p.steps[i].lowering) << "step " << i;
  }
  for (size_t i = 0; i < std::min(q.buffers.size(), p.buffers.size()); ++i) {
    EXPECT_EQ(q.buffers[i].role, p.buffers[i].role) << "b" << i;
    EXPECT_EQ(q.buffers[i].type, p.buffers[i].type) << "b" << i;
    EXPECT_EQ(q.buffers[i].slot, p.buffers[i].slot) << "b" << i;
    EXPECT_EQ(q.buffers[i].base, p.buffers[i].base) << "b" << i;
    EXPECT_EQ(q.buffers[i].input_index, p.buffers[i].input_index) << "b" << i;
    EXPECT_EQ(q.buffers[i].donor_input, p.buffers[i].donor_input) << "b" << i;
    if (p.buffers[i].role != ir::BufferRole::Output) {
      EXPECT_EQ(q.buffers[i].strides, p.buffers[i].strides) << "b" << i;
    }
  }
  return q;
}

// The plan of a graph in text; its size symbols (s0, s1, ... in order) get made-up hints, as
// `kiln opt` gives them.
ir::ExecPlan plan_of_graph(const std::string& text, std::optional<ir::OpLevel> level = std::nullopt) {
  std::shared_ptr<ir::Graph> g = ir::parse_graph(text);
  ir::ShapeEnv env;  // decompositions trace, on the graph's symbols
  ir::ShapeEnvScope scope(&env);
  for (const ir::Value* in : g->inputs())
    for (const ir::Expr& e : in->type().sizes)
      if (e.is_symbol() && !env.hints().count(e.symbol_name())) (void)env.create_symbol(37, e.symbol_name(), /*duck=*/false);
  rt::DriverOptions o;
  o.name = "plan_text";
  o.stop_before_compile = true;
  o.level = level;
  o.params = rt::params_from_inputs(*g);
  o.hints = env.hints();
  return rt::compile_graph(g, *rt::find_backend("cpu"), o).plan;
}

TEST(PlanText, TheFusionCorpusRoundTrips) {
  int plans = 0;
  for (const fs::path& f : test::files_with_extension(fs::path(KILN_TEST_DATA_DIR) / "fusion_corpus", ".kir")) {
    SCOPED_TRACE(f.filename().string());
    round_trip(plan_of_graph(test::read_file(f)));
    ++plans;
  }
  EXPECT_GE(plans, 20);
}

// Symbolic sizes, a library product named by shape ([gemm by shape]) and, at the core level,
// a softmax on the interpreter with its attributes.
TEST(PlanText, SymbolicPlansAndFallbacksRoundTrip) {
  const std::string g = test::read_file(fs::path(KILN_TEST_DATA_DIR) / "opt_corpus" / "01_to_core.kir");
  const ir::ExecPlan prim = round_trip(plan_of_graph(g));
  EXPECT_FALSE(prim.params.empty()) << prim.str();
  const ir::ExecPlan core = round_trip(plan_of_graph(g, ir::OpLevel::Core));
  EXPECT_NE(core.str().find("fallback softmax [interpreter](b"), std::string::npos) << core.str();
  EXPECT_NE(core.str().find("{dim=1, dtype=f32}"), std::string::npos) << core.str();
}

TEST(PlanText, LibraryCallsRandomDrawsAndViewsRoundTrip) {
  manual_seed(3);
  // A convolution (oneDNN, with its seven attributes), a transposed weight read in place (a
  // view), dropout's draws (rng parameters), and a reduction over the lot.
  const ir::ExecPlan p = test::plan_of(
      [](const std::vector<Tensor>& in) {
        Tensor c = conv2d(in[0], in[1], {}, {2, 2}, {1, 1});
        Tensor l = matmul(c.flatten(1), in[2].t());
        return std::vector<Tensor>{dropout(relu(l), 0.25, true).sum({1})};
      },
      {randn({2, 3, 8, 8}), randn({4, 3, 3, 3}), randn({5, 64})});
  const ir::ExecPlan q = round_trip(p);
  EXPECT_GT(q.random_draws, 0) << q.str();
  EXPECT_NE(q.str().find("extern convolution"), std::string::npos) << q.str();
}

// A parsed plan is a plan: compiled and run, it gives what the original gives, bit for bit.
TEST(PlanText, AParsedPlanRunsLikeTheOriginal) {
  manual_seed(4);
  const std::vector<Tensor> in = {randn({16, 32}), randn({32, 24}), randn({24})};
  auto fn = [](const std::vector<Tensor>& x) {
    Tensor h = gelu(matmul(x[0], x[1]) + x[2]);
    return std::vector<Tensor>{softmax(h, -1), layer_norm(h, {24})};
  };
  const ir::ExecPlan p = test::plan_of(fn, in);
  const ir::ExecPlan q = round_trip(p);
  auto run = [&](const ir::ExecPlan& plan) {
    cpu::CodegenResult code = cpu::compile_kernels(plan.kernels());
    std::vector<ir::KernelFn> fns;
    for (const cpu::CompiledKernel& k : code.kernels) fns.push_back(k.fn);
    return rt::Program(plan, fns).run(in);
  };
  const std::vector<Tensor> want = run(p), got = run(q);
  ASSERT_EQ(got.size(), 2u);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(equal(got[i], want[i])) << "output " << i;
  EXPECT_TRUE(allclose(got[0], fn(in)[0], 1e-5, 1e-5));
}

// A temporary the interpreter computes (softmax, kept whole at the core level) lands in its
// memory slot, where the kernel that squares it reads it and writes over it (passes/plan.cpp).
TEST(PlanText, AKernelWritingOverAnInterpretedTemporaryReadsItsValues) {
  const ir::ExecPlan plan = plan_of_graph(R"(graph(%x : f32[6, 8], %w : f32[8, 5]) {
  %p : f32[6, 8] = softmax(%x, dim=1, dtype=f32)
  %q : f32[6, 8] = mul(%p, %p)
  %y : f32[6, 5] = mm(%q, %w)
  return (%y)
})", ir::OpLevel::Core);
  ASSERT_NE(plan.str().find("fallback softmax [interpreter](b"), std::string::npos) << plan.str();
  int temps = 0, slot = -1;
  bool shared = false;
  for (const ir::PlanBuffer& b : plan.buffers)
    if (b.role == ir::BufferRole::Temp) {
      shared = shared || b.slot == slot;
      slot = b.slot, ++temps;
    }
  ASSERT_EQ(temps, 2) << plan.str();
  EXPECT_TRUE(shared) << plan.str();  // the product's operand is the softmax's memory, squared in place
  manual_seed(5);
  const std::vector<Tensor> in = {randn({6, 8}), randn({8, 5})};
  cpu::CodegenResult code = cpu::compile_kernels(plan.kernels());
  std::vector<ir::KernelFn> fns;
  for (const cpu::CompiledKernel& k : code.kernels) fns.push_back(k.fn);
  const Tensor p = softmax(in[0], 1);
  EXPECT_TRUE(allclose(rt::Program(plan, fns).run(in)[0], mm(p * p, in[1]), 1e-6, 1e-6));
}

std::string parse_error(const std::string& text) {
  return test::error_of([&] { ir::parse_plan(text); });
}

const char* const kPlan = R"(b0: input f32[4] = arg0 strides [1]
b1: output f32[4]
kernel k0(b0 -> b1)
return b1

kernel k0(in0: f32, out0: out f32) grid[p0 < 4] {
  loop [] {
    %0 = load in0[p0] : f32
    store out0[p0], %0
  }
}
)";

TEST(PlanText, ErrorsNameTheLineAndWhatWasExpected) {
  EXPECT_EQ(parse_error(kPlan), "<no error>");
  auto with = [](std::string_view from, std::string_view to) {
    std::string t = kPlan;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  EXPECT_EQ(parse_error(with("b1: output", "b2: output")), "[parse] 2:1: buffer b2 out of order: expected b1");
  EXPECT_EQ(parse_error(with("b1: output", "b1: scratch")),
            "[parse] 2:5: unknown buffer role 'scratch'; expected input, temp, output or view");
  EXPECT_EQ(parse_error(with("k0(b0 -> b1)", "k0(b0 -> b7)")), "[parse] 3:17: b7 names a buffer 7, but there are 2");
  EXPECT_EQ(parse_error(with("k0(b0 -> b1)", "k0(b0, b1)")), "[parse] 3:15: expected '->' between a step's inputs and outputs");
  EXPECT_EQ(parse_error(with("kernel k0(b0", "kernel k9(b0")), "[parse] 3:1: kernel k9 is not defined after the plan");
  EXPECT_EQ(parse_error(with("k0(b0 -> b1)", "k0(b0, b0 -> b1)")),
            "[parse] 3:1: kernel k0 takes 2 arguments, the step lists 2 inputs and 1 outputs");
  EXPECT_EQ(parse_error(with("return b1", "return b1, b5")), "[parse] 4:12: b5 names a buffer 5, but there are 2");
  EXPECT_EQ(parse_error(with("strides [1]", "strides [1, 1]")), "[parse] 1:1: buffer b0 has 1 sizes but 2 strides");
  EXPECT_EQ(parse_error(with("kernel k0(b0 -> b1)", "extern mm(b0 -> b1)")), "[parse] plan: 1 kernels are defined, 0 run");
  EXPECT_EQ(parse_error(with("kernel k0(b0 -> b1)", "extern frob(b0 -> b1)")), "[parse] 3:8: unknown op 'frob'");
  EXPECT_EQ(parse_error(with("kernel k0(b0 -> b1)", "extern sum(b0 -> b1)")),
            "[parse] 4:1: expected the attributes of sum ('{name=value, ...}'), got 'return'");
  EXPECT_EQ(parse_error(with("    store out0[p0], %0", "    store in0[p0], %0")),
            "[parse] 6:1: kernel k0: store to in0, which is not an output");
}

// Every prefix of a plan's text and thousands of damaged copies: an error or a plan, never a
// crash (the sanitizer build runs this too).
TEST(PlanText, DamagedTextIsAnErrorNeverACrash) {
  manual_seed(5);
  const std::string text = test::plan_of(
                               [](const std::vector<Tensor>& in) {
                                 return std::vector<Tensor>{softmax(matmul(in[0], in[1]), -1), dropout(in[0], 0.5, true)};
                               },
                               {randn({8, 16}), randn({16, 8})})
                               .str();
  auto survives = [](const std::string& t) {
    try {
      (void)ir::parse_plan(t);
    } catch (const Error&) {
    }
  };
  for (size_t n = 0; n < text.size(); ++n) survives(text.substr(0, n));
  std::mt19937 rng(7);
  const std::string alphabet = "b0123456789[](){},:=-> %\nkernelinputtempslotreturnextern";
  for (int i = 0; i < 3000; ++i) {
    std::string t = text;
    for (int k = 0; k < 1 + i % 4; ++k) t[rng() % t.size()] = alphabet[rng() % alphabet.size()];
    survives(t);
  }
}

}  // namespace
}  // namespace kiln
