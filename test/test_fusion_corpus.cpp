// kiln/test/test_fusion_corpus.cpp — fusion decisions on text IR, checked against CHECK lines.
//
// Each test/fusion_corpus/*.kir file holds one graph and, in comments next to it, what the
// pass pipeline must make of it: the number of kernels and extern steps, and CHECK lines
// matched in order against ExecPlan::str() (test_fusion_check.h). Every plan is then compiled
// and run on seeded random inputs, and its outputs are compared
// with the reference interpreter running the original (undecomposed) graph.
#include "kiln/kiln.h"
#include "ir/text.h"
#include "runtime/pipeline.h"
#include "runtime/interpreter/interpreter.h"
#include "test_fusion_check.h"

#include "test_support/check.h"
#include "test_support/files.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace kiln {
namespace {

namespace fs = std::filesystem;
using test::CheckKind;

fs::path corpus_dir() { return fs::path(KILN_TEST_DATA_DIR) / "fusion_corpus"; }

std::vector<std::string> corpus_files() {
  std::vector<std::string> names;
  for (const fs::path& p : test::files_with_extension(corpus_dir(), ".kir")) names.push_back(p.filename().string());
  return names;
}

using test::read_file;

// Seeded random inputs matching the graph's (static) input types.
std::vector<Tensor> random_inputs(const ir::Graph& g, uint64_t seed) {
  Generator gen(seed);
  std::vector<Tensor> ins;
  for (const ir::Value* v : g.inputs()) {
    const std::vector<int64_t> sizes = v->type().static_sizes();
    const ScalarType dt = v->type().dtype;
    if (is_floating_point(dt)) ins.push_back(randn(sizes, gen, TensorOptions().dtype(dt)));
    else if (dt == ScalarType::Bool) ins.push_back(rand(sizes, gen).gt(0.5));
    else ins.push_back(randint(-20, 20, sizes, gen, TensorOptions().dtype(dt)));
  }
  return ins;
}

class FusionCorpus : public ::testing::TestWithParam<std::string> {};

TEST(FusionCorpusFiles, CorpusIsPresent) {
  // A moved or emptied corpus must not pass silently.
  EXPECT_GE(corpus_files().size(), 12u);
}

TEST_P(FusionCorpus, PlanMatchesChecksAndRunsLikeTheInterpreter) {
  const std::string text = read_file(corpus_dir() / GetParam());
  ASSERT_FALSE(text.empty());
  std::vector<test::CheckDirective> checks = test::parse_checks(text);
  ASSERT_FALSE(checks.empty()) << "no CHECK lines in " << GetParam();

  std::shared_ptr<ir::Graph> g = ir::parse_graph(text);
  std::unique_ptr<ir::Graph> ref_graph = ir::parse_graph(text);
  rt::DriverOptions opts;
  opts.name = "fusion_corpus";
  rt::Compilation c = rt::compile_graph(g, *rt::find_backend("cpu"), opts);
  ASSERT_TRUE(c.status.ok()) << c.status.error;
  const ir::ExecPlan& plan = c.plan;
  // Kernel names carry the compilation's unique prefix; CHECK lines name them k0, k1, ...
  std::string plan_text = plan.str();
  for (size_t at; (at = plan_text.find(c.prefix)) != std::string::npos;) plan_text.replace(at, c.prefix.size(), "k");
  SCOPED_TRACE("plan of " + GetParam() + ":\n" + plan_text);

  int64_t externs = 0;
  for (const ir::PlanStep& st : plan.steps) externs += st.kind == ir::StepKind::Extern ? 1 : 0;
  bool counted = false;
  for (const test::CheckDirective& d : checks) {
    const int64_t nk = static_cast<int64_t>(plan.kernels().size());
    if (d.kind == CheckKind::Kernels) {
      EXPECT_EQ(nk, d.n) << "CHECK-KERNELS at line " << d.source_line;
    } else if (d.kind == CheckKind::KernelsMax) {
      EXPECT_LE(nk, d.n) << "CHECK-KERNELS-MAX at line " << d.source_line;
    } else if (d.kind == CheckKind::Externs) {
      EXPECT_EQ(externs, d.n) << "CHECK-EXTERNS at line " << d.source_line;
    }
    counted |= d.kind == CheckKind::Kernels || d.kind == CheckKind::KernelsMax;
  }
  EXPECT_TRUE(counted) << "every corpus graph states its kernel count";
  EXPECT_EQ(test::match_checks(checks, plan_text), "");

  const rt::Executable& program = *c.status.exe;
  static int compilation = 0;
  const int id = compilation++;
  for (uint64_t seed : {1u, 2u}) {
    std::vector<Tensor> ins = random_inputs(*ref_graph, seed * 7919 + static_cast<uint64_t>(id));
    std::vector<Tensor> want;
    try {
      want = rt::interpret(*ref_graph, ins);
    } catch (const Error& e) {  // the same error (an integer division by zero in the data)
      EXPECT_EQ(test::error_of([&] { (void)program.run(ins); }), e.what()) << "seed " << seed;
      continue;
    }
    std::vector<Tensor> got = program.run(ins);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].dtype(), want[i].dtype()) << "output " << i;
      ASSERT_EQ(got[i].sizes().vec(), want[i].sizes().vec()) << "output " << i;
      const bool exact = !is_floating_point(want[i].dtype());
      EXPECT_TRUE(exact ? equal(got[i], want[i]) : allclose(got[i], want[i], 1e-5, 1e-5))
          << "output " << i << " differs from the interpreter (seed " << seed << ")\ngot:\n"
          << got[i] << "\nwant:\n"
          << want[i];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, FusionCorpus, ::testing::ValuesIn(corpus_files()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param.substr(0, info.param.size() - 4);
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

}  // namespace
}  // namespace kiln
