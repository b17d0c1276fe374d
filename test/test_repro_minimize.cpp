// kiln/test/test_repro_minimize.cpp — run_graph on both backends, and the minimizer on injected failures.
//
// No real cpu-vs-interpreter bug is known, so the failures are injected: a runner that is the
// interpreter with one op's result perturbed, or one that throws an internal error when the
// graph holds a given op. The minimizer must shrink a ten-node graph to the guilty node.
#include "kiln/kiln.h"
#include "ir/graph_rebuild.h"
#include "ir/text.h"
#include "runtime/interpreter/interpreter.h"
#include "runtime/debug/minimize.h"
#include "runtime/debug/repro.h"
#include "runtime/debug/run_graph.h"

#include <gtest/gtest.h>

namespace kiln::rt {
namespace {

constexpr const char* kBig = R"(graph(%x : f32[8, 16], %y : f32[16], %z : f32[8, 16]) {
  %0 : f32[8, 16] = expand(%y, size=[8, 16])
  %1 : f32[8, 16] = add(%x, %0)
  %2 : f32[8, 16] = exp(%1)
  %3 : f32[8, 16] = mul(%2, %z)
  %4 : f32[8, 16] = tanh(%3)
  %5 : f32[8] = sum(%4, dims=[1], keepdim=false)
  %6 : f32[8, 16] = sub(%z, %x)
  %7 : f32[8] = amax(%6, dims=[1], keepdim=false)
  %8 : f32[8] = add(%5, %7)
  return (%8, %7)
}
)";

// The interpreter, except that every output of `op` is off by one.
GraphRunner perturbed_interpreter(ir::OpKind op) {
  return [op](const ir::Graph& g, const std::vector<Tensor>& inputs) {
    RunResult r;
    std::map<const ir::Value*, Tensor> env;
    for (size_t i = 0; i < inputs.size(); ++i) env[g.inputs()[i]] = inputs[i];
    for (const ir::Node* n : g.nodes()) {
      std::vector<Tensor> args;
      for (const ir::Value* v : n->inputs()) args.push_back(env.at(v));
      std::vector<Tensor> outs = interpret_op(n->op(), args, n->attrs());
      for (size_t k = 0; k < outs.size(); ++k) env[n->output(k)] = n->op() == op ? outs[k] + 1 : outs[k];
    }
    for (const ir::Value* v : g.outputs()) r.outputs.push_back(env.at(v));
    return r;
  };
}

bool has_op(const ir::Graph& g, ir::OpKind op) {
  for (const ir::Node* n : g.nodes())
    if (n->op() == op) return true;
  return false;
}

TEST(ReproRunGraph, CpuAndInterpreterAgree) {
  auto g = ir::parse_graph(kBig);
  const std::vector<Tensor> in = default_inputs(*g);
  const RunResult cpu = run_graph(*g, in, "cpu"), ref = run_graph(*g, in, "interpreter");
  ASSERT_TRUE(cpu.ok()) << cpu.message;
  ASSERT_TRUE(ref.ok()) << ref.message;
  EXPECT_EQ(compare_runs(cpu, ref), "");
  EXPECT_EQ(classify(cpu, ref), DiffKind::None);
}

