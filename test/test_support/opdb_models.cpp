// kiln/test/test_support/opdb_models.cpp — small models as op database entries: a ResNet-style
// block, a transformer block and an embedding text classifier.
//
// Each runs through every mode (eager, traced, compiled static and dynamic, the interpreter
// backend) against PyTorch's outputs, like any entry; tools/opdb_helpers.py holds the same
// models in PyTorch, argument for argument. Weights are sine waves scaled to keep activations
// of order one, so the comparison is not dominated by saturated values.
#include "test_support/opdb.h"

#include <string>

namespace kiln::opdb {

namespace {

Tensor wave(std::vector<int64_t> shape, double scale, double phase, ScalarType dtype = kFloat) {
  return (opdb::wave(std::move(shape), kDouble, phase) * scale).to(dtype);
}
Tensor positive(std::vector<int64_t> shape, ScalarType dtype = kFloat) {
  return seq(std::move(shape), kDouble, 0.5, 0.25).to(dtype);
}

// conv3x3 - batch_norm (eval) - relu - conv3x3 - batch_norm + x - relu - max_pool 2x2.
// in: x [N, C, H, W], then per conv: weight [C, C, 3, 3], bn weight, bias, running mean, var.
Tensor resnet_block(const std::vector<Tensor>& in) {
  auto bn = [&](const Tensor& y, size_t k) { return batch_norm(y, in[k], in[k + 1], in[k + 2], in[k + 3], false, 0.1, 1e-5); };
  Tensor y = relu(bn(conv2d(in[0], in[1], std::nullopt, 1, 1), 2));
  y = bn(conv2d(y, in[6], std::nullopt, 1, 1), 7);
  return max_pool2d(relu(y + in[0]), {2, 2});
}

// Pre-norm transformer block: x + attn(ln1(x)); then + mlp(ln2(x)) with gelu; causal, 2 heads.
// in: x [B, T, D], ln1 w b, qkv weight [3D, D] bias, proj weight [D, D] bias, ln2 w b,
// fc1 weight [4D, D] bias, fc2 weight [D, 4D] bias.
Tensor transformer_block(const std::vector<Tensor>& in) {
  const Tensor& x = in[0];
  const int64_t B = x.size(0), T = x.size(1), D = x.size(2), H = 2;
  Tensor h = layer_norm(x, {D}, in[1], in[2]);
  Tensor qkv = linear(h, in[3], in[4]).reshape({B, T, 3, H, D / H}).permute({2, 0, 3, 1, 4});  // [3, B, H, T, D/H]
  Tensor a = scaled_dot_product_attention(qkv.select(0, 0), qkv.select(0, 1), qkv.select(0, 2), std::nullopt, 0.0, true);
  Tensor y = x + linear(a.transpose(1, 2).reshape({B, T, D}), in[5], in[6]);
  Tensor m = linear(gelu(linear(layer_norm(y, {D}, in[7], in[8]), in[9], in[10])), in[11], in[12]);
  return y + m;
}

// tokens [B, T] -> embedding [V, E] -> mean over T -> linear, relu -> linear -> log_softmax.
Tensor text_classifier(const std::vector<Tensor>& in) {
  Tensor e = embedding(in[1], in[0]).mean({1});
  Tensor h = relu(linear(layer_norm(e, {e.size(-1)}), in[2], in[3]));
  return log_softmax(linear(h, in[4], in[5]), -1);
}

}  // namespace

void add_models(std::vector<OpEntry>& db) {
  const int64_t C = 4;
  auto conv_bn = [&](double phase) {
    return std::vector<Tensor>{wave({C, C, 3, 3}, 0.3, phase), wave({C}, 0.5, phase + 1), wave({C}, 0.2, phase + 2),
                               wave({C}, 0.1, phase + 3), positive({C})};
  };
  Sample rb{wave({2, C, 8, 8}, 1.0, 0.0)};
  for (double phase : {1.0, 2.0})
    for (Tensor& t : conv_bn(phase)) rb.push_back(t);
  db.push_back({"resnet_block", "model", one(resnet_block),
                "h.resnet_block(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10)", {rb}, Tolerance{1e-4, 1e-4}});

  const int64_t D = 16;
  Sample tb{wave({2, 5, D}, 1.0, 0.0),      wave({D}, 0.2, 1.0),          wave({D}, 0.1, 2.0),
            wave({3 * D, D}, 0.25, 3.0),    wave({3 * D}, 0.1, 4.0),      wave({D, D}, 0.25, 5.0),
            wave({D}, 0.1, 6.0),            wave({D}, 0.2, 7.0),          wave({D}, 0.1, 8.0),
            wave({4 * D, D}, 0.25, 9.0),    wave({4 * D}, 0.1, 10.0),     wave({D, 4 * D}, 0.125, 11.0),
            wave({D}, 0.1, 12.0)};
  db.push_back({"transformer_block", "model", one(transformer_block),
                "h.transformer_block(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12)", {tb},
                Tolerance{1e-4, 1e-4}});

  Sample tc{ints({2, 6}, 0), wave({20, 8}, 1.0, 0.0), wave({16, 8}, 0.3, 1.0), wave({16}, 0.1, 2.0),
            wave({3, 16}, 0.3, 3.0), wave({3}, 0.1, 4.0)};
  db.push_back({"text_classifier", "model", one(text_classifier), "h.text_classifier(a0, a1, a2, a3, a4, a5)", {tc},
                Tolerance{1e-4, 1e-5}});
}

}  // namespace kiln::opdb
