// kiln/test/test_tensor_factories.cpp — every factory: values, dtype, shape, strides and errors.
//
// empty/empty_strided, zeros/ones/full (dtype from the value), arange (integer and floating,
// PyTorch's length rule and its errors), linspace (both halves of PyTorch's formula, integral
// truncation), eye, the *_like forms, the random factories against the draws that
// frontend/ops_random.h specifies for a (seed, offset) pair, and tensors from data.
#include "base/error.h"
#include "frontend/ops_factory.h"
#include "frontend/ops.h"
#include "runtime/cuda/cuda_device.h"
#include "test_support/check.h"
#include "test_support/make.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

namespace kiln {
namespace {

using ::testing::HasSubstr;
using namespace test;

TEST(Factories, EmptyAndEmptyStrided) {
  Tensor e = empty({2, 3});
  EXPECT_EQ(e.dtype(), kFloat);
  EXPECT_EQ(sizes_of(e), (Ints{2, 3}));
  EXPECT_EQ(e.strides().vec(), (Ints{3, 1}));
  EXPECT_EQ(empty({4}, kInt16).dtype(), kInt16);
  EXPECT_EQ(empty({0, 5}).numel(), 0);
  Tensor s = empty_strided({2, 3}, {1, 2}, kDouble);
  EXPECT_EQ(s.strides().vec(), (Ints{1, 2}));
  EXPECT_EQ(s.impl()->storage()->nbytes(), 6 * sizeof(double));
  EXPECT_EQ(empty_strided({2, 0}, {5, 1}).numel(), 0);
  EXPECT_EQ(error_of([] { (void)empty({-1, 2}); }), "[empty] Trying to create tensor with negative dimension -1: [-1, 2]");
  EXPECT_THAT(error_of([] { (void)empty_strided({2}, {1, 1}); }), HasSubstr("[empty_strided] mismatch in length"));
}

TEST(Factories, ZerosOnesFull) {
  EXPECT_EQ(values<float>(zeros({2, 2})), Floats(4, 0));
  EXPECT_EQ(values<int64_t>(ones({3}, kInt64)), Longs(3, 1));
  Tensor z = zeros({});
  EXPECT_EQ(z.dim(), 0);
  EXPECT_EQ(z.numel(), 1);
  EXPECT_EQ(full({2}, true).dtype(), kBool);
  EXPECT_EQ(full({2}, 3).dtype(), kInt64);
  EXPECT_EQ(full({2}, 1.5).dtype(), kFloat);
  EXPECT_EQ(values<double>(full({2}, 1.5, kDouble)), (Doubles{1.5, 1.5}));
  EXPECT_EQ(values<int32_t>(full({1}, 2.9, kInt32)), (std::vector<int32_t>{2}));
  // As torch.full: the fill value converts with c10's overflow check (-1 may wrap, 257 may not).
  EXPECT_EQ(values<uint8_t>(full({1}, -1, kUInt8)), (std::vector<uint8_t>{255}));
  EXPECT_THAT(error_of([] { (void)full({1}, 257, kUInt8); }),
              HasSubstr("[full] value cannot be converted to type uint8_t without overflow"));
  EXPECT_EQ(error_of([] { (void)zeros({2, -3}); }), "[zeros] Trying to create tensor with negative dimension -3: [2, -3]");
  Tensor s = scalar_tensor(2.5);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.dtype(), kFloat);
  EXPECT_EQ(scalar_tensor(3).dtype(), kFloat);  // PyTorch: the default dtype, not the value's
  EXPECT_EQ(scalar_tensor(true).dtype(), kFloat);
  EXPECT_EQ(values<double>(scalar_tensor(3, kDouble)), (Doubles{3}));
}

TEST(Factories, DevicesThatAreNotThereAreRefused) {
  // A factory must never hand back a CPU tensor when another device was asked for.
  EXPECT_THAT(error_of([] { (void)arange(4, TensorOptions(kLong).device(Device(kCUDA, 63))); }),
              HasSubstr("[iota] cannot create a tensor on cuda:63"));
  if (cuda::is_available()) {
    EXPECT_EQ(ones({2}, Device("cuda:0")).device(), Device(kCUDA, 0));  // test_cuda_gpu.cpp checks the values
    return;
  }
  const std::string why = cuda::unavailable_reason();
  EXPECT_THAT(error_of([] { (void)ones({2}, Device("cuda:0")); }),
              HasSubstr("[full] cannot create a tensor on cuda:0: CUDA is not available: " + why));
  EXPECT_THAT(error_of([] { (void)randn({3}, TensorOptions(Device("cuda"))); }),
              HasSubstr("[normal] cannot create a tensor on cuda:0: CUDA is not available"));
}

TEST(Factories, ArangeIntegers) {
  Tensor a = arange(5);
  EXPECT_EQ(a.dtype(), kInt64);
  EXPECT_EQ(values<int64_t>(a), (Longs{0, 1, 2, 3, 4}));
  EXPECT_EQ(values<int64_t>(arange(0, 10, 3)), (Longs{0, 3, 6, 9}));
  EXPECT_EQ(values<int64_t>(arange(10, 0, -3)), (Longs{10, 7, 4, 1}));
  EXPECT_EQ(values<int64_t>(arange(-2, 2)), (Longs{-2, -1, 0, 1}));
  EXPECT_EQ(arange(3, 3).numel(), 0);
  EXPECT_EQ(values<int32_t>(arange(0, 4, 2, kInt32)), (std::vector<int32_t>{0, 2}));
  // An integer dtype with floating bounds truncates the bounds (PyTorch's int64 accumulator) but
  // counts elements in double: ceil((2.5 - 0.5) / 1) = 2 elements 0, 1.
  EXPECT_EQ(values<int32_t>(arange(0.5, 2.5, 1, kInt32)), (std::vector<int32_t>{0, 1}));
}

TEST(Factories, ArangeFloats) {
  Tensor a = arange(0, 1, 0.25);
  EXPECT_EQ(a.dtype(), kFloat);
  EXPECT_EQ(values<float>(a), (Floats{0, 0.25f, 0.5f, 0.75f}));
  EXPECT_EQ(values<double>(arange(1, 2.5, 0.5, kDouble)), (Doubles{1, 1.5, 2}));
  EXPECT_EQ(values<float>(arange(3.0)), (Floats{0, 1, 2}));
  EXPECT_EQ(arange(0, 1, 0.3).numel(), 4);  // ceil(1 / 0.3) = 4: 0, 0.3, 0.6, 0.9
  EXPECT_EQ(values<double>(arange(0, 5, 1, kDouble)), (Doubles{0, 1, 2, 3, 4}));
}

TEST(Factories, ArangeErrors) {
  EXPECT_EQ(error_of([] { (void)arange(0, 5, 0); }), "[arange] step must be nonzero");
  EXPECT_EQ(error_of([] { (void)arange(0, 5, -1); }), "[arange] upper bound and larger bound inconsistent with step sign");
  EXPECT_EQ(error_of([] { (void)arange(5, 0, 0.5); }), "[arange] upper bound and larger bound inconsistent with step sign");
  EXPECT_EQ(error_of([] { (void)arange(0, INFINITY); }), "[arange] unsupported range: 0 -> inf");
  // A fractional step of an integer dtype is no error: PyTorch sizes the range in double and
  // fills it from the truncated start and step (both 0 here).
  EXPECT_EQ(values<int64_t>(arange(0, 5, 0.5, kInt64)), Longs(10, 0));
  EXPECT_EQ(values<int64_t>(arange(0.25, 10, 0.5, kInt64)), Longs(20, 0));
  EXPECT_EQ(values<int64_t>(arange(-0.5, 3, 0.7, kInt64)), Longs(5, 0));
  EXPECT_EQ(error_of([] { (void)arange(0.5, 5, 0.0, kInt64); }), "[arange] step must be nonzero");
  EXPECT_EQ(error_of([] { (void)arange(0, 5, 1, kBool); }), "[arange] arange is not supported for dtype Bool");
}

TEST(Factories, Linspace) {
  Tensor l = linspace(0, 1, 5);
  EXPECT_EQ(l.dtype(), kFloat);
  EXPECT_EQ(values<float>(l), (Floats{0, 0.25f, 0.5f, 0.75f, 1}));
  EXPECT_EQ(values<float>(linspace(-1, 1, 3)), (Floats{-1, 0, 1}));
  // The second half counts back from the end: element 2 of 4 is 1 - step, not 2 * step.
  const float step = 1.0f / 3.0f;
  Floats four = values<float>(linspace(0, 1, 4));
  EXPECT_EQ(four, (Floats{0, step, 1.0f - step, 1}));
  EXPECT_NE(four[2], 2.0f * step);
  EXPECT_EQ(values<double>(linspace(2, 3, 3, kDouble)), (Doubles{2, 2.5, 3}));
  EXPECT_EQ(values<float>(linspace(7, 9, 1)), (Floats{7}));
  EXPECT_EQ(linspace(0, 1, 0).numel(), 0);
  // Integral results: computed in double, truncated: 0, 3.33, 10 - 3.33, 10.
  Tensor li = linspace(0, 10, 4, kInt64);
  EXPECT_EQ(li.dtype(), kInt64);
  EXPECT_EQ(values<int64_t>(li), (Longs{0, 3, 6, 10}));
  EXPECT_EQ(values<float>(linspace(5, 1, 5)), (Floats{5, 4, 3, 2, 1}));
  EXPECT_EQ(error_of([] { (void)linspace(0, 1, -1); }), "[linspace] number of steps must be non-negative");
}

TEST(Factories, Eye) {
  EXPECT_EQ(values<float>(eye(3)), (Floats{1, 0, 0, 0, 1, 0, 0, 0, 1}));
  Tensor r = eye(2, 3, kInt32);
  EXPECT_EQ(sizes_of(r), (Ints{2, 3}));
  EXPECT_EQ(values<int32_t>(r), (std::vector<int32_t>{1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(values<bool>(eye(2, kBool)), (std::vector<bool>{true, false, false, true}));
  EXPECT_EQ(sizes_of(eye(0)), (Ints{0, 0}));
  EXPECT_EQ(error_of([] { (void)eye(-1); }), "[eye] n must be greater or equal to 0, got -1");
  EXPECT_EQ(error_of([] { (void)eye(2, -2); }), "[eye] m must be greater or equal to 0, got -2");
}

TEST(Factories, LikeForms) {
  Tensor t = make<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3}).t();
  Tensor z = zeros_like(t);
  EXPECT_EQ(z.dtype(), kInt32);
  EXPECT_EQ(sizes_of(z), (Ints{3, 2}));
  EXPECT_EQ(values<int32_t>(z), std::vector<int32_t>(6, 0));
  EXPECT_EQ(values<double>(ones_like(t, kDouble)), Doubles(6, 1));
  EXPECT_EQ(values<int32_t>(full_like(t, 7)), std::vector<int32_t>(6, 7));
  EXPECT_EQ(values<int32_t>(full_like(t, 7.9)), std::vector<int32_t>(6, 7));  // the tensor's dtype wins
  EXPECT_EQ(sizes_of(empty_like(t)), (Ints{3, 2}));
  Tensor f = make<float>({1, 2});
  EXPECT_EQ(rand_like(f).dtype(), kFloat);
  EXPECT_EQ(sizes_of(randn_like(f, kDouble)), (Ints{2}));
  EXPECT_EQ(randn_like(f, kDouble).dtype(), kDouble);
  EXPECT_THAT(error_of([&] { (void)rand_like(t); }), HasSubstr("[rand] rand only produces floating point dtypes, but got Int"));
  // PyTorch 2.15: an empty randn of any dtype draws nothing and is allowed; rand refuses.
  const Tensor none = make<bool>({}).reshape({0});
  EXPECT_EQ(randn_like(none).dtype(), kBool);
  EXPECT_EQ(sizes_of(randn({3, 0}, kInt64)), (Ints{3, 0}));
  EXPECT_THAT(error_of([] { (void)randn({2}, kInt64); }), HasSubstr("[randn] randn only produces floating point dtypes, but got Long"));
  EXPECT_THAT(error_of([&] { (void)rand_like(none); }), HasSubstr("[rand] rand only produces floating point dtypes, but got Bool"));
}

TEST(Random, RandDrawsFromTheGeneratorStream) {
  Generator g(1234);
  Tensor a = rand({2, 3}, g);
  EXPECT_EQ(a.dtype(), kFloat);
  EXPECT_EQ(g.offset(), 1u);  // one offset per call
  Floats av = values<float>(a);
  for (size_t i = 0; i < av.size(); ++i) {
    EXPECT_EQ(av[i], uniform_f32(1234, 0, i)) << i;
    EXPECT_GE(av[i], 0.f);
    EXPECT_LT(av[i], 1.f);
  }
  Tensor b = rand({3}, g, kDouble);
  Doubles bv = values<double>(b);
  for (size_t i = 0; i < bv.size(); ++i) EXPECT_EQ(bv[i], uniform_f64(1234, 1, i)) << i;
  // Same seed, same stream; a new offset, a new stream.
  Generator g2(1234);
  EXPECT_EQ(values<float>(rand({2, 3}, g2)), av);
  EXPECT_NE(values<float>(rand({2, 3}, g2)), av);
  EXPECT_THAT(error_of([] { (void)rand({2}, kInt64); }), HasSubstr("[rand] rand only produces floating point dtypes"));
}

TEST(Random, RandnMatchesNormalDraws) {
  Generator g(7);
  Tensor n = randn({1000}, g, kDouble);
  Doubles nv = values<double>(n);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(nv[i], normal_f64(7, 0, i));
  double mean = 0, sq = 0;
  for (double v : nv) mean += v;
  mean /= 1000;
  for (double v : nv) sq += (v - mean) * (v - mean);
  double sd = std::sqrt(sq / 999);
  // Standard error of the mean is 1/sqrt(1000) ~ 0.032: five of them is a safe bound.
  EXPECT_LT(std::fabs(mean), 0.16);
  EXPECT_NEAR(sd, 1.0, 0.1);
  EXPECT_EQ(randn({2}).dtype(), kFloat);
}

TEST(Random, Randint) {
  Generator g(99);
  Tensor r = randint(-3, 4, {2000}, g);
  EXPECT_EQ(r.dtype(), kInt64);
  std::set<int64_t> seen;
  Longs rv = values<int64_t>(r);
  for (size_t i = 0; i < rv.size(); ++i) {
    // floor(u * (high - low)) + low for the float64 draw of element i.
    EXPECT_EQ(rv[i], static_cast<int64_t>(std::floor(uniform_f64(99, 0, i) * 7.0)) - 3) << i;
    seen.insert(rv[i]);
  }
  EXPECT_EQ(seen, (std::set<int64_t>{-3, -2, -1, 0, 1, 2, 3}));
  EXPECT_EQ(randint(10, {3}, kInt16).dtype(), kInt16);
  Tensor f = randint(0, 5, {50}, kFloat);
  for (float v : values<float>(f)) EXPECT_EQ(v, std::floor(v));
  EXPECT_EQ(error_of([] { (void)randint(5, 5, {2}); }),
            "[randint] random_ expects 'from' to be less than 'to', but got from=5 >= to=5");
}

TEST(FromData, BracedLists) {
  Tensor f = tensor({1.5, 2.5});
  EXPECT_EQ(f.dtype(), kFloat);
  EXPECT_EQ(values<float>(f), (Floats{1.5f, 2.5f}));
  Tensor i = tensor({1, 2, 3});
  EXPECT_EQ(i.dtype(), kInt64);
  EXPECT_EQ(values<int64_t>(i), (Longs{1, 2, 3}));
  EXPECT_EQ(tensor({true, false}).dtype(), kBool);
  EXPECT_EQ(tensor({1.5f}).dtype(), kFloat);
  EXPECT_EQ(values<int32_t>(tensor({1.5, -2.5}, kInt32)), (std::vector<int32_t>{1, -2}));
  EXPECT_EQ(static_cast<float>(values<Half>(tensor({1, 2}, kHalf))[1]), 2.f);
  EXPECT_EQ(values<bool>(tensor({0.0, 0.5}, kBool)), (std::vector<bool>{false, true}));
}

TEST(FromData, VectorsWithShape) {
  Tensor t = tensor<double>(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(t.dtype(), kDouble);
  EXPECT_EQ(sizes_of(t), (Ints{2, 3}));
  EXPECT_EQ(t.strides().vec(), (Ints{3, 1}));
  EXPECT_EQ(values<double>(t), (Doubles{1, 2, 3, 4, 5, 6}));
  Tensor u = tensor<int32_t>(std::vector<int32_t>{7, 8});
  EXPECT_EQ(u.dtype(), kInt32);
  EXPECT_EQ(sizes_of(u), (Ints{2}));
  Tensor s = tensor<float>(std::vector<float>{4}, IntArrayRef{});  // a 0-dim tensor
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(values<float>(s), (Floats{4}));
  Tensor h = tensor<Half>(std::vector<Half>{Half(0.5f)}, {1}, kFloat);
  EXPECT_EQ(values<float>(h), (Floats{0.5f}));
  EXPECT_EQ(values<uint8_t>(tensor<bool>(std::vector<bool>{true, false}, {2}, kUInt8)), (std::vector<uint8_t>{1, 0}));
  EXPECT_EQ(error_of([] { (void)tensor<float>(std::vector<float>{1, 2, 3}, {2, 2}); }),
            "[tensor] the data has 3 elements but shape [2, 2] needs 4");
}

}  // namespace
}  // namespace kiln
