// kiln/test/test_decomp_pass.cpp — composite ops traced as single nodes, the decompose pass,
// and text round trips of graphs holding composites.
//
// For every composite (with and without its optional tensors): the traced graph holds the
// composite node and no prim of its expansion; it verifies, prints and parses back to the
// same text; interpreting it equals the eager result exactly; after passes::decompose it
// holds prims only, verifies, round-trips, and still interprets to exactly the eager result
// (eager runs the same decomposition prim by prim). Then the pass's own behaviour: nested
// composites, uses redirected, the return value, and optional tensors in the text format.
#include "kiln/kiln.h"
#include "frontend/decompositions.h"
#include "ir/text.h"
#include "ir/verifier.h"
#include "passes/decompose.h"
#include "runtime/interpreter/interpreter.h"
#include "test_support/check.h"
#include "test_support/make.h"
#include "test_support/vector_math.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace kiln {
namespace {

using test::mk;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

struct Case {
  std::string name;
  ir::OpKind op;  // the composite the trace must hold
  Fn fn;
  std::vector<Tensor> inputs;
};

Tensor seq(std::vector<int64_t> shape, ScalarType dtype = kFloat, double start = -1.5, double step = 0.375) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(start + step * static_cast<double>(i));
  return mk<double>(v, std::move(shape)).to(dtype);
}

std::vector<Case> cases() {
  using K = ir::OpKind;
  Tensor target = test::make<int64_t>({2, 0, -100, 1});
  return {
      {"softmax", K::softmax, [](auto& in) { return softmax(in[0], 1); }, {seq({3, 4})}},
      {"softmax_f16", K::softmax, [](auto& in) { return softmax(in[0], 0); }, {seq({3, 4}, kHalf)}},
      {"softmax_dtype", K::softmax, [](auto& in) { return softmax(in[0], -1, kDouble); }, {seq({2, 3})}},
      {"log_softmax", K::log_softmax, [](auto& in) { return in[0].log_softmax(-1); }, {seq({2, 5})}},
      {"layer_norm", K::layer_norm, [](auto& in) { return layer_norm(in[0], {4}); }, {seq({3, 4})}},
      {"layer_norm_affine", K::layer_norm, [](auto& in) { return layer_norm(in[0], {2, 4}, in[1], in[2]); },
       {seq({3, 2, 4}), seq({2, 4}, kFloat, 0.5, 0.25), seq({2, 4}, kFloat, -1, 0.5)}},
      {"layer_norm_weight", K::layer_norm, [](auto& in) { return layer_norm(in[0], {4}, in[1]); },
       {seq({3, 4}, kBFloat16), seq({4}, kBFloat16)}},
      {"layer_norm_bias", K::layer_norm, [](auto& in) { return layer_norm(in[0], {4}, std::nullopt, in[1]); },
       {seq({3, 4}), seq({4})}},
      {"rms_norm", K::rms_norm, [](auto& in) { return rms_norm(in[0], {4}); }, {seq({3, 4}, kHalf)}},
      {"rms_norm_weight", K::rms_norm, [](auto& in) { return rms_norm(in[0], {4}, in[1], 1e-3); },
       {seq({3, 4}), seq({4})}},
      {"gelu", K::gelu, [](auto& in) { return gelu(in[0]); }, {seq({2, 3})}},
      {"gelu_tanh", K::gelu, [](auto& in) { return gelu(in[0], "tanh"); }, {seq({2, 3}).t()}},
      {"silu", K::silu, [](auto& in) { return silu(in[0]); }, {seq({2, 3}, kHalf)}},
      {"relu", K::relu, [](auto& in) { return relu(in[0]); }, {seq({2, 3})}},
      {"mean", K::mean, [](auto& in) { return in[0].mean({0, 2}, true); }, {seq({2, 3, 2})}},
      {"mean_f16", K::mean, [](auto& in) { return in[0].mean(); }, {seq({5}, kHalf)}},
      {"var", K::var, [](auto& in) { return var(in[0], {1}); }, {seq({2, 3})}},
      {"var_c0", K::var, [](auto& in) { return in[0].var({0}, Scalar(int64_t{0}), true); }, {seq({4, 2})}},
      {"linear", K::linear, [](auto& in) { return linear(in[0], in[1]); }, {seq({2, 3}), seq({4, 3})}},
      {"linear_bias", K::linear, [](auto& in) { return linear(in[0], in[1], in[2]); },
       {seq({2, 2, 3}), seq({4, 3}), seq({4})}},
      {"cross_entropy", K::cross_entropy, [t = target](auto& in) { return cross_entropy(in[0], t); }, {seq({4, 3})}},
      {"cross_entropy_w_ls", K::cross_entropy,
       [t = target](auto& in) { return cross_entropy(in[0], t, in[1], "sum", -100, 0.2); },
       {seq({4, 3}), seq({3}, kFloat, 0.5, 0.5)}},
      {"cross_entropy_none", K::cross_entropy,
       [](auto& in) { return cross_entropy(in[0], test::make<int64_t>({2, 0, 1, 1}), std::nullopt, "none", 0); },
       {seq({4, 3})}},
      {"matmul_1d_1d", K::matmul, [](auto& in) { return matmul(in[0], in[1]); }, {seq({3}), seq({3})}},
      {"matmul_2d_1d", K::matmul, [](auto& in) { return matmul(in[0], in[1]); }, {seq({2, 3}), seq({3})}},
      {"matmul_1d_3d", K::matmul, [](auto& in) { return matmul(in[0], in[1]); }, {seq({3}), seq({2, 3, 2})}},
      {"matmul_batched", K::matmul, [](auto& in) { return matmul(in[0], in[1]); },
       {seq({2, 1, 2, 3}), seq({3, 3, 2})}},
  };
}

