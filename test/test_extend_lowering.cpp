// kiln/test/test_extend_lowering.cpp — custom lowerings: extern calls and rewrites.
#include "kiln/kiln.h"
#include "test_support/check.h"
#include "test_support/make.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace kiln {
namespace {

using test::error_of;

bool names(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

std::atomic<int> gelu_calls{0}, silu_rewrites{0};

// gelu on cpu runs the user's function as an extern step (this test binary only).
void register_once() {
  static const bool done = [] {
    register_lowering("cpu", "gelu",
                      Lowering::extern_call("test_gelu", [](const std::vector<Tensor>& in, const ir::AttrList& attrs,
                                                            const std::vector<Tensor>& out) {
                        gelu_calls.fetch_add(1);
                        // The user's kernel: here the eager gelu, written into kiln's buffer.
                        Tensor o = out.at(0);
                        o.copy_(gelu(in.at(0), attrs.get<std::string>(0)));
                      }));
    register_lowering("interpreter", "silu",
                      Lowering::rewrite_as("silu_as_sigmoid", [](const std::vector<Tensor>& in, const ir::AttrList&) {
                        silu_rewrites.fetch_add(1);
                        return std::vector<Tensor>{in.at(0) * sigmoid(in.at(0))};
                      }));
    return true;
  }();
  ASSERT_TRUE(done);
}

TEST(CustomLowering, ExternGeluReplacesTheKernelOnCpu) {
  register_once();
  auto fn = [](const Tensor& x) { return gelu(x * 2, "tanh") + 1; };
  auto f = compile(fn, CompileOptions{.backend = "cpu"});
  Tensor x = randn({64, 33});
  const int before = gelu_calls.load();
  EXPECT_TRUE(allclose(f(x), fn(x), 1e-6, 1e-6));
  EXPECT_TRUE(allclose(f(x * -1), fn(x * -1), 1e-6, 1e-6));
  EXPECT_EQ(gelu_calls.load() - before, 2);  // once per call: the plan calls it
  const std::string s = f.explain(x);
  EXPECT_TRUE(names(s, "extern gelu [lowering test_gelu](")) << s;
  // The multiply before and the add after are kernels of their own: nothing fuses across.
  EXPECT_TRUE(names(s, "--- plan: 2 kernels ---")) << s;
  // Dynamic shapes: the same lowering, symbolic buffers.
  auto g = compile(fn, CompileOptions{.backend = "cpu", .dynamic = Dynamic::True});
  for (int64_t n : {5, 9}) {
    Tensor y = randn({n, 3});
    EXPECT_TRUE(allclose(g(y), fn(y), 1e-6, 1e-6));
  }
  // Other backends keep their own lowering of gelu.
  const int mid = gelu_calls.load();
  auto h = compile(fn, CompileOptions{.backend = "interpreter"});
  EXPECT_TRUE(allclose(h(x), fn(x), 1e-6, 1e-6));
  EXPECT_EQ(gelu_calls.load(), mid);
}

TEST(CustomLowering, ExternCallOfAPrimThatWouldFuse) {
  // hypot is an elementwise prim the cpu backend would inline into a kernel; a registered
  // extern lowering takes it out of fusion.
  static std::atomic<int> calls{0};
  static const bool done = [] {
    register_lowering("cpu", "hypot",
                      Lowering::extern_call("my_hypot", [](const std::vector<Tensor>& in, const ir::AttrList&,
                                                           const std::vector<Tensor>& out) {
                        calls.fetch_add(1);
                        Tensor o = out.at(0);
                        o.copy_(hypot(in.at(0), in.at(1)));  // the eager op: lowerings do not apply to it
                      }));
    return true;
  }();
  ASSERT_TRUE(done);
  auto fn = [](const Tensor& x, const Tensor& y) { return hypot(x + 1, y) * 2; };
  auto f = compile(fn);
  Tensor x = randn({8, 3}), y = randn({8, 3});
  const int before = calls.load();
  EXPECT_TRUE(allclose(f(x, y), fn(x, y), 1e-5, 1e-6));
  EXPECT_EQ(calls.load() - before, 1);
  const std::string s = f.explain(x, y);
  EXPECT_TRUE(names(s, "extern hypot [lowering my_hypot](")) << s;
}

TEST(CustomLowering, RewriteOnTheInterpreter) {
  register_once();
  auto fn = [](const Tensor& x) { return silu(x) - x; };
  auto f = compile(fn, CompileOptions{.backend = "interpreter"});
  Tensor x = randn({7, 4});
  const int before = silu_rewrites.load();
  EXPECT_TRUE(allclose(f(x), fn(x), 1e-6, 1e-6));
  EXPECT_EQ(silu_rewrites.load() - before, 1);  // traced once, at compile time
  f(x);
  EXPECT_EQ(silu_rewrites.load() - before, 1);
}

TEST(CustomLowering, AnExternClampReceivesTheClampsSimplificationWouldRewrite) {
  // relu decomposes to clamp(x, 0, inf), which the algebra pass turns into maximum(x, 0): a
  // user's clamp lowering never ran for it. A node the backend lowers is left as it is. (The
  // lowering stays registered for the rest of this binary's process; it computes eager clamp,
  // so later tests' results do not change, only their plans.)
  static std::atomic<int> calls{0};
  static const bool done = [] {
    register_lowering("cpu", "clamp",
                      Lowering::extern_call("my_clamp", [](const std::vector<Tensor>& in, const ir::AttrList&,
                                                           const std::vector<Tensor>& out) {
                        calls.fetch_add(1);
                        Tensor o = out.at(0);
                        o.copy_(clamp(in.at(0), in.at(1), in.at(2)));  // the eager op
                      }));
    return true;
  }();
  ASSERT_TRUE(done);
  manual_seed(3);
  Tensor x = randn({6, 5});
  for (const auto& fn : std::vector<std::function<Tensor(const Tensor&)>>{
           [](const Tensor& a) { return relu(a * 2) + 1; },
           [](const Tensor& a) { return clamp(a * 2, Scalar(0.0), std::nullopt) + 1; },
           [](const Tensor& a) { return clamp(a * 2, std::nullopt, Scalar(0.5)) + 1; },
           // a constant's clamp is not folded either
           [](const Tensor& a) { return relu(zeros({6, 5}) - 1) + a; }}) {
    auto f = compile(fn, CompileOptions{.backend = "cpu"});
    const int before = calls.load();
    EXPECT_TRUE(equal(f(x), fn(x)));
    EXPECT_EQ(calls.load() - before, 1);
    const std::string s = f.explain(x);
    EXPECT_TRUE(names(s, "extern clamp [lowering my_clamp](")) << s;
    EXPECT_FALSE(names(s, "maximum") || names(s, "minimum")) << s;
  }
}

TEST(CustomLowering, BadRegistrationsAreErrors) {
  auto noop = [](const std::vector<Tensor>&, const ir::AttrList&, const std::vector<Tensor>&) {};
  EXPECT_TRUE(names(error_of([&] { register_lowering("cpu", "no_such_op", Lowering::extern_call("x", noop)); }),
                  "[register_lowering] unknown op 'no_such_op'"));
  EXPECT_TRUE(names(error_of([&] { register_lowering("gpu9", "exp", Lowering::extern_call("x", noop)); }),
                  "unknown backend 'gpu9'; registered backends: "));
  EXPECT_TRUE(names(error_of([&] { register_lowering("interpreter", "exp", Lowering::extern_call("x", noop)); }),
                  "backend 'interpreter' cannot run extern calls"));
  auto same = [](const std::vector<Tensor>& in, const ir::AttrList&) { return in; };
  EXPECT_TRUE(names(error_of([&] { register_lowering("cpu", "exp", Lowering{"both", noop, same}); }),
                  "must have exactly one of an extern call and a rewrite"));
  EXPECT_TRUE(names(error_of([&] { register_lowering("cpu", "exp", Lowering{"neither", nullptr, nullptr}); }),
                  "must have exactly one of an extern call and a rewrite"));
  register_once();
  EXPECT_TRUE(names(error_of([&] { register_lowering("cpu", "gelu", Lowering::extern_call("again", noop)); }),
                  "gelu already has a lowering on 'cpu'"));
}

}  // namespace
}  // namespace kiln
