// kiln/test/test_support/opdb_pool.cpp — op database entries: pooling (max, average and
// adaptive, 1-3 spatial dims, with indices) and the sliding blocks unfold and fold.
//
// Inputs are sine waves (values in [-1, 1] without ties, so a max pool's index is unique)
// over batched and unbatched, strided, f64, f16 and bf16 samples; the error rows are arguments
// PyTorch rejects (windows larger than the padded input, wrong ranks, integer adaptive pools).
#include "test_support/opdb.h"

#include <limits>
#include <string>

namespace kiln::opdb {

namespace {

std::vector<Tensor> pair(const std::tuple<Tensor, Tensor>& t) { return {std::get<0>(t), std::get<1>(t)}; }

}  // namespace

void add_pool(std::vector<OpEntry>& db) {
  const std::string F = "torch.nn.functional.";
  auto entry = [&](std::string name, std::string torch, Fn f, std::vector<Sample> samples) {
    db.push_back({std::move(name), "pool", std::move(f), F + torch, std::move(samples)});
  };

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
  entry("max_pool2d", "max_pool2d(a0, 3, 2, 1)",
        one([](const std::vector<Tensor>& in) { return max_pool2d(in[0], 3, 2, 1); }), mp);
  entry("max_pool2d:ceil_dilation", "max_pool2d(a0, (2, 3), (2, 1), (1, 0), dilation=(2, 1), ceil_mode=True)",
        one([](const std::vector<Tensor>& in) { return max_pool2d(in[0], {2, 3}, {2, 1}, {1, 0}, {2, 1}, true); }),
        pools(kFloat));
  entry("max_pool2d_with_indices", "max_pool2d(a0, 3, 2, 1, ceil_mode=True, return_indices=True)",
        [](const std::vector<Tensor>& in) { return pair(max_pool2d_with_indices(in[0], 3, 2, 1, 1, true)); },
        {{wave({2, 3, 7, 6})}, {wave({3, 6, 7}).transpose(1, 2)}, {wave({2, 3, 7, 6}, kDouble)}});
  entry("max_pool1d_with_indices", "max_pool1d(a0, 3, 2, return_indices=True)",
        [](const std::vector<Tensor>& in) { return pair(max_pool1d_with_indices(in[0], 3, 2)); },
        {{wave({2, 3, 9})}, {wave({3, 8})}});
  entry("max_pool3d", "max_pool3d(a0, 2, padding=1)",
        one([](const std::vector<Tensor>& in) { return max_pool3d(in[0], 2, {}, 1); }),
        {{wave({1, 2, 3, 4, 5})}, {wave({2, 3, 4, 5})}});
  entry("max_pool3d_with_indices", "max_pool3d(a0, (2, 2, 3), stride=(1, 2, 2), return_indices=True)",
        [](const std::vector<Tensor>& in) { return pair(max_pool3d_with_indices(in[0], {2, 2, 3}, {1, 2, 2})); },
        {{wave({1, 2, 3, 4, 5})}});

  std::vector<Sample> ap = pools(kFloat);
  ap.push_back({wave({2, 3, 7, 6}, kDouble)});
  ap.push_back({wave({2, 3, 7, 6}, kHalf)});
  ap.push_back({ints({1, 2, 7, 6})});  // integers: the average truncates
  entry("avg_pool2d", "avg_pool2d(a0, 3, 2, 1)",
        one([](const std::vector<Tensor>& in) { return avg_pool2d(in[0], 3, 2, 1); }), ap);
  entry("avg_pool2d:ceil_exclude_pad", "avg_pool2d(a0, (3, 2), (2, 2), (1, 1), ceil_mode=True, count_include_pad=False)",
        one([](const std::vector<Tensor>& in) { return avg_pool2d(in[0], {3, 2}, {2, 2}, {1, 1}, true, false); }),
        pools(kFloat));
  entry("avg_pool2d:ceil_include_pad", "avg_pool2d(a0, 3, 2, 1, ceil_mode=True)",
        one([](const std::vector<Tensor>& in) { return avg_pool2d(in[0], 3, 2, 1, true); }), pools(kFloat));
  entry("avg_pool2d:divisor", "avg_pool2d(a0, 2, divisor_override=3)",
        one([](const std::vector<Tensor>& in) { return avg_pool2d(in[0], 2, {}, 0, false, true, 3); }), pools(kFloat));
  entry("avg_pool1d", "avg_pool1d(a0, 3, 2, 1, count_include_pad=False)",
        one([](const std::vector<Tensor>& in) { return avg_pool1d(in[0], 3, 2, 1, false, false); }),
        {{wave({2, 3, 9})}, {wave({3, 8}, kDouble)}});
  entry("avg_pool3d", "avg_pool3d(a0, 2, padding=(0, 1, 1))",
        one([](const std::vector<Tensor>& in) { return avg_pool3d(in[0], 2, {}, {0, 1, 1}); }),
        {{wave({1, 2, 3, 4, 5})}, {wave({2, 3, 4, 5}, kDouble)}});

  std::vector<Sample> aap = pools(kFloat);
  aap.push_back({wave({2, 3, 7, 6}, kDouble)});
  aap.push_back({wave({2, 3, 7, 6}, kBFloat16)});
  aap.push_back({ints({1, 2, 7, 6})});  // integers: raises
  entry("adaptive_avg_pool2d", "adaptive_avg_pool2d(a0, (3, 4))",
        one([](const std::vector<Tensor>& in) { return adaptive_avg_pool2d(in[0], {3, 4}); }), aap);
  entry("adaptive_avg_pool2d:global", "adaptive_avg_pool2d(a0, 1)",
        one([](const std::vector<Tensor>& in) { return adaptive_avg_pool2d(in[0], {1, 1}); }), pools(kFloat));
  entry("adaptive_avg_pool1d", "adaptive_avg_pool1d(a0, 4)",
        one([](const std::vector<Tensor>& in) { return adaptive_avg_pool1d(in[0], {4}); }),
        {{wave({2, 3, 9})}, {wave({3, 3}, kDouble)}});
  entry("adaptive_avg_pool3d", "adaptive_avg_pool3d(a0, (2, 3, 2))",
        one([](const std::vector<Tensor>& in) { return adaptive_avg_pool3d(in[0], {2, 3, 2}); }),
        {{wave({1, 2, 3, 4, 5})}});

  // Several NaNs in one window: PyTorch's index is the last NaN's.
  Tensor nans = wave({1, 2, 4, 6});
  nans = where(eq(remainder(seq({1, 2, 4, 6}, kFloat, 0, 1), 5.0), 1.0), std::numeric_limits<double>::quiet_NaN(), nans);
  entry("max_pool2d_with_indices:nan", "max_pool2d(a0, (2, 3), return_indices=True)",
        [](const std::vector<Tensor>& in) { return pair(max_pool2d_with_indices(in[0], {2, 3})); }, {{nans}});
  auto amp = [&](std::string name, std::string torch, Fn f, std::vector<Sample> samples) {
    entry(std::move(name), std::move(torch), std::move(f), std::move(samples));
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
  entry("unfold", "unfold(a0, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))",
        one([](const std::vector<Tensor>& in) { return unfold(in[0], {2, 3}, {1, 2}, 1, {2, 1}); }),
        {{wave({2, 3, 5, 6})}, {wave({3, 6, 5}).transpose(1, 2)}, {wave({2, 3, 5, 6}, kHalf)}, {ints({1, 2, 4, 5})},
         {wave({2, 3, 1, 1})},   // no block fits: raises
         {wave({2, 3, 5})}});    // unbatched [C, H, W]
  entry("fold", "fold(a0, (5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1))",
        one([](const std::vector<Tensor>& in) { return fold(in[0], {5, 6}, {2, 3}, {1, 2}, 1, {2, 1}); }),
        {{wave({2, 18, 12})}, {wave({18, 12}, kDouble)}, {wave({12, 18}).t()}, {ints({1, 6, 12})},
         {wave({2, 17, 12})},   // channels not divisible by the kernel: raises
         {wave({2, 18, 11})}});  // wrong number of blocks: raises
  entry("fold:overlap", "fold(a0, 4, 3)", one([](const std::vector<Tensor>& in) { return fold(in[0], {4}, {3}); }),
        {{wave({1, 9, 4})}});

  // ---- the backward nodes the 2-D poolings' derivative rules record (a0: grad_output, a1: self) ----
  auto backward = [&](std::string name, std::string torch, Fn f, std::vector<Sample> samples) {
    db.push_back({std::move(name), "pool", std::move(f), "torch.ops.aten." + torch, std::move(samples)});
  };
  backward("max_pool2d_with_indices_backward",
           "max_pool2d_with_indices_backward(a0, a1, [3, 3], [2, 2], [1, 1], [1, 1], True, "
           "torch.nn.functional.max_pool2d(a1, 3, 2, 1, ceil_mode=True, return_indices=True)[1])",
           one([](const std::vector<Tensor>& in) {
             const Tensor idx = std::get<1>(max_pool2d_with_indices(in[1], 3, 2, 1, 1, true));
             return max_pool2d_with_indices_backward(in[0], in[1], 3, 2, 1, 1, true, idx);
           }),
           {{wave({2, 3, 4, 4}), wave({2, 3, 7, 6}, kFloat, 1.0)},
            {wave({3, 4, 4}, kDouble), wave({3, 7, 6}, kDouble, 1.0)},
            {wave({2, 3, 4, 3}), wave({2, 3, 7, 6}, kFloat, 1.0)}});  // grad_output of another shape: raises
  backward("avg_pool2d_backward", "avg_pool2d_backward(a0, a1, [3, 3], [2, 2], [1, 1], False, True, None)",
           one([](const std::vector<Tensor>& in) { return avg_pool2d_backward(in[0], in[1], 3, 2, 1, false, true, std::nullopt); }),
           {{wave({2, 3, 4, 3}), wave({2, 3, 7, 6}, kFloat, 1.0)},
            {wave({3, 4, 3}, kDouble), wave({3, 7, 6}, kDouble, 1.0)},
            {wave({2, 3, 4, 4}), wave({2, 3, 7, 6})}});  // grad_output of another shape: raises
  backward("avg_pool2d_backward:ceil_exclude_pad",
           "avg_pool2d_backward(a0, a1, [3, 2], [2, 2], [1, 1], True, False, None)",
           one([](const std::vector<Tensor>& in) {
             return avg_pool2d_backward(in[0], in[1], {3, 2}, {2, 2}, {1, 1}, true, false, std::nullopt);
           }),
           {{wave({2, 3, 4, 4}), wave({2, 3, 7, 6}, kFloat, 1.0)}});
  backward("avg_pool2d_backward:divisor", "avg_pool2d_backward(a0, a1, [3, 3], [2, 2], [1, 1], False, True, 5)",
           one([](const std::vector<Tensor>& in) { return avg_pool2d_backward(in[0], in[1], 3, 2, 1, false, true, 5); }),
           {{wave({2, 3, 4, 3}), wave({2, 3, 7, 6}, kFloat, 1.0)}});
  backward("adaptive_avg_pool2d_backward", "_adaptive_avg_pool2d_backward(a0, a1)",
           one([](const std::vector<Tensor>& in) { return adaptive_avg_pool2d_backward(in[0], in[1]); }),
           {{wave({2, 3, 3, 4}), wave({2, 3, 7, 6}, kFloat, 1.0)},
            {wave({3, 3, 4}, kDouble), wave({3, 7, 6}, kDouble, 1.0)},
            {wave({2, 3, 3, 4}, kHalf), wave({2, 3, 7, 6}, kHalf, 1.0)}});
}

}  // namespace kiln::opdb
