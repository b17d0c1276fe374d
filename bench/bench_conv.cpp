// kiln/bench/bench_conv.cpp — kiln_bench_conv: convolution and pooling, measured in one run.
//
// Rows (f32, ResNet's first stage, [32, 64, 56, 56], 3x3 convs, 64 channels):
//   conv kernel choice: the convolution prim (oneDNN) against kiln's own im2col + OpenBLAS
//     (the padded input's nine strided slices stacked by one generated kernel, then one bmm
//     per image), the measurement behind docs/decisions.md "The convolution kernel";
//   conv + bias + relu + max_pool 3x3/2: kiln eager, kiln compiled, and the library-bound
//     limit (the convolution alone);
//   max_pool2d 3x3/2 and adaptive_avg_pool2d(1): eager, compiled, and the memory limit (the
//     input read once at the STREAM-like copy bandwidth measured here).
// Each figure is the median of --runs calls (default 7) after one warm-up call.
#include "bench/bench_median.h"
#include "kiln/kiln.h"

#include <cstdio>
#include <functional>
#include <vector>

using namespace kiln;

namespace {

int g_runs = 7;

double median_ms(const std::function<void()>& f) { return bench::median_ms(f, g_runs); }

// im2col + BLAS written with kiln ops: what the convolution would be without oneDNN.
Tensor im2col_conv3x3(const Tensor& x, const Tensor& w) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3), OC = w.size(0);
  const Tensor xp = constant_pad_nd(x, {1, 1, 1, 1});
  std::vector<Tensor> taps;
  for (int64_t kh = 0; kh < 3; ++kh)
    for (int64_t kw = 0; kw < 3; ++kw) taps.push_back(slice(slice(xp, 2, kh, kh + H), 3, kw, kw + W));
  const Tensor col = stack(taps, 2).reshape({N, C * 9, H * W});
  return bmm(w.reshape({1, OC, C * 9}).expand({N, OC, C * 9}), col).reshape({N, OC, H, W});
}

}  // namespace

int main(int argc, char** argv) {
  g_runs = bench::runs_arg(argc, argv, g_runs);
  manual_seed(0);
  const Tensor x = randn({32, 64, 56, 56});
  const Tensor w = randn({64, 64, 3, 3}) * 0.05;
  const Tensor b = randn({64});
  const double gflop = 2.0 * 32 * 64 * 56 * 56 * 64 * 9 / 1e9;

  // Memory limit: one read + one write of the input, timed as a compiled x + 1.
  auto copy = compile([](const Tensor& a) { return a + 1.0; });
  const double copy_ms = median_ms([&] { (void)copy(x); });
  const double read_ms = copy_ms / 2;  // the pools read the input once and write little

  std::printf("kiln_bench_conv: f32 [32, 64, 56, 56], %d runs (median), copy bandwidth %.1f GB/s\n\n", g_runs,
              2.0 * static_cast<double>(x.numel()) * 4 / (copy_ms * 1e6));

  auto im2col = compile([&](const Tensor& a) { return im2col_conv3x3(a, w); });
  const double onednn_ms = median_ms([&] { (void)conv2d(x, w, std::nullopt, 1, 1); });
  const double im2col_ms = median_ms([&] { (void)im2col(x); });
  std::printf("| conv 3x3, 64 -> 64 | ms | GFLOP/s |\n|---|---|---|\n");
  std::printf("| oneDNN (the convolution prim) | %.2f | %.0f |\n", onednn_ms, gflop / onednn_ms * 1e3);
  std::printf("| im2col + OpenBLAS bmm (kiln compiled) | %.2f | %.0f |\n", im2col_ms, gflop / im2col_ms * 1e3);
  std::printf("| im2col / oneDNN | %.2fx | |\n\n", im2col_ms / onednn_ms);

  auto block = [&](const Tensor& a) { return max_pool2d(relu(conv2d(a, w, b, 1, 1)), 3, 2, 1); };
  auto block_c = compile(block);
  const double block_eager = median_ms([&] { (void)block(x); });
  const double block_comp = median_ms([&] { (void)block_c(x); });
  const double conv_bias = median_ms([&] { (void)conv2d(x, w, b, 1, 1); });
  std::printf("| workload | eager ms | compiled ms | limit ms | eager/compiled | compiled/limit |\n");
  std::printf("|---|---|---|---|---|---|\n");
  std::printf("| conv+bias+relu+max_pool 3x3/2 | %.2f | %.2f | %.2f (conv alone) | %.2fx | %.2fx |\n", block_eager,
              block_comp, conv_bias, block_eager / block_comp, block_comp / conv_bias);

  auto mp = [](const Tensor& a) { return max_pool2d(a, 3, 2, 1); };
  auto mp_c = compile(mp);
  const double mp_eager = median_ms([&] { (void)mp(x); });
  const double mp_comp = median_ms([&] { (void)mp_c(x); });
  std::printf("| max_pool2d 3x3/2 | %.2f | %.2f | %.2f (read once) | %.2fx | %.2fx |\n", mp_eager, mp_comp, read_ms,
              mp_eager / mp_comp, mp_comp / read_ms);

  auto gap = [](const Tensor& a) { return adaptive_avg_pool2d(a, {1, 1}); };
  auto gap_c = compile(gap);
  const double gap_eager = median_ms([&] { (void)gap(x); });
  const double gap_comp = median_ms([&] { (void)gap_c(x); });
  std::printf("| adaptive_avg_pool2d (1, 1) | %.2f | %.2f | %.2f (read once) | %.2fx | %.2fx |\n", gap_eager, gap_comp,
              read_ms, gap_eager / gap_comp, gap_comp / read_ms);
  return 0;
}
