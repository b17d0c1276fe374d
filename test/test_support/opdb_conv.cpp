// kiln/test/test_support/opdb_conv.cpp — op database entries: convolutions, pooling and resampling
// (interpolate, upsample_*2d, pad by mode).
//
// Inputs are sine waves (values in [-1, 1] without ties, so a max pool's index is unique)
// over batched and unbatched, strided, zero-batch, f64, f16 and bf16 samples; the error rows
// are arguments PyTorch rejects (wrong channel counts, mixed dtypes, windows larger than the
// padded input). Integer convolutions wrap in their dtype, as PyTorch's CPU computes them
// (int8 products that overflow are sampled); transposed ones exist for int64 only.
#include "test_support/opdb.h"

#include <limits>
#include <string>

namespace kiln::opdb {

namespace {

std::vector<Tensor> pair(const std::tuple<Tensor, Tensor>& t) { return {std::get<0>(t), std::get<1>(t)}; }

}  // namespace

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
  conv("conv_transpose1d", "conv_transpose1d(a0, a1, a2, stride=2)",
       one([](const std::vector<Tensor>& in) { return conv_transpose1d(in[0], in[1], in[2], 2); }),
       {{wave({2, 3, 5}), wave({3, 2, 3}, kFloat, 1.0), wave({2}, kFloat, 2.0)}});
  conv("conv_transpose3d", "conv_transpose3d(a0, a1, None, stride=(1, 2, 1), padding=1)",
       one([](const std::vector<Tensor>& in) { return conv_transpose3d(in[0], in[1], std::nullopt, {1, 2, 1}, 1); }),
       {{wave({1, 2, 3, 3, 4}), wave({2, 2, 3, 3, 3}, kFloat, 1.0)}});

  // ---- pooling ----
  auto pools = [](ScalarType dt) {
    return std::vector<Sample>{{wave({2, 3, 7, 6}, dt)}, {wave({3, 6, 7}, dt).transpose(1, 2)}};
  };
  std::vector<Sample> mp = pools(kFloat);
  for (Sample s : pools(kDouble)) mp.push_back(s);
  mp.push_back({wave({2, 3, 7, 6}, kHalf)});
  mp.push_back({wave({2, 3, 7, 6}, kBFloat16)});
  mp.push_back({ints({1, 2, 7, 6})});
  mp.push_back({wave({2, 3, 2, 2})});   // window larger than the input: raises
  mp.push_back({wave({2, 3, 4, 5, 6})});  // 5-D: raises
  conv("max_pool2d", "max_pool2d(a0, 3, 2, 1)",
       one([](const std::vector<Tensor>& in) { return max_pool2d(in[0], 3, 2, 1); }), mp);
  conv("max_pool2d:ceil_dilation", "max_pool2d(a0, (2, 3), (2, 1), (1, 0), dilation=(2, 1), ceil_mode=True)",
       one([](const std::vector<Tensor>& in) { return max_pool2d(in[0], {2, 3}, {2, 1}, {1, 0}, {2, 1}, true); }),
       pools(kFloat));
  conv("max_pool2d_with_indices", "max_pool2d(a0, 3, 2, 1, ceil_mode=True, return_indices=True)",
       [](const std::vector<Tensor>& in) { return pair(max_pool2d_with_indices(in[0], 3, 2, 1, 1, true)); },
       {{wave({2, 3, 7, 6})}, {wave({3, 6, 7}).transpose(1, 2)}, {wave({2, 3, 7, 6}, kDouble)}});
  conv("max_pool1d_with_indices", "max_pool1d(a0, 3, 2, return_indices=True)",
       [](const std::vector<Tensor>& in) { return pair(max_pool1d_with_indices(in[0], 3, 2)); },
       {{wave({2, 3, 9})}, {wave({3, 8})}});
  conv("max_pool3d", "max_pool3d(a0, 2, padding=1)",
       one([](const std::vector<Tensor>& in) { return max_pool3d(in[0], 2, {}, 1); }),
       {{wave({1, 2, 3, 4, 5})}, {wave({2, 3, 4, 5})}});
  conv("max_pool3d_with_indices", "max_pool3d(a0, (2, 2, 3), stride=(1, 2, 2), return_indices=True)",
       [](const std::vector<Tensor>& in) { return pair(max_pool3d_with_indices(in[0], {2, 2, 3}, {1, 2, 2})); },
       {{wave({1, 2, 3, 4, 5})}});

