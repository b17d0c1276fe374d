// kiln/codegen_cuda/driver.h — the CUDA driver API, loaded at run time with dlopen.
//
// kiln builds and runs without an NVIDIA driver: libcuda.so.1 is opened on first use and
// cuInit(0) called once. A machine without the driver, or whose driver finds no device, is
// not an error here: available() is false and says why, so callers fail with a clear message
// (a cuda tensor requested) or skip (GPU tests). No CUDA header is needed to include this.
#pragma once

#include <string>

namespace kiln::cuda {

// Whether the driver loaded, initialized and reports at least one device; if not and `why`
// is given, the reason (which library could not be loaded, or the driver's error).
bool driver_available(std::string* why = nullptr);

// Devices the driver reports (0 without a driver).
int driver_device_count();

// The compute capability of `device` as 10*major+minor (90 for H100); throws kiln::Error for
// a device index out of range or without a driver.
int compute_capability(int device);

}  // namespace kiln::cuda
