// kiln/test/test_fuzz_golden.cpp — fuzz programs checked against PyTorch's outputs.
//
// test/fuzz_golden/*.txt hold seeded programs in text form with their inputs' values and
// PyTorch's outputs (or "error"), written by tools/fuzz_golden.py from the programs this file
// emits when KILN_FUZZ_EMIT=<path> is set (FuzzGolden.Emit; docs/testing.md). Every mode
// (eager, interpreter, compiled static and Dynamic::True) must match torch within the fuzzer's
// tolerances, and raise kiln::Error where torch raised.
//
// Record format (one block per program):
//   begin
//   <program text>
//   torch: v3 = torch.add(v1, v2)          (emitted file only)
//   input %0 f32 [2,3] : 1.5 -0.25 ...     (row-major logical values, variant 0 sizes)
//   out 0 f32 [2,3] : ...  |  out 0 random f32 [2,3]  |  error <message>
//   end
#include "test_support/fuzz_program.h"
#include "test_support/make.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

namespace kiln::fuzz {
namespace {

constexpr uint64_t kForwardGoldenSeed = 900000;

// The emitter: KILN_FUZZ_EMIT=path [KILN_FUZZ_ITERS=n] [KILN_FUZZ_SEED=s] writes n programs
// (seeds s, s + 1, ...; 900000 by default, the committed files' seeds) for fuzz_golden.py.
TEST(FuzzGolden, Emit) {
  const char* path = std::getenv("KILN_FUZZ_EMIT");
  if (!path) GTEST_SKIP() << "set KILN_FUZZ_EMIT=<file> to write programs for tools/fuzz_golden.py";
  GenOptions o;
  o.max_steps = 6;
  write_golden_heads(path, env_u64("KILN_FUZZ_SEED", kForwardGoldenSeed), env_u64("KILN_FUZZ_ITERS", 300), o);
}

// KILN_FUZZ_GOLDEN_DIR=dir checks another directory of golden files (a longer campaign against
// torch with other seeds) instead of test/fuzz_golden.
TEST(FuzzGolden, MatchesTorch) {
  const char* other = std::getenv("KILN_FUZZ_GOLDEN_DIR");
  const std::filesystem::path dir = other ? std::filesystem::path(other) : std::filesystem::path(KILN_TEST_DATA_DIR) / "fuzz_golden";
  ASSERT_TRUE(std::filesystem::exists(dir)) << dir;
  RunStats stats;
  int reported = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".txt") continue;
    for (const GoldenRecord& r : read_golden_records(entry.path().string())) {
      Program p = Program::parse(r.program);
      const std::vector<Tensor> inputs = golden_inputs(p, r);
      const bool error = !r.results.empty() && r.results[0].rfind("error", 0) == 0;
      std::vector<Tensor> expected;
      if (!error) {
        for (const std::string& o : r.results) {
          const bool random = o.find(" random ") != std::string::npos;
          ScalarType dt;
          std::vector<int64_t> shape;
          std::vector<double> vals;
          parse_value_line(o, random ? 3 : 2, &dt, &shape, &vals);
          if (random) {
            int64_t n = 1;
            for (int64_t s : shape) n *= s;
            vals.assign(static_cast<size_t>(std::max<int64_t>(0, n)), 0.0);
          }
          expected.push_back(tensor_of(dt, shape, vals));
        }
      }
      for (const Failure& f : run_against(p, inputs, expected, error, stats, error ? r.results[0] : std::string())) {
        if (reported++ < 10)
          ADD_FAILURE() << "[fuzz golden] " << entry.path().filename().string() << ", " << mode_name(f.mode) << ": " << f.message
                        << "\n" << r.program << (error ? r.results[0] : "");
      }
    }
  }
  std::printf("[fuzz golden] %lld programs, %lld runs, %lld mismatches, %lld expected errors\n",
              static_cast<long long>(stats.programs), static_cast<long long>(stats.runs),
              static_cast<long long>(stats.mismatches), static_cast<long long>(stats.errors_expected));
  EXPECT_GT(stats.programs, 0);
  EXPECT_EQ(stats.mismatches, 0);
}

}  // namespace
}  // namespace kiln::fuzz
