// kiln/test/test_extend_custom_op.cpp — ops defined at run time from schema strings.
//
// testlib::softclip has a decomposition; testlib::clipsum has none (it runs as an extern call
// of its eager implementation). Each runs eagerly, traces into one node that prints and
// parses by its qualified name, and compiles on cpu and the interpreter, static and dynamic.
#include "kiln/kiln.h"
#include "ir/text.h"
#include "runtime/interpreter/interpreter.h"
#include "test_support/check.h"
#include "test_support/make.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kiln {
namespace {

using test::error_of;

bool mentions(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

Tensor softclip_math(const Tensor& x, double t) { return tanh(x / t) * t; }

const CustomOp& softclip() {
  static const CustomOp op = register_op(
      "testlib::softclip(Tensor x, float t) -> Tensor",
      {.eager = [](const std::vector<Tensor>& in, const ir::AttrList& a) {
         return std::vector<Tensor>{softclip_math(in.at(0), a.get<double>(0))};
       },
       .decomposition = [](const std::vector<Tensor>& in, const ir::AttrList& a) {
         return std::vector<Tensor>{softclip_math(in.at(0), a.get<double>(0))};
       }});
  return op;
}

// No decomposition; its shape function broadcasts like add and keeps x's dtype.
const CustomOp& clipsum() {
  static const CustomOp op = register_op(
      "testlib::clipsum(Tensor x, Tensor y, float lo) -> Tensor",
      {.eager = [](const std::vector<Tensor>& in, const ir::AttrList& a) {
         return std::vector<Tensor>{clamp_min(in.at(0) + in.at(1), a.get<double>(0))};
       },
       .shape = [](const std::vector<ir::TensorType>& in, const ir::AttrList&) {
         if (in.at(0).dtype != in.at(1).dtype) fail("testlib::clipsum", "x and y must have one dtype");
         return std::vector<ir::TensorType>{in.at(0)};
       }});
  return op;
}

Tensor program(const Tensor& x, const Tensor& y) { return softclip()(clipsum()(x * 2, y, -0.5), 0.75) + 1; }

TEST(CustomOp, RunsEagerly) {
  Tensor x = randn({3, 5}), y = randn({3, 5});
  EXPECT_TRUE(allclose(softclip()(x, 0.5), softclip_math(x, 0.5), 1e-6, 1e-7));
  EXPECT_TRUE(equal(clipsum()(x, y, 0.0), clamp_min(x + y, 0.0)));
  EXPECT_TRUE(allclose(softclip()(x, 2), softclip_math(x, 2.0), 1e-6, 1e-7));  // an int for a float
}

TEST(CustomOp, TracesIntoOneNodeAndRoundTripsAsText) {
  TracedProgram p = trace([](const std::vector<Tensor>& in) { return std::vector<Tensor>{program(in[0], in[1])}; },
                          {randn({2, 3}), randn({2, 3})});
  const std::string text = ir::print_graph(*p.graph);
  EXPECT_TRUE(mentions(text, "= testlib::clipsum(")) << text;
  EXPECT_TRUE(mentions(text, "= testlib::softclip(")) << text;
  std::unique_ptr<ir::Graph> parsed = ir::parse_graph(text);
  EXPECT_EQ(ir::print_graph(*parsed), text);
}

TEST(CustomOp, CompilesOnEveryBackendStaticAndDynamic) {
  for (const char* backend : {"cpu", "interpreter"})
    for (Dynamic d : {Dynamic::False, Dynamic::True}) {
      SCOPED_TRACE(std::string(backend) + (d == Dynamic::True ? " dynamic" : " static"));
      auto f = compile(program, CompileOptions{.backend = backend, .dynamic = d});
      for (int64_t n : {4, 9}) {
        Tensor x = randn({n, 6}), y = randn({n, 6});
        EXPECT_TRUE(allclose(f(x, y), program(x, y), 1e-5, 1e-6));
      }
      EXPECT_EQ(f.stats().compiles, d == Dynamic::True ? 1 : 2);
    }
  // On cpu, softclip decomposes into the fused kernels; clipsum is an extern call.
  auto f = compile(program, CompileOptions{.backend = "cpu"});
  const std::string s = f.explain(randn({4, 6}), randn({4, 6}));
  EXPECT_TRUE(mentions(s, "extern testlib::clipsum [custom op](")) << s;
  const std::string optimized = s.substr(s.find("--- optimized graph ---"));
  EXPECT_FALSE(mentions(optimized.substr(0, optimized.find("--- plan")), "testlib::softclip")) << s;
}

TEST(CustomOp, UserBackendsSeeTheNode) {
  static std::string seen;
  static const bool registered = [] {
    register_backend("test_custom_seer", [](const ir::Graph& g, const std::vector<Tensor>&) -> BackendCallable {
      seen = ir::print_graph(g);
      std::shared_ptr<const ir::Graph> copy = ir::parse_graph(seen);
      return [copy](const std::vector<Tensor>& in) { return rt::interpret(*copy, in); };
    });
    return true;
  }();
  ASSERT_TRUE(registered);
  auto f = compile(program, CompileOptions{.backend = "test_custom_seer"});
  Tensor x = randn({2, 3}), y = randn({2, 3});
  EXPECT_TRUE(allclose(f(x, y), program(x, y), 1e-5, 1e-6));
  EXPECT_TRUE(mentions(seen, "testlib::clipsum(")) << seen;   // no decomposition: kept
  EXPECT_FALSE(mentions(seen, "testlib::softclip(")) << seen; // composite: decomposed
  EXPECT_TRUE(mentions(seen, "tanh(")) << seen;
}

TEST(CustomOp, ErrorsNameTheOpAndTheColumn) {
  auto eager = [](const std::vector<Tensor>& in, const ir::AttrList&) { return in; };
  EXPECT_EQ(error_of([&] { register_op("testlib::bad(Tensor x, flot t) -> Tensor", {.eager = eager}); }),
            "[schema] unknown argument type 'flot' (expected Tensor, Tensor?, Tensor[], int, int?, int[], float, bool, "
            "str, str?, ScalarType, Scalar, SymInt, SymInt[] or Device) at column 24 of 'testlib::bad(Tensor x, flot t) "
            "-> Tensor'");
  EXPECT_TRUE(mentions(error_of([&] { register_op("testlib::bad(Tensor x -> Tensor", {.eager = eager}); }),
                  "[schema] expected ',' or ')' at column 23"));
  EXPECT_TRUE(mentions(error_of([&] { register_op("softclip2(Tensor x) -> Tensor", {.eager = eager}); }),
                  "[register_op] 'softclip2' needs a namespace"));
  softclip();
  EXPECT_TRUE(mentions(error_of([&] { register_op("testlib::softclip(Tensor x) -> Tensor", {.eager = eager}); }),
                  "[register_op] testlib::softclip is already registered"));
  EXPECT_TRUE(mentions(error_of([&] { register_op("testlib::noimpl(Tensor x) -> Tensor", {}); }),
                  "needs an eager implementation"));
  Tensor x = randn({2});
  EXPECT_TRUE(mentions(error_of([&] { softclip()(x, std::string("wide")); }),
                  "[testlib::softclip] attribute 't' expects float, got str"));
  EXPECT_TRUE(mentions(error_of([&] { softclip()(x, x, 0.5); }), "[testlib::softclip] expected 1 tensor argument"));
  EXPECT_TRUE(mentions(error_of([&] { clipsum()(x, x.to(kDouble), 0.5); }), "[testlib::clipsum] x and y must have one dtype"));
}

}  // namespace
}  // namespace kiln
