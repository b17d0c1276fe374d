// kiln_bench_train — training steps (forward, backward, AdamW), kiln eager against kiln
// compiled, measured in one run; bench/train_peers.py runs PyTorch eager and torch.compile on the
// same workloads and prints the tables with the ratios (bench/train.sh runs both).
//
// Workloads (f32; the loss is the mean of the squared output, so that every weight gets a
// gradient):
//   mlp        x [64, 512] -> linear 2048 -> gelu -> linear 512
//   gpt_block  x [8, 128, 256], 4 heads, causal: pre-norm attention (layer_norm, qkv linear,
//              scaled_dot_product_attention, projection) and MLP (256 -> 1024, gelu -> 256)
//   resnet     x [8, 64, 32, 32]: conv3x3 - batch_norm (training) - relu - conv3x3 -
//              batch_norm, + input, relu
// A step is: forward, backward (gradients accumulate into the parameters' .grad, which the
// step clears first), then kiln::optim::AdamW's step over every parameter (one compiled program
// in both columns: kiln has no eager optimizer). Printed per workload, one line each, for
// train_peers.py:
//   kiln <workload> <eager ms> <compiled ms> <compile ms> <saved bytes> <optim ms> <optim limit ms>
// eager and compiled are medians of --runs steps after one warm-up step; compile ms is the
// first compiled step (trace of the joint graph, partition, both compiles, the optimizer's
// compile) minus a warm step; saved bytes are what the compiled forward keeps for the backward
// (explain()'s partition line). optim ms is AdamW's step alone, and its limit the time its
// memory traffic takes at the bandwidth measured in this run for that traffic: per parameter
// element, the parameter, its gradient and two moments read (16 bytes) and the parameter and
// the moments written (12 bytes), timed as a hand-written parallel loop with the same four reads
// and three writes over 16M elements (out of cache). Steps whose tensors fit in the caches can
// beat it.
// One more line times AdamW alone on 16M parameters (8 tensors of 2M), well outside the caches:
//   kiln_optim adamw_16m <optim ms> <optim limit ms>
#include "bench/bench_median.h"
#include "kiln/kiln.h"
#include "bench/train_models.h"
#include "runtime/thread_pool.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using namespace kiln;