  std::vector<Sample> ap = pools(kFloat);
  ap.push_back({wave({2, 3, 7, 6}, kDouble)});
  ap.push_back({wave({2, 3, 7, 6}, kHalf)});
  ap.push_back({ints({1, 2, 7, 6})});  // integers: the average truncates
  conv("avg_pool2d", "avg_pool2d(a0, 3, 2, 1)",
       one([](const std::vector<Tensor>& in) { return avg_pool2d(in[0], 3, 2, 1); }), ap);
  conv("avg_pool2d:ceil_exclude_pad", "avg_pool2d(a0, (3, 2), (2, 2), (1, 1), ceil_mode=True, count_include_pad=False)",
       one([](const std::vector<Tensor>& in) { return avg_pool2d(in[0], {3, 2}, {2, 2}, {1, 1}, true, false); }),
       pools(kFloat));
  conv("avg_pool2d:ceil_include_pad", "avg_pool2d(a0, 3, 2, 1, ceil_mode=True)",
       one([](const std::vector<Tensor>& in) { return avg_pool2d(in[0], 3, 2, 1, true); }), pools(kFloat));
  conv("avg_pool2d:divisor", "avg_pool2d(a0, 2, divisor_override=3)",
       one([](const std::vector<Tensor>& in) { return avg_pool2d(in[0], 2, {}, 0, false, true, 3); }), pools(kFloat));
  conv("avg_pool1d", "avg_pool1d(a0, 3, 2, 1, count_include_pad=False)",
       one([](const std::vector<Tensor>& in) { return avg_pool1d(in[0], 3, 2, 1, false, false); }),
       {{wave({2, 3, 9})}, {wave({3, 8}, kDouble)}});
  conv("avg_pool3d", "avg_pool3d(a0, 2, padding=(0, 1, 1))",
       one([](const std::vector<Tensor>& in) { return avg_pool3d(in[0], 2, {}, {0, 1, 1}); }),
       {{wave({1, 2, 3, 4, 5})}, {wave({2, 3, 4, 5}, kDouble)}});

  std::vector<Sample> aap = pools(kFloat);
  aap.push_back({wave({2, 3, 7, 6}, kDouble)});
  aap.push_back({wave({2, 3, 7, 6}, kBFloat16)});
  aap.push_back({ints({1, 2, 7, 6})});  // integers: raises
  conv("adaptive_avg_pool2d", "adaptive_avg_pool2d(a0, (3, 4))",
       one([](const std::vector<Tensor>& in) { return adaptive_avg_pool2d(in[0], {3, 4}); }), aap);
  conv("adaptive_avg_pool2d:global", "adaptive_avg_pool2d(a0, 1)",
       one([](const std::vector<Tensor>& in) { return adaptive_avg_pool2d(in[0], {1, 1}); }), pools(kFloat));
  conv("adaptive_avg_pool1d", "adaptive_avg_pool1d(a0, 4)",
       one([](const std::vector<Tensor>& in) { return adaptive_avg_pool1d(in[0], {4}); }),
       {{wave({2, 3, 9})}, {wave({3, 3}, kDouble)}});
  conv("adaptive_avg_pool3d", "adaptive_avg_pool3d(a0, (2, 3, 2))",
       one([](const std::vector<Tensor>& in) { return adaptive_avg_pool3d(in[0], {2, 3, 2}); }),
       {{wave({1, 2, 3, 4, 5})}});

  // Several NaNs in one window: PyTorch's index is the last NaN's.
  Tensor nans = wave({1, 2, 4, 6});
  nans = where(eq(remainder(seq({1, 2, 4, 6}, kFloat, 0, 1), 5.0), 1.0), std::numeric_limits<double>::quiet_NaN(), nans);
  conv("max_pool2d_with_indices:nan", "max_pool2d(a0, (2, 3), return_indices=True)",
       [](const std::vector<Tensor>& in) { return pair(max_pool2d_with_indices(in[0], {2, 3})); }, {{nans}});
  auto amp = [&](std::string name, std::string torch, Fn f, std::vector<Sample> samples) {
    conv(std::move(name), std::move(torch), std::move(f), std::move(samples));
  };
  amp("adaptive_max_pool2d", "adaptive_max_pool2d(a0, (3, 4), return_indices=True)",
      [](const std::vector<Tensor>& in) { return pair(adaptive_max_pool2d(in[0], {3, 4})); },
      {{wave({2, 3, 7, 6})}, {wave({3, 6, 7}).transpose(1, 2)}, {wave({2, 3, 7, 6}, kDouble)}, {wave({1, 2, 5, 9}, kHalf)},
       {nans}, {wave({1, 1, 2, 3})},  // output larger than the input: windows of one
       {ints({1, 2, 7, 6})},            // integers: raise
       {wave({2, 3, 0, 6})}});          // empty plane: raises
  amp("adaptive_max_pool2d:global", "adaptive_max_pool2d(a0, 1, return_indices=True)",
      [](const std::vector<Tensor>& in) { return pair(adaptive_max_pool2d(in[0], {1})); }, {{wave({2, 3, 5, 4})}});
  amp("adaptive_max_pool1d", "adaptive_max_pool1d(a0, 4, return_indices=True)",
      [](const std::vector<Tensor>& in) { return pair(adaptive_max_pool1d(in[0], {4})); },
      {{wave({2, 3, 9})}, {wave({3, 10}, kDouble)}});
  amp("adaptive_max_pool3d", "adaptive_max_pool3d(a0, (2, 3, 2), return_indices=True)",
      [](const std::vector<Tensor>& in) { return pair(adaptive_max_pool3d(in[0], {2, 3, 2})); }, {{wave({1, 2, 3, 4, 5})}});

