// kiln/runtime/export/cuda_code.cpp — NVRTC's images of an exported cuda program (cuda_code.h).
#include "runtime/export/cuda_code.h"

#include "base/error.h"
#include "codegen_cpu/object_bundle.h"
#include "codegen_cuda/cuda_emitter.h"
#include "codegen_cuda/nvrtc.h"
#include "runtime/export/package.h"

#include <fmt/format.h>

namespace kiln::rt {

namespace {

constexpr std::string_view kExport = "export_program", kLoad = "load_program";

struct Target {
  const char* section;
  const char* arch;  // NVRTC's architecture
  bool cubin;
};
constexpr Target kTargets[] = {{"code.cuda.sm_80", "sm_80", true},
                               {"code.cuda.sm_90", "sm_90", true},
                               {"ptx.cuda.compute_90", "compute_90", false}};

}  // namespace

std::vector<std::pair<std::string, std::string>> cuda_code_sections(const ir::ExecPlan& plan) {
  std::string why;
  if (!cuda::nvrtc_available(&why)) fail(kExport, "a cuda package is compiled with NVRTC, which is not available: {}", why);
  std::vector<std::vector<std::string>> images(std::size(kTargets));
  for (const ir::Kernel* k : plan.kernels()) {
    const std::string source = cuda::emit_module(*k);
    for (size_t t = 0; t < std::size(kTargets); ++t) {
      const cuda::NvrtcResult r = cuda::compile_to_ptx(source, kTargets[t].arch);
      if (!r.ok)
        fail(kExport, "NVRTC {} could not compile kernel {} for {}:\n{}\n--- source ---\n{}", cuda::nvrtc_version(),
             k->name, kTargets[t].arch, r.log, source);
      if (kTargets[t].cubin && r.cubin.empty())
        fail(kExport, "NVRTC {} made no cubin for {} (kernel {}); a cuda package needs an NVRTC that compiles for it",
             cuda::nvrtc_version(), kTargets[t].arch, k->name);
      images[t].push_back(kTargets[t].cubin ? r.cubin : r.ptx + std::string(1, '\0'));  // PTX loads as a C string
    }
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t t = 0; t < std::size(kTargets); ++t) out.emplace_back(kTargets[t].section, cpu::pack_objects(images[t]));
  return out;
}

std::vector<std::string> cuda_images_for(int compute_capability, size_t kernels, const PackageView& pkg,
                                         const std::string& path, std::string* target) {
  if (compute_capability < 80)
    fail(kLoad, "{}: a cuda package runs on devices of compute capability 8.0 or newer; this one is {}.{}", path,
         compute_capability / 10, compute_capability % 10);
  const Target& t = compute_capability < 90 ? kTargets[0] : compute_capability == 90 ? kTargets[1] : kTargets[2];
  *target = t.arch;
  std::vector<std::string> out;
  if (kernels == 0) return out;
  const std::optional<std::vector<std::string_view>> images = cpu::unpack_objects(pkg.at(t.section, kLoad, path));
  if (!images || images->size() != kernels)
    fail(kLoad, "{}: section '{}' does not hold one image per kernel ({} kernels)", path, t.section, kernels);
  for (std::string_view i : *images) out.emplace_back(i);
  return out;
}

}  // namespace kiln::rt
