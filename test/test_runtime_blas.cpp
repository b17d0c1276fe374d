// kiln/test/test_runtime_blas.cpp — OpenBLAS is opened with the kernel set the host can run.
//
// The test process never links OpenBLAS, so blas() is the first to load it: with no
// OPENBLAS_CORETYPE of the user's, the kernel set OpenBLAS reports must be the one kiln chose
// from the CPU's features, not the SSE3 fallback its model table picks on unknown CPUs.
#include "runtime/cpu/blas_library.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

namespace kiln::rt {
namespace {

TEST(BlasLibrary, RunsTheKernelSetChosenFromTheCpuFeatures) {
  const char* user_choice = std::getenv("OPENBLAS_CORETYPE");
  const std::string chosen = blas_core_for_host();
  const BlasLibrary& b = blas();
  ASSERT_NE(b.sgemm, nullptr);
  ASSERT_NE(b.dgemm, nullptr);
  EXPECT_FALSE(b.core.empty());
  if (user_choice == nullptr && !chosen.empty()) {
    EXPECT_EQ(b.core, chosen);
  }
  EXPECT_EQ(std::getenv("OPENBLAS_CORETYPE"), user_choice) << "the choice must not leak into child processes";
}

TEST(BlasLibrary, SgemmAndDgemmComputeARowMajorProduct) {
  // [2, 3] @ [3, 2] and the same with b transposed.
  const std::vector<float> a{1, 2, 3, 4, 5, 6}, b{7, 8, 9, 10, 11, 12}, bt{7, 9, 11, 8, 10, 12};
  std::vector<float> c(4), ct(4);
  const BlasLibrary& l = blas();
  l.sgemm(BlasLibrary::kRowMajor, BlasLibrary::kNoTrans, BlasLibrary::kNoTrans, 2, 2, 3, 1.0f, a.data(), 3, b.data(), 2,
          0.0f, c.data(), 2);
  l.sgemm(BlasLibrary::kRowMajor, BlasLibrary::kNoTrans, BlasLibrary::kTrans, 2, 2, 3, 1.0f, a.data(), 3, bt.data(), 3,
          0.0f, ct.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{58, 64, 139, 154}));
  EXPECT_EQ(ct, c);
  const std::vector<double> ad(a.begin(), a.end()), bd(b.begin(), b.end());
  std::vector<double> cd(4);
  l.dgemm(BlasLibrary::kRowMajor, BlasLibrary::kNoTrans, BlasLibrary::kNoTrans, 2, 2, 3, 1.0, ad.data(), 3, bd.data(),
          2, 0.0, cd.data(), 2);
  EXPECT_EQ(cd, (std::vector<double>{58, 64, 139, 154}));
}

}  // namespace
}  // namespace kiln::rt
