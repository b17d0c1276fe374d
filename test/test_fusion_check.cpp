// kiln/test/test_fusion_check.cpp — the CHECK matcher of the fusion corpus checks itself.
//
// The corpus tests are only as strict as their matcher: these cases show that each directive
// fails when its expectation does not hold (order, adjacency, absence, counts) and that typos
// in directives are errors rather than silently ignored lines.
#include "test_fusion_check.h"

#include <gtest/gtest.h>

namespace kiln::test {
namespace {

const char* kOut =
    "b0: input f32[4]\n"
    "b1: temp f32[4] in slot0\n"
    "b2: output f32[4]\n"
    "kernel k0(b0 -> b1)\n"
    "kernel k1(b1 -> b2)\n"
    "  reduce sum [r0 < 4]\n"
    "  yield %1\n";

std::string match(const std::string& directives) { return match_checks(parse_checks(directives), kOut); }

TEST(FusionCheck, ParsesDirectives) {
  std::vector<CheckDirective> d = parse_checks(
      "# a comment\n"
      "graph() {\n"
      "# CHECK-KERNELS: 2\n"
      "  # CHECK: kernel k0  \n"
      "# CHECK-NEXT: k1\n"
      "# CHECK-NOT: temp\n"
      "# CHECK-COUNT-3: b\n"
      "# CHECK-KERNELS-MAX: 5\n"
      "# CHECK-EXTERNS: 0\n");
  ASSERT_EQ(d.size(), 7u);
  EXPECT_EQ(d[0].kind, CheckKind::Kernels);
  EXPECT_EQ(d[0].n, 2);
  EXPECT_EQ(d[0].source_line, 3);
  EXPECT_EQ(d[1].kind, CheckKind::Check);
  EXPECT_EQ(d[1].text, "kernel k0");
  EXPECT_EQ(d[2].kind, CheckKind::Next);
  EXPECT_EQ(d[3].kind, CheckKind::Not);
  EXPECT_EQ(d[4].kind, CheckKind::Count);
  EXPECT_EQ(d[4].n, 3);
  EXPECT_EQ(d[4].text, "b");
  EXPECT_EQ(d[5].kind, CheckKind::KernelsMax);
  EXPECT_EQ(d[5].n, 5);
  EXPECT_EQ(d[6].kind, CheckKind::Externs);
  EXPECT_EQ(d[6].n, 0);
}

TEST(FusionCheck, TyposAreErrors) {
  EXPECT_THROW(parse_checks("# CHECK-NXT: x\n"), std::invalid_argument);
  EXPECT_THROW(parse_checks("# CHECK x\n"), std::invalid_argument);
  EXPECT_THROW(parse_checks("# CHECK-KERNELS: one\n"), std::invalid_argument);
  EXPECT_THROW(parse_checks("# CHECK:\n"), std::invalid_argument);
  EXPECT_THROW(parse_checks("# CHECK-COUNT-: x\n"), std::invalid_argument);
}

TEST(FusionCheck, ChecksMatchInOrder) {
  EXPECT_EQ(match("# CHECK: kernel k0\n# CHECK: kernel k1\n# CHECK: yield\n"), "");
  EXPECT_EQ(match("# CHECK: kernel k1\n# CHECK: kernel k0\n"),
            "CHECK (line 2): 'kernel k0' not found after output line 5");
  EXPECT_EQ(match("# CHECK: nothing like this\n"), "CHECK (line 1): 'nothing like this' not found after output line 0");
  // The same line cannot match two CHECKs.
  EXPECT_NE(match("# CHECK: kernel k1\n# CHECK: kernel k1\n"), "");
}

TEST(FusionCheck, NextMeansTheFollowingLine) {
  EXPECT_EQ(match("# CHECK: kernel k0\n# CHECK-NEXT: kernel k1\n# CHECK-NEXT: reduce\n"), "");
  EXPECT_EQ(match("# CHECK: kernel k0\n# CHECK-NEXT: reduce\n"),
            "CHECK-NEXT (line 2): 'reduce' not on output line 5: kernel k1(b1 -> b2)");
  EXPECT_NE(match("# CHECK-NEXT: b0\n"), "");
}

TEST(FusionCheck, NotHoldsBetweenMatches) {
  EXPECT_EQ(match("# CHECK-NOT: kernel\n# CHECK: output\n"), "");
  EXPECT_EQ(match("# CHECK-NOT: temp\n# CHECK: output\n"),
            "CHECK-NOT (line 1): 'temp' found on output line 2: b1: temp f32[4] in slot0");
  // A trailing CHECK-NOT covers the rest of the output.
  EXPECT_EQ(match("# CHECK: kernel k1\n# CHECK-NOT: temp\n"), "");
  EXPECT_NE(match("# CHECK: kernel k1\n# CHECK-NOT: yield\n"), "");
  EXPECT_NE(match("# CHECK-NOT: slot0\n"), "");
}

TEST(FusionCheck, CountIsExact) {
  EXPECT_EQ(match("# CHECK-COUNT-2: kernel\n"), "");
  EXPECT_EQ(match("# CHECK-COUNT-1: kernel\n"), "CHECK-COUNT-1 (line 1): 'kernel' is on 2 lines");
  EXPECT_EQ(match("# CHECK-COUNT-0: extern\n"), "");
}

}  // namespace
}  // namespace kiln::test
