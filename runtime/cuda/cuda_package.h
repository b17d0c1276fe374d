// kiln/runtime/cuda/cuda_package.h — the device half of an exported cuda program.
//
// runtime/export compiles a cuda plan's kernels with NVRTC when it writes a package (cubins
// for sm_80 and sm_90, PTX for newer devices) and, when it loads one, hands the plan and the
// images chosen for the device here: the same launcher, checked-kernel fault records and
// extern steps (cuBLASLt, steps staged through the host) a compiled function's program gets
// from the cuda backend (backend_cuda.cpp).
#pragma once

#include "ir/exec_plan.h"
#include "runtime/program.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln::rt {

// A Program on `device` (a cuda device) for `plan`, kernel i loaded from images[i] (a cubin for
// the device's architecture, or PTX with a terminating zero byte, which the driver compiles).
// Throws kiln::Error when the driver cannot load an image.
std::unique_ptr<Program> cuda_package_program(ir::ExecPlan plan, Device device, const std::vector<std::string>& images,
                                              std::vector<ParamSource> params);

}  // namespace kiln::rt
