// kiln/runtime/cuda/cuda_sort.cpp — argsort on the device with kiln's sort kernels (cuda_sort.h).
#include "runtime/cuda/cuda_sort.h"

#include "base/error.h"
#include "base/tensor_impl.h"
#include "codegen_cuda/cuda_sort_source.h"
#include "codegen_cuda/driver.h"
#include "frontend/ops.h"
#include "frontend/ops_factory.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cuda_modules.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <iterator>
#include <mutex>
#include <optional>
#include <set>
#include <utility>

namespace kiln::rt {

namespace {

struct SortFunctions {
  cuda::FunctionHandle tiles = nullptr, merge = nullptr;
};

cuda::SortKey key_of(ScalarType dt) {
  switch (dt) {
    case ScalarType::Half:
    case ScalarType::BFloat16:
    case ScalarType::Float: return cuda::SortKey::Float;
    case ScalarType::Double: return cuda::SortKey::Double;
    default: return cuda::SortKey::Int64;  // integers and bool compare exactly as int64
  }
}

ScalarType dtype_of(cuda::SortKey key) {
  return key == cuda::SortKey::Float ? ScalarType::Float : key == cuda::SortKey::Double ? ScalarType::Double : ScalarType::Int64;
}

std::mutex& sort_mu() {
  static auto* m = new std::mutex();
  return *m;
}
// Loaded kernels, and images packages provided, by (device, key); never destroyed.
std::map<std::pair<int, cuda::SortKey>, SortFunctions>& loaded() {
  static auto* m = new std::map<std::pair<int, cuda::SortKey>, SortFunctions>();
  return *m;
}
std::map<std::pair<int, cuda::SortKey>, std::string>& provided() {
  static auto* m = new std::map<std::pair<int, cuda::SortKey>, std::string>();
  return *m;
}
// The (device, key) pairs found with no kernels (no package images, nothing cached, no NVRTC):
// their sorts go to the host without looking again, each call.
std::set<std::pair<int, cuda::SortKey>>& unavailable() {
  static auto* s = new std::set<std::pair<int, cuda::SortKey>>();
  return *s;
}

constexpr cuda::SortKey kKeys[] = {cuda::SortKey::Float, cuda::SortKey::Double, cuda::SortKey::Int64};

// The kernels for `key` on `device`: from this process, a package, the compile cache or NVRTC;
// nullopt when none of them has them.
std::optional<SortFunctions> sort_functions(int device, cuda::SortKey key) {
  std::lock_guard lock(sort_mu());
  if (auto it = loaded().find({device, key}); it != loaded().end()) return it->second;
  if (unavailable().count({device, key})) return std::nullopt;
  const auto it = provided().find({device, key});
  const std::optional<ModuleCode> code = library_module(it != provided().end() ? &it->second : nullptr, "sort",
                                                        cuda::sort_source(key), 2, cuda::compute_capability(device), "argsort");
  if (!code) {  // sorted on the host
    unavailable().insert({device, key});
    return std::nullopt;
  }
  const SortFunctions f{load_function(device, *code, cuda::kSortTiles), load_function(device, *code, cuda::kSortMerge)};
  loaded().emplace(std::make_pair(device, key), f);
  return f;
}

}  // namespace

bool cuda_argsort(const Tensor& self, int64_t dim, bool descending, const Tensor& out) {
  Tensor result(out);
  if (self.numel() == 0) return true;
  if (self.dim() == 0) {
    result.zero_();
    return true;
  }
  const int64_t d = dim < 0 ? dim + self.dim() : dim;
  const cuda::SortKey key = key_of(self.dtype());
  const ScalarType kt = dtype_of(key);
  const Tensor x = self.movedim(d, -1).to(kt).contiguous();
  const int64_t n = x.size(-1), lines = x.numel() / n;
  if (n == 1) {  // one key a line: every position is 0
    result.zero_();
    return true;
  }
  const cuda::SortPlan plan = cuda::sort_plan(n, lines, key);
  if (!plan.ok) return false;
  const int device = self.device().index;
  const std::optional<SortFunctions> fns = sort_functions(device, key);
  if (!fns) return false;
  const SortFunctions& f = *fns;
  const TensorOptions ko = TensorOptions(kt).device(self.device()), io = TensorOptions(ScalarType::Int64).device(self.device());
  Tensor keys = empty({lines * n}, ko), index = empty({lines * n}, io);
  cuda::use_device(device);
  const cuda::StreamHandle stream = cuda::current_stream(device).handle();
  {
    const void* in = x.impl()->data();
    void* kp = keys.impl()->data();
    void* ip = index.impl()->data();
    long long nn = n, ll = lines, tiles = plan.tiles_per_line;
    int tile = plan.tile, per_block = plan.per_block, desc = descending ? 1 : 0;
    void* args[] = {&in, &nn, &ll, &tiles, &tile, &per_block, &desc, &kp, &ip};
    cuda::launch_kernel(device, f.tiles, static_cast<unsigned>(plan.tile_blocks), static_cast<unsigned>(plan.threads),
                        static_cast<unsigned>(plan.shared_bytes), stream, args);
  }
  if (!plan.merge_widths.empty()) {
    Tensor keys2 = empty({lines * n}, ko), index2 = empty({lines * n}, io);
    const int64_t total = lines * n, threads = 256;
    const int64_t blocks = std::clamp<int64_t>((total + threads - 1) / threads, 1, int64_t{65535} * 32);
    for (int64_t width : plan.merge_widths) {
      const void* kin = keys.impl()->data();
      const void* iin = index.impl()->data();
      void* kout = keys2.impl()->data();
      void* iout = index2.impl()->data();
      long long nn = n, ll = lines, w = width;
      int desc = descending ? 1 : 0;
      void* args[] = {&kin, &iin, &nn, &ll, &w, &desc, &kout, &iout};
      cuda::launch_kernel(device, f.merge, static_cast<unsigned>(blocks), static_cast<unsigned>(threads), 0, stream, args);
      std::swap(keys, keys2);
      std::swap(index, index2);
    }
  }
  result.copy_(index.view(x.sizes().vec()).movedim(-1, d));
  return true;
}

void use_sort_images(int device, const std::vector<std::string>& images) {
  if (images.size() != std::size(kKeys)) internal_fail("use_sort_images: {} images for {} key types", images.size(), std::size(kKeys));
  std::lock_guard lock(sort_mu());
  for (size_t i = 0; i < images.size(); ++i) {
    provided().try_emplace({device, kKeys[i]}, images[i]);
    unavailable().erase({device, kKeys[i]});
  }
}

}  // namespace kiln::rt
