// kiln/test/test_trace_basic.cpp — tracing records prims; the interpreter runs the recorded
// graph and agrees with eager execution; eager tensors are lifted into inputs by reference.
#include "kiln/kiln.h"
#include "ir/text.h"
#include "ir/verifier.h"
#include "runtime/interpreter/interpreter.h"
#include "test_support/make.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kiln {
namespace {

using ::testing::HasSubstr;
using test::make;
using test::values;

std::vector<Tensor> run(const TracedProgram& p, std::vector<Tensor> inputs) {
  inputs.insert(inputs.end(), p.lifted.begin(), p.lifted.end());
  return rt::interpret(*p.graph, inputs);
}

TEST(Trace, PointwiseChainRecordsPrimsAndMatchesEager) {
  Tensor a = make<float>({-2.f, -1.f, 0.f, 1.f, 2.f, 3.f}, {2, 3});
  Tensor b = make<float>({1.f, 2.f, 4.f});
  auto fn = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] / (abs(in[0]) + 1) * in[1]}; };
  TracedProgram p = trace(fn, {a, b});
  ir::verify(*p.graph);
  std::string text = p.graph->str();
  EXPECT_THAT(text, HasSubstr("abs("));
  EXPECT_THAT(text, HasSubstr("div("));
  EXPECT_THAT(text, HasSubstr("expand("));
  EXPECT_TRUE(p.lifted.empty());
  std::vector<Tensor> out = run(p, {a, b});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{-2.f / 3, -1.f, 0.f, 0.5f, 2.f * 2 / 3, 3.f}));
  EXPECT_TRUE(equal(out[0], fn({a, b})[0]));
}

TEST(Trace, TextRoundTripsAndReRuns) {
  Tensor a = make<float>({1.f, 5.f, 2.f, 8.f, 3.f, 0.f}, {2, 3});
  auto fn = [](const std::vector<Tensor>& in) {
    Tensor s = sum(exp(in[0] - amax(in[0], {1}, true)), {1});
    return std::vector<Tensor>{s, argmax(in[0], 1)};
  };
  TracedProgram p = trace(fn, {a});
  std::string text = ir::print_graph(*p.graph);
  std::unique_ptr<ir::Graph> back = ir::parse_graph(text);
  EXPECT_EQ(ir::print_graph(*back), text);
  std::vector<Tensor> x = rt::interpret(*back, {a});
  std::vector<Tensor> y = fn({a});
  EXPECT_TRUE(allclose(x[0], y[0]));
  EXPECT_EQ(values<int64_t>(x[1]), (std::vector<int64_t>{1, 0}));
}

TEST(Trace, CapturedTensorsAreLiftedByReference) {
  Tensor w = make<float>({10.f, 20.f});
  auto fn = [&w](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * w}; };
  TracedProgram p = trace(fn, {make<float>({1.f, 2.f})});
  ASSERT_EQ(p.lifted.size(), 1u);
  EXPECT_TRUE(p.lifted[0].is_same(w));
  EXPECT_EQ(p.graph->inputs().size(), 2u);
  // Mutating the captured weight is seen by the next run: lifted by reference, not copied.
  w.mul_(2);
  EXPECT_EQ(values<float>(run(p, {make<float>({1.f, 2.f})})[0]), (std::vector<float>{20.f, 80.f}));
}

TEST(Trace, FactoriesBecomeGraphConstants) {
  auto fn = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + ones({3})}; };
  TracedProgram p = trace(fn, {make<float>({1.f, 2.f, 3.f})});
  EXPECT_TRUE(p.lifted.empty());
  EXPECT_THAT(p.graph->str(), HasSubstr("full("));
  EXPECT_EQ(values<float>(run(p, {make<float>({1.f, 2.f, 3.f})})[0]), (std::vector<float>{2.f, 3.f, 4.f}));
}

TEST(Trace, InPlaceOnTracedTensorIsFunctionalized) {
  auto fn = [](const std::vector<Tensor>& in) {
    Tensor t = in[0] * 1;
    t.add_(1);
    return std::vector<Tensor>{t};
  };
  TracedProgram p = trace(fn, {make<float>({1.f, 2.f})});
  EXPECT_EQ(values<float>(run(p, {make<float>({1.f, 2.f})})[0]), (std::vector<float>{2.f, 3.f}));
}

TEST(Trace, InPlaceOnTracedViewIsRefused) {
  auto fn = [](const std::vector<Tensor>& in) {
    Tensor v = in[0].select(0, 0);
    v.add_(1);
    return std::vector<Tensor>{in[0]};
  };
  try {
    trace(fn, {make<float>({1.f, 2.f, 3.f, 4.f}, {2, 2})});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("[copy_] in-place update of a view"));
  }
}

TEST(Trace, ReadingTracedDataIsAClearError) {
  auto fn = [](const std::vector<Tensor>& in) {
    (void)in[0].sum().item<float>();
    return std::vector<Tensor>{in[0]};
  };
  try {
    trace(fn, {make<float>({1.f})});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("[item] cannot read the data of a traced tensor"));
    EXPECT_THAT(e.what(), HasSubstr("kiln::where"));
  }
}

TEST(Trace, ErrorsInsideTraceNameTheOpAndShapes) {
  auto fn = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + in[1]}; };
  try {
    trace(fn, {make<float>({1.f, 2.f, 3.f}), make<float>({1.f, 2.f})});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("The size of tensor a (3) must match the size of tensor b (2)"));
  }
}

TEST(Trace, InterpreterChecksInputTypes) {
  TracedProgram p = trace([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + 1}; },
                          {make<float>({1.f, 2.f})});
  EXPECT_THROW(rt::interpret(*p.graph, {make<float>({1.f, 2.f, 3.f})}), Error);
  EXPECT_THROW(rt::interpret(*p.graph, {make<int64_t>({1, 2})}), Error);
  EXPECT_THROW(rt::interpret(*p.graph, {}), Error);
}

TEST(Trace, SymbolicGraphFromTextRunsAtAnySize) {
  std::unique_ptr<ir::Graph> g = ir::parse_graph(
      "graph(%x : f32[s0, 4]) {\n"
      "  %0 : f32[s0] = sum(%x, dims=[1], keepdim=false)\n"
      "  %1 : f32[s0, 2] = slice(%x, dim=1, start=0, end=4, step=2)\n"
      "  return (%0, %1)\n"
      "}\n");
  for (int64_t n : {1, 3}) {
    std::vector<float> v(static_cast<size_t>(n * 4));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
    std::vector<Tensor> out = rt::interpret(*g, {make<float>(v, {n, 4})});
    ASSERT_EQ(out[0].sizes().vec(), (std::vector<int64_t>{n}));
    EXPECT_EQ(values<float>(out[0])[0], 6.f);
    EXPECT_EQ(values<float>(out[1])[1], 2.f);
  }
}

}  // namespace
}  // namespace kiln