TEST(ReproRunGraph, SymbolicGraphsAreSpecialized) {
  auto g = ir::parse_graph("graph(%x : f32[s0, 4]) {\n  %0 : f32[s0, 4] = exp(%x)\n  return (%0)\n}\n");
  const Tensor x = arange(12, TensorOptions(kFloat)).reshape({3, 4}) / 10;
  const RunResult cpu = run_graph(*g, {x}, "cpu");
  ASSERT_TRUE(cpu.ok()) << cpu.message;
  EXPECT_EQ(cpu.outputs[0].sizes().vec(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(compare_runs(cpu, run_graph(*g, {x}, "interpreter")), "");
  EXPECT_EQ(ir::print_graph(*specialize_graph(*g, {x})),
            "graph(%x : f32[3, 4]) {\n  %0 : f32[3, 4] = exp(%x)\n  return (%0)\n}\n");
}

TEST(ReproRunGraph, AGraphThatHoldsOnlyAtOtherSizesFailsAtTheseSizes) {
  // The parser accepts a reshape of [1] to [s0*s0] and a slice to s0*s0 of [s0]: whether the
  // element counts agree or the end is past the size depends on s0. At s0 = 3000 both read
  // outside their input, which segfaulted `kiln check` on the interpreter; each backend now
  // refuses the node with its shape function's error.
  const Tensor one = ones({1}, TensorOptions(kFloat)), b = ones({3000}, TensorOptions(kFloat));
  auto reshape = ir::parse_graph(
      "graph(%a : f32[1], %b : f32[s0]) {\n  %0 : f32[s0*s0] = reshape(%a, size=[s0*s0])\n"
      "  %1 : f32[s0*s0] = exp(%0)\n  return (%1)\n}\n");
  auto slice = ir::parse_graph(
      "graph(%b : f32[s0]) {\n  %0 : f32[s0*s0] = slice(%b, dim=0, start=0, end=s0*s0, step=1)\n"
      "  %1 : f32[s0*s0] = exp(%0)\n  return (%1)\n}\n");
  for (const char* backend : {"interpreter", "cpu"}) {
    const RunResult r = run_graph(*reshape, {one, b}, backend);
    EXPECT_EQ(r.status, RunResult::Status::UserError) << backend;
    EXPECT_NE(r.message.find("[reshape] shape '[9000000]' is invalid for input of size 1"), std::string::npos)
        << backend << ": " << r.message;
    // At s0 = 1 the same graph is valid and runs.
    const RunResult ok = run_graph(*reshape, {one, one}, backend);
    ASSERT_TRUE(ok.ok()) << backend << ": " << ok.message;
    EXPECT_FLOAT_EQ(ok.outputs[0].item<float>(), std::exp(1.0f));
    const RunResult s = run_graph(*slice, {b}, backend);
    EXPECT_EQ(s.status, RunResult::Status::UserError) << backend;
    EXPECT_NE(s.message.find("[slice]"), std::string::npos) << backend << ": " << s.message;
  }
  // Inputs that do not fit the graph's input types are refused on both backends: the cpu used
  // to retype a static size to the tensor's and run another graph.
  auto fixed = ir::parse_graph(
      "graph(%a : f32[100000], %b : f32[s0], %c : f32[s0, 2*s0]) {\n  %0 : f32[100000] = exp(%a)\n"
      "  return (%0)\n}\n");
  const Tensor c = ones({3, 6}, TensorOptions(kFloat));
  const std::vector<std::pair<std::vector<Tensor>, std::string>> bad = {
      {{one, ones({3}, TensorOptions(kFloat)), c}, "input 0 dim 0 should be 100000, got 1"},
      {{ones({100000}, TensorOptions(kFloat)), ones({4}, TensorOptions(kFloat)), c},
       "input 2 dim 0: symbol s0 is 3 here but 4 elsewhere"},
      {{ones({100000}, TensorOptions(kFloat)), ones({3}, TensorOptions(kFloat)), ones({3, 5}, TensorOptions(kFloat))},
       "input 2 dim 1 should be 2*s0 = 6, got 5"},
  };
  for (const auto& [inputs, message] : bad)
    for (const char* backend : {"interpreter", "cpu"}) {
      const RunResult r = run_graph(*fixed, inputs, backend);
      EXPECT_EQ(r.status, RunResult::Status::UserError) << backend;
      EXPECT_NE(r.message.find(message), std::string::npos) << backend << ": " << r.message;
    }
}

TEST(ReproRunGraph, FailuresAreClassified) {
  auto g = ir::parse_graph(kBig);
  const RunResult bad = run_graph(*g, {ones({2}, TensorOptions(kFloat))}, "cpu");
  EXPECT_EQ(bad.status, RunResult::Status::UserError);
  EXPECT_NE(bad.message.find("takes 3 inputs"), std::string::npos) << bad.message;
  EXPECT_THROW(run_graph(*g, {}, "tpu"), Error);
}

TEST(ReproRunGraph, CompareRunsSaysWhatDiffers) {
  RunResult a, b;
  a.outputs = {tensor({1.0f, 2.0f, NAN}), tensor({1, 2})};
  b.outputs = {tensor({1.0f, 2.5f, NAN}), tensor({1, 2})};
  int k = -2;
  EXPECT_EQ(compare_runs(a, b, {}, &k), "output 0: 1 of 3 elements differ, max abs diff 0.5 at index 1 (2 vs 2.5)");
  EXPECT_EQ(k, 0);
  b.outputs[0] = tensor({1.0f, 2.0f, NAN});
  EXPECT_EQ(compare_runs(a, b), "");
  b.outputs[1] = tensor({1, 3});
  EXPECT_EQ(compare_runs(a, b), "output 1: 1 of 2 elements differ, first at index 1 (2 vs 3)");
  b.outputs[1] = tensor({1.0f, 2.0f});
  EXPECT_EQ(compare_runs(a, b), "output 1: dtype i64 vs f32");
}

TEST(ReproMinimize, PerturbedOpShrinksToOneNode) {
  auto g = ir::parse_graph(kBig);
  const std::vector<Tensor> in = default_inputs(*g);
  FailurePredicate pred = backends_differ(*g, in, backend_runner("interpreter"), perturbed_interpreter(ir::OpKind::mul));
  MinimizeResult m = minimize(*g, in, pred);
  EXPECT_EQ(m.nodes_before, 9u);
  EXPECT_LE(m.nodes_after, 2u) << ir::print_graph(*m.graph);
  EXPECT_TRUE(has_op(*m.graph, ir::OpKind::mul)) << ir::print_graph(*m.graph);
  EXPECT_EQ(m.graph->outputs().size(), 1u);
  for (const Tensor& t : m.inputs) EXPECT_EQ(t.numel(), 1) << ir::print_graph(*m.graph);
  EXPECT_TRUE(pred(*m.graph, m.inputs));
  EXPECT_FALSE(m.out_of_budget);
  // Deterministic: the same result again.
  MinimizeResult again = minimize(*g, in, pred);
  EXPECT_EQ(ir::print_graph(*again.graph), ir::print_graph(*m.graph));
  EXPECT_EQ(write_tensors(again.inputs), write_tensors(m.inputs));
}

TEST(ReproMinimize, InternalErrorOnOneBackendShrinksToTheOp) {
  auto g = ir::parse_graph(kBig);
  const std::vector<Tensor> in = default_inputs(*g);
  GraphRunner crashes_on_exp = [](const ir::Graph& cg, const std::vector<Tensor>& ci) {
    if (has_op(cg, ir::OpKind::exp)) {
      RunResult r;
      r.status = RunResult::Status::InternalError;
      r.message = "internal error: exp is broken";
      return r;
    }
    return run_graph(cg, ci, "interpreter");
  };
  FailurePredicate pred = backends_differ(*g, in, crashes_on_exp, backend_runner("interpreter"));
  MinimizeResult m = minimize(*g, in, pred);
  EXPECT_EQ(m.nodes_after, 1u) << ir::print_graph(*m.graph);
  EXPECT_TRUE(has_op(*m.graph, ir::OpKind::exp));
  for (const Tensor& t : m.inputs) EXPECT_EQ(t.numel(), 1);
}

TEST(ReproMinimize, CustomPredicateAndBudget) {
  auto g = ir::parse_graph(kBig);
  const std::vector<Tensor> in = default_inputs(*g);
  int calls = 0;
  FailurePredicate has_amax = [&](const ir::Graph& cg, const std::vector<Tensor>&) {
    ++calls;
    return has_op(cg, ir::OpKind::amax);
  };
  MinimizeResult m = minimize(*g, in, has_amax);
  EXPECT_EQ(m.nodes_after, 1u) << ir::print_graph(*m.graph);
  EXPECT_EQ(m.attempts + 1, calls);
  MinimizeOptions tiny;
  tiny.max_attempts = 2;
  MinimizeResult cut = minimize(*g, in, has_amax, tiny);
  EXPECT_TRUE(cut.out_of_budget);
  EXPECT_EQ(cut.attempts, 2);
}

TEST(ReproMinimize, RefusesWhatDoesNotFail) {
  auto g = ir::parse_graph(kBig);
  const std::vector<Tensor> in = default_inputs(*g);
  EXPECT_THROW(backends_differ(*g, in, backend_runner("cpu"), backend_runner("interpreter")), Error);
  try {
    minimize(*g, in, [](const ir::Graph&, const std::vector<Tensor>&) { return false; });
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "[minimize] the original graph does not fail; nothing to minimize");
  }
}

TEST(ReproRebuild, ReplaceByInputOrFreshInputAndDropOutputs) {
  auto g = ir::parse_graph(kBig);
  const ir::Value* v2 = nullptr;  // exp
  const ir::Value* v1 = nullptr;  // add
  for (const ir::Node* n : g->nodes()) {
    if (n->op() == ir::OpKind::exp) v2 = n->output();
    if (n->op() == ir::OpKind::add && !v1) v1 = n->output();
  }
  ir::RebuildSpec spec;
  spec.replace[v2] = v1;  // exp bypassed
  spec.outputs = std::vector<size_t>{0};
  ir::Rebuilt r = ir::rebuild_graph(*g, spec);
  EXPECT_FALSE(has_op(*r.graph, ir::OpKind::exp));
  EXPECT_EQ(r.graph->num_nodes(), 8u);
  ir::RebuildSpec cut;
  cut.replace[v2] = nullptr;  // exp's result becomes an input: x, y and add die on that path
  cut.outputs = std::vector<size_t>{0};
  ir::Rebuilt c = ir::rebuild_graph(*g, cut);
  EXPECT_EQ(c.graph->inputs().size(), 3u);  // x (still used by sub), z, the fresh one
  EXPECT_EQ(c.input_origin.back(), v2);
  EXPECT_EQ(c.graph->num_nodes(), 6u) << ir::print_graph(*c.graph);
}

}  // namespace
}  // namespace kiln::rt
