// kiln/runtime/export/cuda_code.cpp — NVRTC's images of an exported cuda program (cuda_code.h).
#include "runtime/export/cuda_code.h"

#include "base/error.h"
#include "codegen_cpu/object_bundle.h"
#include "codegen_cuda/cuda_attention_source.h"
#include "codegen_cuda/cuda_emitter.h"
#include "codegen_cuda/cuda_sort_source.h"
#include "codegen_cuda/nvrtc.h"
#include "runtime/export/package.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <optional>
#include <set>

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

constexpr cuda::SortKey kSortKeys[] = {cuda::SortKey::Float, cuda::SortKey::Double, cuda::SortKey::Int64};

// One module's image for a target: a cubin, or PTX with its terminating zero (loaded as a C
// string). kiln::Error naming `what` when NVRTC cannot make it.
std::string image_for(const std::string& source, const Target& t, const std::string& what) {
  const cuda::NvrtcResult r = cuda::compile_to_ptx(source, t.arch);
  if (!r.ok)
    fail(kExport, "NVRTC {} could not compile {} for {}:\n{}\n--- source ---\n{}", cuda::nvrtc_version(), what, t.arch,
         r.log, source);
  if (t.cubin && r.cubin.empty())
    fail(kExport, "NVRTC {} made no cubin for {} ({}); a cuda package needs an NVRTC that compiles for it",
         cuda::nvrtc_version(), t.arch, what);
  return t.cubin ? r.cubin : r.ptx + std::string(1, '\0');
}

std::string sort_section(const Target& t) { return std::string("sort.cuda.") + t.arch; }
std::string attention_section(const std::string& arch) { return "attention.cuda." + arch; }

// The fused attention modules the plan's attention steps run (cuda_attention.h).
std::set<cuda::AttentionModule> attention_modules(const ir::ExecPlan& plan) {
  std::set<cuda::AttentionModule> out;
  for (const ir::PlanStep& st : plan.steps) {
    const bool backward = st.op == ir::OpKind::scaled_dot_product_attention_backward;
    if (st.kind == ir::StepKind::Kernel || (st.op != ir::OpKind::scaled_dot_product_attention && !backward)) continue;
    const ir::TensorType &q = plan.buffers.at(st.buffers.at(backward ? 1 : 0)).type,
                         &v = plan.buffers.at(st.buffers.at(backward ? 3 : 2)).type;
    const std::optional<int64_t> e = q.sizes.back().maybe_const(), ev = v.sizes.back().maybe_const();
    if (e && ev && cuda::attention_kernel_fits(q.dtype, *e, *ev)) out.insert({q.dtype, *e, *ev, backward});
  }
  return out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> cuda_code_sections(const ir::ExecPlan& plan) {
  std::string why;
  if (!cuda::nvrtc_available(&why)) fail(kExport, "a cuda package is compiled with NVRTC, which is not available: {}", why);
  std::vector<std::vector<std::string>> images(std::size(kTargets));
  for (const ir::Kernel* k : plan.kernels()) {
    const std::string source = cuda::emit_module(*k);
    for (size_t t = 0; t < std::size(kTargets); ++t) images[t].push_back(image_for(source, kTargets[t], "kernel " + k->name));
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t t = 0; t < std::size(kTargets); ++t) out.emplace_back(kTargets[t].section, cpu::pack_objects(images[t]));
  const bool sorts = std::any_of(plan.steps.begin(), plan.steps.end(), [](const ir::PlanStep& st) {
    return st.kind != ir::StepKind::Kernel && st.op == ir::OpKind::argsort;
  });
  if (sorts)
    for (const Target& t : kTargets) {
      std::vector<std::string> sort_images;
      for (cuda::SortKey key : kSortKeys) sort_images.push_back(image_for(cuda::sort_source(key), t, "the sort kernels"));
      out.emplace_back(sort_section(t), cpu::pack_objects(sort_images));
    }
  const std::set<cuda::AttentionModule> attention = attention_modules(plan);
  if (!attention.empty())
    for (const Target& t : kTargets) {
      std::vector<std::string> named;  // name, image, name, image, ...
      for (const cuda::AttentionModule& m : attention) {
        named.push_back(m.str());
        named.push_back(image_for(cuda::attention_source(m), t, "the attention kernel " + m.str()));
      }
      out.emplace_back(attention_section(t.arch), cpu::pack_objects(named));
    }
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

std::vector<std::string> cuda_sort_images_for(const std::string& target, const PackageView& pkg, const std::string& path) {
  const std::string section = "sort.cuda." + target;
  std::vector<std::string> out;
  if (!pkg.has(section)) return out;
  const std::optional<std::vector<std::string_view>> images = cpu::unpack_objects(pkg.at(section, kLoad, path));
  if (!images || images->size() != std::size(kSortKeys))
    fail(kLoad, "{}: section '{}' does not hold the {} sort modules", path, section, std::size(kSortKeys));
  for (std::string_view i : *images) out.emplace_back(i);
  return out;
}

std::vector<std::pair<cuda::AttentionModule, std::string>> cuda_attention_images_for(const std::string& target,
                                                                                   const PackageView& pkg,
                                                                                   const std::string& path) {
  const std::string section = attention_section(target);
  std::vector<std::pair<cuda::AttentionModule, std::string>> out;
  if (!pkg.has(section)) return out;
  const std::optional<std::vector<std::string_view>> parts = cpu::unpack_objects(pkg.at(section, kLoad, path));
  if (!parts || parts->size() % 2 != 0)
    fail(kLoad, "{}: section '{}' does not hold pairs of a module's name and image", path, section);
  for (size_t i = 0; i < parts->size(); i += 2) {
    const std::optional<cuda::AttentionModule> m = cuda::AttentionModule::parse((*parts)[i]);
    if (!m) fail(kLoad, "{}: section '{}' names an attention module '{}' this kiln has no kernel for", path, section, (*parts)[i]);
    out.emplace_back(*m, std::string((*parts)[i + 1]));
  }
  return out;
}

}  // namespace kiln::rt
