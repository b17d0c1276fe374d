// kiln/bench/train_models.h — the training workloads kiln_bench_train (cpu) and kiln_cuda_bench --train share.
//
// A Model is its parameters (leaves that require grad, on the device given) and a loss of one
// input. gpt_block: a pre-norm causal transformer block of `heads` heads: layer_norm, the qkv
// linear, scaled_dot_product_attention, the projection, then the MLP (D -> 4D, gelu -> D), each
// half with its residual; the loss is the mean of the squared output (in f32), so that every
// weight gets a gradient.
#pragma once

#include "kiln/kiln.h"

#include <cmath>
#include <functional>
#include <vector>

namespace kiln::bench {

struct Model {
  Device device;
  std::vector<Tensor> params;
  std::function<Tensor(const Tensor&)> loss;
  Tensor param(const Tensor& t) {
    Tensor p = t.to(device);
    p.requires_grad_();
    params.push_back(p);
    return p;
  }
  void zero_grad() {
    for (Tensor& p : params) p.mutable_grad() = Tensor();
  }
};

// randn scaled by 1/sqrt(fan_in), in `dt`.
inline Tensor scaled_randn(std::vector<int64_t> shape, int64_t fan_in, ScalarType dt = kFloat) {
  return (randn(shape) * (1.0 / std::sqrt(static_cast<double>(fan_in)))).to(dt);
}

inline Model gpt_block(int64_t B, int64_t T, int64_t D, int64_t H, ScalarType dt, Device device) {
  Model m{device, {}, {}};
  auto ones_ = [&](int64_t n) { return m.param(ones({n}, dt)); };
  auto zeros_ = [&](int64_t n) { return m.param(zeros({n}, dt)); };
  Tensor ln1w = ones_(D), ln1b = zeros_(D), ln2w = ones_(D), ln2b = zeros_(D);
  Tensor wqkv = m.param(scaled_randn({3 * D, D}, D, dt)), bqkv = zeros_(3 * D);
  Tensor wproj = m.param(scaled_randn({D, D}, D, dt)), bproj = zeros_(D);
  Tensor w1 = m.param(scaled_randn({4 * D, D}, D, dt)), b1 = zeros_(4 * D);
  Tensor w2 = m.param(scaled_randn({D, 4 * D}, 4 * D, dt)), b2 = zeros_(D);
  m.loss = [=](const Tensor& a) {
    Tensor q = linear(layer_norm(a, {D}, ln1w, ln1b), wqkv, bqkv).reshape({B, T, 3, H, D / H}).permute({2, 0, 3, 1, 4});
    Tensor att = scaled_dot_product_attention(q.select(0, 0), q.select(0, 1), q.select(0, 2), std::nullopt, 0.0, true);
    Tensor y = a + linear(att.transpose(1, 2).reshape({B, T, D}), wproj, bproj);
    y = y + linear(gelu(linear(layer_norm(y, {D}, ln2w, ln2b), w1, b1)), w2, b2);
    return y.to(kFloat).square().mean();
  };
  return m;
}

}  // namespace kiln::bench
