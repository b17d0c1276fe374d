// kiln/test/test_support/opdb_attention.cpp — op database entries: scaled_dot_product_attention.
#include "test_support/opdb.h"

#include <cmath>
#include <optional>
#include <string>

namespace kiln::opdb {

void add_attention(std::vector<OpEntry>& db) {
  const std::string F = "torch.nn.functional.";
  auto entry = [&](std::string name, std::string torch, Fn f, std::vector<Sample> samples) {
    db.push_back({std::move(name), "attention", std::move(f), std::move(torch), std::move(samples)});
  };

  // ---- scaled_dot_product_attention: (query, key, value[, mask]) ----
  entry("scaled_dot_product_attention", F + "scaled_dot_product_attention(a0, a1, a2)",
        one([](const std::vector<Tensor>& in) { return scaled_dot_product_attention(in[0], in[1], in[2]); }),
        {{wave({2, 3, 4, 8}), wave({2, 3, 5, 8}, kFloat, 1.0), wave({2, 3, 5, 6}, kFloat, 2.0)},
         {wave({4, 8}), wave({5, 8}, kFloat, 1.0), wave({5, 8}, kFloat, 2.0)},
         {wave({2, 4, 8}, kDouble), wave({2, 5, 8}, kDouble, 1.0), wave({2, 5, 8}, kDouble, 2.0)},
         {wave({2, 8, 4}).transpose(1, 2), wave({2, 5, 8}, kFloat, 1.0), wave({2, 5, 8}, kFloat, 2.0)},
         {wave({2, 0, 8}), wave({2, 5, 8}), wave({2, 5, 8})},
         {wave({2, 4, 8}), wave({2, 5, 7}), wave({2, 5, 8})},                  // embedding dims differ: raises
         {wave({2, 4, 8}), wave({2, 5, 8}, kDouble), wave({2, 5, 8}, kDouble)}});  // dtypes differ: raises
  entry("scaled_dot_product_attention:causal_scale",
        F + "scaled_dot_product_attention(a0, a1, a2, is_causal=True, scale=0.3)",
        one([](const std::vector<Tensor>& in) {
          return scaled_dot_product_attention(in[0], in[1], in[2], std::nullopt, 0.0, true, 0.3);
        }),
        {{wave({2, 2, 5, 8}), wave({2, 2, 5, 8}, kFloat, 1.0), wave({2, 2, 5, 8}, kFloat, 2.0)},
         {wave({3, 6, 4}), wave({3, 4, 4}, kFloat, 1.0), wave({3, 4, 4}, kFloat, 2.0)}});  // L > S
  entry("scaled_dot_product_attention:mask", F + "scaled_dot_product_attention(a0, a1, a2, attn_mask=a3)",
        one([](const std::vector<Tensor>& in) { return scaled_dot_product_attention(in[0], in[1], in[2], in[3]); }),
        {{wave({2, 3, 4}), wave({2, 5, 4}, kFloat, 1.0), wave({2, 5, 4}, kFloat, 2.0),
          logical_and(gt(wave({3, 5}, kFloat, 0.5, 1.1), -0.3), gt(seq({3, 1}, kFloat, -1.0, 1.0), -0.5))},  // row 0 fully masked
         {wave({2, 3, 4}), wave({2, 5, 4}, kFloat, 1.0), wave({2, 5, 4}, kFloat, 2.0), wave({2, 1, 5}, kFloat, 3.0)},
         {wave({2, 3, 4}), wave({2, 5, 4}), wave({2, 5, 4}), ints({3, 5})}});  // an integer mask: raises
  entry("scaled_dot_product_attention:gqa", F + "scaled_dot_product_attention(a0, a1, a2, enable_gqa=True)",
        one([](const std::vector<Tensor>& in) {
          return scaled_dot_product_attention(in[0], in[1], in[2], std::nullopt, 0.0, false, std::nullopt, true);
        }),
        {{wave({1, 4, 3, 8}), wave({1, 2, 5, 8}, kFloat, 1.0), wave({1, 2, 5, 8}, kFloat, 2.0)}});

  // ---- scaled_dot_product_attention_backward (the node attention's derivative rule records):
  // (grad_out, query, key, value[, mask]); the output it takes is the forward's on these inputs,
  // and PyTorch's gradients come from autograd through its sdpa (h.sdpa_backward) ----
  auto backward = [&](std::string name, std::string args, bool causal, std::optional<double> scale,
                      std::vector<Sample> samples) {
    entry(std::move(name), "h.sdpa_backward(a0, a1, a2, a3" + args + ")",
          [=](const std::vector<Tensor>& in) {
            const std::optional<Tensor> mask = in.size() > 4 ? std::optional<Tensor>(in[4]) : std::nullopt;
            const Tensor out = scaled_dot_product_attention(in[1], in[2], in[3], mask, 0.0, causal, scale);
            const double s = scale.value_or(1.0 / std::sqrt(static_cast<double>(in[1].size(-1))));
            AttentionGrads r = scaled_dot_product_attention_backward(in[0], in[1], in[2], in[3], out, mask, causal, s);
            return std::vector<Tensor>{r.query, r.key, r.value};
          },
          std::move(samples));
  };
  backward("scaled_dot_product_attention_backward", "", false, std::nullopt,
           {{wave({2, 3, 4, 6}, kFloat, 3.0), wave({2, 3, 4, 8}), wave({2, 3, 5, 8}, kFloat, 1.0), wave({2, 3, 5, 6}, kFloat, 2.0)},
            {wave({2, 4, 8}, kDouble, 3.0), wave({2, 4, 8}, kDouble), wave({1, 5, 8}, kDouble, 1.0), wave({2, 5, 8}, kDouble, 2.0)},
            {wave({2, 4, 8}, kFloat, 3.0), wave({2, 8, 4}).transpose(1, 2), wave({2, 5, 8}, kFloat, 1.0), wave({2, 5, 8}, kFloat, 2.0)},
            {wave({2, 0, 8}), wave({2, 0, 8}), wave({2, 5, 8}), wave({2, 5, 8})},
            {wave({2, 4, 8}), wave({2, 4, 8}), wave({2, 5, 8}), wave({2, 5, 8}, kDouble)}});  // dtypes differ: raises
  backward("scaled_dot_product_attention_backward:causal_scale", ", is_causal=True, scale=0.3", true, 0.3,
           {{wave({2, 2, 5, 8}, kFloat, 3.0), wave({2, 2, 5, 8}), wave({2, 2, 5, 8}, kFloat, 1.0), wave({2, 2, 5, 8}, kFloat, 2.0)},
            {wave({3, 6, 4}, kFloat, 3.0), wave({3, 6, 4}), wave({3, 4, 4}, kFloat, 1.0), wave({3, 4, 4}, kFloat, 2.0)}});
  backward("scaled_dot_product_attention_backward:mask", ", attn_mask=a4", false, std::nullopt,
           {{wave({2, 3, 4}, kFloat, 3.0), wave({2, 3, 4}), wave({2, 5, 4}, kFloat, 1.0), wave({2, 5, 4}, kFloat, 2.0),
             logical_and(gt(wave({3, 5}, kFloat, 0.5, 1.1), -0.3), gt(seq({3, 1}, kFloat, -1.0, 1.0), -0.5))},  // row 0 fully masked
            {wave({2, 3, 4}, kFloat, 3.0), wave({2, 3, 4}), wave({2, 5, 4}, kFloat, 1.0), wave({2, 5, 4}, kFloat, 2.0),
             wave({2, 1, 5}, kFloat, 3.0)}});
}

}  // namespace kiln::opdb