bool only_prims(const ir::Graph& g) {
  for (const ir::Node* n : g.nodes())
    if (n->info().level != ir::OpLevel::Prim) return false;
  return true;
}

int count_op(const ir::Graph& g, ir::OpKind op) {
  int c = 0;
  for (const ir::Node* n : g.nodes()) c += n->op() == op;
  return c;
}

// The decompose pass with the frontend's rules, as the compile driver runs it.
bool decompose(ir::Graph& g, ir::OpLevel level = ir::OpLevel::Prim) {
  passes::DecomposeOptions o;
  o.level = level;
  o.expand = [](const ir::Node& n) { return trace_decomposition(n); };
  return passes::decompose(g, o);
}
void decompose_node(ir::Graph& g, ir::Node* n) { passes::inline_expansion(g, n, *trace_decomposition(*n)); }

// Eager ops (and composite nodes, which the interpreter runs as eager ops) compute exp, erf,
// tanh, sin, ... with kiln's own vector math or libmvec, within 4 ulp of the C library the interpreter's prims
// call (docs/compiler.md, "Vector math"); everything else must agree exactly.
bool uses_vector_math(const ir::Graph& g) {
  for (const ir::Node* n : g.nodes())
    if (test::uses_vector_math(n->op())) return true;
  return false;
}

void expect_agree(const Tensor& got, const Tensor& want, bool vector_math) {
  if (vector_math && (want.dtype() == kFloat || want.dtype() == kDouble)) {
    test::expect_close(got, test::doubles(want), 4 * finfo_eps(want.dtype()));
  } else {
    test::expect_exact(got, want.dtype(), test::doubles(want));
  }
}

std::vector<Tensor> run(const ir::Graph& g, const std::vector<Tensor>& in, const TracedProgram& p) {
  std::vector<Tensor> args = in;
  args.insert(args.end(), p.lifted.begin(), p.lifted.end());
  return rt::interpret(g, args);
}

TEST(DecompPass, TracedCompositesDecomposeToPrimsAndAgreeWithEager) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    Tensor eager = c.fn(c.inputs);
    TracedProgram p = trace([&](const std::vector<Tensor>& x) { return std::vector<Tensor>{c.fn(x)}; }, c.inputs);
    ir::Graph& g = *p.graph;
    ASSERT_NO_THROW(ir::verify(g));
    EXPECT_EQ(count_op(g, c.op), 1) << g.str();
    EXPECT_EQ(count_op(g, ir::OpKind::exp) + count_op(g, ir::OpKind::mm) + count_op(g, ir::OpKind::rsqrt), 0)
        << g.str();
    const std::string text = ir::print_graph(g);
    std::unique_ptr<ir::Graph> parsed;
    ASSERT_NO_THROW(parsed = ir::parse_graph(text)) << text;
    EXPECT_EQ(ir::print_graph(*parsed), text);
    const Tensor before = run(*parsed, c.inputs, p).at(0);

    EXPECT_TRUE(decompose(*parsed));
    const bool vector_math = uses_vector_math(*parsed);
    expect_agree(before, eager, vector_math);
    ASSERT_NO_THROW(ir::verify(*parsed)) << parsed->str();
    EXPECT_TRUE(only_prims(*parsed)) << parsed->str();
    const std::string decomposed = ir::print_graph(*parsed);
    std::unique_ptr<ir::Graph> reparsed;
    ASSERT_NO_THROW(reparsed = ir::parse_graph(decomposed)) << decomposed;
    EXPECT_EQ(ir::print_graph(*reparsed), decomposed);
    Tensor after = run(*reparsed, c.inputs, p).at(0);
    EXPECT_EQ(test::sizes_of(after), test::sizes_of(eager));
    expect_agree(after, eager, vector_math);
    EXPECT_FALSE(decompose(*reparsed));  // nothing left to do
  }
}

