// kiln/test/test_reliability_parser.cpp — the IR text parsers on hostile input.
//
// Graph and kernel files are replayed by people who did not write them (repros, bug reports),
// so any text must give a result or a clear kiln::Error: never a crash, a hang or an internal
// error. Deep nesting is refused at a stated depth (run on a thread with a small stack, where
// an unbounded recursion would crash), and a seeded fuzzer mutates the corpus files (bytes
// flipped, spans cut or repeated, tokens inserted, lines swapped, files truncated): every
// mutant parses (then it verifies, prints and parses back to the same text, and a small one
// runs on the interpreter and the cpu, symbolic sizes drawn) or fails with kiln::Error. KILN_FUZZ_SEED=n replays a run.
#include "kiln/kiln.h"
#include "ir/kernel_text.h"
#include "ir/text.h"
#include "ir/text_lexer.h"
#include "runtime/debug/run_graph.h"
#include "runtime/debug/repro.h"
#include "test_support/check.h"
#include "test_support/files.h"
#include "test_support/small_stack.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace kiln {
namespace {

using test::error_of;

constexpr size_t kSmallStack = 256 << 10;

std::string repeat(const std::string& s, int n) {
  std::string out;
  out.reserve(s.size() * static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

std::string graph_with_size(const std::string& size) {
  return "graph(%x : f32[" + size + "]) {\n  return (%x)\n}\n";
}

TEST(ReliabilityParser, DeepExpressionsAreAParseErrorAtAStatedDepth) {
  const std::string want = "expression nested deeper than " + std::to_string(ir::text::kMaxExprNesting) + " levels";
  test::run_with_stack(kSmallStack, [&] {
    for (const std::string& size : {repeat("(", 100000) + "1" + repeat(")", 100000), repeat("-", 100000) + "1",
                                    repeat("min(", 100000) + "1" + repeat(", 1)", 100000),
                                    repeat("-(", 50000) + "1" + repeat(")", 50000)}) {
      const std::string e = error_of([&] { (void)ir::parse_graph(graph_with_size(size)); });
      EXPECT_NE(e.find(want), std::string::npos) << e.substr(0, 200);
      EXPECT_EQ(e.rfind("[parse] 1:", 0), 0u) << e.substr(0, 200);  // at its position
    }
    // The same in a kernel's index and in a graph attribute.
    const std::string deep = repeat("(", 20000) + "p0" + repeat(")", 20000);
    EXPECT_NE(error_of([&] {
                (void)ir::parse_kernel("kernel k(in0: f32, out0: out f32) grid[p0 < 4] {\n  loop [] {\n    %0 = load in0[" +
                                       deep + "] : f32\n    store out0[p0], %0\n  }\n}\n");
              }).find(want),
              std::string::npos);
    // Below the bound, nesting is fine.
    const auto g = ir::parse_graph(graph_with_size(repeat("(", 200) + "3" + repeat(")", 200)));
    EXPECT_EQ(g->inputs()[0]->type().sizes[0], ir::Expr(3));
  });
}

TEST(ReliabilityParser, LongOperatorChainsDoNotRecurse) {
  // x//2//2//... and 1+1+...: the chain is parsed in a loop; its tree is bounded or simplified.
  test::run_with_stack(kSmallStack, [] {
    for (const std::string& size :
         {"s0" + repeat("//2", 100000), repeat("1+", 100000) + "1", "s0" + repeat("*s0+1", 2000)}) {
      try {
        (void)ir::parse_graph(graph_with_size(size));
      } catch (const Error&) {
      }
    }
  });
}

// ---- the mutation fuzzer ---------------------------------------------------------------------

uint64_t fuzz_seed() {
  if (const char* s = std::getenv("KILN_FUZZ_SEED")) return std::strtoull(s, nullptr, 10);
  return 20261127;
}

const std::vector<std::string> kTokens = {"(",  ")",  "%",   "%99", "[",  "]",   "{",      "}",      ",",   "-",
                                          ":",  "=",  "#",   "\"",  "\\", "s9",  "f32",    "i64",    "nan", "inf",
                                          "0",  "-1", "@cuda:99", "9223372036854775807", "99999999999999999999",
                                          "<",  "//", "%0",  "return", "graph", "kernel", "loop", "yield", "\n",
                                          "s0", "s0*s0", "s1 - 1"};

std::string mutate(std::string s, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
  const int edits = 1 + static_cast<int>(rng() % 3);
  for (int e = 0; e < edits && !s.empty(); ++e) {
    const size_t at = pick(s.size());
    switch (rng() % 6) {
      case 0: s[at] = static_cast<char>(32 + rng() % 95); break;
      case 1: s.erase(at, 1 + pick(16)); break;
      case 2: {
        const size_t len = 1 + pick(std::min<size_t>(64, s.size() - at));
        s.insert(at, s.substr(at, len));
        break;
      }
      case 3: s.insert(at, " " + kTokens[pick(kTokens.size())] + " "); break;
      case 4: s.resize(at); break;
      case 5: {  // swap two lines
        std::vector<std::string> lines;
        size_t p = 0;
        while (p <= s.size()) {
          const size_t q = s.find('\n', p);
          lines.push_back(s.substr(p, q == std::string::npos ? std::string::npos : q - p));
          if (q == std::string::npos) break;
          p = q + 1;
        }
        if (lines.size() > 2) std::swap(lines[pick(lines.size())], lines[pick(lines.size())]);
        s.clear();
        for (size_t i = 0; i < lines.size(); ++i) s += lines[i] + (i + 1 < lines.size() ? "\n" : "");
        break;
      }
    }
  }
  return s;
}

// A mutant graph that parses must verify (the parser runs the verifier), print and parse back
// to the same text, and, when its inputs are small, run on the interpreter and the cpu backend
// without an internal error (a user error is fine: the mutant may make no sense). Symbolic
// sizes take values drawn for the mutant, at which relations the parser could not decide (a
// reshape of [s0] to [s0*s0]) may fail: that too must be a user error, not a read outside a
// tensor (which the ASan pass would report).
void exercise_graph(const std::string& text, std::mt19937_64& rng, std::string& failure) {
  std::unique_ptr<ir::Graph> g;
  try {
    g = ir::parse_graph(text);
  } catch (const Error&) {
    return;
  }
  const std::string printed = ir::print_graph(*g);
  try {
    if (ir::print_graph(*ir::parse_graph(printed)) != printed) failure = "printed graph does not read back the same";
  } catch (const std::exception& e) {
    failure = std::string("printed graph does not parse: ") + e.what();
    return;
  }
  std::map<std::string, int64_t> sizes;
  for (const ir::Value* v : g->inputs()) {
    if (!v->type().device.is_cpu()) return;
    std::vector<std::string> symbols;
    for (const ir::Expr& e : v->type().sizes) e.collect_symbols(symbols);
    for (const std::string& sym : symbols) sizes.emplace(sym, std::array<int64_t, 4>{2, 3, 5, 17}[rng() % 4]);
  }
  int64_t elements = 0;
  for (const ir::Value* v : g->inputs()) {
    std::optional<int64_t> n;
    try {
      n = v->type().numel().evaluate_exact(sizes);
    } catch (const Error&) {  // a division by zero at these sizes (s0//(s0 - 2) at s0 = 2)
      return;
    }
    if (!n || *n < 0 || *n > 4096) return;
    elements += *n;
  }
  if (elements > 4096 || g->num_nodes() > 64) return;
  std::vector<Tensor> inputs;
  try {
    inputs = rt::default_inputs(*g, sizes);
  } catch (const Error&) {
    return;
  }
  for (const char* backend : {"interpreter", "cpu"}) {
    const rt::RunResult r = rt::run_graph(*g, inputs, backend);
    if (r.status == rt::RunResult::Status::InternalError) failure = std::string(backend) + " run: " + r.message;
  }
}

void exercise_kernels(const std::string& text, std::string& failure) {
  std::vector<ir::Kernel> ks;
  try {
    ks = ir::parse_kernels(text);
  } catch (const Error&) {
    return;
  }
  const std::string printed = ir::print_kernels(ks);
  try {
    if (ir::print_kernels(ir::parse_kernels(printed)) != printed) failure = "printed kernels do not read back the same";
  } catch (const std::exception& e) {
    failure = std::string("printed kernels do not parse: ") + e.what();
  }
}

TEST(ReliabilityParser, MutatedCorpusFilesGiveClearErrors) {
  const uint64_t seed = fuzz_seed();
  std::printf("[ fuzz ] KILN_FUZZ_SEED=%llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  std::vector<std::pair<std::string, std::string>> corpus;  // name, text
  for (const char* ext : {".kir", ".kk"})
    for (const auto& p : test::files_with_extension(KILN_TEST_DATA_DIR "/ir_corpus", ext))
      corpus.emplace_back(p.filename().string(), test::read_file(p));
  ASSERT_GT(corpus.size(), 20u);
  int failures = 0, parsed = 0;
  constexpr int kMutants = 400;
  test::run_with_stack(size_t{1} << 20, [&] {
    for (int i = 0; i < kMutants; ++i) {
      const auto& [name, text] = corpus[static_cast<size_t>(rng() % corpus.size())];
      const std::string mutant = mutate(text, rng);
      const bool graph = name.size() > 4 && name.substr(name.size() - 4) == ".kir";
      std::string failure;
      try {
        if (graph)
          exercise_graph(mutant, rng, failure);
        else
          exercise_kernels(mutant, failure);
      } catch (const std::exception& e) {
        failure = std::string("threw ") + e.what();
      }
      if (failure.empty()) continue;
      if (++failures <= 3) ADD_FAILURE() << "mutant " << i << " of " << name << " (seed " << seed << "): " << failure
                                        << "\n--- mutant ---\n" << mutant.substr(0, 3000);
    }
  });
  (void)parsed;
  EXPECT_EQ(failures, 0);
}

}  // namespace
}  // namespace kiln