namespace {

int g_runs = 5;

using bench::Model;

int64_t saved_bytes(const std::string& explain) {
  const std::string key = "values saved, ";
  const size_t at = explain.find(key);
  return at == std::string::npos ? -1 : std::stoll(explain.substr(at + key.size()));
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Bytes per second of a parallel memcpy of 64 MiB (read + write counted, as STREAM's copy).
double copy_bandwidth() {
  const int64_t n = int64_t{16} << 20;
  std::vector<float> src(n, 1.0f), dst(n, 0.0f);
  auto copy = [&] {
    rt::parallel_for(n, 1 << 20, [&](int64_t b, int64_t e) {
      std::memcpy(dst.data() + b, src.data() + b, static_cast<size_t>(e - b) * sizeof(float));
    });
  };
  const double ms = bench::median_ms(copy, std::max(g_runs, 5));
  return 2.0 * static_cast<double>(n) * sizeof(float) / (ms * 1e-3);
}

// Bytes per second of AdamW's traffic: four arrays of 16M floats read, three written, by a
// plain parallel loop (no arithmetic worth the name).
double adamw_traffic_bandwidth() {
  const int64_t n = int64_t{16} << 20;
  std::vector<float> p(n, 1.0f), g(n, 1e-3f), m(n, 0.0f), v(n, 0.0f);
  auto pass = [&] {
    rt::parallel_for(n, 1 << 16, [&](int64_t b, int64_t e) {
      float* __restrict pp = p.data();
      float* __restrict mm = m.data();
      float* __restrict vv = v.data();
      const float* __restrict gg = g.data();
      for (int64_t i = b; i < e; ++i) {
        const float x = gg[i];
        mm[i] = mm[i] + x;
        vv[i] = vv[i] + x;
        pp[i] = pp[i] - x;
      }
    });
  };
  const double ms = bench::median_ms(pass, std::max(g_runs, 5));
  return 28.0 * static_cast<double>(n) / (ms * 1e-3);
}

double g_limit_bw = 0;

// AdamW's step alone (gradients in place) and the time its traffic takes at copy bandwidth.
std::pair<double, double> optimizer_step(optim::Optimizer& opt, const std::vector<Tensor>& params) {
  int64_t elements = 0;
  for (const Tensor& p : params) elements += p.numel();
  const double ms = bench::median_ms([&] { opt.step(); }, g_runs);
  return {ms, 28.0 * static_cast<double>(elements) / g_limit_bw * 1e3};
}

void measure(const char* name, Model& m, const Tensor& x) {
  optim::AdamW opt(m.params, optim::AdamWOptions(1e-4));
  auto eager_step = [&] {
    m.zero_grad();
    m.loss(x).backward();
    opt.step();
  };
  auto compiled = compile([&m](const Tensor& in) { return m.loss(in); });
  auto compiled_step = [&] {
    m.zero_grad();
    compiled(x).backward();
    opt.step();
  };
  const auto t0 = std::chrono::steady_clock::now();
  compiled_step();
  const double first_ms = ms_since(t0);
  const double eager_ms = bench::median_ms(eager_step, g_runs);
  const double compiled_ms = bench::median_ms(compiled_step, g_runs);
  const int64_t saved = saved_bytes(compiled.explain(x));
  const auto [optim_ms, limit_ms] = optimizer_step(opt, m.params);
  std::printf("kiln %s %.3f %.3f %.3f %lld %.3f %.3f\n", name, eager_ms, compiled_ms, first_ms - compiled_ms,
              static_cast<long long>(saved), optim_ms, limit_ms);
  std::fflush(stdout);
}

void adamw_16m() {
  std::vector<Tensor> params;
  for (int i = 0; i < 8; ++i) {
    Tensor p = randn({2048, 1024}).requires_grad_();
    p.mutable_grad() = randn({2048, 1024});
    params.push_back(p);
  }
  optim::AdamW opt(params, optim::AdamWOptions(1e-4));
  const auto [ms, limit] = optimizer_step(opt, params);
  std::printf("kiln_optim adamw_16m %.3f %.3f\n", ms, limit);
  std::fflush(stdout);
}

using bench::scaled_randn;

void mlp() {
  Model m;
  Tensor w1 = m.param(scaled_randn({512, 2048}, 512)), b1 = m.param(zeros({2048}));
  Tensor w2 = m.param(scaled_randn({2048, 512}, 2048)), b2 = m.param(zeros({512}));
  m.loss = [=](const Tensor& x) { return (gelu(x.mm(w1) + b1).mm(w2) + b2).square().mean(); };
  measure("mlp", m, randn({64, 512}));
}

void gpt_block() {
  const int64_t B = 8, T = 128, D = 256, H = 4;
  Model m = bench::gpt_block(B, T, D, H, kFloat, Device());
  measure("gpt_block", m, randn({B, T, D}));
}

void resnet() {
  const int64_t C = 64;
  Model m;
  Tensor w1 = m.param(scaled_randn({C, C, 3, 3}, C * 9)), w2 = m.param(scaled_randn({C, C, 3, 3}, C * 9));
  Tensor g1 = m.param(ones({C})), be1 = m.param(zeros({C})), g2 = m.param(ones({C})), be2 = m.param(zeros({C}));
  Tensor rm1 = zeros({C}), rv1 = ones({C}), rm2 = zeros({C}), rv2 = ones({C});
  m.loss = [=](const Tensor& x) {
    Tensor y = relu(batch_norm(conv2d(x, w1, std::nullopt, 1, 1), g1, be1, rm1, rv1, true, 0.1, 1e-5));
    y = batch_norm(conv2d(y, w2, std::nullopt, 1, 1), g2, be2, rm2, rv2, true, 0.1, 1e-5);
    return relu(y + x).square().mean();
  };
  measure("resnet", m, randn({8, C, 32, 32}));
}

}  // namespace

int main(int argc, char** argv) {
  g_runs = bench::runs_arg(argc, argv, g_runs);
  manual_seed(0);
  const double copy_bw = copy_bandwidth();
  g_limit_bw = adamw_traffic_bandwidth();
  std::printf("kiln_bench_train: f32 training steps (forward + backward + AdamW), %d runs (median); copy bandwidth "
              "%.1f GB/s, AdamW's traffic (4 reads, 3 writes) %.1f GB/s\n", g_runs, copy_bw / 1e9, g_limit_bw / 1e9);
  mlp();
  gpt_block();
  resnet();
  adamw_16m();
  return 0;
}
