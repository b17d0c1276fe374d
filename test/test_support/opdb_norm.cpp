// kiln/test/test_support/opdb_norm.cpp — op database entries: layer and RMS normalization;
// batch, instance and group normalization; the native_* forms with their statistics.
//
// Training-mode entries update running statistics in place: each entry clones them first and
// returns them after the output, so every mode compares the updated statistics with PyTorch's
// (tools/opdb_helpers.py holds the same steps in Python). Inputs are sine waves; f16 and bf16
// samples pair with f32 parameters, as PyTorch's CPU kernels allow. Error rows are arguments
// PyTorch rejects.
#include "test_support/opdb.h"

#include <cmath>
#include <limits>
#include <string>

namespace kiln::opdb {

namespace {

// Positive per-channel values (variances).
Tensor positive(std::vector<int64_t> shape, ScalarType dtype = kFloat) {
  return seq(std::move(shape), kDouble, 0.5, 0.25).to(dtype);
}
std::vector<Tensor> three(const std::tuple<Tensor, Tensor, Tensor>& t) {
  return {std::get<0>(t), std::get<1>(t), std::get<2>(t)};
}

}  // namespace

void add_norm(std::vector<OpEntry>& db) {
  const std::string F = "torch.nn.functional.";
  auto entry = [&](std::string name, std::string torch, Fn f, std::vector<Sample> samples) {
    db.push_back({std::move(name), "norm", std::move(f), std::move(torch), std::move(samples)});
  };

  // ---- layer_norm, rms_norm ----
  auto rows = [&](std::string name, std::string torch, Fn f) {
    db.push_back({name, "norm", f, torch,
                  {{seq({2, 3})}, {seq({3, 2}).t()}, {seq({2, 0})}, {seq({2, 3}, kHalf)}, {seq({4}, kDouble)}}});
  };
  rows("layer_norm", "torch.nn.functional.layer_norm(a0, [a0.shape[-1]])",
       one([](const std::vector<Tensor>& in) { return layer_norm(in[0], {in[0].size(-1)}); }));
  rows("rms_norm", "torch.nn.functional.rms_norm(a0, [a0.shape[-1]])",
       one([](const std::vector<Tensor>& in) { return rms_norm(in[0], {in[0].size(-1)}); }));
  db.push_back({"layer_norm:affine", "norm",
                one([](const std::vector<Tensor>& in) { return layer_norm(in[0], {3}, in[1], in[2], 1e-3); }),
                "torch.nn.functional.layer_norm(a0, [3], a1, a2, 1e-3)",
                {{seq({2, 3}), seq({3}), seq({3}, kFloat, 1.0)}, {seq({2, 2, 3}), seq({3}), seq({3})},
                 {seq({2, 4}), seq({3}), seq({3})}}});  // the last raises
  db.push_back({"rms_norm:weight", "norm", one([](const std::vector<Tensor>& in) { return rms_norm(in[0], {2, 3}, in[1]); }),
                "torch.nn.functional.rms_norm(a0, [2, 3], a1)",
                {{seq({2, 3}), seq({2, 3})}, {seq({4, 2, 3}, kHalf), seq({2, 3}, kHalf)}}});

  // ---- normalize: the p-norm over dim, clamped below by eps ----
  entry("normalize", F + "normalize(a0)", one([](const std::vector<Tensor>& in) { return normalize(in[0]); }),
        {{seq({2, 3})}, {seq({3, 2}).t()}, {seq({2, 3, 4})}, {seq({2, 0})}, {seq({0, 3})}, {f32({0, 0, 0, 3, 4, 0}, {2, 3})},
         {seq({2, 3}, kHalf)}, {seq({2, 3}, kBFloat16)}, {seq({3, 4}, kDouble)}, {specials().reshape({3, 4})},
         {seq({4})}, {ints({2, 3})}});  // the last two raise: dim 1 of a 1-D input, an integer input
  entry("normalize:p", F + "normalize(a0, p=1.0, dim=0, eps=0.5)",
        one([](const std::vector<Tensor>& in) { return normalize(in[0], 1.0, 0, 0.5); }),
        {{seq({2, 3})}, {seq({4})}, {f32({0.1, -0.2, 0.05})}, {seq({3, 2}, kDouble).t()}});
  entry("normalize:inf", F + "normalize(a0, p=float('inf'), dim=-1)",
        one([](const std::vector<Tensor>& in) { return normalize(in[0], INFINITY, -1); }),
        {{seq({2, 3})}, {seq({3, 4}).t()}, {seq({2, 3}, kHalf)}});
  // p = 0 counts the nonzero elements; no sample holds a zero, where finite differences would
  // see the count jump (the zero row's eps clamp is checked with p = 2 above).
  entry("normalize:zero", F + "normalize(a0, p=0.0, dim=1)",
        one([](const std::vector<Tensor>& in) { return normalize(in[0], 0.0, 1); }),
        {{seq({2, 3})}, {seq({3, 2}, kDouble).t()}});

  // ---- batch_norm: (input, weight, bias, running_mean, running_var) ----
  entry("batch_norm:eval", F + "batch_norm(a0, a3, a4, a1, a2, False, 0.1, 1e-5)",
        one([](const std::vector<Tensor>& in) { return batch_norm(in[0], in[1], in[2], in[3], in[4], false, 0.1, 1e-5); }),
        {{wave({2, 3, 4, 5}), wave({3}, kFloat, 1.0), wave({3}, kFloat, 2.0), wave({3}, kFloat, 3.0), positive({3})},
         {wave({4, 3}), wave({3}, kFloat, 1.0), wave({3}, kFloat, 2.0), wave({3}, kFloat, 3.0), positive({3})},
         {wave({2, 5, 3}).transpose(1, 2), wave({3}, kFloat, 1.0), wave({3}, kFloat, 2.0), wave({3}, kFloat, 3.0),
          positive({3})},
         {wave({0, 3, 2}), wave({3}), wave({3}), wave({3}), positive({3})},
         {wave({2, 3, 4}, kDouble), wave({3}, kDouble, 1.0), wave({3}, kDouble, 2.0), wave({3}, kDouble, 3.0),
          positive({3}, kDouble)},
         {wave({2, 3, 4}, kHalf), wave({3}, kFloat, 1.0), wave({3}, kFloat, 2.0), wave({3}, kFloat, 3.0), positive({3})},
         {wave({2, 3, 4}, kBFloat16), wave({3}, kBFloat16, 1.0), wave({3}, kBFloat16, 2.0), wave({3}, kBFloat16, 3.0),
          positive({3}, kBFloat16)},
         {wave({2, 3, 4}), wave({4}), wave({3}), wave({3}), positive({3})},              // weight of 4: raises
         {wave({2, 3, 4}), wave({3}), wave({3}), wave({3}, kDouble), positive({3})},     // f64 mean, f32 input: raises
         {ints({2, 3}), ints({3}), ints({3}), ints({3}), ints({3})}});                   // integers: raise
  entry("batch_norm:train", "h.batch_norm_train(a0, a1, a2, a3, a4, 0.1, 1e-5)",
        [](const std::vector<Tensor>& in) {
          Tensor rm = in[3].clone(), rv = in[4].clone();
          return std::vector<Tensor>{batch_norm(in[0], in[1], in[2], rm, rv, true, 0.1, 1e-5), rm, rv};
        },
        {{wave({2, 3, 4, 5}), wave({3}, kFloat, 1.0), wave({3}, kFloat, 2.0), wave({3}, kFloat, 3.0), positive({3})},
         {wave({4, 3}), wave({3}, kFloat, 1.0), wave({3}, kFloat, 2.0), wave({3}, kFloat, 3.0), positive({3})},
         {wave({2, 3, 4}, kDouble), wave({3}, kDouble, 1.0), wave({3}, kDouble, 2.0), wave({3}, kDouble, 3.0),
          positive({3}, kDouble)},
         {wave({2, 3, 4}, kHalf), wave({3}, kFloat, 1.0), wave({3}, kFloat, 2.0), wave({3}, kFloat, 3.0), positive({3})},
         {wave({1, 3}), wave({3}), wave({3}), wave({3}), positive({3})}});  // one value per channel: raises
  entry("batch_norm:train_no_stats", F + "batch_norm(a0, None, None, training=True, momentum=0.3, eps=1e-3)",
        one([](const std::vector<Tensor>& in) {
          return batch_norm(in[0], std::nullopt, std::nullopt, std::nullopt, std::nullopt, true, 0.3, 1e-3);
        }),
        {{wave({3, 2, 5})}, {wave({3, 4}, kDouble)}});
  entry("native_batch_norm", "h.native_batch_norm_train(a0, a1, a2, a3, a4, 0.2, 1e-4)",
        [](const std::vector<Tensor>& in) {
          Tensor rm = in[3].clone(), rv = in[4].clone();
          std::vector<Tensor> r = three(native_batch_norm(in[0], in[1], in[2], rm, rv, true, 0.2, 1e-4));
          r.push_back(rm);
          r.push_back(rv);
          return r;
        },
        {{wave({2, 3, 4}), wave({3}, kFloat, 1.0), wave({3}, kFloat, 2.0), wave({3}, kFloat, 3.0), positive({3})},
         {wave({2, 3, 4}, kHalf), wave({3}, kHalf, 1.0), wave({3}, kHalf, 2.0), wave({3}, kHalf, 3.0),
          positive({3}, kHalf)}});
  entry("native_batch_norm:eval", "torch.native_batch_norm(a0, a1, a2, a3, a4, False, 0.1, 1e-5)",
        [](const std::vector<Tensor>& in) { return three(native_batch_norm(in[0], in[1], in[2], in[3], in[4], false, 0.1, 1e-5)); },
        {{wave({2, 3, 4}), wave({3}, kFloat, 1.0), wave({3}, kFloat, 2.0), wave({3}, kFloat, 3.0), positive({3})}});

  // ---- instance_norm ----
  entry("instance_norm", F + "instance_norm(a0, weight=a1, bias=a2, eps=1e-4)",
        one([](const std::vector<Tensor>& in) {
          return instance_norm(in[0], in[1], in[2], std::nullopt, std::nullopt, true, 0.1, 1e-4);
        }),
        {{wave({2, 3, 4, 5}), wave({3}, kFloat, 1.0), wave({3}, kFloat, 2.0)},
         {wave({2, 3, 6}, kDouble), wave({3}, kDouble, 1.0), wave({3}, kDouble, 2.0)},
         {wave({2, 3, 6}, kBFloat16), wave({3}, kFloat, 1.0), wave({3}, kFloat, 2.0)},
         {wave({2, 3}), wave({3}), wave({3})}});  // no spatial dims: raises
  entry("instance_norm:running", "h.instance_norm_train(a0, a1, a2, 0.25, 1e-5)",
        [](const std::vector<Tensor>& in) {
          Tensor rm = in[1].clone(), rv = in[2].clone();
          return std::vector<Tensor>{instance_norm(in[0], std::nullopt, std::nullopt, rm, rv, true, 0.25, 1e-5), rm, rv};
        },
        {{wave({2, 3, 4, 5}), wave({3}, kFloat, 3.0), positive({3})}});
  entry("instance_norm:eval", F + "instance_norm(a0, a1, a2, use_input_stats=False)",
        one([](const std::vector<Tensor>& in) {
          return instance_norm(in[0], std::nullopt, std::nullopt, in[1], in[2], false, 0.1, 1e-5);
        }),
        {{wave({2, 3, 4}), wave({3}, kFloat, 3.0), positive({3})}});

  // ---- group_norm ----
  entry("group_norm", F + "group_norm(a0, 2, a1, a2, 1e-4)",
        one([](const std::vector<Tensor>& in) { return group_norm(in[0], 2, in[1], in[2], 1e-4); }),
        {{wave({2, 4, 3, 5}), wave({4}, kFloat, 1.0), wave({4}, kFloat, 2.0)},
         {wave({3, 6}), wave({6}, kFloat, 1.0), wave({6}, kFloat, 2.0)},
         {wave({2, 4, 5}, kDouble), wave({4}, kDouble, 1.0), wave({4}, kDouble, 2.0)},
         {wave({2, 4, 5}, kHalf), wave({4}, kHalf, 1.0), wave({4}, kHalf, 2.0)},
         {wave({0, 4, 5}), wave({4}), wave({4})},
         {wave({2, 3, 5}), wave({3}), wave({3})},    // 3 channels in 2 groups: raises
         {wave({2, 4, 5}), wave({3}), wave({4})}});  // weight of 3: raises
  entry("group_norm:no_affine", F + "group_norm(a0, 3)",
        one([](const std::vector<Tensor>& in) { return group_norm(in[0], 3); }), {{wave({2, 6, 4})}});
  entry("native_group_norm", "torch.native_group_norm(a0, a1, a2, 2, 4, 6, 2, 1e-5)",
        [](const std::vector<Tensor>& in) { return three(native_group_norm(in[0], in[1], in[2], 2, 4, 6, 2, 1e-5)); },
        {{wave({2, 4, 2, 3}), wave({4}, kFloat, 1.0), wave({4}, kFloat, 2.0)},
         {wave({2, 4, 6}, kHalf), wave({4}, kHalf, 1.0), wave({4}, kHalf, 2.0)}});

  // ---- native_layer_norm ----
  entry("native_layer_norm", "torch.native_layer_norm(a0, [3, 4], a1, a2, 1e-5)",
        [](const std::vector<Tensor>& in) { return three(native_layer_norm(in[0], {3, 4}, in[1], in[2], 1e-5)); },
        {{wave({2, 3, 4}), wave({3, 4}, kFloat, 1.0), wave({3, 4}, kFloat, 2.0)},
         {wave({3, 4}, kDouble), wave({3, 4}, kDouble, 1.0), wave({3, 4}, kDouble, 2.0)},
         {wave({2, 3, 4}, kHalf), wave({3, 4}, kHalf, 1.0), wave({3, 4}, kHalf, 2.0)},
         {wave({2, 4, 3}), wave({3, 4}), wave({3, 4})}});  // trailing dims differ: raises

  // ---- the backward nodes the norms' derivative rules record (a0: grad_out, a1: input, a2:
  // weight; the statistics are the forward's, which are not differentiable inputs) ----
  db.push_back({"native_layer_norm_backward", "norm",
                [](const std::vector<Tensor>& in) {
                  auto [out, mean, rstd] = native_layer_norm(in[1], {3, 4}, in[2], std::nullopt, 1e-5);
                  return three(native_layer_norm_backward(in[0], in[1], {3, 4}, mean, rstd, in[2], {true, true, true}));
                },
                "(lambda s: torch.ops.aten.native_layer_norm_backward(a0, a1, [3, 4], s[1], s[2], a2, "
                "torch.zeros_like(a2), [True, True, True]))(torch.native_layer_norm(a1, [3, 4], a2, None, 1e-5))",
                {{wave({2, 3, 4}), wave({2, 3, 4}, kFloat, 1.0), wave({3, 4}, kFloat, 2.0)},
                 {wave({3, 4}, kDouble), wave({3, 4}, kDouble, 1.0), wave({3, 4}, kDouble, 2.0)}}});
  db.push_back({"native_layer_norm_backward:input_only", "norm",
                [](const std::vector<Tensor>& in) {
                  auto [out, mean, rstd] = native_layer_norm(in[1], {4}, std::nullopt, std::nullopt, 1e-5);
                  return std::vector<Tensor>{
                      std::get<0>(native_layer_norm_backward(in[0], in[1], {4}, mean, rstd, std::nullopt, {true, false, false}))};
                },
                "(lambda s: torch.ops.aten.native_layer_norm_backward(a0, a1, [4], s[1], s[2], None, None, "
                "[True, False, False])[0])(torch.native_layer_norm(a1, [4], None, None, 1e-5))",
                {{wave({2, 3, 4}), wave({2, 3, 4}, kFloat, 1.0)}}});
  db.push_back({"native_group_norm_backward", "norm",
                [](const std::vector<Tensor>& in) {
                  auto [out, mean, rstd] = native_group_norm(in[1], in[2], std::nullopt, 2, 4, 6, 2, 1e-5);
                  return three(native_group_norm_backward(in[0], in[1], mean, rstd, in[2], 2, 4, 6, 2, {true, true, true}));
                },
                "(lambda s: torch.ops.aten.native_group_norm_backward(a0, a1, s[1], s[2], a2, 2, 4, 6, 2, "
                "[True, True, True]))(torch.native_group_norm(a1, a2, None, 2, 4, 6, 2, 1e-5))",
                {{wave({2, 4, 2, 3}), wave({2, 4, 2, 3}, kFloat, 1.0), wave({4}, kFloat, 2.0)},
                 {wave({2, 4, 6}, kDouble), wave({2, 4, 6}, kDouble, 1.0), wave({4}, kDouble, 2.0)}}});
}

}  // namespace kiln::opdb
