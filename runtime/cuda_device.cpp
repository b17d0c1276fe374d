// kiln/runtime/cuda_device.cpp — CUDA availability and Tensor::to's device mover.
#include "runtime/cuda_device.h"

#include "base/error.h"
#include "codegen_cuda/driver.h"
#include "frontend/dispatch.h"
#include "frontend/tensor.h"

namespace kiln::cuda {

bool is_available() { return driver_available(); }

std::string unavailable_reason() {
  std::string why;
  driver_available(&why);
  return why;
}

int device_count() { return driver_device_count(); }

namespace {

Tensor move_to_device(const Tensor& src, Device to) {
  const Device from = src.device();
  const Device cuda_side = to.is_cuda() ? to : from;
  std::string why;
  if (!driver_available(&why))
    fail("to", "cannot move a tensor from {} to {}: CUDA is not available: {}", from.str(), to.str(), why);
  if (cuda_side.index < 0 || cuda_side.index >= driver_device_count())
    fail("to", "cannot move a tensor from {} to {}: device index {} is out of range (this machine has {} CUDA device(s))",
         from.str(), to.str(), cuda_side.index, driver_device_count());
  fail("to", "cannot move a tensor from {} to {}: kiln has no CUDA device tensors yet (the CUDA backend is not built); "
       "{} CUDA device(s) are present", from.str(), to.str(), driver_device_count());
}

const bool installed = (install_device_mover(&move_to_device), true);

}  // namespace

}  // namespace kiln::cuda
