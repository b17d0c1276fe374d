// kiln/test/test_tensor_printing.cpp — Tensor::str() matches Python's repr of torch tensors.
//
// Every expected string below was produced by PyTorch (repr(t) with default print options)
// for the same values, dtype, shape and strides: integer and float formats (int_mode, fixed,
// scientific), nan/inf, bool, f16/bf16, nesting, summarization past 1000 elements, empty and
// 0-dim tensors, dtype/size suffixes and their line wrapping, and views read through strides.
#include "frontend/tensor.h"
#include "frontend/tracer.h"
#include "test_support/make.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace kiln {
namespace {

using namespace test;

template <typename T>
std::vector<T> iota_values(int64_t n, double scale = 1.0) {
  std::vector<T> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<T>(static_cast<double>(i) * scale));
  return v;
}

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInfF = std::numeric_limits<float>::infinity();

TEST(TensorPrinting, Integers) {
  EXPECT_EQ(make<int64_t>({1, 2, 3}).str(), "tensor([1, 2, 3])");
  EXPECT_EQ(make<int64_t>({-10, 200, 3}).str(), "tensor([-10, 200,   3])");
  EXPECT_EQ(make<int32_t>({1, 2, 3}).str(), "tensor([1, 2, 3], dtype=torch.int32)");
  EXPECT_EQ(make<uint8_t>({0, 255}).str(), "tensor([  0, 255], dtype=torch.uint8)");
  EXPECT_EQ(make<int64_t>({std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()}).str(),
            "tensor([ 9223372036854775807, -9223372036854775808])");
}

TEST(TensorPrinting, FloatIntMode) {
  EXPECT_EQ(make<float>({1.f, 2.f, -3.f}).str(), "tensor([ 1.,  2., -3.])");
  EXPECT_EQ(make<float>({100.f, -2.f, 3.f, 0.f}, {2, 2}).str(),
            "tensor([[100.,  -2.],\n"
            "        [  3.,   0.]])");
  EXPECT_EQ(make<float>({-0.f, 1.f}).str(), "tensor([-0., 1.])");
  EXPECT_EQ(make<float>({0.f, 0.f, 0.f}).str(), "tensor([0., 0., 0.])");
}

TEST(TensorPrinting, FloatFixed) {
  EXPECT_EQ(make<float>({1.5f, 2.25f, -3.125f}).str(), "tensor([ 1.5000,  2.2500, -3.1250])");
  EXPECT_EQ(make<float>({1.f, -100.5f, 0.25f, 7.f}, {2, 2}).str(),
            "tensor([[   1.0000, -100.5000],\n"
            "        [   0.2500,    7.0000]])");
  EXPECT_EQ(make<double>({1.0 / 3, 2.0 / 3}).str(), "tensor([0.3333, 0.6667], dtype=torch.float64)");
}

TEST(TensorPrinting, FloatScientific) {
  EXPECT_EQ(make<float>({1e-5f, 1.f}).str(), "tensor([1.0000e-05, 1.0000e+00])");      // min < 1e-4
  EXPECT_EQ(make<float>({1.f, 2000.f}).str(), "tensor([1.0000e+00, 2.0000e+03])");      // max/min > 1000
  EXPECT_EQ(make<float>({1e9f, 2e9f}).str(), "tensor([1.0000e+09, 2.0000e+09])");       // max > 1e8
  EXPECT_EQ(make<float>({1e8f, 2.f}).str(), "tensor([1.0000e+08, 2.0000e+00])");        // int_mode, ratio
  EXPECT_EQ(make<float>({123456.f, 1.f}).str(), "tensor([1.2346e+05, 1.0000e+00])");
  EXPECT_EQ(make<float>({-1.2345e-7f, 5.f, 1e10f}).str(), "tensor([-1.2345e-07,  5.0000e+00,  1.0000e+10])");
  EXPECT_EQ(make<float>({0.00015f, 0.12345f, 0.99995f}).str(), "tensor([1.5000e-04, 1.2345e-01, 9.9995e-01])");
  EXPECT_EQ(make<double>({1.0e-300, 1.0}).str(), "tensor([1.0000e-300,  1.0000e+00], dtype=torch.float64)");
  EXPECT_EQ(make<float>({1e-5f, 2.f, 3.f, -4e5f}, {2, 1, 2}).str(),
            "tensor([[[ 1.0000e-05,  2.0000e+00]],\n"
            "\n"
            "        [[ 3.0000e+00, -4.0000e+05]]])");
}

