// kiln/test/test_compile_tour.cpp — docs/pipeline.md, the pipeline tour, is generated here and
// checked against the compiler.
//
// test/tour/pipeline.kir holds the program the tour follows (a linear layer with a softmax over
// its outputs, and a column sum), the prose for each stage (`#| <stage>: text` lines) and CHECK
// lines (test_fusion_check.h) that state what each stage must show. The test runs the program
// through every stage of the cpu backend (and the cuda backend's schedule and CUDA C) with a
// pinned schedule target, so that the plans do not depend on this host, writes the markdown and
//   - matches the CHECK lines against it: a change to a stage that the tour describes fails here;
//   - compares it with docs/pipeline.md, every section but the LLVM IR and assembly (which
//     depend on the host's CPU): a stale tour fails here.
// KILN_TOUR_WRITE=1 rewrites docs/pipeline.md instead of comparing (docs/testing.md).
#include "codegen_cuda/cuda_emitter.h"
#include "ir/text.h"
#include "passes/schedule.h"
#include "runtime/backend.h"
#include "runtime/pipeline.h"
#include "test_fusion_check.h"

#include "test_support/files.h"

#include <gtest/gtest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace kiln {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(KILN_TEST_DATA_DIR) / "tour" / "pipeline.kir";
const fs::path kDoc = fs::path(KILN_TEST_DATA_DIR).parent_path() / "docs" / "pipeline.md";
constexpr const char* kHostBegin = "<!-- host-dependent: not compared -->";
constexpr const char* kHostEnd = "<!-- end host-dependent -->";

// The `#| stage: text` prose of the corpus file, by stage ("intro", "traced", "decompose", ...);
// lines of one stage are joined with newlines.
std::map<std::string, std::string> prose_of(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string last;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#|", 0) != 0) continue;
    std::string body = line.size() > 3 ? line.substr(3) : "";
    const size_t colon = body.find(':');
    if (colon != std::string::npos && colon < 24 && body.find(' ') > colon) {
      last = body.substr(0, colon);
      body = body.substr(colon + 1);
      if (!body.empty() && body[0] == ' ') body.erase(0, 1);
    }
    std::string& p = out[last];
    p += (p.empty() ? "" : "\n") + body;
  }
  return out;
}

// The graph text of the corpus file (every line that is not a comment).
std::string graph_of(const std::string& text) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("#", 0) != 0) out += line + "\n";
  return out;
}

std::string stable_names(std::string text, const std::string& prefix) {
  for (size_t at; (at = text.find(prefix)) != std::string::npos;) text.replace(at, prefix.size(), "k");
  return text;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// A unified diff of two texts (a longest-common-subsequence line diff) with `context` lines
// around each change and "@@" between hunks: how a kernel stage changed the plan.
std::string diff(const std::string& before, const std::string& after, size_t context = 2) {
  const std::vector<std::string> a = lines_of(before), b = lines_of(after);
  std::vector<std::vector<size_t>> lcs(a.size() + 1, std::vector<size_t>(b.size() + 1, 0));
  for (size_t i = a.size(); i-- > 0;)
    for (size_t j = b.size(); j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::vector<std::pair<char, std::string>> ops;
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && j < b.size() && a[i] == b[j]) {
      ops.push_back({' ', a[i++]});
      ++j;
    } else if (i < a.size() && (j == b.size() || lcs[i + 1][j] >= lcs[i][j + 1])) {
      ops.push_back({'-', a[i++]});
    } else {
      ops.push_back({'+', b[j++]});
    }
  }
  std::vector<bool> show(ops.size(), false);
  for (size_t k = 0; k < ops.size(); ++k)
    if (ops[k].first != ' ')
      for (size_t c = (k >= context ? k - context : 0); c <= std::min(ops.size() - 1, k + context); ++c) show[c] = true;
  std::string out;
  bool gap = false;
  for (size_t k = 0; k < ops.size(); ++k) {
    if (!show[k]) {
      gap = true;
      continue;
    }
    if (gap && !out.empty()) out += "@@\n";
    gap = false;
    out += ops[k].first + ops[k].second + "\n";
  }
  return out;
}

// The kernel of emit_cuda's output without the device prelude every kernel repeats.
std::string without_prelude(const std::string& src, const std::string& kernel) {
  const size_t at = src.find("struct " + kernel + "_params");
  return at == std::string::npos ? src : src.substr(at);
}

std::string block(const std::string& lang, const std::string& text) {
  return fmt::format("```{}\n{}{}```\n", lang, text, text.empty() || text.back() == '\n' ? "" : "\n");
}

std::string lang_of(const std::string& file) {
  const std::string ext = file.substr(file.rfind('.') + 1);
  if (ext == "ll") return "llvm";
  if (ext == "s") return "asm";
  return "";
}

