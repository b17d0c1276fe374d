// kiln/runtime/export/cuda_code.h — an exported cuda program's kernels: compiled by NVRTC when
// the package is written, chosen for the device when it is loaded.
//
// A cuda package holds every kernel of its plan three times: cubins for sm_80 (A100; they also
// run on the other 8.x devices) and sm_90 (H100, H200), and PTX for compute_90, which the
// driver compiles for a newer device at load. A plan that sorts carries kiln's sort kernels the
// same three ways ("sort.cuda.<target>": the float, double and long long modules of
// codegen_cuda/cuda_sort_source.h), so that a device sort needs no NVRTC where the package runs;
// a plan with fused attention steps carries their modules ("attention.cuda.<target>": each
// module's name, as cuda::AttentionModule::str writes it, then its image).
// NVRTC needs no device, so a package for GPUs is exported on any host that has NVRTC.
#pragma once

#include "codegen_cuda/cuda_attention_source.h"
#include "ir/exec_plan.h"

#include <string>
#include <utility>
#include <vector>

namespace kiln::rt {

struct PackageView;

// The package sections of the plan's kernel code ("code.cuda.sm_80", "code.cuda.sm_90",
// "ptx.cuda.compute_90"), each one image per kernel in plan order. kiln::Error
// "[export_program] ..." when NVRTC is missing, too old for an architecture, or rejects a
// kernel (with its log).
std::vector<std::pair<std::string, std::string>> cuda_code_sections(const ir::ExecPlan& plan);

// The images a device of `compute_capability` (10 * major + minor) runs, one per kernel, and in
// *target the architecture they are for ("sm_80", "sm_90", or "compute_90" for a newer device).
// kiln::Error "[load_program] path: ..." for a device older than 8.0 or a section that does not
// hold one image per kernel.
std::vector<std::string> cuda_images_for(int compute_capability, size_t kernels, const PackageView& pkg,
                                         const std::string& path, std::string* target);

// The sort modules a package holds for `target` (as cuda_images_for chose it): float, double and
// long long, in that order; empty when the plan does not sort.
std::vector<std::string> cuda_sort_images_for(const std::string& target, const PackageView& pkg, const std::string& path);

// The fused attention modules a package holds for `target`, by module; empty when the plan has
// no fused attention. kiln::Error for a section that does not name modules this kiln has.
std::vector<std::pair<cuda::AttentionModule, std::string>> cuda_attention_images_for(const std::string& target,
                                                                                   const PackageView& pkg,
                                                                                   const std::string& path);

}  // namespace kiln::rt
