// kiln/test/test_fuzz_diff.cpp — the differential fuzzer: seeded random programs over every
// op, run eager, compiled (static and Dynamic::True at two sizes) and on the interpreter.
//
// KILN_FUZZ_SEED (default: fixed) and KILN_FUZZ_ITERS (default: kDefaultIters, fewer under
// AddressSanitizer) choose the programs; program i uses seed + i, so a failure's seed replays
// it alone: KILN_FUZZ_SEED=<printed seed> KILN_FUZZ_ITERS=1 (a large program, every 40th: the
// 40th of 40). Each failure prints the seed, the command that replays it, the mode and the
// program text (docs/testing.md).
#include "ir/graph.h"
#include "ir/op.h"
#include "test_support/fuzz_program.h"
#include "test_support/sanitizer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <set>

namespace kiln::fuzz {
namespace {

// The budget CI runs: 600 programs in Debug, 1500 in Release (the same seeds and more), 60
// under AddressSanitizer — about 100, 180 and 60 s on the 2-core machine.
#if defined(NDEBUG)
constexpr uint64_t kPlainIters = 1500;
#else
constexpr uint64_t kPlainIters = 600;
#endif
constexpr uint64_t kDefaultIters = test::kAddressSanitizer ? 60 : kPlainIters;
constexpr uint64_t kDefaultSeed = 20261123;

GenOptions options_for(uint64_t i) {
  GenOptions o;
  o.large = i % 40 == 39;
  return o;
}

// The programs run in kShards tests of consecutive seeds (each a ctest of its own), so that
// CI's two jobs share them instead of one job running all of them last.
constexpr uint64_t kShards = 4;

class FuzzDiffShard : public ::testing::TestWithParam<uint64_t> {};

TEST_P(FuzzDiffShard, RandomPrograms) {
  const uint64_t seed = env_u64("KILN_FUZZ_SEED", kDefaultSeed);
  const uint64_t iters = env_u64("KILN_FUZZ_ITERS", kDefaultIters);
  const uint64_t shard = GetParam(), begin = iters * shard / kShards, end = iters * (shard + 1) / kShards;
  std::printf("[fuzz] KILN_FUZZ_SEED=%llu KILN_FUZZ_ITERS=%llu, shard %llu of %llu: programs [%llu, %llu)\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(iters),
              static_cast<unsigned long long>(shard), static_cast<unsigned long long>(kShards),
              static_cast<unsigned long long>(begin), static_cast<unsigned long long>(end));
  const auto t0 = std::chrono::steady_clock::now();
  RunStats stats;
  int reported = 0;
  for (uint64_t i = begin; i < end; ++i) {
    const uint64_t s = seed + i;
    Program p = generate(s, options_for(i));
    for (const Failure& f : run_program(p, stats)) {
      // A large program is the 40th of its run, so it replays as the last of 40 (in shard 3).
      const std::string replay = options_for(i).large
                                     ? "KILN_FUZZ_SEED=" + std::to_string(s - 39) + " KILN_FUZZ_ITERS=40, the 40th"
                                     : "KILN_FUZZ_SEED=" + std::to_string(s) + " KILN_FUZZ_ITERS=1";
      if (reported++ < 10)
        ADD_FAILURE() << "[fuzz] seed " << s << " (" << replay << "), " << mode_name(f.mode) << ": " << f.message << "\n"
                      << p.text();
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[fuzz] %lld programs, %lld runs, %lld mismatches, %lld expected errors, %.1f s\n",
              static_cast<long long>(stats.programs), static_cast<long long>(stats.runs),
              static_cast<long long>(stats.mismatches), static_cast<long long>(stats.errors_expected), secs);
  EXPECT_EQ(stats.mismatches, 0) << "seed " << seed;
}

INSTANTIATE_TEST_SUITE_P(Shards, FuzzDiffShard, ::testing::Range<uint64_t>(0, kShards));

// KILN_FUZZ_PROGRAM=<file> runs one program written in text form (a failure's printed text,
// edited down by hand to a minimal repro).
TEST(FuzzDiff, ReplayFile) {
  const char* path = std::getenv("KILN_FUZZ_PROGRAM");
  if (!path) GTEST_SKIP() << "set KILN_FUZZ_PROGRAM=<file> to run one program";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  Program p = Program::parse(text.str());
  RunStats stats;
  for (const Failure& f : run_program(p, stats)) ADD_FAILURE() << mode_name(f.mode) << ": " << f.message << "\n" << p.text();
}

// Programs print and parse back to the same text.
TEST(FuzzDiff, TextRoundTrip) {
  for (uint64_t s = 1; s <= 200; ++s) {
    Program p = generate(s);
    std::string text = p.text();
    EXPECT_EQ(Program::parse(text).text(), text);
  }
}

// Every op of ir/ops.def is reached: the traced graphs of generated programs (before
// decomposition) contain every op kind.
TEST(FuzzDiff, CoversEveryOp) {
  // Core ops defined by their decomposition (pooling, native norms, sort, ...) are exactly the
  // prims they record, which the fuzzer reaches; the op database runs each of them in every
  // mode against PyTorch (OpDbGolden.EveryOpHasAnEntry).
  // detach is an identity for values that only autograd reads (a gradient stops there); the
  // programs here are not differentiated, and the op database runs it in every mode.
  std::set<ir::OpKind> wanted;
  for (int k = 0; k < ir::kNumOps; ++k) {
    const auto op = static_cast<ir::OpKind>(k);
    if (op != ir::OpKind::detach && !ir::op_info(op).has(ir::traits::ShapeByDecomposition)) wanted.insert(op);
  }
  uint64_t programs = 0;
  for (uint64_t s = 1; s <= 1500 && !wanted.empty(); ++s, ++programs) {
    Program p = generate(s, options_for(s));
    std::vector<Tensor> in = make_inputs(p, 0);
    try {
      TracedProgram tp = trace([&](const std::vector<Tensor>& x) { return replay(p, x); }, in);
      for (const ir::Node* n : tp.graph->nodes()) wanted.erase(n->op());
    } catch (const std::exception&) {
    }
  }
  std::string missing;
  for (ir::OpKind op : wanted) missing += " " + std::string(ir::op_name(op));
  EXPECT_TRUE(missing.empty()) << "ops no generated program reaches:" << missing;
  std::printf("[fuzz] every op reached by the first %llu programs\n", static_cast<unsigned long long>(programs));
}

}  // namespace
}  // namespace kiln::fuzz