rt::Compilation run(const std::string& graph_text, const std::string& backend, const passes::ScheduleTarget& t,
                    bool code) {
  std::shared_ptr<ir::Graph> g = ir::parse_graph(graph_text);
  rt::DriverOptions o;
  o.name = "tour";
  o.keep_text = true;
  o.keep_stage_texts = true;
  o.want_code = code;
  o.stop_before_compile = !code;
  o.schedule_target = t;
  o.params = rt::params_from_inputs(*g);
  return rt::compile_graph(g, *rt::find_backend(backend), std::move(o));
}

std::string generate() {
  const std::string corpus = test::read_file(kCorpus);
  const std::map<std::string, std::string> prose = prose_of(corpus);
  auto say = [&](const std::string& stage) {
    auto it = prose.find(stage);
    return it == prose.end() ? std::string() : it->second + "\n\n";
  };
  const std::string graph = graph_of(corpus);
  passes::ScheduleTarget cpu_target;
  cpu_target.l1d_bytes = 32 << 10;
  cpu_target.vector_bits = 512;
  const rt::Compilation c = run(graph, "cpu", cpu_target, /*code=*/true);
  std::string md = "# The pipeline: one program through every stage\n\n";
  md += "<!-- Generated by test/test_compile_tour.cpp from test/tour/pipeline.kir; KILN_TOUR_WRITE=1 rewrites it. -->\n\n";
  md += say("intro");
  md += "The program, as text IR (test/tour/pipeline.kir):\n\n" + block("", graph) + "\n";
  std::string previous, previous_plan;
  for (const rt::Compilation::Snapshot& s : c.texts) {
    if (s.name == "assembly") continue;  // in the debug dumps; the LLVM IR says enough here
    const std::string text = stable_names(s.text, c.prefix);
    const std::string lang = lang_of(s.file);
    const bool plan = s.file.size() > 3 && s.file.compare(s.file.size() - 3, 3, ".kk") == 0;
    md += fmt::format("## {} `{}`\n\n", s.file.substr(0, 2), s.name) + say(s.name);
    if (text == previous) {
      md += "No change.\n\n";
      continue;
    }
    const bool host = lang == "llvm";
    if (host) md += std::string(kHostBegin) + "\n\n";
    if (plan && !previous_plan.empty())
      md += "What changed in the plan:\n\n" + block("diff", diff(previous_plan, text)) + "\n";
    else
      md += block(lang, text) + "\n";
    if (host) md += std::string(kHostEnd) + "\n\n";
    previous = text;
    if (plan) previous_plan = text;
  }
  passes::ScheduleTarget gpu_target;
  gpu_target.sms = 132;
  const rt::Compilation g = run(graph, "cuda", gpu_target, /*code=*/false);
  md += "## The cuda backend\n\n" + say("cuda");
  md += "### `online_softmax`\n\n" + say("online_softmax") + "What changed against the cpu backend's `schedule_tiles` plan:\n\n" +
        block("diff", diff(stable_names(c.text("schedule_tiles"), c.prefix), stable_names(g.text("online_softmax"), g.prefix))) +
        "\n";
  md += "### `schedule_launch`\n\n" + say("schedule_launch") + "What changed:\n\n" +
        block("diff", diff(stable_names(g.text("online_softmax"), g.prefix), stable_names(g.text("schedule_launch"), g.prefix))) +
        "\n";
  md += "### CUDA C\n\n" + say("cuda_source");
  for (const ir::Kernel* k : g.plan.kernels())
    md += block("cuda", without_prelude(stable_names(cuda::emit_cuda(*k), g.prefix), "k" + k->name.substr(g.prefix.size()))) + "\n";
  return md;
}

// The text with every host-dependent block emptied.
std::string without_host_blocks(std::string md) {
  for (size_t b; (b = md.find(kHostBegin)) != std::string::npos;) {
    const size_t e = md.find(kHostEnd, b);
    if (e == std::string::npos) break;
    md.erase(b, e + std::string(kHostEnd).size() - b);
  }
  return md;
}

TEST(PipelineTour, ChecksHoldAndTheDocIsCurrent) {
  const std::string md = generate();
  const bool write = std::getenv("KILN_TOUR_WRITE") && std::string(std::getenv("KILN_TOUR_WRITE")) == "1";
  if (write) test::write_file(kDoc, md);
  const std::vector<test::CheckDirective> checks = test::parse_checks(test::read_file(kCorpus));
  ASSERT_GE(checks.size(), 10u);
  EXPECT_EQ(test::match_checks(checks, md), "") << md;
  if (write) GTEST_SKIP() << "wrote " << kDoc;
  ASSERT_TRUE(fs::exists(kDoc)) << "no docs/pipeline.md: run with KILN_TOUR_WRITE=1";
  EXPECT_EQ(without_host_blocks(test::read_file(kDoc)), without_host_blocks(md))
      << "docs/pipeline.md is stale: regenerate it with KILN_TOUR_WRITE=1 (docs/testing.md)";
}

}  // namespace
}  // namespace kiln
