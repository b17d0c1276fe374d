// kiln/bench/cuda_bench.cpp — kiln on a CUDA device: eager and compiled workloads against device-to-device copy bandwidth.
//
// One process, one device. Every row is timed the same way: warm-up calls (compiling), then
// five batches of back-to-back calls, each batch ended by cuda::synchronize() and sized to last
// at least 20 ms; the median batch's time per call is reported. Memory-bound rows report the
// bytes they must move (inputs read once, outputs written once) per second and that rate over
// the copy bandwidth measured in the same run (the driver's cuMemcpyDtoDAsync of 256 MiB: read +
// write; kiln's own clone kernel is a row of its own). Matmul rows
// report TFLOP/s. `--cold` times only the first call of a compiled softmax (run it twice with
// one fresh KILN_CACHE_DIR: NVRTC, then the disk cache). `--json FILE` writes every row as
// {"row", "mode", "us", "gbps"} for bench/cuda_peers.py, which prints the table beside PyTorch.
// `--rows` times the compiled row kernels alone, each checked against its eager result, for
// sweeping KILN_CUDA_ROW_THREADS and KILN_CUDA_ROW_CACHE (bench/cuda_bench.sh --row-sweep).
// `--train` times training steps instead (train() below; `--tiny` shrinks them to a smoke test
// that the emulated device runs), with `--json` for `cuda_peers.py --train`.
#include "kiln/kiln.h"
#include "runtime/cuda/cuda_graphs.h"
#include "bench/train_models.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <functional>
#include <string>
#include <vector>

using namespace kiln;

namespace {

using Clock = std::chrono::steady_clock;

double median_us(const std::function<void()>& call) {
  for (int i = 0; i < 3; ++i) call();
  cuda::synchronize();
  int n = 1;
  for (;;) {  // size a batch to >= 20 ms
    const auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) call();
    cuda::synchronize();
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (ms >= 20 || n >= (1 << 16)) break;
    n *= 2;
  }
  std::vector<double> us;
  for (int b = 0; b < 5; ++b) {
    const auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) call();
    cuda::synchronize();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / n);
  }
  std::sort(us.begin(), us.end());
  return us[2];
}

struct Row {
  std::string row, mode;
  double us = 0, gbps = 0;
};
std::vector<Row> rows;

void report(const std::string& row, const std::string& mode, double us, double bytes) {
  const double gbps = bytes > 0 ? bytes / us / 1e3 : 0;
  rows.push_back({row, mode, us, gbps});
  std::printf("%-28s %-9s %10.1f us %8.0f GB/s\n", row.c_str(), mode.c_str(), us, gbps);
  std::fflush(stdout);
}

// Eager and compiled timings of one memory-bound workload.
// A row that fails prints its error and the benchmark goes on to the next.
template <typename F, typename... T> void both(const std::string& row, double bytes, F f, const T&... in) {
  try {
    report(row, "eager", median_us([&] { (void)f(in...); }), bytes);
    auto c = compile(f);
    report(row, "compiled", median_us([&] { (void)c(in...); }), bytes);
  } catch (const std::exception& e) {
    std::printf("%-28s failed: %s\n", row.c_str(), e.what());
  }
}

// The gradients of causal attention's q, k and v given the output's gradient and the output
// (scaled_dot_product_attention_backward, the node a training step's backward runs; kiln: its
// fused kernels, runtime/cuda/cuda_attention.h). The peer is PyTorch's flash backward on its own
// forward's log-sum-exp.
void attention_backward_row(const std::string& row, const Tensor& q, const Tensor& k, const Tensor& v) {
  const Tensor o = scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, /*is_causal=*/true);
  const Tensor g = randn(o.sizes().vec()).to(o.dtype()).cuda();
  const double s = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  both(row, 0,
       [s](const Tensor& g, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o) {
         AttentionGrads r = scaled_dot_product_attention_backward(g, q, k, v, o, std::nullopt, true, s);
         return std::make_tuple(r.query, r.key, r.value);
       },
       g, q, k, v, o);
}

