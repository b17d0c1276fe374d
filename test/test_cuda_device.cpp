// kiln/test/test_cuda_device.cpp — CUDA availability and what a cuda tensor request does.
//
// On a machine without a driver (CI): is_available() is false and names libcuda.so.1, there
// are no devices, and asking for a cuda tensor fails with an Error that names both devices
// and the reason. On a machine with a GPU, a move succeeds (test_cuda_gpu.cpp) and an index
// out of range fails.
#include "codegen_cuda/driver.h"
#include "kiln/kiln.h"

#include <gtest/gtest.h>

#include <functional>

#include <string>

namespace kiln {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(CudaDevice, AvailabilityAndItsReason) {
  if (cuda::is_available()) {
    EXPECT_GT(cuda::device_count(), 0);
    EXPECT_EQ(cuda::unavailable_reason(), "");
    const int sm = cuda::compute_capability(0);
    EXPECT_GE(sm, 50);
    EXPECT_LT(sm, 200);
  } else {
    EXPECT_EQ(cuda::device_count(), 0);
    const std::string why = cuda::unavailable_reason();
    EXPECT_FALSE(why.empty());
    EXPECT_TRUE(why.find("libcuda.so.1") != std::string::npos || why.find("cuInit") != std::string::npos ||
                why.find("no CUDA device") != std::string::npos)
        << why;
    EXPECT_NE(error_of([] { cuda::compute_capability(0); }).find("no compute capability for cuda:0"), std::string::npos);
    EXPECT_NE(error_of([] { cuda::synchronize(); }).find("[synchronize] CUDA is not available"), std::string::npos);
  }
  EXPECT_NE(error_of([] { cuda::compute_capability(-1); }), "<no error>");
}

TEST(CudaDevice, ACudaTensorRequestFailsClearly) {
  const Tensor x = ones({2, 3});
  const std::string e = error_of([&] { x.cuda(); });
  if (cuda::is_available()) {
    EXPECT_EQ(e, "<no error>");
    const std::string far = error_of([&] { x.to(Device("cuda:63")); });
    EXPECT_NE(far.find("device index 63 is out of range"), std::string::npos) << far;
  } else {
    EXPECT_NE(e.find("cannot move a tensor from cpu to cuda:0: CUDA is not available: " + cuda::unavailable_reason()),
              std::string::npos)
        << e;
    EXPECT_NE(error_of([&] { x.to(TensorOptions().device(Device("cuda:1"))); }).find("cpu to cuda:1"), std::string::npos);
  }
  // Staying on the CPU is free: the same tensor.
  const Tensor same = x.cpu();
  EXPECT_EQ(same.data_ptr(), x.data_ptr());
  EXPECT_EQ(x.to(Device("cpu")).data_ptr(), x.data_ptr());
}

}  // namespace
}  // namespace kiln