  // ---- sliding blocks: unfold, fold ----
  conv("unfold", "unfold(a0, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))",
       one([](const std::vector<Tensor>& in) { return unfold(in[0], {2, 3}, {1, 2}, 1, {2, 1}); }),
       {{wave({2, 3, 5, 6})}, {wave({3, 6, 5}).transpose(1, 2)}, {wave({2, 3, 5, 6}, kHalf)}, {ints({1, 2, 4, 5})},
        {wave({2, 3, 1, 1})},   // no block fits: raises
        {wave({2, 3, 5})}});    // unbatched [C, H, W]
  conv("fold", "fold(a0, (5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))",
       one([](const std::vector<Tensor>& in) { return fold(in[0], {5, 6}, {2, 3}, {1, 2}, 1, {2, 1}); }),
       {{wave({2, 18, 12})}, {wave({18, 12}, kDouble)}, {wave({12, 18}).t()}, {ints({1, 6, 12})},
        {wave({2, 17, 12})},   // channels not divisible by the kernel: raises
        {wave({2, 18, 11})}});  // wrong number of blocks: raises
  conv("fold:overlap", "fold(a0, 4, 3)", one([](const std::vector<Tensor>& in) { return fold(in[0], {4}, {3}); }),
       {{wave({1, 9, 4})}});

