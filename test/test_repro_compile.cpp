// kiln/test/test_repro_compile.cpp — compile()'s KILN_VERIFY and KILN_REPRO_DIR hooks.
//
// The mismatch is injected with rt::set_interpret_fault_for_testing (the reference
// interpreter's mul is made off by one), since no real cpu-vs-interpreter bug is known.
#include "kiln/kiln.h"
#include "ir/text.h"
#include "runtime/interpreter/interpreter.h"
#include "runtime/debug/repro.h"
#include "runtime/debug/run_graph.h"
#include "test_compile_util.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

namespace kiln {
namespace {

namespace fs = std::filesystem;

struct FaultScope {
  explicit FaultScope(ir::OpKind op) {
    rt::set_interpret_fault_for_testing([op](const ir::Node& n, std::vector<Tensor>& outs) {
      if (n.op() == op)
        for (Tensor& t : outs) t = t + 1;
    });
  }
  ~FaultScope() { rt::set_interpret_fault_for_testing({}); }
};

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / fmt::format("kiln_repro_{}_{}", name, ::getpid());
  fs::remove_all(d);
  return d;
}

std::vector<fs::path> subdirs(const fs::path& d) {
  std::vector<fs::path> out;
  if (!fs::exists(d)) return out;
  for (const auto& e : fs::directory_iterator(d)) out.push_back(e.path());
  return out;
}

Tensor program(const Tensor& a, const Tensor& b) { return (exp(a) * b + a).sum({1}) + amax(a - b, {1}); }

TEST(ReproCompile, VerifyMismatchWritesAMinimizedRepro) {
  const fs::path dir = fresh_dir("verify");
  test::EnvScope verify("KILN_VERIFY", "1");
  test::EnvScope repro("KILN_REPRO_DIR", dir.string());
  test::EnvScope log("KILN_LOG", "repro");
  test::LogCapture cap;
  FaultScope fault(ir::OpKind::mul);
  CompileOptions o;
  o.name = "prog";
  auto f = compile(program, o);
  const Tensor a = arange(32, TensorOptions(kFloat)).reshape({4, 8}) / 16, b = ones({4, 8});
  std::string msg;
  try {
    f(a, b);
  } catch (const Error& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find("[compile] function 'prog': output 0 differs from the interpreter"), std::string::npos) << msg;
  const std::vector<fs::path> written = subdirs(dir);
  ASSERT_EQ(written.size(), 1u);
  EXPECT_EQ(written[0].filename(), "prog_0");
  EXPECT_NE(msg.find("(repro: " + written[0].string() + ")"), std::string::npos) << msg;
  ASSERT_EQ(cap.matching("[kiln:repro] prog: wrote repro " + written[0].string()).size(), 1u);

  rt::Repro r = rt::read_repro(written[0].string());
  EXPECT_LE(r.graph->num_nodes(), 2u) << ir::print_graph(*r.graph);
  bool has_mul = false;
  for (const ir::Node* n : r.graph->nodes()) has_mul = has_mul || n->op() == ir::OpKind::mul;
  EXPECT_TRUE(has_mul) << ir::print_graph(*r.graph);
  EXPECT_NE(r.differs.find("compiled (cpu) vs interpreter: output 0"), std::string::npos) << r.differs;
  // While the fault is in place the repro replays as a difference...
  EXPECT_NE(rt::compare_runs(rt::run_graph(*r.graph, r.inputs, "cpu"), rt::run_graph(*r.graph, r.inputs, "interpreter")),
            "");
  fs::remove_all(dir);
}

TEST(ReproCompile, AgreeingResultsWriteNothing) {
  const fs::path dir = fresh_dir("agree");
  test::EnvScope verify("KILN_VERIFY", "1");
  test::EnvScope repro("KILN_REPRO_DIR", dir.string());
  auto f = compile(program);
  const Tensor a = arange(32, TensorOptions(kFloat)).reshape({4, 8}) / 16, b = ones({4, 8});
  Tensor y = f(a, b);
  EXPECT_TRUE(allclose(y, program(a, b)));
  f(a * 2, b);  // a cache hit is verified too
  EXPECT_TRUE(subdirs(dir).empty());
}

TEST(ReproCompile, WithoutVerifyAFaultyReferenceIsNotConsulted) {
  const fs::path dir = fresh_dir("noverify");
  test::EnvScope repro("KILN_REPRO_DIR", dir.string());
  FaultScope fault(ir::OpKind::mul);
  auto f = compile(program);
  const Tensor a = ones({2, 3}), b = ones({2, 3});
  EXPECT_TRUE(allclose(f(a, b), program(a, b)));
  EXPECT_TRUE(subdirs(dir).empty());
}

TEST(ReproCompile, VerifyWithoutReproDirStillRaises) {
  test::EnvScope verify("KILN_VERIFY", "1");
  FaultScope fault(ir::OpKind::mul);
  auto f = compile(program);
  try {
    f(ones({2, 3}), ones({2, 3}));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("set KILN_REPRO_DIR=dir for a repro"), std::string::npos) << e.what();
  }
}

TEST(ReproCompile, DynamicShapesAreSpecializedInTheRepro) {
  const fs::path dir = fresh_dir("dynamic");
  test::EnvScope verify("KILN_VERIFY", "1");
  test::EnvScope repro("KILN_REPRO_DIR", dir.string());
  FaultScope fault(ir::OpKind::mul);
  CompileOptions o;
  o.dynamic = Dynamic::True;
  o.name = "dyn";
  auto f = compile(program, o);
  EXPECT_THROW(f(ones({5, 3}), ones({5, 3})), Error);
  const std::vector<fs::path> written = subdirs(dir);
  ASSERT_EQ(written.size(), 1u);
  rt::Repro r = rt::read_repro(written[0].string());
  for (const ir::Value* v : r.graph->inputs()) EXPECT_TRUE(v->type().is_static()) << ir::print_graph(*r.graph);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace kiln
