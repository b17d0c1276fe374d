// kiln/test/test_compile_opt.cpp — `kiln opt` output on test/opt_corpus/*.kir, checked with
// CHECK lines (test_fusion_check.h); the "# OPT:" line of each file gives its options
// (--level core|prim, --passes a,b). Also: the Graphviz renderer and per-stage debug dumps.
#include "kiln/kiln.h"
#include "ir/graph_dot.h"
#include "ir/text.h"
#include "runtime/debug/opt.h"
#include "test_fusion_check.h"
#include "test_support/check.h"
#include "test_support/files.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace kiln {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> corpus() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(fs::path(KILN_TEST_DATA_DIR) / "opt_corpus"))
    if (e.path().extension() == ".kir") out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// The options of a "# OPT: --level core --passes a,b --backend cuda" line.
rt::OptOptions options_of(const std::string& text) {
  rt::OptOptions o;
  const size_t at = text.find("# OPT:");
  if (at == std::string::npos) throw std::invalid_argument("no '# OPT:' line");
  std::istringstream args(text.substr(at + 6, text.find('\n', at) - at - 6));
  for (std::string a; args >> a;) {
    std::string v;
    args >> v;
    if (a == "--level") o.level = rt::parse_level(v);
    else if (a == "--passes") o.passes.push_back(v);
    else if (a == "--backend") o.backend = v;
    else throw std::invalid_argument("unknown option " + a);
  }
  return o;
}

TEST(KilnOpt, CorpusIsPresent) { EXPECT_GE(corpus().size(), 3u); }

TEST(KilnOpt, OutputMatchesChecks) {
  for (const std::string& f : corpus()) {
    SCOPED_TRACE(f);
    const std::string text = read(fs::path(KILN_TEST_DATA_DIR) / "opt_corpus" / f);
    const std::vector<test::CheckDirective> checks = test::parse_checks(text);
    ASSERT_FALSE(checks.empty());
    const std::string out = rt::opt_report(text, options_of(text));
    EXPECT_EQ(test::match_checks(checks, out), "") << out;
  }
}

TEST(KilnOpt, EmitCodeAndBadOptions) {
  const std::string text = "graph(%x : f32[4]) {\n  %y : f32[4] = exp(%x)\n  return (%y)\n}\n";
  rt::OptOptions o;
  o.emit_code = true;
  const std::string out = rt::opt_report(text, o);
  EXPECT_NE(out.find("// ---- after llvm_ir ----"), std::string::npos) << out;
  EXPECT_NE(out.find("define "), std::string::npos) << out;
  EXPECT_EQ(test::error_of([] { rt::parse_level("core2"); }), "[opt] unknown level 'core2'; expected core, prim or composite");
  o.backend = "nope";
  EXPECT_NE(test::error_of([&] { rt::opt_report(text, o); }).find("[opt] unknown backend 'nope'"), std::string::npos);
}

TEST(GraphDot, DrawsInputsNodesAndOutputs) {
  std::unique_ptr<ir::Graph> g = ir::parse_graph(
      "graph(%x : f32[2, 3]) {\n  %s : f32[2, 3] = softmax(%x, dim=1, dtype=f32)\n  return (%s)\n}\n");
  const std::string d = ir::graph_dot(*g, "t");
  EXPECT_EQ(d.rfind("digraph \"t\" {", 0), 0u) << d;
  EXPECT_NE(d.find("in0 [shape=ellipse, label=\"%x : f32[2, 3]\"]"), std::string::npos) << d;
  EXPECT_NE(d.find("n0 [shape=box, label=\"softmax(dim=1, dtype=f32)\\n%s : f32[2, 3]\"]"), std::string::npos) << d;
  EXPECT_NE(d.find("in0 -> n0 [label=\"%x\"]"), std::string::npos) << d;
  EXPECT_NE(d.find("n0 -> out0 [label=\"%s\"]"), std::string::npos) << d;
}

}  // namespace
}  // namespace kiln