TEST(DecompPass, SoftmaxExpandsToTheExpectedPrims) {
  TracedProgram p = trace([](const std::vector<Tensor>& x) { return std::vector<Tensor>{softmax(x[0], 1)}; },
                          {seq({2, 3})});
  ASSERT_TRUE(decompose(*p.graph));
  EXPECT_EQ(count_op(*p.graph, ir::OpKind::amax), 1);
  EXPECT_EQ(count_op(*p.graph, ir::OpKind::exp), 1);
  EXPECT_EQ(count_op(*p.graph, ir::OpKind::sum), 1);
  EXPECT_EQ(count_op(*p.graph, ir::OpKind::reciprocal), 1);
  EXPECT_EQ(count_op(*p.graph, ir::OpKind::mul), 1);
  EXPECT_EQ(count_op(*p.graph, ir::OpKind::softmax), 0);
}

TEST(DecompPass, NestedCompositesNeedSeveralRounds) {
  Tensor target = test::make<int64_t>({1, 0});
  TracedProgram p = trace(
      [&](const std::vector<Tensor>& x) {
        // With label smoothing, cross_entropy is written over the whole log_softmax.
        return std::vector<Tensor>{cross_entropy(linear(x[0], x[1]), target, std::nullopt, "mean", -100, 0.1)};
      },
      {seq({2, 3}), seq({4, 3})});
  ir::Graph& g = *p.graph;
  EXPECT_EQ(count_op(g, ir::OpKind::linear), 1);
  EXPECT_EQ(count_op(g, ir::OpKind::cross_entropy), 1);
  // One node at a time: cross_entropy leaves a log_softmax node, linear a matmul node.
  std::vector<ir::Node*> composites;
  for (ir::Node* n : g.nodes())
    if (n->op() == ir::OpKind::cross_entropy || n->op() == ir::OpKind::linear) composites.push_back(n);
  for (ir::Node* n : composites) decompose_node(g, n);
  ASSERT_NO_THROW(ir::verify(g));
  EXPECT_EQ(count_op(g, ir::OpKind::log_softmax), 1);
  EXPECT_EQ(count_op(g, ir::OpKind::matmul), 1);
  EXPECT_TRUE(decompose(g));
  EXPECT_TRUE(only_prims(g));
  ASSERT_NO_THROW(ir::verify(g));
}

TEST(DecompPass, ToCoreStopsAtCoreOps) {
  // cross_entropy and linear are composite: they decompose; log_softmax (from cross_entropy with
  // label smoothing) is core and stays, as do the prims; matmul (from linear) is composite and goes on to mm.
  Tensor target = test::make<int64_t>({1, 0});
  TracedProgram p = trace(
      [&](const std::vector<Tensor>& x) {
        return std::vector<Tensor>{cross_entropy(linear(x[0], x[1]), target, std::nullopt, "mean", -100, 0.1) +
                                   gelu(x[0]).sum()};
      },
      {seq({2, 3}), seq({4, 3})});
  ir::Graph& g = *p.graph;
  const std::vector<Tensor> before = run(g, {seq({2, 3}), seq({4, 3})}, p);
  EXPECT_TRUE(decompose(g, ir::OpLevel::Core));
  ASSERT_NO_THROW(ir::verify(g));
  EXPECT_EQ(count_op(g, ir::OpKind::cross_entropy), 0) << g.str();
  EXPECT_EQ(count_op(g, ir::OpKind::linear), 0) << g.str();
  EXPECT_EQ(count_op(g, ir::OpKind::matmul), 0) << g.str();
  EXPECT_EQ(count_op(g, ir::OpKind::log_softmax), 1) << g.str();
  EXPECT_EQ(count_op(g, ir::OpKind::gelu), 1) << g.str();
  for (const ir::Node* n : g.nodes()) EXPECT_NE(n->info().level, ir::OpLevel::Composite) << n->info().name;
  EXPECT_FALSE(decompose(g, ir::OpLevel::Core));  // a fixed point
  test::expect_exact(run(g, {seq({2, 3}), seq({4, 3})}, p).at(0), kFloat, test::doubles(before.at(0)));
  EXPECT_TRUE(decompose(g));
  EXPECT_TRUE(only_prims(g));
}

