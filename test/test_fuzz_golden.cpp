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

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace kiln::fuzz {
namespace {

constexpr uint64_t kGoldenSeed = 900000;

std::string values_text(const Tensor& t) {
  std::string s;
  for (double v : t.to_vector<double>()) s += " " + fmt_double(v);
  return s;
}

// The emitter: KILN_FUZZ_EMIT=path [KILN_FUZZ_ITERS=n] writes n programs for fuzz_golden.py.
TEST(FuzzGolden, Emit) {
  const char* path = std::getenv("KILN_FUZZ_EMIT");
  if (!path) GTEST_SKIP() << "set KILN_FUZZ_EMIT=<file> to write programs for tools/fuzz_golden.py";
  const uint64_t n = env_u64("KILN_FUZZ_ITERS", 300);
  std::ofstream out(path);
  for (uint64_t i = 0; i < n; ++i) {
    GenOptions o;
    o.max_steps = 6;
    Program p = generate(kGoldenSeed + i, o);
    out << "begin\n" << p.text();
    std::vector<Tensor> in = make_inputs(p, 0);
    for (size_t k = 0; k < p.nodes.size(); ++k) {
      const Node& node = p.nodes[k];
      if (node.op == "input") continue;
      std::vector<std::string> names;
      for (int a : node.args) names.push_back("v" + std::to_string(a));
      out << "torch: v" << k << " = " << find_op(node.op)->torch(names, node.attrs) << "\n";
    }
    std::vector<int> ids = p.input_ids();
    for (size_t k = 0; k < ids.size(); ++k)
      out << "input %" << ids[k] << " " << dtype_text(in[k].dtype()) << " " << fmt_ints(in[k].sizes().vec()) << " :"
          << values_text(in[k]) << "\n";
    out << "end\n";
  }
  std::printf("[fuzz] wrote %llu programs to %s\n", static_cast<unsigned long long>(n), path);
}

struct Record {
  std::string program;
  std::vector<std::string> inputs, outs;
};

std::vector<Record> read_records(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::vector<Record> recs;
  std::string line;
  Record r;
  while (std::getline(in, line)) {
    if (line == "begin") r = Record{};
    else if (line == "end") recs.push_back(r);
    else if (line.rfind("input %", 0) == 0) r.inputs.push_back(line);
    else if (line.rfind("out ", 0) == 0 || line.rfind("error", 0) == 0) r.outs.push_back(line);
    else r.program += line + "\n";
  }
  return recs;
}

// "<dtype> [shape] : values" after the first `skip` tokens.
Tensor parse_values(const std::string& line, int skip, ScalarType* dt, std::vector<int64_t>* shape, std::vector<double>* vals) {
  std::istringstream ss(line);
  std::string tok;
  for (int i = 0; i < skip; ++i) ss >> tok;
  ss >> tok;
  *dt = dtype_parse(tok);
  ss >> tok;
  Attrs a;
  a.set("s", tok);
  *shape = a.ints("s");
  ss >> tok;  // ':'
  vals->clear();
  while (ss >> tok) vals->push_back(tok == "nan" ? NAN : tok == "inf" ? INFINITY : tok == "-inf" ? -INFINITY : std::stod(tok));
  return Tensor();
}

TEST(FuzzGolden, MatchesTorch) {
  const std::filesystem::path dir = std::filesystem::path(KILN_TEST_DATA_DIR) / "fuzz_golden";
  ASSERT_TRUE(std::filesystem::exists(dir)) << dir;
  RunStats stats;
  int reported = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".txt") continue;
    for (const Record& r : read_records(entry.path())) {
      Program p = Program::parse(r.program);
      std::vector<Tensor> inputs;
      std::vector<int> ids = p.input_ids();
      ASSERT_EQ(ids.size(), r.inputs.size()) << r.program;
      for (size_t k = 0; k < ids.size(); ++k) {
        ScalarType dt;
        std::vector<int64_t> shape;
        std::vector<double> vals;
        parse_values(r.inputs[k], 2, &dt, &shape, &vals);
        inputs.push_back(build_input(p, ids[k], 0, vals));
      }
      const bool error = !r.outs.empty() && r.outs[0].rfind("error", 0) == 0;
      std::vector<Tensor> expected;
      if (!error) {
        for (const std::string& o : r.outs) {
          const bool random = o.find(" random ") != std::string::npos;
          ScalarType dt;
          std::vector<int64_t> shape;
          std::vector<double> vals;
          parse_values(o, random ? 3 : 2, &dt, &shape, &vals);
          if (random) vals.assign(static_cast<size_t>(std::max<int64_t>(0, [&] { int64_t n = 1; for (int64_t s : shape) n *= s; return n; }())), 0.0);
          expected.push_back(dispatch_dtype(dt, [&](auto tag) {
            using T = decltype(tag);
            std::vector<T> x;
            for (double v : vals) {
              if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) x.push_back(T(static_cast<float>(v)));
              else x.push_back(static_cast<T>(v));
            }
            return test::make<T>(x, shape);
          }));
        }
      }
      for (const Failure& f : run_against(p, inputs, expected, error, stats)) {
        if (reported++ < 10)
          ADD_FAILURE() << "[fuzz golden] " << entry.path().filename().string() << ", " << mode_name(f.mode) << ": " << f.message
                        << "\n" << r.program << (error ? r.outs[0] : "");
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
