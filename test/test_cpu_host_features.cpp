// kiln/test/test_cpu_host_features.cpp — the host's CPU features (base/host_cpu.h) as the CPUID instruction gives them.
//
// The feature words come from glibc's copy of the CPUID leaves where glibc has one (read once
// while the process started; CPUID traps to the hypervisor in a VM): they must equal the
// instruction's, and the answers derived from them must agree with each other.
#include "base/host_cpu.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace kiln {
namespace {

TEST(HostCpu, TheLeavesAreTheInstructions) {
  std::printf("[ note ] the leaves come from %s\n", host_cpu_leaves_from_glibc() ? "glibc's copy" : "the CPUID instruction");
  EXPECT_EQ(cpuid_feature_words_for_testing(), "");
}

TEST(HostCpu, AnswersAgree) {
  const std::string words = host_feature_words();
  EXPECT_EQ(missing_host_features(words), "") << words;
  EXPECT_EQ(host_vector_bits(), host_has_avx512() ? 512 : host_has_avx2() ? 256 : 128);
  if (host_has_avx512()) {
    EXPECT_TRUE(host_has_avx2());
  }
  if (host_has_avx512_clmul()) {
    EXPECT_TRUE(host_has_avx512());
  }
  // Every x86-64 CPU has SSE2 (leaf 1 EDX bit 26): the leaves were read.
  EXPECT_NE(words.find("1d:"), std::string::npos) << words;
  EXPECT_EQ(missing_host_features("1d:4000000"), "") << words;
  EXPECT_NE(host_cpu_key().find("xcr0:"), std::string::npos);
}

}  // namespace
}  // namespace kiln