TEST(TensorPrinting, NanAndInf) {
  EXPECT_EQ(make<float>({kNan, kInfF, -kInfF, 1.5f}).str(), "tensor([   nan,    inf,   -inf, 1.5000])");
  EXPECT_EQ(make<float>({kNan, kInfF, -kInfF, 1.f}).str(), "tensor([nan, inf, -inf, 1.])");
  EXPECT_EQ(make<float>({kNan, 0.f}).str(), "tensor([nan, 0.])");
  EXPECT_EQ(make<float>({-kNan, -2.5f}).str(), "tensor([    nan, -2.5000])");  // no "-nan"
  EXPECT_EQ(make<float>({1e-10f, 1e10f, kNan}).str(), "tensor([1.0000e-10, 1.0000e+10,        nan])");
}

TEST(TensorPrinting, Bool) {
  EXPECT_EQ(make<bool>({true, false, true}).str(), "tensor([ True, False,  True])");
  EXPECT_EQ(make<bool>({true, false, false, true}, {2, 2}).str(),
            "tensor([[ True, False],\n"
            "        [False,  True]])");
  std::vector<bool> alternating;
  for (int i = 0; i < 24; ++i) alternating.push_back(i % 2 == 0);
  EXPECT_EQ(make<bool>(alternating).str(),
            "tensor([ True, False,  True, False,  True, False,  True, False,  True, False,\n"
            "         True, False,  True, False,  True, False,  True, False,  True, False,\n"
            "         True, False,  True, False])");
  EXPECT_EQ(make<bool>(std::vector<bool>(1001, true)).str(), "tensor([True, True, True,  ..., True, True, True])");
}

TEST(TensorPrinting, HalfAndBFloat16PrintAsFloat) {
  EXPECT_EQ(make<Half>({Half(0.1f), Half(1.5f), Half(2.f)}).str(),
            "tensor([0.1000, 1.5000, 2.0000], dtype=torch.float16)");
  EXPECT_EQ(make<BFloat16>({BFloat16(0.1f), BFloat16(1.5f), BFloat16(2.f)}).str(),
            "tensor([0.1001, 1.5000, 2.0000], dtype=torch.bfloat16)");
  EXPECT_EQ(make<Half>({Half(65504.f), Half(70000.f), Half(-1.f)}).str(),
            "tensor([ 6.5504e+04,         inf, -1.0000e+00], dtype=torch.float16)");
  EXPECT_EQ(make<Half>(std::vector<Half>(6, Half(1.f)), {2, 3}).str(),
            "tensor([[1., 1., 1.],\n"
            "        [1., 1., 1.]], dtype=torch.float16)");
}

TEST(TensorPrinting, MultiDim) {
  EXPECT_EQ(make<float>({1.5f, 2.f, 3.f, 4.f}, {2, 2}).str(),
            "tensor([[1.5000, 2.0000],\n"
            "        [3.0000, 4.0000]])");
  EXPECT_EQ(make<int64_t>(iota_values<int64_t>(12), {2, 2, 3}).str(),
            "tensor([[[ 0,  1,  2],\n"
            "         [ 3,  4,  5]],\n"
            "\n"
            "        [[ 6,  7,  8],\n"
            "         [ 9, 10, 11]]])");
  EXPECT_EQ(make<int32_t>(iota_values<int32_t>(6), {2, 3}).str(),
            "tensor([[0, 1, 2],\n"
            "        [3, 4, 5]], dtype=torch.int32)");
  EXPECT_EQ(make<int64_t>({5}, {1, 1}).str(), "tensor([[5]])");
}

