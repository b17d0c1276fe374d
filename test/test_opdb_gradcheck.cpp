// kiln/test/test_opdb_gradcheck.cpp — every differentiable op-database sample's eager gradient
// against f64 central finite differences (test_support/grad_check.h: PyTorch's gradcheck, with
// its tolerances). The compiled and Dynamic::True gradients are checked against finite
// differences of the compiled function in test_opdb_golden_grad.cpp, which compiles each
// sample's training entry once for both references.
//
// Random entries are left out (a dropout's draw differs per call; test_autograd_eager.cpp checks
// its mask), and so are the entries of opdb::not_by_differences. One test per op family, so that
// CTest runs them in parallel.
#include "test_support/grad_check.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <set>

namespace kiln {
namespace {

TEST(GradCheckFamilies, EveryFamilyIsChecked) {
  std::set<std::string> listed(opdb::families().begin(), opdb::families().end());
  for (const opdb::OpEntry& e : opdb::database()) EXPECT_TRUE(listed.count(e.family)) << e.family;
}

class GradCheck : public ::testing::TestWithParam<std::string> {};

TEST_P(GradCheck, EagerMatchesFiniteDifferences) {
  opdb::GradCheckTally tally;
  for (const opdb::OpEntry& e : opdb::database()) {
    if (e.family != GetParam() || e.random || opdb::not_by_differences(e.name)) continue;
    for (size_t s = 0; s < e.samples.size(); ++s) {
      SCOPED_TRACE(e.name + " sample " + std::to_string(s));
      const std::optional<opdb::GradRun> r = opdb::grad_run(e, e.samples[s]);
      if (r && !r->diff_outputs.empty()) opdb::check_finite_differences(*r, opdb::grads_of(*r), tally);
    }
  }
  std::printf("[gradcheck] %s: %d samples, %d elements checked, %d non-smooth elements skipped\n",
              GetParam().c_str(), tally.samples, tally.elements, tally.skipped_kinks);
}

INSTANTIATE_TEST_SUITE_P(Families, GradCheck, ::testing::ValuesIn(opdb::families()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace kiln
