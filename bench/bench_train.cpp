// kiln_bench_train — training steps (forward plus backward), kiln eager against kiln compiled,
// measured in one run; bench/train_peers.py runs PyTorch eager and torch.compile on the same
// workloads and prints the table with the ratios (bench/train.sh runs both).
//
// Workloads (f32; the loss is the mean of the squared output, so that every weight gets a
// gradient):
//   mlp        x [64, 512] -> linear 2048 -> gelu -> linear 512
//   gpt_block  x [8, 128, 256], 4 heads, causal: pre-norm attention (layer_norm, qkv linear,
//              scaled_dot_product_attention, projection) and MLP (256 -> 1024, gelu -> 256)
//   resnet     x [8, 64, 32, 32]: conv3x3 - batch_norm (training) - relu - conv3x3 -
//              batch_norm, + input, relu
// A step is: forward, backward (gradients accumulate into the parameters' .grad, which the
// step clears first). Printed per workload, one line each, for train_peers.py:
//   kiln <workload> <eager ms> <compiled ms> <compile ms> <saved bytes>
// eager and compiled are medians of --runs steps after one warm-up step; compile ms is the
// first compiled step (trace of the joint graph, partition, both compiles) minus a warm step;
// saved bytes are what the compiled forward keeps for the backward (explain()'s partition line).
#include "bench/bench_median.h"
#include "kiln/kiln.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

using namespace kiln;

namespace {

int g_runs = 5;

struct Model {
  std::vector<Tensor> params;
  std::function<Tensor(const Tensor&)> loss;
  Tensor param(Tensor t) {
    t.requires_grad_();
    params.push_back(t);
    return t;
  }
  void zero_grad() {
    for (Tensor& p : params) p.mutable_grad() = Tensor();
  }
};

int64_t saved_bytes(const std::string& explain) {
  const std::string key = "values saved, ";
  const size_t at = explain.find(key);
  return at == std::string::npos ? -1 : std::stoll(explain.substr(at + key.size()));
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

void measure(const char* name, Model& m, const Tensor& x) {
  auto eager_step = [&] {
    m.zero_grad();
    m.loss(x).backward();
  };
  auto compiled = compile([&m](const Tensor& in) { return m.loss(in); });
  auto compiled_step = [&] {
    m.zero_grad();
    compiled(x).backward();
  };
  const auto t0 = std::chrono::steady_clock::now();
  compiled_step();
  const double first_ms = ms_since(t0);
  const double eager_ms = bench::median_ms(eager_step, g_runs);
  const double compiled_ms = bench::median_ms(compiled_step, g_runs);
  const int64_t saved = saved_bytes(compiled.explain(x));
  std::printf("kiln %s %.3f %.3f %.3f %lld\n", name, eager_ms, compiled_ms, first_ms - compiled_ms,
              static_cast<long long>(saved));
  std::fflush(stdout);
}

Tensor init(std::vector<int64_t> shape, int64_t fan_in) { return randn(shape) * (1.0 / std::sqrt(static_cast<double>(fan_in))); }

void mlp() {
  Model m;
  Tensor w1 = m.param(init({512, 2048}, 512)), b1 = m.param(zeros({2048}));
  Tensor w2 = m.param(init({2048, 512}, 2048)), b2 = m.param(zeros({512}));
  m.loss = [=](const Tensor& x) { return (gelu(x.mm(w1) + b1).mm(w2) + b2).square().mean(); };
  measure("mlp", m, randn({64, 512}));
}

void gpt_block() {
  const int64_t B = 8, T = 128, D = 256, H = 4;
  Model m;
  Tensor ln1w = m.param(ones({D})), ln1b = m.param(zeros({D})), ln2w = m.param(ones({D})), ln2b = m.param(zeros({D}));
  Tensor wqkv = m.param(init({3 * D, D}, D)), bqkv = m.param(zeros({3 * D}));
  Tensor wproj = m.param(init({D, D}, D)), bproj = m.param(zeros({D}));
  Tensor w1 = m.param(init({4 * D, D}, D)), b1 = m.param(zeros({4 * D}));
  Tensor w2 = m.param(init({D, 4 * D}, 4 * D)), b2 = m.param(zeros({D}));
  m.loss = [=](const Tensor& a) {
    Tensor q = linear(layer_norm(a, {D}, ln1w, ln1b), wqkv, bqkv).reshape({B, T, 3, H, D / H}).permute({2, 0, 3, 1, 4});
    Tensor att = scaled_dot_product_attention(q.select(0, 0), q.select(0, 1), q.select(0, 2), std::nullopt, 0.0, true);
    Tensor y = a + linear(att.transpose(1, 2).reshape({B, T, D}), wproj, bproj);
    y = y + linear(gelu(linear(layer_norm(y, {D}, ln2w, ln2b), w1, b1)), w2, b2);
    return y.square().mean();
  };
  measure("gpt_block", m, randn({B, T, D}));
}

void resnet() {
  const int64_t C = 64;
  Model m;
  Tensor w1 = m.param(init({C, C, 3, 3}, C * 9)), w2 = m.param(init({C, C, 3, 3}, C * 9));
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
  std::printf("kiln_bench_train: f32 training steps (forward + backward), %d runs (median)\n", g_runs);
  mlp();
  gpt_block();
  resnet();
  return 0;
}
