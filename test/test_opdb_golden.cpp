// kiln/test/test_opdb_golden.cpp — the op database checked against PyTorch's outputs.
//
// test/opdb_golden/<family>.txt hold, for every sample of every entry, its inputs, its PyTorch
// expression and what PyTorch returned (or "error <message>" where it raised). They are written
// by tools/opdb_golden.py from the file OpDbGolden.Emit prints (docs/testing.md), so CI needs no
// Python. Every mode (eager, traced + interpreter, compiled static and Dynamic::True, the
// interpreter backend) must match PyTorch within the entry's tolerance and raise kiln::Error
// where PyTorch raised.
//
// Record format:
//   begin <entry> <sample>
//   torch: <expression over a0, a1, ...>
//   in f32 [2,3] : 1.5 -0.25 ...                (row-major values of each input)
//   out f32 [2,3] : ...  |  out random f32 [2,3]  |  error <message>
//   end
#include "ir/graph.h"
#include "runtime/program.h"
#include "test_support/opdb.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

namespace kiln {
namespace {

std::string key(const opdb::OpEntry& e, size_t s) { return e.name + "#" + std::to_string(s); }

// KILN_OPDB_EMIT=<dir> writes <dir>/<family>.txt for tools/opdb_golden.py.
TEST(OpDbGolden, Emit) {
  const char* dir = std::getenv("KILN_OPDB_EMIT");
  if (!dir) GTEST_SKIP() << "set KILN_OPDB_EMIT=<dir> to write the samples for tools/opdb_golden.py";
  std::filesystem::create_directories(dir);
  std::map<std::string, std::ofstream> files;
  size_t n = 0;
  for (const opdb::OpEntry& e : opdb::database()) {
    auto it = files.find(e.family);
    if (it == files.end()) it = files.emplace(e.family, std::ofstream(std::filesystem::path(dir) / (e.family + ".txt"))).first;
    for (size_t s = 0; s < e.samples.size(); ++s, ++n) {
      it->second << "begin " << e.name << " " << s << (e.random ? " random" : "") << "\ntorch: " << e.torch << "\n";
      for (const Tensor& t : e.samples[s]) it->second << "in " << opdb::values_line(t) << "\n";
      it->second << "end\n";
    }
  }
  std::printf("[opdb] wrote %zu samples of %zu entries to %s\n", n, opdb::database().size(), dir);
}

// Every sample has a record, made from the same inputs and expression; no record is left over.
TEST(OpDbGolden, FilesAreCurrent) {
  const auto& golden = opdb::golden();
  ASSERT_FALSE(golden.empty()) << "no test/opdb_golden/*.txt";
  std::set<std::string> used;
  for (const opdb::OpEntry& e : opdb::database()) {
    for (size_t s = 0; s < e.samples.size(); ++s) {
      auto it = golden.find(key(e, s));
      if (it == golden.end()) {
        ADD_FAILURE() << key(e, s) << " has no golden value: regenerate test/opdb_golden (docs/testing.md)";
        continue;
      }
      used.insert(it->first);
      EXPECT_EQ(it->second.torch, e.torch) << key(e, s) << ": the expression changed; regenerate test/opdb_golden";
      std::vector<std::string> now;
      for (const Tensor& t : e.samples[s]) now.push_back(opdb::values_line(t));
      EXPECT_EQ(it->second.inputs, now) << key(e, s) << ": the inputs changed; regenerate test/opdb_golden";
    }
  }
  for (const auto& [k, r] : golden) EXPECT_TRUE(used.count(k)) << k << " is in test/opdb_golden but not in the database";
}

// One test per mode (each a ctest of its own, so that CI's two jobs share them).
class OpDbGoldenMode : public ::testing::TestWithParam<opdb::Mode> {};

TEST_P(OpDbGoldenMode, MatchesTorch) {
  const opdb::Mode m = GetParam();
  int checked = 0, errors = 0;
  for (const opdb::OpEntry& e : opdb::database()) {
    for (size_t s = 0; s < e.samples.size(); ++s) {
      auto it = opdb::golden().find(key(e, s));
      if (it == opdb::golden().end()) continue;  // FilesAreCurrent reports it
      const opdb::GoldenRecord& g = it->second;
      SCOPED_TRACE(key(e, s) + " (" + e.torch + "), " + opdb::mode_name(m));
      if (g.error) {
        EXPECT_THROW(opdb::run(e, e.samples[s], m), Error) << "PyTorch raised: " << *g.error;
        ++errors;
        continue;
      }
      std::vector<Tensor> got;
      const int64_t interpreted = rt::interpreted_steps();
      ASSERT_NO_THROW(got = opdb::run(e, e.samples[s], m));
      // Compiled programs run generated kernels and library calls only.
      if (m == opdb::Mode::Compiled || m == opdb::Mode::Dynamic) {
        EXPECT_EQ(rt::interpreted_steps(), interpreted) << "a compiled program ran a prim on the interpreter";
      }
      ASSERT_EQ(got.size(), g.outputs.size());
      for (size_t k = 0; k < got.size(); ++k) {
        const Tensor want = opdb::to_tensor(g.outputs[k]);
        const std::string diff = opdb::compare(want, got[k], opdb::tolerance_of(e, want.dtype()), g.outputs[k].random);
        EXPECT_TRUE(diff.empty()) << "output " << k << ": " << diff;
      }
      ++checked;
    }
  }
  std::printf("[opdb] %s: %d sample runs matched PyTorch, %d raised as PyTorch did\n", opdb::mode_name(m), checked, errors);
  EXPECT_GT(checked, 1500);  // 1778 samples in each mode (2026-12-03)
  EXPECT_GT(errors, 20);
}

std::string mode_test_name(const ::testing::TestParamInfo<opdb::Mode>& i) {
  static const char* const names[] = {"Eager", "Traced", "Compiled", "Dynamic", "InterpreterBackend"};
  return names[i.index];
}

INSTANTIATE_TEST_SUITE_P(Modes, OpDbGoldenMode, ::testing::ValuesIn(opdb::kModes), mode_test_name);

// Every op of ir/ops.def is recorded by some entry's traced program.
TEST(OpDbGolden, EveryOpHasAnEntry) {
  std::set<int> seen;
  for (const opdb::OpEntry& e : opdb::database()) {
    for (const opdb::Sample& in : e.samples) {
      try {
        TracedProgram p = trace(e.fn, in);
        for (const ir::Node* n : p.graph->nodes()) seen.insert(static_cast<int>(n->op()));
      } catch (const Error&) {
      }
    }
  }
  for (int k = 0; k < ir::kNumOps; ++k)
    EXPECT_TRUE(seen.count(k)) << ir::op_name(static_cast<ir::OpKind>(k)) << " has no entry in the op database";
}

}  // namespace
}  // namespace kiln
