// kiln/test/test_fusion_schedule.cpp — the schedule passes (passes/schedule.h) on text kernels.
//
// Each test/schedule_corpus/*.kk file names a pass (`# PASS: schedule_loops`) and a target
// (`# TARGET: vector_bits=512 l1d_bytes=49152 sms=132`, the rest ScheduleTarget's defaults),
// or for simplify_indices the symbol facts (`# FACTS: s0>=2 s1<=64`, passes/simplify_indices.h),
// holds kernels as lowering leaves them, and states in CHECK lines (test_fusion_check.h) what
// the pass makes of them. Every file also checks that the scheduled text parses back to the
// same kernels and that a second run of the pass changes nothing. The pipeline runs the
// same passes (runtime/pipeline.cpp), and the fusion corpus checks the plans they end in.
#include "ir/kernel_text.h"
#include "passes/online_softmax.h"
#include "passes/schedule.h"
#include "passes/simplify_indices.h"
#include "test_fusion_check.h"

#include "test_support/files.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

namespace kiln {
namespace {

namespace fs = std::filesystem;

struct Spec {
  std::string pass;
  passes::ScheduleTarget target;
  ir::ExprFacts facts;
};

// The `# PASS:` and `# TARGET:` lines of a corpus file.
Spec read_spec(const std::string& text) {
  Spec s;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# PASS:", 0) == 0) {
      std::istringstream w(line.substr(7));
      w >> s.pass;
    } else if (line.rfind("# TARGET:", 0) == 0) {
      std::istringstream w(line.substr(9));
      for (std::string kv; w >> kv;) {
        const size_t eq = kv.find('=');
        if (eq == std::string::npos) throw std::invalid_argument("TARGET field without '=': " + kv);
        const std::string key = kv.substr(0, eq);
        const int64_t v = std::stoll(kv.substr(eq + 1));
        if (key == "vector_bits") s.target.vector_bits = static_cast<int>(v);
        else if (key == "l1d_bytes") s.target.l1d_bytes = v;
        else if (key == "sms") s.target.sms = v;
        else throw std::invalid_argument("unknown TARGET field " + key);
      }
    } else if (line.rfind("# FACTS:", 0) == 0) {
      std::istringstream w(line.substr(8));
      for (std::string f; w >> f;) {
        const size_t ge = f.find(">="), le = f.find("<=");
        const size_t at = ge != std::string::npos ? ge : le;
        if (at == std::string::npos) throw std::invalid_argument("FACTS entry without >= or <=: " + f);
        const int64_t v = std::stoll(f.substr(at + 2));
        s.facts.set_range(f.substr(0, at), ge != std::string::npos ? ir::Range{v, ir::Range::kPosInf}
                                                                    : ir::Range{ir::Range::kNegInf, v});
      }
    }
  }
  return s;
}

bool run_pass(const Spec& spec, ir::Kernel& k) {
  const std::string& pass = spec.pass;
  const passes::ScheduleTarget& t = spec.target;
  if (pass == "simplify_indices") return passes::simplify_indices(k, spec.facts);
  if (pass == "schedule_tiles") return passes::schedule_tiles(k, t);
  if (pass == "schedule_loops") return passes::schedule_loops(k, t);
  if (pass == "schedule_launch") return passes::schedule_launch(k, t);
  if (pass == "online_softmax") return passes::online_softmax(k, t);
  throw std::invalid_argument("unknown pass '" + pass + "'");
}

std::vector<std::string> schedule_files() {
  std::vector<std::string> names;
  for (const fs::path& p : test::files_with_extension(fs::path(KILN_TEST_DATA_DIR) / "schedule_corpus", ".kk"))
    names.push_back(p.filename().string());
  return names;
}

class ScheduleCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(ScheduleCorpus, PassMatchesItsChecks) {
  const std::string text = test::read_file(fs::path(KILN_TEST_DATA_DIR) / "schedule_corpus" / GetParam());
  const Spec spec = read_spec(text);
  ASSERT_FALSE(spec.pass.empty()) << GetParam() << " has no '# PASS:' line";
  const std::vector<test::CheckDirective> checks = test::parse_checks(text);
  ASSERT_FALSE(checks.empty()) << GetParam() << " has no CHECK lines";
  std::vector<ir::Kernel> kernels = ir::parse_kernels(text);
  ASSERT_FALSE(kernels.empty());
  for (ir::Kernel& k : kernels) run_pass(spec, k);
  const std::string out = ir::print_kernels(kernels);
  EXPECT_EQ(test::match_checks(checks, out), "") << out;
  // The schedule is part of the text format: it parses back to the same kernels.
  EXPECT_EQ(ir::parse_kernels(out), kernels) << out;
  // A pass is idempotent.
  for (ir::Kernel& k : kernels) EXPECT_FALSE(run_pass(spec, k)) << k.name;
}

INSTANTIATE_TEST_SUITE_P(Files, ScheduleCorpus, ::testing::ValuesIn(schedule_files()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string n = i.param.substr(0, i.param.find('.'));
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(SchedulePasses, EveryPassIsInTheCorpus) {
  std::string all;
  for (const std::string& f : schedule_files())
    all += test::read_file(fs::path(KILN_TEST_DATA_DIR) / "schedule_corpus" / f);
  for (const char* pass : {"simplify_indices", "schedule_tiles", "schedule_loops", "schedule_launch", "online_softmax"})
    EXPECT_NE(all.find(std::string("# PASS: ") + pass), std::string::npos) << pass << " has no text test";
}

// The launch rules a launcher evaluates (ir/kernel.h), at their edges.
TEST(SchedulePasses, LaunchRules) {
  EXPECT_EQ(ir::threads_for_work(1), 32);
  EXPECT_EQ(ir::threads_for_work(128), 32);
  EXPECT_EQ(ir::threads_for_work(129), 64);
  EXPECT_EQ(ir::threads_for_work(1000), 256);
  EXPECT_EQ(ir::threads_for_work(1 << 20), 1024);
  ir::KLaunch point;
  point.kind = ir::LaunchKind::ThreadPerPoint;
  point.threads = 256;
  EXPECT_EQ(ir::blocks_for(point, 1000, 256, 132), 4);
  EXPECT_EQ(ir::blocks_for(point, 1 << 30, 256, 132), 132 * 16);
  EXPECT_EQ(ir::blocks_for(point, 0, 256, 132), 1);
  point.vector = 4;  // four points per thread
  EXPECT_EQ(ir::blocks_for(point, 4096, 256, 132), 4);
  EXPECT_EQ(ir::blocks_for(point, 4100, 256, 132), 5);
  ir::KLaunch block;
  block.kind = ir::LaunchKind::BlockPerPoint;
  EXPECT_EQ(ir::blocks_for(block, 64, 256, 132), 64);
  EXPECT_EQ(ir::blocks_for(block, 1 << 20, 256, 132), 132 * 8 * 4);
}

}  // namespace
}  // namespace kiln
