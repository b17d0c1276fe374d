// kiln/test/test_compile_basic.cpp — compile() end to end against eager and the interpreter.
#include "kiln/kiln.h"
#include "test_support/check.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

TEST(CompileBasic, PointwiseChainMatchesEager) {
  Tensor a = randn({64, 33});
  Tensor b = randn({33});
  auto f = compile([](const Tensor& a, const Tensor& b) { return a / (abs(a) + 1) * b; });
  Tensor y = f(a, b);
  Tensor ref = a / (abs(a) + 1) * b;
  EXPECT_TRUE(allclose(y, ref, 1e-6, 1e-6));
  EXPECT_EQ(f.stats().traces, 1);
  EXPECT_EQ(f.stats().kernels, 1);
  Tensor y2 = f(a, b);
  EXPECT_TRUE(equal(y, y2));
  EXPECT_EQ(f.stats().cache_hits, 1);
  EXPECT_EQ(f.stats().compiles, 1);
}

TEST(CompileBasic, SoftmaxIsOneKernel) {
  Tensor a = randn({16, 100});
  auto f = compile([](const Tensor& a) { return softmax(a, -1); });
  Tensor y = f(a);
  EXPECT_TRUE(allclose(y, softmax(a, -1), 1e-5, 1e-6));
  EXPECT_EQ(f.stats().kernels, 1);
}

TEST(CompileBasic, SumAll) {
  Tensor a = randn({300, 301});
  auto f = compile([](const Tensor& a) { return a.sum(); });
  Tensor y = f(a);
  EXPECT_TRUE(allclose(y, a.sum(), 1e-4, 1e-3));
}

}  // namespace
}  // namespace kiln