TEST(TensorPrinting, LongRowsWrapAtLineWidth) {
  EXPECT_EQ(make<float>(iota_values<float>(30, 1.5)).str(),
            "tensor([ 0.0000,  1.5000,  3.0000,  4.5000,  6.0000,  7.5000,  9.0000, 10.5000,\n"
            "        12.0000, 13.5000, 15.0000, 16.5000, 18.0000, 19.5000, 21.0000, 22.5000,\n"
            "        24.0000, 25.5000, 27.0000, 28.5000, 30.0000, 31.5000, 33.0000, 34.5000,\n"
            "        36.0000, 37.5000, 39.0000, 40.5000, 42.0000, 43.5000])");
  EXPECT_EQ(make<int64_t>(iota_values<int64_t>(40, 1000)).str(),
            "tensor([    0,  1000,  2000,  3000,  4000,  5000,  6000,  7000,  8000,  9000,\n"
            "        10000, 11000, 12000, 13000, 14000, 15000, 16000, 17000, 18000, 19000,\n"
            "        20000, 21000, 22000, 23000, 24000, 25000, 26000, 27000, 28000, 29000,\n"
            "        30000, 31000, 32000, 33000, 34000, 35000, 36000, 37000, 38000, 39000])");
}

TEST(TensorPrinting, SuffixesWrapAtLineWidth) {
  EXPECT_EQ(make<double>(iota_values<double>(12, 12.5), {2, 6}).str(),
            "tensor([[  0.0000,  12.5000,  25.0000,  37.5000,  50.0000,  62.5000],\n"
            "        [ 75.0000,  87.5000, 100.0000, 112.5000, 125.0000, 137.5000]],\n"
            "       dtype=torch.float64)");
  EXPECT_EQ(make<int16_t>(iota_values<int16_t>(17)).str(),
            "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16],\n"
            "       dtype=torch.int16)");
  EXPECT_EQ(make<int8_t>(iota_values<int8_t>(21)).str(),
            "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n"
            "        18, 19, 20], dtype=torch.int8)");
}

