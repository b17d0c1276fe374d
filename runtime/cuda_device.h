// kiln/runtime/cuda_device.h — CUDA devices as users see them: whether any exist, how many.
//
// The driver is loaded at run time (codegen_cuda/driver.h); a machine without one has no
// devices and says why. The runtime installs Tensor::to's device mover (frontend/dispatch.h):
// a tensor asked for on a CUDA device that this machine does not have fails with a kiln::Error
// that names the device and the reason. Device tensors themselves (memory, copies, kernels on
// the GPU) are the CUDA backend's issue and not built yet: on a machine with a device, a
// move says so.
#pragma once

#include <string>

namespace kiln::cuda {

// Whether a CUDA driver is installed and reports at least one device (as torch.cuda.is_available).
bool is_available();
// The reason is_available() is false ("" when it is true).
std::string unavailable_reason();
// Devices the driver reports; 0 without a driver.
int device_count();

}  // namespace kiln::cuda
