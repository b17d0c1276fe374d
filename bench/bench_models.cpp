// kiln_bench_models — model blocks, kiln eager against kiln compiled against the library-bound
// limit, measured in one run.
//
// Rows (f32, inference):
//   ResNet basic block [32, 64, 56, 56]: conv3x3 - batch_norm - relu - conv3x3 - batch_norm,
//     + input, relu; the limit is the two convolutions alone (oneDNN, as the convolution prim
//     calls it).
//   transformer block [8, 512, 768], 12 heads, causal: pre-norm attention (layer_norm, qkv
//     linear, scaled_dot_product_attention, projection) and MLP (768 -> 3072, gelu -> 768) with
//     residuals; the limit is its matrix products alone (the four linears as mm and the two
//     attention products as bmm, OpenBLAS as kiln calls it).
//   attention [8, 12, 512, 64], causal: scaled_dot_product_attention alone; the limit is its
//     two products as bmm.
// Each figure is the median of --runs calls (default 5) after one warm-up call.
#include "bench/bench_median.h"
#include "kiln/kiln.h"

#include <cstdio>
#include <cmath>
#include <functional>
#include <vector>

using namespace kiln;

namespace {

int g_runs = 5;

double median_ms(const std::function<void()>& f) { return bench::median_ms(f, g_runs); }

void row(const char* name, double eager, double compiled, double limit, const char* limit_what) {
  std::printf("| %s | %.1f | %.1f | %.1f (%s) | %.2fx | %.2fx |\n", name, eager, compiled, limit, limit_what,
              eager / compiled, compiled / limit);
}

struct BatchNorm {
  Tensor weight, bias, mean, var;
  explicit BatchNorm(int64_t c) : weight(rand({c}) + 0.5), bias(randn({c}) * 0.1), mean(randn({c}) * 0.1), var(rand({c}) + 0.5) {}
  Tensor operator()(const Tensor& x) const { return batch_norm(x, weight, bias, mean, var, false, 0.1, 1e-5); }
};

void resnet_block() {
  const Tensor x = randn({32, 64, 56, 56});
  const Tensor w1 = randn({64, 64, 3, 3}) * 0.05, w2 = randn({64, 64, 3, 3}) * 0.05;
  const BatchNorm bn1(64), bn2(64);
  auto block = [&](const Tensor& a) {
    Tensor y = relu(bn1(conv2d(a, w1, std::nullopt, 1, 1)));
    return relu(bn2(conv2d(y, w2, std::nullopt, 1, 1)) + a);
  };
  auto compiled = compile(block);
  const double eager_ms = median_ms([&] { (void)block(x); });
  const double compiled_ms = median_ms([&] { (void)compiled(x); });
  const Tensor y = conv2d(x, w1, std::nullopt, 1, 1);
  const double convs_ms = median_ms([&] {
    (void)conv2d(x, w1, std::nullopt, 1, 1);
    (void)conv2d(y, w2, std::nullopt, 1, 1);
  });
  row("ResNet basic block [32, 64, 56, 56]", eager_ms, compiled_ms, convs_ms, "the two convs");
}

struct Linear {
  Tensor weight, bias;
  Linear(int64_t in, int64_t out) : weight(randn({out, in}) * (1.0 / std::sqrt(in))), bias(randn({out}) * 0.02) {}
  Tensor operator()(const Tensor& x) const { return linear(x, weight, bias); }
};

void transformer_block() {
  const int64_t B = 8, T = 512, D = 768, H = 12;
  const Tensor x = randn({B, T, D});
  const Tensor ln1w = ones({D}), ln1b = zeros({D}), ln2w = ones({D}), ln2b = zeros({D});
  const Linear qkv(D, 3 * D), proj(D, D), fc1(D, 4 * D), fc2(4 * D, D);
  auto block = [&](const Tensor& a) {
    Tensor q = qkv(layer_norm(a, {D}, ln1w, ln1b)).reshape({B, T, 3, H, D / H}).permute({2, 0, 3, 1, 4});
    Tensor att = scaled_dot_product_attention(q.select(0, 0), q.select(0, 1), q.select(0, 2), std::nullopt, 0.0, true);
    Tensor y = a + proj(att.transpose(1, 2).reshape({B, T, D}));
    return y + fc2(gelu(fc1(layer_norm(y, {D}, ln2w, ln2b))));
  };
  auto compiled = compile(block);
  const double eager_ms = median_ms([&] { (void)block(x); });
  const double compiled_ms = median_ms([&] { (void)compiled(x); });
  // The matrix products alone, on inputs of the same shapes.
  const Tensor rows = x.reshape({B * T, D}), wide = randn({B * T, 4 * D});
  const Tensor wqkv = qkv.weight.t().contiguous(), wproj = proj.weight.t().contiguous();
  const Tensor w1 = fc1.weight.t().contiguous(), w2 = fc2.weight.t().contiguous();
  const Tensor qh = randn({B * H, T, D / H}), kt = randn({B * H, D / H, T}), p = rand({B * H, T, T});
  const double mm_ms = median_ms([&] {
    (void)mm(rows, wqkv);
    (void)bmm(qh, kt);
    (void)bmm(p, qh);
    (void)mm(rows, wproj);
    (void)mm(rows, w1);
    (void)mm(wide, w2);
  });
  row("transformer block [8, 512, 768], 12 heads", eager_ms, compiled_ms, mm_ms, "its matmuls");
}

// Attention alone, as the transformer block calls it ([8, 12, 512, 64], causal): the limit is
// its two products (q @ k^T and probabilities @ v as bmm, OpenBLAS as kiln calls it).
void attention() {
  const int64_t B = 8, H = 12, T = 512, E = 64;
  const Tensor q = randn({B, H, T, E}), k = randn({B, H, T, E}), v = randn({B, H, T, E});
  auto sdpa = [](const Tensor& a, const Tensor& b, const Tensor& c) {
    return scaled_dot_product_attention(a, b, c, std::nullopt, 0.0, true);
  };
  auto compiled = compile(sdpa);
  const double eager_ms = median_ms([&] { (void)sdpa(q, k, v); });
  const double compiled_ms = median_ms([&] { (void)compiled(q, k, v); });
  const Tensor qh = q.reshape({B * H, T, E}), kt = k.reshape({B * H, T, E}).transpose(1, 2).contiguous();
  const Tensor vh = v.reshape({B * H, T, E}), p = rand({B * H, T, T});
  const double mm_ms = median_ms([&] {
    (void)bmm(qh, kt);
    (void)bmm(p, vh);
  });
  row("attention [8, 12, 512, 64], causal", eager_ms, compiled_ms, mm_ms, "its two bmm");
}

}  // namespace

int main(int argc, char** argv) {
  g_runs = bench::runs_arg(argc, argv, g_runs);
  manual_seed(0);
  std::printf("kiln_bench_models: f32 inference, %d runs (median)\n\n", g_runs);
  std::printf("| block | eager ms | compiled ms | limit ms | eager/compiled | compiled/limit |\n");
  std::printf("|---|---|---|---|---|---|\n");
  resnet_block();
  transformer_block();
  attention();
  return 0;
}
