// kiln/test/test_cuda_cublaslt.cpp — the cuBLASLt loader and the matmul's argument checks, without a GPU.
//
// Where the toolkit's libcublasLt.so.13 is installed the loader must bind every entry point
// (no GPU is needed for that); elsewhere the test skips with the loader's reason. Bad arguments
// (a negative or zero dimension, a null operand, strides that are neither row- nor column-major)
// throw a kiln::Error naming [matmul] before any library or device is touched, with or
// without cuBLASLt. Running matmuls on a GPU is tested elsewhere.
#include "codegen_cuda/cublaslt.h"

#include "base/error.h"

#include "test_support/check.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>

namespace kiln::test {
namespace {

constexpr const char* kToolkitLibrary = "/usr/local/cuda/lib64/libcublasLt.so.13";

using test::error_of;

// A well-formed 2 x 3 times 3 x 4 f32 problem on pointers that are never dereferenced: every
// case below breaks one argument, which the checks reject before cuBLASLt is called.
cuda::LtMatmul valid_problem() {
  static float storage[64];
  cuda::LtMatmul p;
  p.m = 2;
  p.n = 4;
  p.k = 3;
  p.a = storage;
  p.a_rs = 3;
  p.b = storage;
  p.b_rs = 4;
  p.c = storage;
  return p;
}

TEST(CudaCublasLt, LoadsWhereTheToolkitIs) {
  std::string why;
  const bool available = cuda::cublaslt_available(&why);
  if (!std::filesystem::exists(kToolkitLibrary)) {
    if (!available) {
      EXPECT_NE(why.find("libcublasLt.so.13"), std::string::npos) << why;
    }
    GTEST_SKIP() << kToolkitLibrary << " is not installed" << (available ? "" : ": " + why);
  }
  ASSERT_TRUE(available) << why;
  EXPECT_TRUE(why.empty()) << why;
  EXPECT_EQ(cuda::cublaslt_version().rfind("13.", 0), 0u) << cuda::cublaslt_version();
}

TEST(CudaCublasLt, BadArgumentsThrowBeforeTouchingTheDevice) {
  auto expect_error = [](const cuda::LtMatmul& p, const std::string& fragment) {
    const std::string msg = error_of([&] { cuda::cublaslt_matmul(p); });
    EXPECT_EQ(msg.rfind("[matmul] cuBLASLt", 0), 0u) << msg;
    EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
  };
  cuda::LtMatmul p = valid_problem();
  p.m = -1;
  expect_error(p, "m -1");
  p = valid_problem();
  p.k = 0;
  expect_error(p, "k 0");
  p = valid_problem();
  p.batch = 0;
  expect_error(p, "batch 0");
  p = valid_problem();
  p.b = nullptr;
  expect_error(p, "null B");
  p = valid_problem();
  p.workspace_bytes = 1024;
  expect_error(p, "workspace");
  p = valid_problem();
  p.a_rs = 2;  // rows of A closer than its 3 columns
  expect_error(p, "operand A (2 x 3)");
  p = valid_problem();
  p.b_rs = 5;
  p.b_cs = 2;  // neither stride is 1
  expect_error(p, "operand B (3 x 4)");
  p = valid_problem();
  p.batch = 2;
  p.c_bs = 4;  // less than m * n = 8
  expect_error(p, "batch stride 4");
}

}  // namespace
}  // namespace kiln::test
