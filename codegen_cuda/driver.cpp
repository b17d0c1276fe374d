// kiln/codegen_cuda/driver.cpp — dlopen-based loader of the CUDA driver API (libcuda.so.1).
//
// The entry points kiln uses are declared as function-pointer types (CUresult is an int-sized
// enum, 0 = CUDA_SUCCESS; CUdevice an int). Loading and cuInit happen once per process (a
// function-local static); the handle stays open for the life of the process.
#include "codegen_cuda/driver.h"

#include "base/error.h"

#include "base/dl_symbol.h"

#include <fmt/format.h>

#include <dlfcn.h>

namespace kiln::cuda {

namespace {

using CUresult = int;
using InitFn = CUresult (*)(unsigned);
using DeviceGetCountFn = CUresult (*)(int*);
using DeviceGetFn = CUresult (*)(int*, int);
using DeviceGetAttributeFn = CUresult (*)(int*, int, int);
using GetErrorStringFn = CUresult (*)(CUresult, const char**);

constexpr int kAttrComputeCapabilityMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kAttrComputeCapabilityMinor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR

struct Driver {
  std::string error;  // empty when usable
  int devices = 0;
  DeviceGetFn device_get = nullptr;
  DeviceGetAttributeFn attribute = nullptr;
  GetErrorStringFn error_string = nullptr;

  std::string describe(CUresult rc) const {
    const char* s = nullptr;
    if (error_string) error_string(rc, &s);
    return s ? fmt::format("{} ({})", s, rc) : fmt::format("CUDA driver error {}", rc);
  }
};

Driver load() {
  Driver d;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* err = dlerror();
    d.error = fmt::format("the NVIDIA driver is not installed (libcuda.so.1 could not be loaded: {})",
                          err ? err : "not found");
    return d;
  }
  InitFn init = nullptr;
  DeviceGetCountFn count = nullptr;
  bind_symbol(lib, "libcuda.so.1", "cuInit", init, d.error);
  bind_symbol(lib, "libcuda.so.1", "cuDeviceGetCount", count, d.error);
  bind_symbol(lib, "libcuda.so.1", "cuDeviceGet", d.device_get, d.error);
  bind_symbol(lib, "libcuda.so.1", "cuDeviceGetAttribute", d.attribute, d.error);
  bind_symbol(lib, "libcuda.so.1", "cuGetErrorString", d.error_string, d.error);
  if (!d.error.empty()) return d;
  if (CUresult rc = init(0); rc != 0) {
    d.error = "cuInit failed: " + d.describe(rc);
    return d;
  }
  if (CUresult rc = count(&d.devices); rc != 0) {
    d.error = "cuDeviceGetCount failed: " + d.describe(rc);
    d.devices = 0;
    return d;
  }
  if (d.devices == 0) d.error = "the NVIDIA driver reports no CUDA device";
  return d;
}

const Driver& driver() {
  static const Driver d = load();
  return d;
}

}  // namespace

bool driver_available(std::string* why) {
  const Driver& d = driver();
  if (why) *why = d.error;
  return d.error.empty();
}

int driver_device_count() { return driver().devices; }

int compute_capability(int device) {
  const Driver& d = driver();
  if (!d.error.empty()) fail("cuda", "no compute capability for cuda:{}: {}", device, d.error);
  if (device < 0 || device >= d.devices)
    fail("cuda", "device index {} is out of range: the driver reports {} device(s)", device, d.devices);
  int dev = 0, major = 0, minor = 0;
  if (CUresult rc = d.device_get(&dev, device); rc != 0) fail("cuda", "cuDeviceGet({}) failed: {}", device, d.describe(rc));
  if (CUresult rc = d.attribute(&major, kAttrComputeCapabilityMajor, dev); rc != 0)
    fail("cuda", "reading the compute capability of cuda:{} failed: {}", device, d.describe(rc));
  if (CUresult rc = d.attribute(&minor, kAttrComputeCapabilityMinor, dev); rc != 0)
    fail("cuda", "reading the compute capability of cuda:{} failed: {}", device, d.describe(rc));
  return 10 * major + minor;
}

}  // namespace kiln::cuda
