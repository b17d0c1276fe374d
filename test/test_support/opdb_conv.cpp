// kiln/test/test_support/opdb_conv.cpp — op database entries: convolutions (conv1d, conv2d,
// conv3d and the transposed ones).
//
// Inputs are sine waves over batched and unbatched, strided, zero-batch, f64, f16 and bf16
// samples; the error rows are arguments PyTorch rejects (wrong channel counts, mixed dtypes,
// kernels larger than the padded input). Integer convolutions wrap in their dtype, as PyTorch's
// CPU computes them (int8 products that overflow are sampled); transposed ones exist for int64
// only.
#include "test_support/opdb.h"

#include <array>
#include <string>

namespace kiln::opdb {

void add_conv(std::vector<OpEntry>& db) {
  const std::string F = "torch.nn.functional.";
  auto conv = [&](std::string name, std::string torch, Fn f, std::vector<Sample> samples) {
    db.push_back({std::move(name), "conv", std::move(f), F + torch, std::move(samples)});
  };

  // ---- conv2d ----
  conv("conv2d", "conv2d(a0, a1, a2)", one([](const std::vector<Tensor>& in) { return conv2d(in[0], in[1], in[2]); }),
       {{wave({2, 3, 5, 6}), wave({4, 3, 3, 3}, kFloat, 1.0), wave({4}, kFloat, 2.0)},
        {wave({2, 3, 6, 5}).transpose(2, 3), wave({4, 3, 3, 3}, kFloat, 1.0), wave({4}, kFloat, 2.0)},
        {wave({3, 5, 6}), wave({4, 3, 3, 3}, kFloat, 1.0), wave({4}, kFloat, 2.0)},  // unbatched
        {wave({0, 3, 5, 6}), wave({4, 3, 3, 3}, kFloat, 1.0), wave({4}, kFloat, 2.0)},
        {wave({2, 3, 5, 6}, kDouble), wave({4, 3, 3, 3}, kDouble, 1.0), wave({4}, kDouble, 2.0)},
        {wave({2, 3, 5, 6}, kHalf), wave({4, 3, 3, 3}, kHalf, 1.0), wave({4}, kHalf, 2.0)},
        {wave({2, 3, 5, 6}, kBFloat16), wave({4, 3, 3, 3}, kBFloat16, 1.0), wave({4}, kBFloat16, 2.0)},
        {wave({2, 2, 5, 6}), wave({4, 3, 3, 3}), wave({4})},                 // channels differ: raises
        {wave({2, 3, 2, 6}), wave({4, 3, 3, 3}), wave({4})},                 // output too small: raises
        {wave({2, 3, 5, 6}), wave({4, 3, 3, 3}, kDouble), wave({4})}});      // dtypes differ: raises
  conv("conv2d:stride_pad_dilation_groups", "conv2d(a0, a1, a2, stride=(2, 1), padding=(1, 2), dilation=(2, 1), groups=2)",
       one([](const std::vector<Tensor>& in) { return conv2d(in[0], in[1], in[2], {2, 1}, {1, 2}, {2, 1}, 2); }),
       {{wave({2, 4, 7, 6}), wave({6, 2, 3, 2}, kFloat, 1.0), wave({6}, kFloat, 2.0)},
        {wave({1, 4, 7, 6}, kDouble), wave({6, 2, 3, 2}, kDouble, 1.0), wave({6}, kDouble, 2.0)},
        {wave({2, 3, 7, 6}), wave({6, 2, 3, 2}), wave({6})}});  // 3 channels, 2 groups: raises
  conv("conv2d:depthwise_nobias", "conv2d(a0, a1, None, 1, 1, 1, 3)",
       one([](const std::vector<Tensor>& in) { return conv2d(in[0], in[1], std::nullopt, 1, 1, 1, 3); }),
       {{wave({2, 3, 6, 6}), wave({3, 1, 3, 3}, kFloat, 1.0)}});
  conv("conv2d:same", "conv2d(a0, a1, a2, padding='same', dilation=(1, 2))",
       one([](const std::vector<Tensor>& in) { return conv2d(in[0], in[1], in[2], 1, "same", {1, 2}); }),
       {{wave({2, 3, 5, 6}), wave({2, 3, 2, 4}, kFloat, 1.0), wave({2}, kFloat, 2.0)},
        {wave({3, 5, 6}), wave({2, 3, 3, 3}, kFloat, 1.0), wave({2}, kFloat, 2.0)}});
  conv("conv2d:valid", "conv2d(a0, a1, a2, stride=2, padding='valid')",
       one([](const std::vector<Tensor>& in) { return conv2d(in[0], in[1], in[2], 2, "valid"); }),
       {{wave({2, 3, 5, 6}), wave({2, 3, 2, 2}, kFloat, 1.0), wave({2}, kFloat, 2.0)}});
  conv("conv1d", "conv1d(a0, a1, a2, stride=2, padding=1)",
       one([](const std::vector<Tensor>& in) { return conv1d(in[0], in[1], in[2], 2, 1); }),
       {{wave({2, 3, 9}), wave({4, 3, 3}, kFloat, 1.0), wave({4}, kFloat, 2.0)},
        {wave({3, 9}, kDouble), wave({4, 3, 3}, kDouble, 1.0), wave({4}, kDouble, 2.0)},
        {wave({2, 3, 9, 1}), wave({4, 3, 3}), wave({4})}});  // 4-D input: raises
  conv("conv3d", "conv3d(a0, a1, a2, padding=(0, 1, 1), dilation=(1, 1, 2))",
       one([](const std::vector<Tensor>& in) { return conv3d(in[0], in[1], in[2], 1, {0, 1, 1}, {1, 1, 2}); }),
       {{wave({2, 2, 3, 4, 5}), wave({3, 2, 2, 3, 2}, kFloat, 1.0), wave({3}, kFloat, 2.0)},
        {wave({1, 2, 3, 4, 5}, kDouble), wave({3, 2, 2, 3, 2}, kDouble, 1.0), wave({3}, kDouble, 2.0)}});

  // ---- integer dtypes (wrapping sums; bool raises) ----
  const Tensor big8 = ints({1, 2, 4, 4}, 90).to(kChar);  // 90..121: every sum wraps
  conv("conv2d:integer", "conv2d(a0, a1, a2, stride=(1, 2), padding=1, groups=2)",
       one([](const std::vector<Tensor>& in) { return conv2d(in[0], in[1], in[2], {1, 2}, 1, 1, 2); }),
       {{ints({2, 4, 5, 6}), ints({6, 2, 3, 2}, -5), ints({6}, 7)},
        {ints({2, 4, 6, 5}).transpose(2, 3).to(kInt), ints({6, 2, 3, 2}, -5).to(kInt), ints({6}, 7).to(kInt)},
        {ints({1, 4, 5, 6}).to(kShort), ints({6, 2, 3, 2}, -5).to(kShort), ints({6}).to(kShort)},
        {ints({1, 4, 5, 6}, 0).to(kByte), ints({6, 2, 3, 2}, 0).to(kByte), ints({6}, 0).to(kByte)},
        {ints({1, 4, 3, 3}, 80).to(kChar), ints({6, 2, 3, 2}, 20).to(kChar), ints({6}, 50).to(kChar)},
        {ints({1, 4, 5, 6}).to(kBool), ints({6, 2, 3, 2}).to(kBool), ints({6}).to(kBool)}});  // bool: raises
  conv("conv3d:integer", "conv3d(a0, a1, None, padding=1)",
       one([](const std::vector<Tensor>& in) { return conv3d(in[0], in[1], std::nullopt, 1, 1); }),
       {{ints({1, 2, 3, 4, 4}), ints({3, 2, 2, 2, 2}, -4)}, {big8.unsqueeze(2), ints({3, 2, 1, 3, 3}, 30).to(kChar)}});
  conv("conv_transpose2d:integer", "conv_transpose2d(a0, a1, a2, stride=2, padding=1, output_padding=1)",
       one([](const std::vector<Tensor>& in) { return conv_transpose2d(in[0], in[1], in[2], 2, 1, 1); }),
       {{ints({2, 2, 3, 4}), ints({2, 3, 3, 2}, -6), ints({3}, 4)},
        {ints({2, 2, 3, 4}).to(kInt), ints({2, 3, 3, 2}, -6).to(kInt), ints({3}, 4).to(kInt)}});  // int32: raises

  // ---- transposed ----
  conv("conv_transpose2d", "conv_transpose2d(a0, a1, a2, stride=2, padding=1, output_padding=1, groups=2, dilation=(1, 2))",
       one([](const std::vector<Tensor>& in) { return conv_transpose2d(in[0], in[1], in[2], 2, 1, 1, 2, {1, 2}); }),
       {{wave({2, 4, 3, 4}), wave({4, 3, 3, 2}, kFloat, 1.0), wave({6}, kFloat, 2.0)},
        {wave({4, 3, 4}), wave({4, 3, 3, 2}, kFloat, 1.0), wave({6}, kFloat, 2.0)},
        {wave({2, 4, 3, 4}, kDouble), wave({4, 3, 3, 2}, kDouble, 1.0), wave({6}, kDouble, 2.0)},
        {wave({2, 4, 3, 4}, kHalf), wave({4, 3, 3, 2}, kHalf, 1.0), wave({6}, kHalf, 2.0)},
        {wave({2, 3, 3, 4}), wave({4, 3, 3, 2}), wave({6})}});  // channels differ: raises
  // output_padding beyond padding: the last output row and column get the bias alone.
  conv("conv_transpose2d:output_padding", "conv_transpose2d(a0, a1, a2, stride=3, output_padding=2)",
       one([](const std::vector<Tensor>& in) { return conv_transpose2d(in[0], in[1], in[2], 3, 0, 2); }),
       {{wave({1, 2, 3, 3}), wave({2, 3, 2, 2}, kFloat, 1.0), wave({3}, kFloat, 2.0)},
        {wave({1, 2, 3, 3}, kDouble), wave({2, 3, 2, 2}, kDouble, 1.0), wave({3}, kDouble, 2.0)},
        {wave({1, 2, 3, 3}), wave({2, 3, 2, 2}), wave({3})}});
  // The kernel equals the stride (U-Net's upsampling): one tap per output cell, one product
  // per image on the cpu (runtime/cpu/extern_conv.cpp).
  conv("conv_transpose2d:one_tap", "conv_transpose2d(a0, a1, a2, stride=2)",
       one([](const std::vector<Tensor>& in) { return conv_transpose2d(in[0], in[1], in[2], 2); }),
       {{wave({2, 4, 3, 5}), wave({4, 3, 2, 2}, kFloat, 1.0), wave({3}, kFloat, 2.0)},
        {wave({2, 4, 5, 3}).transpose(2, 3), wave({4, 3, 2, 2}, kFloat, 1.0), wave({3}, kFloat, 2.0)},
        {wave({4, 3, 5}), wave({4, 3, 2, 2}, kFloat, 1.0), wave({3}, kFloat, 2.0)},  // unbatched
        {wave({2, 4, 3, 5}, kDouble), wave({4, 3, 2, 2}, kDouble, 1.0), wave({3}, kDouble, 2.0)},
        {wave({2, 4, 3, 5}, kHalf), wave({4, 3, 2, 2}, kHalf, 1.0), wave({3}, kHalf, 2.0)}});
  conv("conv_transpose3d:one_tap", "conv_transpose3d(a0, a1, None, stride=(2, 1, 3))",
       one([](const std::vector<Tensor>& in) { return conv_transpose3d(in[0], in[1], std::nullopt, {2, 1, 3}); }),
       {{wave({1, 3, 2, 3, 4}), wave({3, 2, 2, 1, 3}, kFloat, 1.0)}});
  conv("conv_transpose1d", "conv_transpose1d(a0, a1, a2, stride=2)",
       one([](const std::vector<Tensor>& in) { return conv_transpose1d(in[0], in[1], in[2], 2); }),
       {{wave({2, 3, 5}), wave({3, 2, 3}, kFloat, 1.0), wave({2}, kFloat, 2.0)}});
  conv("conv_transpose3d", "conv_transpose3d(a0, a1, None, stride=(1, 2, 1), padding=1)",
       one([](const std::vector<Tensor>& in) { return conv_transpose3d(in[0], in[1], std::nullopt, {1, 2, 1}, 1); }),
       {{wave({1, 2, 3, 3, 4}), wave({2, 2, 3, 3, 3}, kFloat, 1.0)}});

  // ---- convolution_backward (the node convolution's derivative rule records) ----
  auto backward = [&](std::string name, std::string args, std::array<bool, 3> mask, std::string pick,
                      std::vector<Sample> samples, std::vector<int64_t> stride, std::vector<int64_t> padding,
                      std::vector<int64_t> dilation, bool transposed, std::vector<int64_t> output_padding,
                      int64_t groups) {
    db.push_back({std::move(name), "conv",
                  [=](const std::vector<Tensor>& in) {
                    ConvolutionGrads r = convolution_backward(in[0], in[1], in[2], stride, padding, dilation, transposed,
                                                              output_padding, groups, mask);
                    std::vector<Tensor> out;
                    for (const Tensor& t : {r.input, r.weight, r.bias})
                      if (t.defined()) out.push_back(t);
                    return out;
                  },
                  "torch.ops.aten.convolution_backward(a0, a1, a2, " + args + ")" + pick, std::move(samples)});
  };
  backward("convolution_backward", "[6], [2, 1], [1, 2], [2, 1], False, [0, 0], 2, [True, True, True]", {true, true, true},
           "", {{wave({2, 6, 3, 9}), wave({2, 4, 7, 6}, kFloat, 1.0), wave({6, 2, 3, 2}, kFloat, 2.0)},
                {wave({1, 6, 3, 9}, kDouble), wave({1, 4, 7, 6}, kDouble, 1.0), wave({6, 2, 3, 2}, kDouble, 2.0)},
                {wave({2, 6, 3, 8}), wave({2, 4, 7, 6}), wave({6, 2, 3, 2})}},  // grad_output of another shape: raises
           {2, 1}, {1, 2}, {2, 1}, false, {0, 0}, 2);
  backward("convolution_backward:transposed", "[6], [2, 2], [1, 1], [1, 2], True, [1, 1], 2, [True, True, True]",
           {true, true, true}, "",
           {{wave({2, 6, 6, 8}), wave({2, 4, 3, 4}, kFloat, 1.0), wave({4, 3, 3, 2}, kFloat, 2.0)}}, {2, 2}, {1, 1}, {1, 2},
           true, {1, 1}, 2);
  backward("convolution_backward:input_and_bias", "[4], [2], [1], [1], False, [0], 1, [True, False, True]",
           {true, false, true}, "[0::2]",
           {{wave({2, 4, 5}), wave({2, 3, 9}, kFloat, 1.0), wave({4, 3, 3}, kFloat, 2.0)},
            {wave({2, 4, 5}, kDouble), wave({2, 3, 9}, kDouble, 1.0), wave({4, 3, 3}, kDouble, 2.0)}},
           {2}, {1}, {1}, false, {0}, 1);
  // The weight's gradient alone (the convolution_backward_weight node, oneDNN's backward-weights
  // primitive on the cpu): a ResNet-like strided 3x3, also in f16 (computed in f32) and f64 (the
  // decomposition), and from a strided grad_output.
  auto weight = [&](std::string name, std::string args, std::vector<Sample> samples, std::vector<int64_t> kernel,
                    std::vector<int64_t> stride, std::vector<int64_t> padding, std::vector<int64_t> dilation,
                    bool transposed, int64_t groups) {
    db.push_back({std::move(name), "conv",
                  one([=](const std::vector<Tensor>& in) {
                    return convolution_backward_weight(in[0], in[1], kernel, stride, padding, dilation, transposed, groups);
                  }),
                  "torch.ops.aten.convolution_backward(a0, a1, a2, " + args + ")[1]", std::move(samples)});
  };
  weight("convolution_backward_weight", "None, [2, 2], [1, 1], [1, 1], False, [0, 0], 1, [False, True, False]",
         {{wave({2, 5, 4, 4}), wave({2, 3, 8, 7}, kFloat, 1.0), wave({5, 3, 3, 3}, kFloat, 2.0)},
          {wave({2, 4, 4, 5}).transpose(1, 3), wave({2, 3, 8, 7}, kFloat, 1.0), wave({5, 3, 3, 3}, kFloat, 2.0)},
          {wave({2, 5, 4, 4}, kHalf), wave({2, 3, 8, 7}, kHalf, 1.0), wave({5, 3, 3, 3}, kHalf, 2.0)},
          {wave({2, 5, 4, 4}, kDouble), wave({2, 3, 8, 7}, kDouble, 1.0), wave({5, 3, 3, 3}, kDouble, 2.0)},
          {wave({2, 5, 3, 4}), wave({2, 3, 8, 7}), wave({5, 3, 3, 3})}},  // grad_output of another shape: raises
         {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, 1);
  // A transposed convolution whose output_padding reaches the stride (allowed below the
  // dilation): its adjoint convolution is one position longer than the input, which oneDNN's
  // size rule does not describe, so the cpu runs the node's decomposition.
  weight("convolution_backward_weight:transposed", "None, [1], [0], [2], True, [1], 1, [False, True, False]",
         {{wave({2, 3, 8}), wave({2, 4, 3}, kFloat, 1.0), wave({4, 3, 3}, kFloat, 2.0)}}, {3}, {1}, {0}, {2}, true, 1);
  // Grouped and transposed, through oneDNN: [IC, OC / G, k] = [4, 3, 2, 2].
  weight("convolution_backward_weight:grouped_transposed", "None, [2, 2], [1, 0], [1, 1], True, [1, 0], 2, [False, True, False]",
         {{wave({2, 6, 5, 8}), wave({2, 4, 3, 4}, kFloat, 1.0), wave({4, 3, 2, 2}, kFloat, 2.0)}}, {2, 2}, {2, 2}, {1, 0},
         {1, 1}, true, 2);
}

}  // namespace kiln::opdb