  // ---- grid_sample ----
  const Tensor grid = seq({2, 3, 4, 2}, kFloat, -1.3, 0.11);
  const Tensor grid3 = seq({2, 2, 3, 4, 3}, kFloat, -1.3, 0.02);  // [N, D_out, H_out, W_out, (x, y, z)]
  for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
    for (const char* pad : {"zeros", "border", "reflection"}) {
      for (bool align : {false, true}) {
        const std::string m = mode, p = pad;
        const std::string args = "mode='" + m + "', padding_mode='" + p + "', align_corners=" + (align ? "True" : "False") + ")";
        const Fn f = one([m, p, align](const std::vector<Tensor>& in) { return grid_sample(in[0], in[1], m, p, align); });
        conv(std::string("grid_sample:") + m + "_" + p + (align ? "_align" : ""), "grid_sample(a0, a1, " + args, f,
             {{wave({2, 3, 4, 5}), grid}, {wave({2, 3, 5, 4}, kDouble).transpose(2, 3), grid.to(kDouble)}});
        // Volumetric: trilinear, nearest and tricubic.
        conv(std::string("grid_sample3d:") + m + "_" + p + (align ? "_align" : ""), "grid_sample(a0, a1, " + args, f,
             {{wave({2, 3, 3, 4, 5}), grid3}, {wave({2, 3, 5, 4, 3}, kDouble).permute({0, 1, 4, 3, 2}), grid3.to(kDouble)}});
      }
    }
  }
  conv("grid_sample:errors", "grid_sample(a0, a1, align_corners=False)",
       one([](const std::vector<Tensor>& in) { return grid_sample(in[0], in[1], "bilinear", "zeros", false); }),
       {{wave({2, 3, 4, 5}), seq({1, 3, 4, 2})},          // batch sizes differ
        {wave({2, 3, 4, 5}), seq({2, 3, 4, 3})},          // grid's last dim is not 2
        {wave({2, 3, 4, 5}), seq({2, 3, 4, 2}, kDouble)},  // dtypes differ
        {wave({3, 4, 5}), seq({3, 4, 2})}});               // 3-D input

  // ---- resampling: interpolate, upsample_*2d; pad by mode ----
  auto interp = [&](std::string name, std::string torch, Fn f, std::vector<Sample> samples) {
    conv(std::move(name), std::move(torch), std::move(f), std::move(samples));
  };
  Tensor with_specials = wave({1, 1, 3, 4});
  with_specials = where(eq(seq({1, 1, 3, 4}, kFloat, 0, 1), 5.0), std::numeric_limits<double>::infinity(), with_specials);
  with_specials = where(eq(seq({1, 1, 3, 4}, kFloat, 0, 1), 10.0), std::numeric_limits<double>::quiet_NaN(), with_specials);
  interp("interpolate:nearest_scale2", "interpolate(a0, scale_factor=2.0)",
         one([](const std::vector<Tensor>& in) { return interpolate(in[0], std::nullopt, std::vector<double>{2.0}); }),
         {{wave({2, 3, 3, 4})}, {wave({2, 3, 5})}, {wave({1, 2, 2, 3, 2}, kDouble)}, {ints({1, 2, 3, 2})},
          {wave({3, 4})}});  // 2-D input: raises
  interp("interpolate:nearest_size", "interpolate(a0, size=(5, 3))",
         one([](const std::vector<Tensor>& in) { return interpolate(in[0], std::vector<int64_t>{5, 3}); }),
         {{wave({2, 3, 3, 4})}, {wave({2, 3, 7, 7}, kHalf)}, {wave({2, 3, 4})}});  // 1 spatial dim, 2 sizes: raises
  interp("interpolate:nearest_fraction", "interpolate(a0, scale_factor=(1.7, 0.6))",
         one([](const std::vector<Tensor>& in) {
           return interpolate(in[0], std::nullopt, std::vector<double>{1.7, 0.6});
         }),
         {{wave({1, 2, 5, 6})}});
  interp("interpolate:bilinear", "interpolate(a0, size=(5, 7), mode='bilinear')",
         one([](const std::vector<Tensor>& in) { return interpolate(in[0], std::vector<int64_t>{5, 7}, std::nullopt, "bilinear"); }),
         {{wave({2, 3, 3, 4})}, {wave({2, 3, 6, 9}, kDouble)}, {wave({1, 2, 3, 4}, kBFloat16)},
          {wave({1, 2, 3, 4}).transpose(2, 3)}, {with_specials}, {ints({1, 1, 3, 4})},  // integers: raise
          {wave({2, 3, 4})}});                                                           // 3-D input: raises
  interp("interpolate:bilinear_align_corners", "interpolate(a0, scale_factor=1.5, mode='bilinear', align_corners=True)",
         one([](const std::vector<Tensor>& in) {
           return interpolate(in[0], std::nullopt, std::vector<double>{1.5}, "bilinear", true);
         }),
         {{wave({2, 3, 3, 4})}, {wave({1, 1, 1, 4})}});
  interp("interpolate:linear_recompute", "interpolate(a0, scale_factor=0.7, mode='linear', recompute_scale_factor=True)",
         one([](const std::vector<Tensor>& in) {
           return interpolate(in[0], std::nullopt, std::vector<double>{0.7}, "linear", std::nullopt, true);
         }),
         {{wave({2, 3, 10})}});
  interp("interpolate:trilinear", "interpolate(a0, size=(3, 4, 2), mode='trilinear')",
         one([](const std::vector<Tensor>& in) { return interpolate(in[0], std::vector<int64_t>{3, 4, 2}, std::nullopt, "trilinear"); }),
         {{wave({1, 2, 2, 3, 4})}});
  interp("interpolate:area", "interpolate(a0, size=(2, 3), mode='area')",
         one([](const std::vector<Tensor>& in) { return interpolate(in[0], std::vector<int64_t>{2, 3}, std::nullopt, "area"); }),
         {{wave({2, 3, 5, 6})}});
  interp("interpolate:nearest_align_corners", "interpolate(a0, size=4, align_corners=True)",
         one([](const std::vector<Tensor>& in) { return interpolate(in[0], std::vector<int64_t>{4}, std::nullopt, "nearest", true); }),
         {{wave({1, 2, 3})}});  // raises
  const std::string aten = "torch.ops.aten.";
  db.push_back({"upsample_nearest2d", "conv",
                one([](const std::vector<Tensor>& in) { return upsample_nearest2d(in[0], {6, 5}, 2.0, 1.5); }),
                aten + "upsample_nearest2d(a0, [6, 5], 2.0, 1.5)", {{wave({2, 3, 3, 4})}, {wave({3, 3, 4})}}});
  db.push_back({"upsample_bilinear2d", "conv",
                one([](const std::vector<Tensor>& in) { return upsample_bilinear2d(in[0], {6, 5}, false); }),
                aten + "upsample_bilinear2d(a0, [6, 5], False)", {{wave({2, 3, 3, 4})}, {wave({1, 1, 4, 9}, kDouble)}}});

  auto padm = [&](std::string name, std::string torch, Fn f, std::vector<Sample> samples) {
    conv(std::move(name), std::move(torch), std::move(f), std::move(samples));
  };
  padm("pad:reflect", "pad(a0, (2, 1, 1, 3), mode='reflect')",
       one([](const std::vector<Tensor>& in) { return pad(in[0], {2, 1, 1, 3}, "reflect"); }),
       {{wave({2, 3, 4, 5})}, {wave({3, 4, 5}, kDouble)}, {wave({2, 3, 5, 4}).transpose(2, 3)}, {ints({1, 4, 4})},
        {wave({2, 3, 3, 5})},    // padding 3 of a dim of 3: raises
        {wave({2, 3, 4, 5, 6})}});  // 5-D input for 2 padded dims: raises
  padm("pad:reflect1d", "pad(a0, (3, 2), mode='reflect')",
       one([](const std::vector<Tensor>& in) { return pad(in[0], {3, 2}, "reflect"); }), {{wave({2, 3, 5})}, {wave({2, 4})}});
  padm("pad:replicate", "pad(a0, (1, 2, 0, 3), mode='replicate')",
       one([](const std::vector<Tensor>& in) { return pad(in[0], {1, 2, 0, 3}, "replicate"); }),
       {{wave({2, 3, 4, 5})}, {wave({3, 1, 1}, kHalf)}, {wave({1, 2, 0, 3})}});  // an empty padded dim: raises
  padm("pad:replicate3d", "pad(a0, (1, 0, 2, 1, 1, 1), mode='replicate')",
       one([](const std::vector<Tensor>& in) { return pad(in[0], {1, 0, 2, 1, 1, 1}, "replicate"); }),
       {{wave({1, 2, 2, 3, 2})}});
  padm("reflection_pad2d", "pad(a0, (2, 1, 1, 3), mode='reflect')",
       one([](const std::vector<Tensor>& in) { return reflection_pad2d(in[0], {2, 1, 1, 3}); }), {{wave({2, 3, 4, 5})}});
  padm("replication_pad1d", "pad(a0, (1, 2), mode='replicate')",
       one([](const std::vector<Tensor>& in) { return replication_pad1d(in[0], {1, 2}); }),
       {{wave({2, 3, 4})}, {wave({3, 4}, kDouble)}});
  padm("replication_pad3d", "pad(a0, (1, 0, 2, 1, 1, 1), mode='replicate')",
       one([](const std::vector<Tensor>& in) { return replication_pad3d(in[0], {1, 0, 2, 1, 1, 1}); }), {{wave({1, 2, 2, 3, 2})}});
  padm("reflection_pad1d", "pad(a0, (3, 2), mode='reflect')",
       one([](const std::vector<Tensor>& in) { return reflection_pad1d(in[0], {3, 2}); }), {{wave({2, 3, 5})}});
  padm("reflection_pad3d", "pad(a0, (1, 0, 2, 1, 1, 1), mode='reflect')",
       one([](const std::vector<Tensor>& in) { return reflection_pad3d(in[0], {1, 0, 2, 1, 1, 1}); }),
       {{wave({1, 2, 3, 4, 3})}});
  padm("replication_pad2d", "pad(a0, (1, 2, 0, 3), mode='replicate')",
       one([](const std::vector<Tensor>& in) { return replication_pad2d(in[0], {1, 2, 0, 3}); }), {{wave({2, 3, 4, 5})}});
  padm("reflection_pad1d:bad", "pad(a0, (1, 2, 3), mode='reflect')",
       one([](const std::vector<Tensor>& in) { return reflection_pad1d(in[0], {1, 2, 3}); }), {{wave({2, 3, 4})}});  // raises
  padm("pad:circular", "pad(a0, (2, 3, 1, 1), mode='circular')",
       one([](const std::vector<Tensor>& in) { return pad(in[0], {2, 3, 1, 1}, "circular"); }),
       {{wave({2, 3, 4, 5})}, {wave({1, 2, 3}, kDouble)}, {wave({1, 2, 2, 2})}});  // wraps twice: raises
}

}  // namespace kiln::opdb