TEST(DecompPass, UsesOfTheCompositeAreRedirected) {
  // The composite's result feeds two nodes and is itself a graph output.
  TracedProgram p = trace(
      [](const std::vector<Tensor>& x) {
        Tensor s = gelu(x[0]);
        return std::vector<Tensor>{s, s + 1, s * s};
      },
      {seq({2, 2})});
  Tensor x = seq({2, 2});
  std::vector<Tensor> before = run(*p.graph, {x}, p);
  ASSERT_TRUE(decompose(*p.graph));
  ASSERT_NO_THROW(ir::verify(*p.graph));
  std::vector<Tensor> after = run(*p.graph, {x}, p);
  ASSERT_EQ(after.size(), 3u);
  for (size_t i = 0; i < 3; ++i) expect_agree(after[i], before[i], uses_vector_math(*p.graph));
}

TEST(DecompPass, OptionalTensorsInTheTextFormat) {
  // Trailing optional tensors may be left out; the printer writes what the node has.
  const std::string text =
      "graph(%x : f32[2, 3], %w : f32[3]) {\n"
      "  %a : f32[2, 3] = layer_norm(%x, normalized_shape=[3], eps=1e-05)\n"
      "  %b : f32[2, 3] = layer_norm(%a, %w, normalized_shape=[3], eps=1e-05)\n"
      "  %c : f32[2, 3] = layer_norm(%b, %w, %w, normalized_shape=[3], eps=1e-05)\n"
      "  return (%c)\n"
      "}\n";
  std::unique_ptr<ir::Graph> g;
  ASSERT_NO_THROW(g = ir::parse_graph(text));
  EXPECT_EQ(ir::print_graph(*g), text);
  std::vector<size_t> counts;
  for (const ir::Node* n : g->nodes()) counts.push_back(n->inputs().size());
  EXPECT_EQ(counts, (std::vector<size_t>{1, 2, 3}));
  Tensor x = seq({2, 3}), w = seq({3}, kFloat, 0.5, 0.5);
  Tensor eager = layer_norm(layer_norm(layer_norm(x, {3}), {3}, w), {3}, w, w);
  test::expect_exact(rt::interpret(*g, {x, w}).at(0), kFloat, test::doubles(eager));
  ASSERT_TRUE(decompose(*g));
  test::expect_exact(rt::interpret(*g, {x, w}).at(0), kFloat, test::doubles(eager));

  // Missing the required input, or one tensor too many, is a parse error naming the op.
  std::string missing = "graph(%x : f32[3]) {\n  %a : f32[3] = linear(%x)\n  return (%a)\n}\n";
  EXPECT_NE(test::error_of([&] { ir::parse_graph(missing); }).find("linear"), std::string::npos);
  std::string extra =
      "graph(%x : f32[3]) {\n  %a : f32[3] = relu(%x, %x)\n  return (%a)\n}\n";
  EXPECT_NE(test::error_of([&] { ir::parse_graph(extra); }).find("too many tensor arguments for relu"),
            std::string::npos);
  // Shape functions check composite nodes read from text too.
  std::string bad =
      "graph(%x : f32[2, 3], %w : f32[2]) {\n"
      "  %a : f32[2, 3] = layer_norm(%x, %w, normalized_shape=[3], eps=1e-05)\n"
      "  return (%a)\n"
      "}\n";
  EXPECT_NE(test::error_of([&] { ir::parse_graph(bad); })
                .find("Expected weight to be of same shape as normalized_shape, but got weight of shape [2]"),
            std::string::npos);
}

TEST(DecompPass, PrimOnlyGraphIsUnchanged) {
  TracedProgram p = trace([](const std::vector<Tensor>& x) { return std::vector<Tensor>{exp(x[0]) + 1}; },
                          {seq({2})});
  const std::string before = p.graph->str();
  EXPECT_FALSE(decompose(*p.graph));
  EXPECT_EQ(p.graph->str(), before);
}

}  // namespace
}  // namespace kiln
