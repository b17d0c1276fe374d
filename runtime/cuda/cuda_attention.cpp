// kiln/runtime/cuda/cuda_attention.cpp — attention on kiln's fused kernel (cuda_attention.h).
#include "runtime/cuda/cuda_attention.h"

#include "base/error.h"
#include "base/tensor_impl.h"
#include "codegen_cuda/cuda_attention_source.h"
#include "codegen_cuda/driver.h"
#include "frontend/ops_factory.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cuda_modules.h"

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <climits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <tuple>

namespace kiln::rt {

namespace {

using ModuleId = std::tuple<int, ScalarType, int64_t, int64_t>;  // device, dtype, head dims

std::mutex& attention_mu() {
  static auto* m = new std::mutex();
  return *m;
}
// Loaded kernels by module; the modules found with no kernel (nothing cached, no NVRTC). Never
// destroyed.
struct AttentionFunctions {
  cuda::FunctionHandle attention = nullptr, combine = nullptr;
  int sms = 1;  // the device's multiprocessors (asked once, not per call)
};
std::map<ModuleId, AttentionFunctions>& loaded() {
  static auto* m = new std::map<ModuleId, AttentionFunctions>();
  return *m;
}
std::set<ModuleId>& unavailable() {
  static auto* s = new std::set<ModuleId>();
  return *s;
}
std::map<ModuleId, std::string>& provided() {
  static auto* m = new std::map<ModuleId, std::string>();
  return *m;
}
std::atomic<int64_t> g_launches{0};

std::optional<AttentionFunctions> attention_functions(const ModuleId& id) {
  std::lock_guard lock(attention_mu());
  if (auto it = loaded().find(id); it != loaded().end()) return it->second;
  if (unavailable().count(id)) return std::nullopt;
  const auto& [device, dtype, e, ev] = id;
  const auto it = provided().find(id);
  const std::optional<ModuleCode> code =
      library_module(it != provided().end() ? &it->second : nullptr, "attention", cuda::attention_source(dtype, e, ev), 1,
                     cuda::compute_capability(device), "scaled_dot_product_attention");
  if (!code) {
    unavailable().insert(id);
    return std::nullopt;
  }
  const AttentionFunctions f{load_function(device, *code, cuda::kAttentionKernel),
                             load_function(device, *code, cuda::kAttentionCombineKernel), cuda::multiprocessor_count(device)};
  loaded().emplace(id, f);
  return f;
}

// The tensors the kernel reads and writes, in its terms: q, k, v, out (last dim contiguous) and the
// mask, each expanded to the batch dims; `dims` the batch dims merged where every tensor allows,
// size-1 dims dropped.
struct Operands {
  Tensor q, k, v, o, m;
  std::vector<int64_t> size;
  std::vector<std::array<int64_t, 5>> stride;  // q, k, v, o, m