TEST(TensorPrinting, SummarizedBeyondThreshold) {
  EXPECT_EQ(make<int64_t>(iota_values<int64_t>(2000)).str(), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
  EXPECT_EQ(make<float>(iota_values<float>(2000), {40, 50}).str(),
            "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 4.7000e+01, 4.8000e+01,\n"
            "         4.9000e+01],\n"
            "        [5.0000e+01, 5.1000e+01, 5.2000e+01,  ..., 9.7000e+01, 9.8000e+01,\n"
            "         9.9000e+01],\n"
            "        [1.0000e+02, 1.0100e+02, 1.0200e+02,  ..., 1.4700e+02, 1.4800e+02,\n"
            "         1.4900e+02],\n"
            "        ...,\n"
            "        [1.8500e+03, 1.8510e+03, 1.8520e+03,  ..., 1.8970e+03, 1.8980e+03,\n"
            "         1.8990e+03],\n"
            "        [1.9000e+03, 1.9010e+03, 1.9020e+03,  ..., 1.9470e+03, 1.9480e+03,\n"
            "         1.9490e+03],\n"
            "        [1.9500e+03, 1.9510e+03, 1.9520e+03,  ..., 1.9970e+03, 1.9980e+03,\n"
            "         1.9990e+03]])");
  // Only the shown rows and columns decide the format (get_summarized_data).
  EXPECT_EQ(make<int64_t>(iota_values<int64_t>(1500), {5, 300}).str(),
            "tensor([[   0,    1,    2,  ...,  297,  298,  299],\n"
            "        [ 300,  301,  302,  ...,  597,  598,  599],\n"
            "        [ 600,  601,  602,  ...,  897,  898,  899],\n"
            "        [ 900,  901,  902,  ..., 1197, 1198, 1199],\n"
            "        [1200, 1201, 1202,  ..., 1497, 1498, 1499]])");
  EXPECT_EQ(make<float>(iota_values<float>(1001, 0.5), {1001, 1}).str(),
            "tensor([[  0.0000],\n"
            "        [  0.5000],\n"
            "        [  1.0000],\n"
            "        ...,\n"
            "        [499.0000],\n"
            "        [499.5000],\n"
            "        [500.0000]])");
  std::vector<Half> halves;
  for (int i = 0; i < 1500; ++i) halves.push_back(Half(static_cast<float>(i) * 0.25f));
  EXPECT_EQ(make<Half>(halves, {30, 50}).str(),
            "tensor([[0.0000e+00, 2.5000e-01, 5.0000e-01,  ..., 1.1750e+01, 1.2000e+01,\n"
            "         1.2250e+01],\n"
            "        [1.2500e+01, 1.2750e+01, 1.3000e+01,  ..., 2.4250e+01, 2.4500e+01,\n"
            "         2.4750e+01],\n"
            "        [2.5000e+01, 2.5250e+01, 2.5500e+01,  ..., 3.6750e+01, 3.7000e+01,\n"
            "         3.7250e+01],\n"
            "        ...,\n"
            "        [3.3750e+02, 3.3775e+02, 3.3800e+02,  ..., 3.4925e+02, 3.4950e+02,\n"
            "         3.4975e+02],\n"
            "        [3.5000e+02, 3.5025e+02, 3.5050e+02,  ..., 3.6175e+02, 3.6200e+02,\n"
            "         3.6225e+02],\n"
            "        [3.6250e+02, 3.6275e+02, 3.6300e+02,  ..., 3.7425e+02, 3.7450e+02,\n"
            "         3.7475e+02]], dtype=torch.float16)");
}

TEST(TensorPrinting, Summarized4dSeparatesBlocksWithBlankLines) {
  EXPECT_EQ(make<int32_t>(iota_values<int32_t>(2400), {2, 2, 20, 30}).str(),
            "tensor([[[[   0,    1,    2,  ...,   27,   28,   29],\n"
            "          [  30,   31,   32,  ...,   57,   58,   59],\n"
            "          [  60,   61,   62,  ...,   87,   88,   89],\n"
            "          ...,\n"
            "          [ 510,  511,  512,  ...,  537,  538,  539],\n"
            "          [ 540,  541,  542,  ...,  567,  568,  569],\n"
            "          [ 570,  571,  572,  ...,  597,  598,  599]],\n"
            "\n"
            "         [[ 600,  601,  602,  ...,  627,  628,  629],\n"
            "          [ 630,  631,  632,  ...,  657,  658,  659],\n"
            "          [ 660,  661,  662,  ...,  687,  688,  689],\n"
            "          ...,\n"
            "          [1110, 1111, 1112,  ..., 1137, 1138, 1139],\n"
            "          [1140, 1141, 1142,  ..., 1167, 1168, 1169],\n"
            "          [1170, 1171, 1172,  ..., 1197, 1198, 1199]]],\n"
            "\n"
            "\n"
            "        [[[1200, 1201, 1202,  ..., 1227, 1228, 1229],\n"
            "          [1230, 1231, 1232,  ..., 1257, 1258, 1259],\n"
            "          [1260, 1261, 1262,  ..., 1287, 1288, 1289],\n"
            "          ...,\n"
            "          [1710, 1711, 1712,  ..., 1737, 1738, 1739],\n"
            "          [1740, 1741, 1742,  ..., 1767, 1768, 1769],\n"
            "          [1770, 1771, 1772,  ..., 1797, 1798, 1799]],\n"
            "\n"
            "         [[1800, 1801, 1802,  ..., 1827, 1828, 1829],\n"
            "          [1830, 1831, 1832,  ..., 1857, 1858, 1859],\n"
            "          [1860, 1861, 1862,  ..., 1887, 1888, 1889],\n"
            "          ...,\n"
            "          [2310, 2311, 2312,  ..., 2337, 2338, 2339],\n"
            "          [2340, 2341, 2342,  ..., 2367, 2368, 2369],\n"
            "          [2370, 2371, 2372,  ..., 2397, 2398, 2399]]]], dtype=torch.int32)");
}

TEST(TensorPrinting, Empty) {
  EXPECT_EQ(make<float>({}).str(), "tensor([])");
  EXPECT_EQ(make<float>({}, {0, 3}).str(), "tensor([], size=(0, 3))");
  EXPECT_EQ(make<int64_t>({}).str(), "tensor([], dtype=torch.int64)");  // int64 is shown when empty
  EXPECT_EQ(make<bool>({}).str(), "tensor([], dtype=torch.bool)");
  EXPECT_EQ(make<int32_t>({}, {2, 0}).str(), "tensor([], size=(2, 0), dtype=torch.int32)");
  EXPECT_EQ(make<double>({}).str(), "tensor([], dtype=torch.float64)");
}

TEST(TensorPrinting, ZeroDim) {
  EXPECT_EQ(make<float>({3.5f}, {}).str(), "tensor(3.5000)");
  EXPECT_EQ(make<float>({3.f}, {}).str(), "tensor(3.)");
  EXPECT_EQ(make<int64_t>({3}, {}).str(), "tensor(3)");
  EXPECT_EQ(make<int16_t>({7}, {}).str(), "tensor(7, dtype=torch.int16)");
  EXPECT_EQ(make<float>({kNan}, {}).str(), "tensor(nan)");
  EXPECT_EQ(make<bool>({true}, {}).str(), "tensor(True)");
}

TEST(TensorPrinting, NonContiguousViewsReadThroughStrides) {
  Tensor base = make<float>(iota_values<float>(6), {2, 3});
  EXPECT_EQ(strided(base, {3, 2}, {1, 3}, 0).str(),  // base.t()
            "tensor([[0., 3.],\n"
            "        [1., 4.],\n"
            "        [2., 5.]])");
  Tensor ten = make<int64_t>(iota_values<int64_t>(10));
  EXPECT_EQ(strided(ten, {4}, {3}, 0).str(), "tensor([0, 3, 6, 9])");  // ten[::3]
  EXPECT_EQ(strided(make<int64_t>({1, 2}), {3, 2}, {0, 1}, 0).str(),   // expand(3, 2)
            "tensor([[1, 2],\n"
            "        [1, 2],\n"
            "        [1, 2]])");
  Tensor grid = make<float>(iota_values<float>(24), {4, 6});
  EXPECT_EQ(strided(grid, {3, 3}, {2, 6}, 6).str(),  // grid[1:, ::2].t(): offset and strides
            "tensor([[ 6., 12., 18.],\n"
            "        [ 8., 14., 20.],\n"
            "        [10., 16., 22.]])");
}

TEST(TensorPrinting, TracedTensorPrintsItsTypeWithoutData) {
  Tracer tracer;
  Tensor x = tracer.add_input(make<float>(iota_values<float>(6), {2, 3}), "x");
  ASSERT_TRUE(x.is_traced());
  EXPECT_EQ(x.str(), "tensor(<traced f32[2, 3]>)");
}

TEST(TensorPrinting, ToStringNamesTheLibtorchType) {
  EXPECT_EQ(make<float>({1.f}).toString(), "CPUFloatType");
  EXPECT_EQ(make<double>({1.0}).toString(), "CPUDoubleType");
  EXPECT_EQ(make<int64_t>({1}).toString(), "CPULongType");
  EXPECT_EQ(make<int32_t>({1}).toString(), "CPUIntType");
  EXPECT_EQ(make<int16_t>({1}).toString(), "CPUShortType");
  EXPECT_EQ(make<int8_t>({1}).toString(), "CPUCharType");
  EXPECT_EQ(make<uint8_t>({1}).toString(), "CPUByteType");
  EXPECT_EQ(make<bool>({true}).toString(), "CPUBoolType");
  EXPECT_EQ(make<Half>({Half(1.f)}).toString(), "CPUHalfType");
  EXPECT_EQ(make<BFloat16>({BFloat16(1.f)}).toString(), "CPUBFloat16Type");
  EXPECT_EQ(Tensor().toString(), "UndefinedType");
}

TEST(TensorPrinting, StreamOperatorWritesStr) {
  std::ostringstream os;
  os << make<float>({1.5f, 2.f}, {2, 1});
  EXPECT_EQ(os.str(), "tensor([[1.5000],\n        [2.0000]])");
  std::ostringstream undefined;
  undefined << Tensor();
  EXPECT_EQ(undefined.str(), "[ Tensor (undefined) ]");
}

}  // namespace
}  // namespace kiln