int cold() {
  Tensor x = randn({4096, 1000}).cuda();
  auto f = compile([](const Tensor& t) { return softmax(t, -1); });
  cuda::synchronize();
  const auto t0 = Clock::now();
  (void)f(x);
  cuda::synchronize();
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  // A disk-warm process keys its module from the disk cache's NVRTC record (runtime/cuda/cubin_key.h).
  std::ifstream maps("/proc/self/maps");
  const std::string mapped((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
  std::printf("first call of compiled softmax [4096, 1000]: %.2f ms (NVRTC %s)\n", ms,
              mapped.find("libnvrtc") != std::string::npos ? "loaded" : "never loaded");
  return 0;
}

// --rows: the row kernels alone, compiled, each checked against its eager result (eager kernels
// are shape-generic, so they never take row_items): the run bench/cuda_bench.sh repeats under
// several KILN_CUDA_ROW_THREADS and KILN_CUDA_ROW_CACHE settings. Exit status 1 on a mismatch.
template <typename F, typename... T> bool checked_row(const std::string& row, double bytes, double copy_gbps, double tol,
                                                     F f, const T&... in) {
  try {
    auto c = compile(f);
    const Tensor want = f(in...).to(kDouble), got = c(in...).to(kDouble);
    const double err = (got - want).abs().max().template item<double>() / (1 + want.abs().max().template item<double>());
    const double us = median_us([&] { (void)c(in...); });
    const bool ok = err <= tol;
    std::printf("%-28s compiled %8.1f us %6.0f GB/s %4.0f%% of copy  error %.1e %s\n", row.c_str(), us, bytes / us / 1e3,
                100 * bytes / us / 1e3 / copy_gbps, err, ok ? "ok" : "MISMATCH");
    return ok;
  } catch (const std::exception& e) {
    std::printf("%-28s failed: %s\n", row.c_str(), e.what());
    return false;
  }
}

int rows_only() {
  manual_seed(0);
  const int64_t R = 8192, C = 8192;
  const double f4 = 4.0 * R * C;
  const Tensor x = randn({R, C}).cuda(), w = randn({C}).cuda(), b = randn({C}).cuda();
  Tensor dst = empty({R, C}, TensorOptions(kFloat).device(Device(kCUDA, 0)));
  const double copy_gbps = 2 * f4 / median_us([&] { dst.copy_(x); }) / 1e3;
  std::printf("copy (cuMemcpyDtoDAsync) %.0f GB/s\n", copy_gbps);
  bool ok = true;
  {  // eager pointwise kernels (flat, shape-generic): a clone and a * b + c, checked against the cpu
    const Tensor y = randn({R, C}).cuda();
    const double clone_us = median_us([&] { (void)x.clone(); });
    const double fma_us = median_us([&] { (void)(x * y + x); });
    const double err = (x.clone().cpu() - x.cpu()).abs().max().item<double>() +
                       ((x * y + x).cpu() - (x.cpu() * y.cpu() + x.cpu())).abs().max().item<double>();
    std::printf("eager clone %.1f us (%.0f%% of copy), eager a * b + c %.1f us (%.0f%% of copy)  error %.1e %s\n",
                clone_us, 100 * 2 * f4 / clone_us / 1e3 / copy_gbps, fma_us, 100 * 3 * f4 / fma_us / 1e3 / copy_gbps, err,
                err == 0 ? "ok" : "MISMATCH");
    ok &= err == 0;
  }
  ok &= checked_row("softmax", 2 * f4, copy_gbps, 1e-5, [](const Tensor& a) { return softmax(a, -1); }, x);
  ok &= checked_row("layer_norm", 2 * f4, copy_gbps, 1e-5, [](const Tensor& a) { return layer_norm(a, {8192}); }, x);
  ok &= checked_row("layer_norm affine", 2 * f4, copy_gbps, 1e-5,
                    [](const Tensor& a, const Tensor& w, const Tensor& b) { return layer_norm(a, {8192}, w, b); }, x, w, b);
  ok &= checked_row("rms_norm", 2 * f4, copy_gbps, 1e-5, [](const Tensor& a) { return rms_norm(a, {8192}); }, x);
  ok &= checked_row("sum dim 1", f4, copy_gbps, 1e-5, [](const Tensor& a) { return a.sum({1}); }, x);
  ok &= checked_row("softmax bf16", f4, copy_gbps, 1e-2, [](const Tensor& a) { return softmax(a, -1); }, x.to(kBFloat16));
  {  // Factories on the device (a memset of the value's pattern, else a generated kernel), and a
     // write into a strided view (its span still goes through the host).
    const Device gpu(kCUDA, 0);
    report("zeros [8192, 8192]", "eager", median_us([&] { (void)zeros({R, C}, TensorOptions(kFloat).device(gpu)); }), f4);
    report("full f64 2.5 [8192, 8192]", "eager",
           median_us([&] { (void)full({R, C}, 2.5, TensorOptions(kDouble).device(gpu)); }), 2 * f4);
    report("arange int64 [67108864]", "eager",
           median_us([&] { (void)arange(0, R * C, 1, TensorOptions(kInt64).device(gpu)); }), 2 * f4);
    report("arange f32 from 3 by 2 [67108864]", "eager",
           median_us([&] { (void)arange(3, 3 + 2 * R * C, 2, TensorOptions(kFloat).device(gpu)); }), f4);
    Tensor m = x.clone();
    const Tensor col = randn({R}).cuda();
    report("copy_ into a column of [8192, 8192]", "eager", median_us([&] { m.select(1, 0).copy_(col); }), 8.0 * R);
  }
  {
    const Tensor logits = randn({8192, 32000}).cuda();
    const Tensor target = randint(0, 32000, {8192}).cuda();
    ok &= checked_row("cross_entropy [8192,32000]", 4.0 * 8192 * 32000, copy_gbps, 1e-5,
                      [](const Tensor& l, const Tensor& t) { return cross_entropy(l, t); }, logits, target);
  }
  return ok ? 0 : 1;
}

void write_json(const std::string& path) {
  if (path.empty()) return;
  FILE* f = std::fopen(path.c_str(), "w");
  std::fprintf(f, "[\n");
  for (size_t i = 0; i < rows.size(); ++i)
    std::fprintf(f, "  {\"row\": \"%s\", \"mode\": \"%s\", \"us\": %.3f, \"gbps\": %.3f}%s\n", rows[i].row.c_str(),
                 rows[i].mode.c_str(), rows[i].us, rows[i].gbps, i + 1 < rows.size() ? "," : "");
  std::fprintf(f, "]\n");
  std::fclose(f);
}

// --train: training steps, as bench/bench_train.cpp runs them on the cpu. A step: the gradients
// cleared, the loss's forward and backward, then AdamW over every parameter (kiln's optimizer is
// one compiled program in both columns). "eager" runs the loss eagerly, "compiled" calls
// compile() of it (its forward and backward programs). cuda_peers.py --train times torch eager
// and torch.compile of the same loss, with torch.optim.AdamW(fused=True). Before timing, each
// workload checks the compiled loss and every gradient against eager ones at the same weights
// (relative to the largest magnitude; MISMATCH past tol, exit status 1).
//   train mlp:       x [8192, 1024] -> linear 4096 -> gelu -> linear 1024, f32
//   train small mlp: x [64, 256] -> linear 1024 -> gelu -> linear 256, f32 ([8, 16] -> 64 with
//                    `tiny`), also with
//                    cuda_graphs (its forward and backward replayed as graphs)
//   train gpt block: x [8, 1024, 768], 12 heads, causal; pre-norm attention (layer_norm, qkv
//                    linear, scaled_dot_product_attention, projection) and MLP (768 -> 3072,
//                    gelu -> 768); f32 (attention decomposed: cuBLASLt's exact products) and
//                    bf16 weights and activations (the fused attention kernels, forward and
//                    backward)
// The loss is the mean of the squared output. `tiny` runs the same code at toy sizes.
using bench::Model;
using bench::scaled_randn;

Model train_mlp(int64_t d, int64_t hidden) {
  Model m{Device(kCUDA, 0), {}, {}};
  Tensor w1 = m.param(scaled_randn({hidden, d}, d)), b1 = m.param(zeros({hidden}));
  Tensor w2 = m.param(scaled_randn({d, hidden}, hidden)), b2 = m.param(zeros({d}));
  m.loss = [=](const Tensor& x) { return linear(gelu(linear(x, w1, b1)), w2, b2).square().mean(); };
  return m;
}

Model train_gpt_block(int64_t B, int64_t T, int64_t D, int64_t H, ScalarType dt) {
  return bench::gpt_block(B, T, D, H, dt, Device(kCUDA, 0));
}

// The largest difference over the largest magnitude, of the loss and of each gradient.
double train_error(Model& m, const std::function<Tensor(const Tensor&)>& compiled, const Tensor& x) {
  auto run = [&](const std::function<Tensor(const Tensor&)>& f) {
    m.zero_grad();
    Tensor l = f(x);
    l.backward();
    std::vector<Tensor> out{l.detach().to(kDouble).cpu()};
    for (const Tensor& p : m.params) out.push_back(p.grad().to(kDouble).cpu());
    return out;
  };
  // The compiled function's third call: with cuda_graphs, a replay (the first runs as usual, the
  // second records the graphs and replays them).
  const std::vector<Tensor> want = run(m.loss);
  std::vector<Tensor> got;
  for (int i = 0; i < 3; ++i) got = run(compiled);
  double err = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double scale = std::max(1e-30, want[i].abs().max().item<double>());
    err = std::max(err, (got[i] - want[i]).abs().max().item<double>() / scale);
  }
  return err;
}

bool train_row(const std::string& row, Model m, const Tensor& x, double tol, bool graphs = false) {
  try {
    optim::AdamW opt(m.params, optim::AdamWOptions(1e-4));
    auto compiled = compile(m.loss, {.cuda_graphs = graphs});
    const double err = train_error(m, [&](const Tensor& t) { return compiled(t); }, x);
    std::printf("%-28s loss and gradients, compiled against eager: error %.1e %s\n", row.c_str(), err,
                err <= tol ? "ok" : "MISMATCH");
    auto step = [&](const std::function<Tensor(const Tensor&)>& f) {
      m.zero_grad();
      f(x).backward();
      opt.step();
    };
    if (!graphs) report(row, "eager", median_us([&] { step(m.loss); }), 0);
    const int64_t replays = rt::cuda_graph_replays();
    report(row, "compiled", median_us([&] { step([&](const Tensor& t) { return compiled(t); }); }), 0);
    if (graphs && rt::cuda_graph_replays() == replays) {  // the row would time the plain programs
      std::printf("%-28s no CUDA graph was replayed (KILN_LOG=perf says why)\n", row.c_str());
      return false;
    }
    return err <= tol;
  } catch (const std::exception& e) {
    std::printf("%-28s failed: %s\n", row.c_str(), e.what());
    return false;
  }
}

int train(bool tiny, const std::string& json) {
  manual_seed(0);
  bool ok = true;
  // A small model, where the host's cost of launching each step's kernels counts: compiled, and
  // with its forward and backward replayed as CUDA graphs (cuda_peers.py: torch.compile's
  // mode="reduce-overhead").
  const int64_t rows = tiny ? 8 : 64, d = tiny ? 16 : 256;
  ok &= train_row("train small mlp", train_mlp(d, 4 * d), randn({rows, d}).cuda(), 1e-4);
  ok &= train_row("train small mlp, cuda graphs", train_mlp(d, 4 * d), randn({rows, d}).cuda(), 1e-4, true);
  if (tiny) {
    ok &= train_row("train mlp", train_mlp(32, 128), randn({64, 32}).cuda(), 1e-4);
    ok &= train_row("train gpt block f32", train_gpt_block(2, 16, 32, 2, kFloat), randn({2, 16, 32}).cuda(), 1e-4);
    ok &= train_row("train gpt block bf16", train_gpt_block(2, 16, 32, 2, kBFloat16), randn({2, 16, 32}).to(kBFloat16).cuda(), 5e-2);
  } else {
    ok &= train_row("train mlp", train_mlp(1024, 4096), randn({8192, 1024}).cuda(), 1e-4);
    ok &= train_row("train gpt block f32", train_gpt_block(8, 1024, 768, 12, kFloat), randn({8, 1024, 768}).cuda(), 1e-4);
    ok &= train_row("train gpt block bf16", train_gpt_block(8, 1024, 768, 12, kBFloat16),
                    randn({8, 1024, 768}).to(kBFloat16).cuda(), 5e-2);
  }
  write_json(json);
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (!cuda::is_available()) {
    std::printf("cuda_bench: no CUDA device: %s\n", cuda::unavailable_reason().c_str());
    return 0;
  }
  std::string json;
  bool training = false, tiny = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--cold")) return cold();
    if (!std::strcmp(argv[i], "--rows")) return rows_only();
    if (!std::strcmp(argv[i], "--train")) training = true;
    if (!std::strcmp(argv[i], "--tiny")) tiny = true;
    if (!std::strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
  }
  if (training) return train(tiny, json);
  std::printf("device: %s\n", cuda::get_device_name(0).c_str());
  manual_seed(0);
  const int64_t R = 8192, C = 8192;
  const double f4 = 4.0 * R * C;  // bytes of one f32 [8192, 8192]
  const Tensor x = randn({R, C}).cuda(), y = randn({R, C}).cuda(), z = randn({R, C}).cuda();

  // The physical limit: the driver's device-to-device copy (cuMemcpyDtoDAsync, which copy_
  // into a contiguous tensor of the same dtype is), read + write; then kiln's generated clone.
  {
    Tensor dst = empty({R, C}, TensorOptions(kFloat).device(Device(kCUDA, 0)));
    report("copy (cuMemcpyDtoDAsync)", "eager", median_us([&] { dst.copy_(x); }), 2 * f4);
  }
  const double copy_gbps = rows.back().gbps;
  report("copy (clone)", "eager", median_us([&] { (void)x.clone(); }), 2 * f4);

  both("a * b + c", 4 * f4, [](const Tensor& a, const Tensor& b, const Tensor& c) { return a * b + c; }, x, y, z);
  both("gelu tanh", 2 * f4, [](const Tensor& a) { return gelu(a, "tanh"); }, x);
  both("softmax", 2 * f4, [](const Tensor& a) { return softmax(a, -1); }, x);
  both("layer_norm", 2 * f4, [](const Tensor& a) { return layer_norm(a, {8192}); }, x);
  both("rms_norm", 2 * f4, [](const Tensor& a) { return rms_norm(a, {8192}); }, x);
  both("sum dim 1", f4, [](const Tensor& a) { return a.sum({1}); }, x);
  both("sum dim 0", f4, [](const Tensor& a) { return a.sum({0}); }, x);
  both("sum all", f4, [](const Tensor& a) { return a.sum(); }, x);
  {  // Few long rows and few short columns: the reductions a split by the SM count is for.
    const Tensor few_rows = x.reshape({16, R * C / 16}), few_cols = x.reshape({R * C / 16, 16});
    both("sum dim 1 [16, 4194304]", f4, [](const Tensor& a) { return a.sum({1}); }, few_rows);
    both("sum dim 0 [4194304, 16]", f4, [](const Tensor& a) { return a.sum({0}); }, few_cols);
  }
  {  // 16-bit memory-bound rows.
    const Tensor xh = x.to(kHalf), yh = y.to(kHalf), zb = z.to(kBFloat16), xb = x.to(kBFloat16);
    const double f2 = 2.0 * R * C;
    both("a * b + c f16", 4 * f2, [](const Tensor& a, const Tensor& b, const Tensor& c) { return a * b + c; }, xh, yh,
         z.to(kHalf));
    both("gelu tanh bf16", 2 * f2, [](const Tensor& a) { return gelu(a, "tanh"); }, xb);
    both("softmax bf16", 2 * f2, [](const Tensor& a) { return softmax(a, -1); }, zb);
  }
  {
    const Tensor logits = randn({8192, 32000}).cuda();
    const Tensor target = randint(0, 32000, {8192}).cuda();
    both("cross_entropy [8192,32000]", 4.0 * 8192 * 32000,
         [](const Tensor& l, const Tensor& t) { return cross_entropy(l, t); }, logits, target);
  }
  {  // An embedding lookup feeding the loss: the gathered rows are the logits.
    const Tensor table = randn({4096, 32000}).cuda();
    const Tensor ids = randint(0, 4096, {8192}).cuda(), target = randint(0, 32000, {8192}).cuda();
    both("embedding + cross_entropy", 2 * 4.0 * 8192 * 32000,
         [](const Tensor& w, const Tensor& i, const Tensor& t) { return cross_entropy(embedding(w, i), t); }, table,
         ids, target);
  }
  {  // Attention [8, 16, 2048, 64] f16: the time per call (PyTorch eager picks its flash kernel).
     // kiln runs f16 and bf16 attention on its fused kernel (runtime/cuda/cuda_attention.h).
    const Tensor q = randn({8, 16, 2048, 64}).to(kHalf).cuda(), k = randn({8, 16, 2048, 64}).to(kHalf).cuda(),
                 v = randn({8, 16, 2048, 64}).to(kHalf).cuda();
    both("attention [8,16,2048,64] f16", 0,
         [](const Tensor& q, const Tensor& k, const Tensor& v) { return scaled_dot_product_attention(q, k, v); }, q,
         k, v);
    both("attention causal f16", 0,
         [](const Tensor& q, const Tensor& k, const Tensor& v) {
           return scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, /*is_causal=*/true);
         },
         q, k, v);
    attention_backward_row("attention backward causal f16", q, k, v);
  }
  {  // A language model's heads: 32 of 128, bf16, causal.
    const Tensor q = randn({4, 32, 2048, 128}).to(kBFloat16).cuda(), k = randn({4, 32, 2048, 128}).to(kBFloat16).cuda(),
                 v = randn({4, 32, 2048, 128}).to(kBFloat16).cuda();
    both("attention causal d128 bf16", 0,
         [](const Tensor& q, const Tensor& k, const Tensor& v) {
           return scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, /*is_causal=*/true);
         },
         q, k, v);
    attention_backward_row("attention backward causal d128 bf16", q, k, v);
  }
  {  // Sorts on kiln's sort kernels (runtime/cuda/cuda_sort.h): top-k sampling over a vocabulary,
     // a full sort of long rows, and many short rows (an MoE router's top-2 of 8 experts). The
     // "GB/s" column counts the keys read once and the values and indices written once.
    const Tensor vocab = randn({64, 50257}).cuda(), rows = randn({256, 32768}).cuda(), router = randn({16384, 8}).cuda();
    both("topk 50 of [64, 50257]", 4.0 * 64 * 50257, [](const Tensor& a) { return std::get<0>(topk(a, 50, -1)); }, vocab);
    both("sort [256, 32768]", 16.0 * 256 * 32768, [](const Tensor& a) { return std::get<0>(sort(a, -1)); }, rows);
    both("topk 2 of [16384, 8]", 4.0 * 16384 * 8, [](const Tensor& a) { return std::get<1>(topk(a, 2, -1)); }, router);
  }
  {  // A small program: the time per call is the host's cost of a call (launches are asynchronous).
    const Tensor a = randn({1024}).cuda(), b = randn({1024}).cuda(), c = randn({1024}).cuda();
    both("small a * b + c [1024]", 0, [](const Tensor& a, const Tensor& b, const Tensor& c) { return a * b + c; }, a,
         b, c);
    both("small softmax [64, 64]", 0, [](const Tensor& a) { return softmax(a, -1); }, randn({64, 64}).cuda());
    // A transformer's MLP block on few tokens: five kernels and two cuBLASLt products a call, as
    // compiled, and replayed as one CUDA graph (CompileOptions::cuda_graphs; PyTorch's row is
    // torch.compile's mode="reduce-overhead").
    const Tensor w1 = randn({1024, 256}).cuda(), b1 = randn({1024}).cuda(), w2 = randn({256, 1024}).cuda(),
                 b2 = randn({256}).cuda(), x = randn({8, 256}).cuda();
    auto block = [&](const Tensor& t) { return t + linear(gelu(linear(layer_norm(t, {256}), w1, b1)), w2, b2); };
    both("small mlp block [8, 256]", 0, block, x);
    try {
      auto g = compile(block, {.cuda_graphs = true});
      report("small mlp block, cuda graphs", "compiled", median_us([&] { (void)g(x); }), 0);
    } catch (const std::exception& e) {
      std::printf("%-28s failed: %s\n", "small mlp block, cuda graphs", e.what());
    }
  }
  // Matmul through cuBLASLt: TFLOP/s in the "gbps" column.
  auto mm_row = [&](const std::string& name, ScalarType dt, int64_t n) {
    const Tensor a = randn({n, n}).to(dt).cuda(), b = randn({n, n}).to(dt).cuda();
    const double us = median_us([&] { (void)a.matmul(b); });
    rows.push_back({name, "eager", us, 2.0 * n * n * n / us / 1e6});
    std::printf("%-28s %-9s %10.1f us %8.1f TFLOP/s\n", name.c_str(), "eager", us, rows.back().gbps);
  };
  mm_row("matmul f32 4096", kFloat, 4096);
  mm_row("matmul f16 8192", kHalf, 8192);
  mm_row("matmul f64 4096", kDouble, 4096);  // cuBLASLt's 64F compute type (a generated kernel before 2026-12-07)
  {  // A transformer block's MLP half: layer_norm -> linear -> gelu -> linear, plus the residual.
    const Tensor h = randn({8192, 1024}).cuda();
    const Tensor w1 = (randn({4096, 1024}) * 0.03).cuda(), b1 = randn({4096}).cuda();
    const Tensor w2 = (randn({1024, 4096}) * 0.03).cuda(), b2 = randn({1024}).cuda();
    auto block = [](const Tensor& h, const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2) {
      return h + linear(gelu(linear(layer_norm(h, {1024}), w1, b1)), w2, b2);
    };
    both("transformer MLP block", 0, block, h, w1, b1, w2, b2);
  }
  {  // linear with its bias and activation folded into cuBLASLt's epilogue (passes/matmul_epilogues.h):
     // [8192, 4096] x [4096, 4096]^T in f16 (tensor cores, the sum rounded once) and f32.
    const Tensor x = randn({8192, 4096}).to(kHalf).cuda(), w = (randn({4096, 4096}) * 0.02).to(kHalf).cuda();
    const Tensor b = randn({4096}).to(kHalf).cuda();
    both("linear f16", 0, [](const Tensor& x, const Tensor& w, const Tensor& b) { return linear(x, w, b); }, x, w, b);
    both("gelu_tanh(linear) f16", 0,
         [](const Tensor& x, const Tensor& w, const Tensor& b) { return gelu(linear(x, w, b), "tanh"); }, x, w, b);
    const Tensor xf = x.to(kFloat), wf = w.to(kFloat), bf = b.to(kFloat);
    both("relu(linear) f32", 0, [](const Tensor& x, const Tensor& w, const Tensor& b) { return relu(linear(x, w, b)); },
         xf, wf, bf);
  }
  {  // A ResNet 3x3 convolution on cuDNN (runtime/cuda/cuda_conv.h): TFLOP/s in the "GB/s" column.
    const Tensor x = randn({32, 64, 56, 56}).cuda(), w = (randn({64, 64, 3, 3}) * 0.05).cuda();
    const double flop = 2.0 * 32 * 64 * 56 * 56 * 64 * 9;
    for (ScalarType dt : {kFloat, kHalf}) {
      const Tensor xd = x.to(dt), wd = w.to(dt);
      const std::string name = std::string("conv2d 3x3 [32,64,56,56] ") + (dt == kFloat ? "f32" : "f16");
      const double us = median_us([&] { (void)conv2d(xd, wd, std::nullopt, 1, 1); });
      rows.push_back({name, "eager", us, flop / us / 1e6});
      std::printf("%-28s %-9s %10.1f us %8.1f TFLOP/s\n", name.c_str(), "eager", us, rows.back().gbps);
    }
  }
  std::printf("\n| row | mode | us | GB/s | of copy |\n|---|---|---|---|---|\n");
  for (const Row& r : rows)
    std::printf("| %s | %s | %.1f | %.0f | %s |\n", r.row.c_str(), r.mode.c_str(), r.us, r.gbps,
                r.gbps > 0 && r.row.rfind("matmul", 0) != 0 && r.row.rfind("conv2d", 0) != 0 ? (std::to_string(static_cast<int>(100 * r.gbps / copy_gbps)) + "%").c_str() : "");
  write_json(json);
  return 0;
}
