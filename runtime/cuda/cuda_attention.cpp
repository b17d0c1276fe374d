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

#include <algorithm>
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

using ModuleId = std::pair<int, cuda::AttentionModule>;  // device, module

std::mutex& attention_mu() {
  static auto* m = new std::mutex();
  return *m;
}
// Loaded kernels by module; the modules found with no kernel (nothing cached, no NVRTC). Never
// destroyed.
struct AttentionFunctions {
  // The forward's: kiln_attention, kiln_attention_combine; the backward's: kiln_attention_lse,
  // _backward_prep, _backward, _backward_dq.
  cuda::FunctionHandle fn[4] = {};
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
std::atomic<int64_t> g_launches{0}, g_backward_launches{0};

std::optional<AttentionFunctions> attention_functions(const ModuleId& id) {
  std::lock_guard lock(attention_mu());
  if (auto it = loaded().find(id); it != loaded().end()) return it->second;
  if (unavailable().count(id)) return std::nullopt;
  const auto& [device, m] = id;
  const auto it = provided().find(id);
  const std::vector<const char*> entries =
      m.backward ? std::vector<const char*>{cuda::kAttentionLseKernel, cuda::kAttentionBackwardPrepKernel,
                                            cuda::kAttentionBackwardKernel, cuda::kAttentionBackwardDqKernel}
                 : std::vector<const char*>{cuda::kAttentionKernel, cuda::kAttentionCombineKernel};
  const std::optional<ModuleCode> code = library_module(
      it != provided().end() ? &it->second : nullptr, m.backward ? "attention backward" : "attention",
      cuda::attention_source(m), entries.size(), cuda::compute_capability(device),
      m.backward ? "scaled_dot_product_attention_backward" : "scaled_dot_product_attention");
  if (!code) {
    unavailable().insert(id);
    return std::nullopt;
  }
  AttentionFunctions f;
  for (size_t i = 0; i < entries.size(); ++i) f.fn[i] = load_function(device, *code, entries[i]);
  f.sms = cuda::multiprocessor_count(device);
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

Tensor empty_like_on(const Tensor& t) { return empty(t.sizes().vec(), TensorOptions(t.dtype()).device(t.device())); }

// The operands of ins = {query, key, value[, mask]} for the kernels: each expanded to the batch
// dims `batch`, with `o` in the output's slot (last dim contiguous) and the batch dims merged;
// past kAttentionBatchDims merged dims, contiguous copies (and `fresh_o()` for o).
template <class FreshO>
Operands operands(const std::vector<Tensor>& ins, const std::vector<int64_t>& batch, Tensor o, FreshO fresh_o) {
  const Tensor &query = ins.at(0), &key = ins.at(1), &value = ins.at(2);
  const int64_t L = query.size(-2), S = key.size(-2), e = query.size(-1), ev = value.size(-1);
  Operands op;
  op.q = rows_contiguous(query).expand(with_rows(batch, L, e));
  op.k = rows_contiguous(key).expand(with_rows(batch, S, e));
  op.v = rows_contiguous(value).expand(with_rows(batch, S, ev));
  op.o = std::move(o);
  if (ins.size() > 3 && ins[3].defined()) op.m = ins[3].expand(with_rows(batch, L, S));
  op.merge_batch(batch);
  if (op.size.size() > static_cast<size_t>(cuda::kAttentionBatchDims)) {  // copies whose batch dims merge into one
    op.q = op.q.contiguous();
    op.k = op.k.contiguous();
    op.v = op.v.contiguous();
    if (op.m.defined()) op.m = op.m.contiguous();
    if (!op.o.is_contiguous()) op.o = fresh_o();
    op.merge_batch(batch);
  }
  return op;
}

// The kernels' batch argument of merged operands.
cuda::AttentionBatch batch_argument(const Operands& op) {
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
  return b;
}

int64_t entries_of(const Operands& op) {
  int64_t n = 1;
  for (int64_t s : op.size) n *= s;
  return n;
}

int mask_kind(const Operands& op) { return !op.m.defined() ? 0 : op.m.dtype() == ScalarType::Bool ? 1 : 2; }

bool on_device_of(const std::vector<Tensor>& ins, const Tensor& out) {
  for (const Tensor& t : ins)  // the decomposition reports a tensor elsewhere
    if (t.defined() && t.device() != out.device()) return false;
  return true;
}

// Whether the grids over `entries` batch entries fit (2^31 - 1 blocks): `blocks` per entry, and
// the element-wise kernels' 128 threads a block over `cols` columns of each of the L rows.
bool grids_fit(int64_t entries, int64_t blocks, int64_t L, int64_t cols) {
  constexpr int64_t kMax = INT32_MAX;
  return entries <= kMax / std::max<int64_t>(blocks, 1) && entries * L * cols <= kMax * 128;
}

int64_t query_blocks(int64_t L) { return (L + cuda::kAttentionRows - 1) / cuda::kAttentionRows; }

// How many blocks share each query block's keys in the forward.
int64_t forward_splits(const Operands& op, const AttentionFunctions& fns) {
  const int64_t S = op.k.size(-2), tile = cuda::attention_key_tile(op.q.size(-1), op.v.size(-1));
  return cuda::attention_splits(entries_of(op) * query_blocks(op.q.size(-2)), (S + tile - 1) / tile, fns.sms);
}

// Launches the module's first kernel with kiln_attention's arguments over `op`: kiln_attention
// (and kiln_attention_combine where the keys split), or, with `lse` given, kiln_attention_lse,
// which writes each row's maximum and log2 of its sum there and reads no values.
void launch_forward(const Operands& op, const AttentionFunctions& fns, int device, bool is_causal, double scale,
                    float* lse) {
  const int64_t L = op.q.size(-2), S = op.k.size(-2), ev = op.v.size(-1), entries = entries_of(op);
  const long long q_blocks = query_blocks(L);
  long long splits = lse ? 1 : forward_splits(op, fns);
  cuda::use_device(device);
  const cuda::StreamHandle stream = cuda::current_stream(device).handle();
  const bool masked = op.m.defined();
  const void* qp = op.q.impl()->data();
  const void* kp = op.k.impl()->data();
  const void* vp = lse ? nullptr : op.v.impl()->data();
  const void* mp = masked ? op.m.impl()->data() : nullptr;
  void* outp = lse ? nullptr : op.o.impl()->data();
  long long ll = L, ss = S, qr = op.q.stride(-2), kr = op.k.stride(-2), vr = op.v.stride(-2), orow = op.o.stride(-2);
  long long mr = masked ? op.m.stride(-2) : 0, mc = masked ? op.m.stride(-1) : 0, qb = q_blocks;
  float sc = static_cast<float>(scale);
  int causal = is_causal ? 1 : 0, kind = mask_kind(op);
  cuda::AttentionBatch b = batch_argument(op);
  // The split keys' shares (float: DV outputs, the maximum and the sum per entry, row and split).
  const Tensor part = splits > 1 ? empty({entries * L * splits * (ev + 2)}, TensorOptions(ScalarType::Float).device(op.q.device()))
                                 : Tensor();
  float* pp = lse ? lse : splits > 1 ? static_cast<float*>(part.impl()->data()) : nullptr;
  void* args[] = {&qp, &kp, &vp, &mp, &outp, &ll, &ss, &qr, &kr, &vr, &orow, &mr, &mc, &b, &qb, &sc, &causal, &kind, &splits, &pp};
  cuda::launch_kernel(device, fns.fn[0], static_cast<unsigned>(entries * q_blocks * splits), cuda::kAttentionThreads, 0,
                      stream, args);
  if (splits > 1) {
    long long rows = entries * L;
    void* cargs[] = {&pp, &outp, &ll, &rows, &splits, &orow, &b, &kind};
    const int64_t threads = cuda::kAttentionThreads, blocks = (rows * ev + threads - 1) / threads;
    cuda::launch_kernel(device, fns.fn[1], static_cast<unsigned>(blocks), static_cast<unsigned>(threads), 0, stream, cargs);
  }
}

}  // namespace

bool cuda_attention(const std::vector<Tensor>& ins, bool is_causal, double scale, const Tensor& out) {
  const Tensor &query = ins.at(0), &key = ins.at(1), &value = ins.at(2);
  const int64_t e = query.size(-1), ev = value.size(-1);
  if (!cuda::attention_kernel_fits(query.dtype(), e, ev) || !on_device_of(ins, out)) return false;
  const int64_t L = query.size(-2), S = key.size(-2);
  if (out.numel() == 0) return true;
  if (S == 0) {  // no key: the products with v are empty sums
    Tensor(out).zero_();
    return true;
  }
  const std::vector<int64_t> batch(out.sizes().begin(), out.sizes().end() - 2);
  const bool direct = out.size(-1) <= 1 || out.stride(-1) == 1;
  const Operands op = operands(ins, batch, direct ? out : empty_like_on(out), [&] { return empty_like_on(out); });
  const int device = query.device().index;
  const std::optional<AttentionFunctions> fns = attention_functions({device, {query.dtype(), e, ev, false}});
  if (!fns || !grids_fit(entries_of(op), query_blocks(L) * forward_splits(op, *fns), L, ev)) return false;
  launch_forward(op, *fns, device, is_causal, scale, nullptr);
  g_launches.fetch_add(1, std::memory_order_relaxed);
  if (!op.o.is_same(out)) Tensor(out).copy_(op.o);
  return true;
}

bool cuda_attention_backward(const std::vector<Tensor>& ins, bool is_causal, double scale,
                             const std::vector<Tensor>& outs) {
  const Tensor &grad = ins.at(0), &query = ins.at(1), &key = ins.at(2), &value = ins.at(3), &out = ins.at(4);
  const int64_t e = query.size(-1), ev = value.size(-1);
  if (!cuda::attention_kernel_fits(query.dtype(), e, ev) || !on_device_of(ins, outs.at(0))) return false;
  const int64_t L = query.size(-2), S = key.size(-2);
  if (L == 0 || S == 0) {  // no query or no key: every product is an empty sum
    for (const Tensor& t : outs) Tensor(t).zero_();
    return true;
  }
  // A mask that broadcasts the query's rows (a one-row query under an [L, S] mask) gives more
  // output rows than the kernels write: the decomposition's.
  if (out.size(-2) != L) return false;
  if (outs.at(0).numel() == 0) return true;  // an empty batch
  const std::vector<int64_t> batch(out.sizes().begin(), out.sizes().end() - 2);
  // g in the output's slot, contiguous [entries, L, Ev] as the backward kernels read it (and out
  // likewise): both have the output's shape, so their batch dims always merge.
  std::vector<Tensor> qkvm(ins.begin() + 1, ins.begin() + 4);
  if (ins.size() > 5) qkvm.push_back(ins[5]);
  const Tensor g = grad.contiguous(), o = out.contiguous();
  const Operands op = operands(qkvm, batch, g, [&] { return g; });
  const int64_t entries = entries_of(op);
  const int64_t k_blocks = (S + cuda::kAttentionBackwardKeys - 1) / cuda::kAttentionBackwardKeys;
  if (!grids_fit(entries, std::max(query_blocks(L), k_blocks), L, std::max(e, ev))) return false;
  const int device = query.device().index;
  const std::optional<AttentionFunctions> fns = attention_functions({device, {query.dtype(), e, ev, true}});
  if (!fns) return false;
  // Each row's maximum and log2 of its sum (2 floats) and rowsum(g * out), then dQ's f32
  // accumulator [entries, L, e].
  const Tensor scratch = empty({entries * L * (3 + e)}, TensorOptions(ScalarType::Float).device(query.device()));
  float* lse = static_cast<float*>(scratch.impl()->data());
  float* delta = lse + 2 * entries * L;
  float* dq_acc = delta + entries * L;
  launch_forward(op, *fns, device, is_causal, scale, lse);  // kiln_attention_lse

  const cuda::StreamHandle stream = cuda::current_stream(device).handle();
  const bool direct = std::all_of(outs.begin(), outs.end(), [](const Tensor& t) { return t.is_contiguous(); });
  const Tensor dq = direct ? outs[0] : empty_like_on(outs[0]);
  const Tensor dk = direct ? outs[1] : empty_like_on(outs[1]);
  const Tensor dv = direct ? outs[2] : empty_like_on(outs[2]);
  long long rows = entries * L;
  const void* gp = g.impl()->data();
  const void* outp = o.impl()->data();
  void* prep_args[] = {&gp, &outp, &delta, &dq_acc, &rows};
  cuda::launch_kernel(device, fns->fn[1], static_cast<unsigned>((rows + 3) / 4), cuda::kAttentionThreads, 0, stream,
                      prep_args);

  const bool masked = op.m.defined();
  const void* qp = op.q.impl()->data();
  const void* kp = op.k.impl()->data();
  const void* vp = op.v.impl()->data();
  const void* mp = masked ? op.m.impl()->data() : nullptr;
  const float* lp = lse;
  const float* dp = delta;
  void* dkp = dk.impl()->data();
  void* dvp = dv.impl()->data();
  long long ll = L, ss = S, qr = op.q.stride(-2), kr = op.k.stride(-2), vr = op.v.stride(-2);
  long long mr = masked ? op.m.stride(-2) : 0, mc = masked ? op.m.stride(-1) : 0;
  long long kb = k_blocks;
  cuda::AttentionBatch b = batch_argument(op);
  float sc = static_cast<float>(scale);
  int causal = is_causal ? 1 : 0, kind = mask_kind(op);
  void* args[] = {&qp, &kp, &vp, &mp, &gp, &lp, &dp, &dq_acc, &dkp, &dvp, &ll, &ss, &qr, &kr, &vr, &mr, &mc,
                  &b, &kb, &sc, &causal, &kind};
  cuda::launch_kernel(device, fns->fn[2], static_cast<unsigned>(entries * k_blocks), cuda::kAttentionThreads, 0, stream,
                      args);

  void* dqp = dq.impl()->data();
  long long n = entries * L * e;
  const int64_t threads = cuda::kAttentionThreads;
  void* dq_args[] = {&dq_acc, &dqp, &n, &sc};
  cuda::launch_kernel(device, fns->fn[3], static_cast<unsigned>((n + threads - 1) / threads),
                      static_cast<unsigned>(threads), 0, stream, dq_args);
  g_backward_launches.fetch_add(1, std::memory_order_relaxed);
  if (!direct) {
    Tensor(outs[0]).copy_(dq);
    Tensor(outs[1]).copy_(dk);
    Tensor(outs[2]).copy_(dv);
  }
  return true;
}

void use_attention_images(int device, const std::vector<std::pair<cuda::AttentionModule, std::string>>& images) {
  std::lock_guard lock(attention_mu());
  for (const auto& [m, image] : images) {
    const ModuleId id{device, m};
    provided().try_emplace(id, image);
    unavailable().erase(id);
  }
}

int64_t attention_kernel_launches() { return g_launches.load(std::memory_order_relaxed); }
int64_t attention_backward_kernel_launches() { return g_backward_launches.load(std::memory_order_relaxed); }

}  // namespace kiln::rt