  void merge_batch(const std::vector<int64_t>& batch) {
    size.clear();
    stride.clear();
    for (size_t i = 0; i < batch.size(); ++i) {
      if (batch[i] == 1) continue;
      const std::array<int64_t, 5> s{q.stride(i), k.stride(i), v.stride(i), o.stride(i), m.defined() ? m.stride(i) : 0};
      if (!size.empty()) {
        bool merges = true;
        for (int t = 0; t < 5; ++t) merges = merges && stride.back()[t] == s[t] * batch[i];
        if (merges) {
          size.back() *= batch[i];
          stride.back() = s;
          continue;
        }
      }
      size.push_back(batch[i]);
      stride.push_back(s);
    }
  }
};

// t with its last dim contiguous (a copy when it is not).
Tensor rows_contiguous(const Tensor& t) { return t.size(-1) <= 1 || t.stride(-1) == 1 ? t : t.contiguous(); }

std::vector<int64_t> with_rows(std::vector<int64_t> batch, int64_t rows, int64_t cols) {
  batch.push_back(rows);
  batch.push_back(cols);
  return batch;
}

}  // namespace

bool cuda_attention(const std::vector<Tensor>& ins, bool is_causal, double scale, const Tensor& out) {
  const Tensor &query = ins.at(0), &key = ins.at(1), &value = ins.at(2);
  const int64_t e = query.size(-1), ev = value.size(-1);
  if (!cuda::attention_kernel_fits(query.dtype(), e, ev)) return false;
  for (const Tensor& t : ins)  // the decomposition reports a tensor elsewhere
    if (t.defined() && t.device() != out.device()) return false;
  const int64_t L = query.size(-2), S = key.size(-2);
  if (out.numel() == 0) return true;
  if (S == 0) {  // no key: the products with v are empty sums
    Tensor(out).zero_();
    return true;
  }
  const std::vector<int64_t> batch(out.sizes().begin(), out.sizes().end() - 2);
  Operands op;
  op.q = rows_contiguous(query).expand(with_rows(batch, L, e));
  op.k = rows_contiguous(key).expand(with_rows(batch, S, e));
  op.v = rows_contiguous(value).expand(with_rows(batch, S, ev));
  const bool direct = out.size(-1) <= 1 || out.stride(-1) == 1;
  op.o = direct ? out : empty(out.sizes().vec(), TensorOptions(out.dtype()).device(out.device()));
  const bool masked = ins.size() > 3 && ins[3].defined();
  if (masked) op.m = ins[3].expand(with_rows(batch, L, S));
  op.merge_batch(batch);
  if (op.size.size() > static_cast<size_t>(cuda::kAttentionBatchDims)) {  // copies whose batch dims merge into one
    op.q = op.q.contiguous();
    op.k = op.k.contiguous();
    op.v = op.v.contiguous();
    if (masked) op.m = op.m.contiguous();
    if (direct) op.o = empty(out.sizes().vec(), TensorOptions(out.dtype()).device(out.device()));
    op.merge_batch(batch);
  }
  cuda::AttentionBatch b;
  b.rank = static_cast<long long>(op.size.size());
  for (size_t i = 0; i < op.size.size(); ++i) {
    b.size[i] = op.size[i];
    b.q[i] = op.stride[i][0];
    b.k[i] = op.stride[i][1];
    b.v[i] = op.stride[i][2];
    b.o[i] = op.stride[i][3];
    b.m[i] = op.stride[i][4];
  }
  int64_t entries = 1;
  for (int64_t s : op.size) entries *= s;
  const long long q_blocks = (L + cuda::kAttentionRows - 1) / cuda::kAttentionRows;
  const int device = query.device().index;
  const std::optional<AttentionFunctions> fns = attention_functions({device, query.dtype(), e, ev});
  if (!fns) return false;
  const int64_t tile = cuda::attention_key_tile(e, ev), key_tiles = (S + tile - 1) / tile;
  long long splits = cuda::attention_splits(entries * q_blocks, key_tiles, fns->sms);
  if (entries > int64_t{INT32_MAX} / q_blocks / splits) return false;  // past the grid (2^31 - 1 blocks)
  if (entries * L * ev > int64_t{INT32_MAX} * 128) return false;      // the combine's grid
  cuda::use_device(device);
  const cuda::StreamHandle stream = cuda::current_stream(device).handle();
  const void* qp = op.q.impl()->data();
  const void* kp = op.k.impl()->data();
  const void* vp = op.v.impl()->data();
  const void* mp = masked ? op.m.impl()->data() : nullptr;
  void* outp = op.o.impl()->data();
  long long ll = L, ss = S, qr = op.q.stride(-2), kr = op.k.stride(-2), vr = op.v.stride(-2), orow = op.o.stride(-2);
  long long mr = masked ? op.m.stride(-2) : 0, mc = masked ? op.m.stride(-1) : 0, qb = q_blocks;
  float sc = static_cast<float>(scale);
  int causal = is_causal ? 1 : 0, kind = !masked ? 0 : op.m.dtype() == ScalarType::Bool ? 1 : 2;
  // The split keys' shares (float: DV outputs, the maximum and the sum per entry, row and split).
  const Tensor part = splits > 1 ? empty({entries * L * splits * (ev + 2)}, TensorOptions(ScalarType::Float).device(out.device()))
                                 : Tensor();
  float* pp = splits > 1 ? static_cast<float*>(part.impl()->data()) : nullptr;
  void* args[] = {&qp, &kp, &vp, &mp, &outp, &ll, &ss, &qr, &kr, &vr, &orow, &mr, &mc, &b, &qb, &sc, &causal, &kind, &splits, &pp};
  cuda::launch_kernel(device, fns->attention, static_cast<unsigned>(entries * q_blocks * splits), cuda::kAttentionThreads, 0,
                      stream, args);
  if (splits > 1) {
    long long rows = entries * L;
    void* cargs[] = {&pp, &outp, &ll, &rows, &splits, &orow, &b, &kind};
    const int64_t threads = cuda::kAttentionThreads, blocks = (rows * ev + threads - 1) / threads;
    cuda::launch_kernel(device, fns->combine, static_cast<unsigned>(blocks), static_cast<unsigned>(threads), 0, stream, cargs);
  }
  g_launches.fetch_add(1, std::memory_order_relaxed);
  if (!op.o.is_same(out)) Tensor(out).copy_(op.o);
  return true;
}

void use_attention_images(int device, const std::vector<std::pair<cuda::AttentionModule, std::string>>& images) {
  std::lock_guard lock(attention_mu());
  for (const auto& [m, image] : images) {
    const ModuleId id{device, m.dtype, m.e, m.ev};
    provided().try_emplace(id, image);
    unavailable().erase(id);
  }
}

int64_t attention_kernel_launches() { return g_launches.load(std::memory_order_relaxed); }

}  // namespace kiln::rt
