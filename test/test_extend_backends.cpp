// kiln/test/test_extend_backends.cpp — user backends: what they receive and when they are called.
//
// A recording backend keeps the text of every graph it is given and runs it on the reference
// interpreter; the tests check the level of those graphs, how often the backend and its
// callable are called, symbolic sizes under Dynamic::True, and how failures are reported.
#include "kiln/kiln.h"
#include "ir/text.h"
#include "runtime/interpreter/interpreter.h"
#include "test_support/check.h"
#include "test_support/make.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kiln {
namespace {

using test::error_of;

bool has(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

// Registers (once per name) a backend that records what it receives.
struct Recorder {
  std::mutex mu;
  std::vector<std::string> graphs;          // text of every graph received
  std::vector<size_t> example_counts;       // example inputs per compile
  std::atomic<int> compiles{0}, calls{0};

  explicit Recorder(const std::string& name, OpLevel level) {
    register_backend(
        name,
        [this](const ir::Graph& g, const std::vector<Tensor>& examples) -> BackendCallable {
          {
            std::lock_guard<std::mutex> lock(mu);
            graphs.push_back(ir::print_graph(g));
            example_counts.push_back(examples.size());
          }
          compiles.fetch_add(1);
          // The graph belongs to kiln: keep a copy to run.
          std::shared_ptr<const ir::Graph> copy = ir::parse_graph(ir::print_graph(g));
          return [this, copy](const std::vector<Tensor>& in) {
            calls.fetch_add(1);
            return rt::interpret(*copy, in);
          };
        },
        BackendOptions{.level = level});
  }
};

Recorder& core_recorder() {
  static Recorder r("test_core", OpLevel::Core);
  return r;
}
Recorder& prim_recorder() {
  static Recorder r("test_prim", OpLevel::Prim);
  return r;
}

Tensor model(const Tensor& a, const Tensor& w) {
  return softmax(linear(a, w), -1) + gelu(a.sum({1}, true)) + rms_norm(a, {a.size(1)}).mean();
}

TEST(UserBackend, ReceivesACoreGraphOncePerSignature) {
  Recorder& r = core_recorder();
  const int before = r.compiles.load(), calls_before = r.calls.load();
  CompileOptions o;
  o.backend = "test_core";
  auto f = compile(model, o);
  Tensor a = randn({4, 6}), w = randn({5, 6});
  // linear(a, w) is [4, 5]: reshape a to match for the sum term.
  Tensor want = model(a, w);
  Tensor got = f(a, w);
  EXPECT_TRUE(allclose(got, want, 1e-5, 1e-6)) << got << want;
  f(a, w);
  EXPECT_EQ(r.compiles.load() - before, 1);     // once per new signature
  EXPECT_EQ(r.calls.load() - calls_before, 2);  // its callable on every call
  std::string g;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    g = r.graphs.back();
    EXPECT_EQ(r.example_counts.back(), 2u);
  }
  // Core ops arrive whole; composites (linear, rms_norm, matmul) are decomposed.
  EXPECT_TRUE(has(g, "softmax(")) << g;
  EXPECT_TRUE(has(g, "gelu(")) << g;
  EXPECT_TRUE(has(g, "mean(")) << g;
  EXPECT_FALSE(has(g, "linear(")) << g;
  EXPECT_FALSE(has(g, "rms_norm(")) << g;
  EXPECT_FALSE(has(g, "matmul(")) << g;
  EXPECT_TRUE(has(g, "mm(")) << g;
  std::unique_ptr<ir::Graph> parsed = ir::parse_graph(g);
  for (const ir::Node* n : parsed->nodes()) EXPECT_NE(n->info().level, OpLevel::Composite) << n->info().name;

  f(randn({3, 6}), w);  // a new signature (static shapes): called again
  EXPECT_EQ(r.compiles.load() - before, 2);
  EXPECT_EQ(f.stats().compiles, 2);
}

TEST(UserBackend, AsksForPrims) {
  Recorder& r = prim_recorder();
  CompileOptions o;
  o.backend = "test_prim";
  auto f = compile(model, o);
  Tensor a = randn({4, 6}), w = randn({5, 6});
  EXPECT_TRUE(allclose(f(a, w), model(a, w), 1e-5, 1e-6));
  std::lock_guard<std::mutex> lock(r.mu);
  std::unique_ptr<ir::Graph> g = ir::parse_graph(r.graphs.back());
  for (const ir::Node* n : g->nodes()) EXPECT_EQ(n->info().level, OpLevel::Prim) << n->info().name;
  EXPECT_TRUE(has(r.graphs.back(), "amax(")) << r.graphs.back();
}

// A training step at the core level: the backward graph holds Core ATen's backward nodes whole
// (the derivative rules record them), and the gradients the recording backend computes by
// interpreting those nodes (their decompositions) are the eager tape's.
TEST(UserBackend, ReceivesTheBackwardNodesOfATrainingStep) {
  Recorder& r = core_recorder();
  auto step = [](const Tensor& x, const Tensor& w, const Tensor& table, const Tensor& ids) {
    Tensor y = max_pool2d(conv2d(x, w, std::nullopt, 1, 1), 2);  // [2, 4, 4, 4]
    y = adaptive_avg_pool2d(avg_pool2d(y, 2, 1), {2, 2});        // [2, 4, 2, 2]
    y = layer_norm(group_norm(y, 2), {2, 2});
    return (y.sum({2, 3}) * embedding(table, ids)).sum();
  };
  const Tensor ids = test::make<int64_t>({3, 1}, {2});
  std::vector<Tensor> eager{randn({2, 3, 8, 8}), randn({4, 3, 3, 3}), randn({5, 4})}, compiled;
  for (Tensor& t : eager) {
    compiled.push_back(t.clone().requires_grad_());
    t.requires_grad_();
  }
  step(eager[0], eager[1], eager[2], ids).backward();
  CompileOptions o;
  o.backend = "test_core";
  auto f = compile(step, o);
  const size_t before = r.graphs.size();
  Tensor loss = f(compiled[0], compiled[1], compiled[2], ids);
  EXPECT_TRUE(allclose(loss, step(eager[0], eager[1], eager[2], ids), 1e-4, 1e-5));
  loss.backward();
  for (size_t i = 0; i < eager.size(); ++i)
    EXPECT_TRUE(allclose(compiled[i].grad(), eager[i].grad(), 1e-4, 1e-5)) << i << compiled[i].grad() << eager[i].grad();
  std::lock_guard<std::mutex> lock(r.mu);
  ASSERT_EQ(r.graphs.size() - before, 2u);  // the forward and the backward
  const std::string& backward = r.graphs.back();
  for (const char* node : {"convolution_backward(", "max_pool2d_with_indices_backward(", "avg_pool2d_backward(",
                           "adaptive_avg_pool2d_backward(", "native_group_norm_backward(",
                           "native_layer_norm_backward(", "embedding_dense_backward("})
    EXPECT_TRUE(has(backward, node)) << node << " is not in\n" << backward;
}

TEST(UserBackend, SeesSymbolicSizesUnderDynamicTrue) {
  Recorder& r = core_recorder();
  CompileOptions o;
  o.backend = "test_core";
  o.dynamic = Dynamic::True;
  auto f = compile([](const Tensor& x) { return softmax(x * 2, -1); }, o);
  const int before = r.compiles.load();
  for (int64_t n : {3, 7, 12}) {
    Tensor x = randn({n, 5});
    EXPECT_TRUE(allclose(f(x), softmax(x * 2, -1), 1e-5, 1e-6));
  }
  EXPECT_EQ(r.compiles.load() - before, 1);  // one symbolic entry serves every size
  std::lock_guard<std::mutex> lock(r.mu);
  std::unique_ptr<ir::Graph> g = ir::parse_graph(r.graphs.back());
  EXPECT_FALSE(ir::all_const(g->inputs().at(0)->type().sizes)) << r.graphs.back();
}

TEST(UserBackend, FailuresNameTheBackend) {
  static const bool registered = [] {
    register_backend("test_throws_compiling", [](const ir::Graph&, const std::vector<Tensor>&) -> BackendCallable {
      throw std::runtime_error("no kernel for this");
    });
    register_backend("test_throws_running", [](const ir::Graph&, const std::vector<Tensor>&) -> BackendCallable {
      return [](const std::vector<Tensor>&) -> std::vector<Tensor> { throw std::runtime_error("device lost"); };
    });
    register_backend("test_wrong_count", [](const ir::Graph&, const std::vector<Tensor>&) -> BackendCallable {
      return [](const std::vector<Tensor>&) { return std::vector<Tensor>{}; };
    });
    return true;
  }();
  ASSERT_TRUE(registered);
  auto run = [](const std::string& backend) {
    CompileOptions o;
    o.backend = backend;
    auto f = compile([](const Tensor& x) { return x + 1; }, o);
    return error_of([&] { f(randn({2})); });
  };
  std::string e = run("test_throws_compiling");
  EXPECT_TRUE(has(e, "backend 'test_throws_compiling' failed to compile") && has(e, "no kernel for this")) << e;
  e = run("test_throws_running");
  EXPECT_TRUE(has(e, "backend 'test_throws_running' failed while running: device lost")) << e;
  e = run("test_wrong_count");
  EXPECT_TRUE(has(e, "backend 'test_wrong_count' returned 0 tensors where the graph has 1 outputs")) << e;
}

TEST(UserBackend, NamesAreCheckedAndListed) {
  CompileOptions o;
  o.backend = "no_such_backend";
  const std::string e = error_of([&] { compile([](const Tensor& x) { return x; }, o); });
  EXPECT_TRUE(has(e, "unknown backend 'no_such_backend'; registered backends: ")) << e;
  for (const char* b : {"\"cpu\"", "\"eager\"", "\"interpreter\""}) EXPECT_TRUE(has(e, b)) << e;
  auto noop = [](const ir::Graph&, const std::vector<Tensor>&) -> BackendCallable {
    return [](const std::vector<Tensor>& in) { return in; };
  };
  EXPECT_TRUE(has(error_of([&] { register_backend("cpu", noop); }), "a backend called 'cpu' is already registered"));
  EXPECT_TRUE(has(error_of([&] { register_backend("test_composite", noop, {.level = OpLevel::Composite}); }),
                  "the level must be Core or Prim"));
  EXPECT_TRUE(has(error_of([&] { register_backend("test_null", BackendFn()); }), "has no compile function"));
}

TEST(UserBackend, RegistrationIsThreadSafe) {
  std::vector<std::thread> ts;
  for (int i = 0; i < 8; ++i)
    ts.emplace_back([i] {
      register_backend("test_thread_" + std::to_string(i), [](const ir::Graph&, const std::vector<Tensor>&) -> BackendCallable {
        return [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in.at(0) * 3}; };
      });
    });
  for (std::thread& t : ts) t.join();
  const std::vector<std::string> names = registered_backends();
  for (int i = 0; i < 8; ++i)
    EXPECT_NE(std::find(names.begin(), names.end(), "test_thread_" + std::to_string(i)), names.end());
  CompileOptions o;
  o.backend = "test_thread_5";
  auto f = compile([](const Tensor& x) { return x; }, o);
  EXPECT_TRUE(equal(f(test::make<float>({1, 2}, {2})), test::make<float>({3, 6}, {2})));
}

}  // namespace
}  // namespace kiln
