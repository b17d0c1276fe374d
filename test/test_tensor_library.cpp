// kiln/test/test_tensor_library.cpp — libtorch functions and methods that record other ops
// (dot, mv, tensordot, norms, cosine_similarity, meshgrid, tensor_split, multi_dot, combinations,
// index_fill, quantile, cov, histc, the in-place and new_* methods...): PyTorch 2.15's error wording, results worked out by hand or measured in torch,
// gradients where PyTorch defines them at a point its formula does not (a zero norm), and that
// a trace records only existing ops. Their outputs and gradients on the op database's samples are
// checked against torch in every mode by the OpDbGolden and GoldenGrad suites.
#include "kiln/kiln.h"
#include "test_support/check.h"
#include "test_support/make.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace kiln {
namespace {

using ::testing::HasSubstr;
using namespace kiln::test;

using Floats = std::vector<float>;

// A deterministic float tensor of `shape` without ties: sin(0.37 i + phase).
Tensor wave_like(std::vector<int64_t> shape, double phase) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return sin(arange(n, kFloat) * 0.37 + phase).reshape(shape);
}

TEST(LibraryFunctions, ProductsCheckWhatPyTorchChecks) {
  EXPECT_THAT(error_of([] { (void)dot(zeros({2, 2}), zeros({2})); }), HasSubstr("[dot] 1D tensors expected, but got 2D and 1D tensors"));
  EXPECT_THAT(error_of([] { (void)dot(zeros({2}), zeros({2}, kDouble)); }),
              HasSubstr("[dot] dot : expected both vectors to have same dtype, but found Float and Double"));
  EXPECT_THAT(error_of([] { (void)dot(zeros({2}, kBool), zeros({2}, kBool)); }), HasSubstr("\"dot\" not implemented for 'Bool'"));
  EXPECT_THAT(error_of([] { (void)mv(zeros({2, 3}), zeros({2})); }), HasSubstr("[mv] size mismatch, got input (2), mat (2x3), vec (2)"));
  EXPECT_THAT(error_of([] { (void)addmv(zeros({1, 2}), zeros({2, 3}), zeros({3})); }),
              HasSubstr("[addmv] vector + matrix @ vector expected, got 2, 2, 1"));
  EXPECT_THAT(error_of([] { (void)outer(zeros({2, 2}), zeros({2})); }), HasSubstr("outer: Expected 1-D argument self, but got 2-D"));
  EXPECT_THAT(error_of([] { (void)addr(zeros({2, 3}, kLong), zeros({2}, kLong), zeros({3}, kLong), 1.5); }),
              HasSubstr("For integral input tensors, argument beta must not be a floating point number."));
  EXPECT_THAT(error_of([] { (void)tensordot(zeros({2, 3}), zeros({3, 5}), -1); }),
              HasSubstr("[tensordot] tensordot expects dims >= 0, but got dims=-1"));
  EXPECT_THAT(error_of([] { (void)tensordot(zeros({3, 3}), zeros({3, 3}), {0, 0}, {0, 1}); }),
              HasSubstr("dim 0 appears multiple times in the list of dims"));
  EXPECT_THAT(error_of([] { (void)tensordot(zeros({2, 3}), zeros({4, 5}), 1); }),
              HasSubstr("contracted dimensions need to match, but first has size 3 in dim -1 and second has size 4 in dim 0"));
}

TEST(LibraryFunctions, ProductsByHand) {
  const Tensor a = make<float>({1, 2, 3}), b = make<float>({4, 5, 6});
  EXPECT_EQ(dot(a, b).item<float>(), 32.0f);
  EXPECT_EQ(a.dot(b).dim(), 0);
  const Tensor m = make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(values<float>(mv(m, a)), (Floats{14, 32}));
  EXPECT_EQ(values<float>(addmv(make<float>({1, 1}), m, a, 2, 0.5)), (Floats{9, 18}));
  EXPECT_EQ(values<float>(outer(make<float>({1, 2}), b)), (Floats{4, 5, 6, 8, 10, 12}));
  // A size-1 contracted dim against a larger one sums the larger (PyTorch's tensordot).
  EXPECT_EQ(values<float>(tensordot(make<float>({2}, {1}), make<float>({1, 2, 3}, {3}), {0}, {0})), (Floats{12}));
  EXPECT_EQ(values<float>(kron(make<float>({1, 2}), make<float>({1, 10}))), (Floats{1, 10, 2, 20}));
  // addr on bool: beta and alpha are truth values and + is `or`.
  const Tensor t = make<bool>({true, false}), f = make<bool>({false, false});
  EXPECT_EQ(values<bool>(addr(zeros({2, 2}, kBool), t, t)), (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(values<bool>(addr(ones({2, 2}, kBool), f, f, 0)), (std::vector<bool>{false, false, false, false}));
}

TEST(LibraryFunctions, ATraceRecordsOnlyExistingOps) {
  auto f = compile([](const Tensor& a, const Tensor& b) { return add(dot(a, b), linalg_vector_norm(a)); });
  const Tensor a = make<float>({3, 4}), b = make<float>({1, 1});
  EXPECT_FLOAT_EQ(f(a, b).item<float>(), 12.0f);
  const std::string graph = f.explain(a, b);
  EXPECT_THAT(graph, HasSubstr("= mm("));
  EXPECT_EQ(graph.find("= dot("), std::string::npos);
  EXPECT_EQ(graph.find("= linalg_vector_norm("), std::string::npos);
}

TEST(LibraryFunctions, NormsAndTheirGradientAtZero) {
  const Tensor v = make<float>({3, -4, 0});
  EXPECT_FLOAT_EQ(linalg_vector_norm(v).item<float>(), 5.0f);
  EXPECT_FLOAT_EQ(linalg_vector_norm(v, 1).item<float>(), 7.0f);
  EXPECT_FLOAT_EQ(linalg_vector_norm(v, INFINITY).item<float>(), 4.0f);
  EXPECT_FLOAT_EQ(linalg_vector_norm(v, 0).item<float>(), 2.0f);
  EXPECT_NEAR(linalg_vector_norm(make<float>({3, -4}), -1).item<float>(), 12.0 / 7.0, 1e-6);
  EXPECT_FLOAT_EQ(v.norm().item<float>(), 5.0f);
  EXPECT_THAT(error_of([] { (void)linalg_vector_norm(zeros({0}), -1); }),
              HasSubstr("linalg.vector_norm cannot compute the -1 norm on an empty tensor because the operation does not have an identity"));
  EXPECT_THAT(error_of([] { (void)linalg_vector_norm(arange(3)); }),
              HasSubstr("linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long"));
  EXPECT_THAT(error_of([] { (void)linalg_vector_norm(zeros({2}), 2, {}, false, kHalf); }),
              HasSubstr("should be convertible without narrowing to the specified dtype (Half)"));
  // PyTorch's gradient of a zero norm is 0 (torch 2.15: linalg.vector_norm of zeros(3), ord 2, 3
  // and inf); sqrt and pow would give 0/0 there.
  for (double p : {2.0, 3.0, 0.5, 1.0, static_cast<double>(INFINITY)}) {
    SCOPED_TRACE(p);
    const Tensor x = zeros({3}).requires_grad_();
    linalg_vector_norm(x, p).backward();
    EXPECT_EQ(values<float>(x.grad()), (Floats{0, 0, 0}));
  }
  // ord inf shares the gradient between the tied extremes; ord 0.5 gives 0 at a zero element.
  const Tensor tie = make<float>({1, -3, 3}).requires_grad_();
  linalg_vector_norm(tie, INFINITY).backward();
  EXPECT_EQ(values<float>(tie.grad()), (Floats{0, -0.5, 0.5}));
  const Tensor half = make<float>({0, -3, 3}).requires_grad_();
  linalg_vector_norm(half, 0.5).backward();
  const Floats g = values<float>(half.grad());  // torch 2.15: [0, -2, 2]
  EXPECT_EQ(g[0], 0.0f);
  EXPECT_NEAR(g[1], -2.0, 1e-5);
  EXPECT_NEAR(g[2], 2.0, 1e-5);
}

TEST(LibraryFunctions, DistancesAsPyTorchComputesThem) {
  // Each operand is divided by its norm clamped at eps: tiny vectors (1e-9 each) give 0.01.
  EXPECT_NEAR(cosine_similarity(make<float>({1e-9f, 0}, {1, 2}), make<float>({1e-9f, 0}, {1, 2})).item<float>(), 0.01, 1e-6);
  // A zero operand: the gradient of the other is 0, its own is the other's direction / eps
  // (torch 2.15: [6e7, 8e7] for [3, 4] against [0, 0]).
  const Tensor a = make<float>({3, 4}, {1, 2}).requires_grad_(), b = zeros({1, 2}).requires_grad_();
  cosine_similarity(a, b).sum().backward();
  EXPECT_EQ(values<float>(a.grad()), (Floats{0, 0}));
  EXPECT_NEAR(b.grad().to_vector<float>()[0], 6e7, 10);
  EXPECT_NEAR(b.grad().to_vector<float>()[1], 8e7, 10);
  EXPECT_THAT(error_of([] { (void)cosine_similarity(ones({2, 3}, kLong), ones({2, 3}, kLong)); }),
              HasSubstr("expected common dtype to be floating point, yet common dtype is Long"));
  EXPECT_EQ(pairwise_distance(ones({2, 3}, kLong), zeros({2, 3}, kLong)).dtype(), kFloat);
  EXPECT_EQ(pairwise_distance(ones({2, 3}), zeros({2, 3}), 2, 1e-6, true).sizes().vec(), (std::vector<int64_t>{2, 1}));
}

TEST(LibraryFunctions, PointwiseAtTheirSpecialPoints) {
  const Tensor x = make<float>({0, 0, 2}), y = make<float>({0, NAN, 1});
  const std::vector<float> r = xlogy(x, y).to_vector<float>();
  EXPECT_EQ(r[0], 0.0f);  // 0 * log(0) is 0
  EXPECT_TRUE(std::isnan(r[1]));  // NaN y gives NaN, even where x is 0
  EXPECT_EQ(r[2], 0.0f);
  // The gradient of the branch a where drops is 0: sinc at 0 and xlogy at x = 0, y = 0.
  const Tensor s = zeros({1}).requires_grad_();
  sinc(s).backward(ones({1}));
  EXPECT_EQ(values<float>(s.grad()), (Floats{0}));
  const Tensor xs = zeros({1}).requires_grad_(), ys = zeros({1}).requires_grad_();
  xlogy(xs, ys).backward(ones({1}));
  EXPECT_EQ(values<float>(xs.grad()), (Floats{0}));  // torch: xlogy(x != 0, y) = 0
  EXPECT_EQ(values<float>(logaddexp(make<float>({INFINITY, -INFINITY}), make<float>({INFINITY, -INFINITY}))),
            (Floats{INFINITY, -INFINITY}));
  EXPECT_THAT(error_of([] { (void)logaddexp(arange(2), arange(2)); }), HasSubstr("\"logaddexp_cpu\" not implemented for 'Long'"));
  EXPECT_THAT(error_of([] { (void)heaviside(zeros({2}), zeros({2}, kDouble)); }),
              HasSubstr("heaviside is not yet implemented for tensors with different dtypes."));
  EXPECT_EQ(values<bool>(isclose(make<float>({1, INFINITY, NAN}), make<float>({1.000001f, INFINITY, NAN}))),
            (std::vector<bool>{true, true, false}));
  EXPECT_EQ(float_power(arange(3), 2).dtype(), kDouble);
  EXPECT_EQ(deg2rad(arange(2)).dtype(), kFloat);
}

TEST(LibraryFunctions, ReductionsCountsAndPairs) {
  const Tensor x = make<float>({1, NAN, -2, NAN}, {2, 2});
  EXPECT_EQ(values<float>(nansum(x, {1})), (Floats{1, -2}));
  const Floats means = values<float>(nanmean(x, {0}));
  EXPECT_EQ(means[0], -0.5f);
  EXPECT_TRUE(std::isnan(means[1]));  // no element that is not NaN: 0 / 0
  EXPECT_EQ(count_nonzero(make<float>({0, 1, 0, 2})).item<int64_t>(), 2);
  auto [lo, hi] = aminmax(make<float>({3, -1, 2}));
  EXPECT_EQ(lo.item<float>(), -1.0f);
  EXPECT_EQ(hi.item<float>(), 3.0f);
  EXPECT_THAT(error_of([] { (void)aminmax(zeros({0})); }),
              HasSubstr("aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity."));
  auto [v, m] = var_mean(make<float>({1, 2, 3, 4}));
  EXPECT_NEAR(v.item<float>(), 5.0 / 3.0, 1e-6);
  EXPECT_EQ(m.item<float>(), 2.5f);
  EXPECT_THAT(error_of([] { (void)nanmean(arange(2)); }),
              HasSubstr("nanmean(): expected input to have floating point or complex dtype but got Long"));
}

TEST(LibraryFunctions, GridsAndSplits) {
  EXPECT_EQ(values<float>(diag(make<float>({1, 2}), 1)), (Floats{0, 1, 0, 0, 0, 2, 0, 0, 0}));
  EXPECT_EQ(values<float>(diag(make<float>({1, 2, 3, 4, 5, 6}, {2, 3}), -1)), (Floats{4}));
  EXPECT_THAT(error_of([] { (void)diag_embed(zeros({2, 3}), 0, 1, 1); }), HasSubstr("diagonal dimensions cannot be identical 1, 1"));
  const Tensor m = make<float>({0, 1, 2, 3, 4, 5}, {2, 3});
  EXPECT_EQ(values<float>(rot90(m, -1)), (Floats{3, 0, 4, 1, 5, 2}));
  EXPECT_EQ(values<float>(rot90(m, 5, {1, 0})), (Floats{3, 0, 4, 1, 5, 2}));
  EXPECT_THAT(error_of([&] { (void)rot90(m, 1, {0, -2}); }),
              HasSubstr("expected rotation dims to be different, but got dim0 = 0 and dim1 = -2"));
  const std::vector<Tensor> xy = meshgrid({zeros({2}), zeros({3}), zeros({4})}, "xy");
  for (const Tensor& g : xy) EXPECT_EQ(g.sizes().vec(), (std::vector<int64_t>{3, 2, 4}));
  EXPECT_THAT(error_of([] { (void)meshgrid({zeros({2})}, "xz"); }),
              HasSubstr("indexing must be one of \"xy\" or \"ij\", but received: xz"));
  std::vector<int64_t> sizes;
  for (const Tensor& p : tensor_split(arange(7), {1, 5, 3, 9})) sizes.push_back(p.numel());
  EXPECT_EQ(sizes, (std::vector<int64_t>{1, 4, 0, 4, 0}));  // torch 2.15
  sizes.clear();
  for (const Tensor& p : arange(7).tensor_split(3)) sizes.push_back(p.numel());
  EXPECT_EQ(sizes, (std::vector<int64_t>{3, 2, 2}));
  EXPECT_EQ(movedim(zeros({2, 3, 4}), {0, 1}, {2, 0}).sizes().vec(), (std::vector<int64_t>{3, 4, 2}));
  EXPECT_THAT(error_of([] { (void)movedim(zeros({2, 3, 4}), {0, 0}, {1, 2}); }), HasSubstr("movedim: repeated dim in `source` ([0, 0])"));
  EXPECT_EQ(values<float>(pixel_shuffle(arange(8, kFloat).reshape({1, 4, 1, 2}), 2)), (Floats{0, 2, 1, 3, 4, 6, 5, 7}));
  EXPECT_THAT(error_of([] { (void)pixel_unshuffle(zeros({1, 1, 2, 3}), 2); }),
              HasSubstr("pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)=3 is not divisible by 2"));
}

// The review of 2026-12-06 against torch 2.15: each value below is torch's.
TEST(LibraryFunctions, ReviewedEdgesMatchPyTorch) {
  // movedim with lists on a 0-dim tensor is the tensor (it wrote past an empty permutation).
  EXPECT_EQ(movedim(scalar_tensor(1.0), {0}, {0}).item<float>(), 1.0f);
  // var_mean(x, false) is over every dim without correction, not over dim 0.
  auto [v, m] = var_mean(make<float>({1, 2, 3, 4}, {2, 2}), false);
  EXPECT_EQ(v.dim(), 0);
  EXPECT_FLOAT_EQ(v.item<float>(), 1.25f);
  EXPECT_FLOAT_EQ(std::get<0>(std_mean(make<float>({1, 3}), true)).item<float>(), std::sqrt(2.0f));
  // xlogy: x's gradient is log(y) where x is 0 too, unless y <= 0; a number operand takes the
  // result's floating dtype.
  const Tensor x = make<float>({0, 0, 1}).requires_grad_(), y = make<float>({2, 0, 3});
  xlogy(x, y).sum().backward();
  const Floats gx = values<float>(x.grad());
  EXPECT_NEAR(gx[0], std::log(2.0), 1e-6);
  EXPECT_EQ(gx[1], 0.0f);
  EXPECT_NEAR(gx[2], std::log(3.0), 1e-6);
  EXPECT_NEAR(xlogy(full({2}, 2, kChar), 1000).to_vector<float>()[0], 13.8155, 1e-3);
  EXPECT_TRUE(std::isnan(xlogy(full({2}, 2, kByte), -1).to_vector<float>()[0]));
  EXPECT_NEAR(xlogy(-1, full({2}, 2, kByte)).to_vector<float>()[0], -0.6931, 1e-4);
  // addr: ATen's checks of beta and alpha against the result's dtype.
  EXPECT_THAT(error_of([] { (void)addr(zeros({2, 2}), ones({2}), ones({2}), true); }),
              HasSubstr("Boolean beta only supported for Boolean results."));
  EXPECT_THAT(error_of([] { (void)addr(zeros({2, 2}, kLong), ones({2}, kLong), ones({2}, kLong), 1, true); }),
              HasSubstr("Boolean alpha only supported for Boolean results."));
  EXPECT_THAT(error_of([] { (void)addr(zeros({2, 2}, kBool), ones({2}, kBool), ones({2}, kBool), 0.5); }),
              HasSubstr("For integral input tensors, argument beta must not be a floating point number."));
  EXPECT_EQ(values<bool>(addr(zeros({2, 2}, kBool), ones({2}, kBool), ones({2}, kBool), true, true)),
            (std::vector<bool>{true, true, true, true}));
  // tensordot sums a dim contracted against size 1 in the operand's own dtype.
  const Tensor t = tensordot(ones({2, 3}, kInt), ones({1, 4}, kInt), {1}, {0});
  EXPECT_EQ(t.dtype(), kInt);
  EXPECT_EQ(t.to_vector<int64_t>(), std::vector<int64_t>(8, 3));
  // isclose compares integers in the default float dtype (uint8 0 - 1 does not wrap).
  EXPECT_TRUE(isclose(zeros({1}, kByte), ones({1}, kByte), 1e-5, 2).item<bool>());
  // A negative ord: a zero element makes the norm 0 and the gradient 0.
  const Tensor z = make<float>({0, 1, 2}).requires_grad_();
  EXPECT_EQ(linalg_vector_norm(z, -1).item<float>(), 0.0f);
  linalg_vector_norm(z, -1).backward();
  EXPECT_EQ(values<float>(z.grad()), (Floats{0, 0, 0}));
  const Tensor w = make<float>({0.5, 1, 2}).requires_grad_();
  linalg_vector_norm(w, -1).backward();
  EXPECT_NEAR(w.grad().to_vector<float>()[0], 0.3265, 1e-4);
  EXPECT_THAT(error_of([] { (void)linalg_vector_norm(zeros({2, 0}), -1, {1}); }),
              HasSubstr("cannot compute the -1 norm on the dimension 1because this dimension is empty"));
  // cosine_similarity's clamp is outside autograd: the gradient is the unclamped norm's.
  const Tensor a = make<float>({1e-9f, 0, 0}, {1, 3}).requires_grad_(), b = make<float>({1, 2, 3}, {1, 3});
  cosine_similarity(a, b).sum().backward();
  const Floats ga = values<float>(a.grad());
  EXPECT_NEAR(ga[0], 24053512, 30);
  EXPECT_NEAR(ga[1], 53452248, 60);
  EXPECT_NEAR(ga[2], 80178368, 90);
  // logit's clamp: below lo gives lo first (eps 0.6: lo 0.6 > hi 0.4).
  EXPECT_NEAR(logit(make<float>({0.3}), 0.6).item<float>(), 0.4055, 1e-4);
  EXPECT_THAT(error_of([] { (void)nanmean(zeros({2}), {}, false, kLong); }),
              HasSubstr("could not infer output dtype. Optional dtype must be either a floating point or complex dtype. Got: Long"));
  EXPECT_THAT(error_of([] { (void)aminmax(zeros({2, 0}), 1); }), HasSubstr("aminmax: Expected reduction dim 1 to have non-zero size."));
  EXPECT_THAT(error_of([] { (void)mv(scalar_tensor(1.0), zeros({2})); }), HasSubstr("Dimension specified as 0 but tensor has no dimensions"));
  EXPECT_THAT(error_of([] { (void)meshgrid({zeros({2, 2}), zeros({3}, kDouble)}); }), HasSubstr("meshgrid expects all tensors to have the same dtype"));
  // The value is checked last: constant_pad_nd's pad length, scatter's index dtype come first.
  EXPECT_THAT(error_of([] { (void)constant_pad_nd(zeros({3}, kHalf), {1, 1, 1, 1}, 1e10); }),
              HasSubstr("Length of pad should be no more than twice the number of dimensions"));
  EXPECT_THAT(error_of([] { (void)zeros({3}, kHalf).scatter(0, zeros({1}), 1e10); }),
              HasSubstr("scatter(): Expected dtype int32/int64 for index"));
}

TEST(LibraryFunctions, OtherNamesAreTheSameOps) {
  const Tensor x = make<float>({-1.5, 0.25, 2}), y = make<float>({0.5, 0.25, -1});
  EXPECT_EQ(values<float>(arccos(make<float>({0.5}))), values<float>(acos(make<float>({0.5}))));
  EXPECT_EQ(values<float>(arctan2(x, y)), values<float>(atan2(x, y)));
  EXPECT_EQ(values<float>(fix(x)), (Floats{-1, 0, 2}));
  EXPECT_EQ(values<float>(negative(x)), (Floats{1.5, -0.25, -2}));
  EXPECT_EQ(values<float>(divide(x, y, "floor")), values<float>(div(x, y, "floor")));
  EXPECT_EQ(values<float>(subtract(x, y, 2)), (Floats{-2.5, -0.25, 4}));
  EXPECT_EQ(values<bool>(greater_equal(x, y)), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(values<bool>(isposinf(make<float>({INFINITY, -INFINITY, NAN}))), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(values<bool>(isneginf(arange(2))), (std::vector<bool>{false, false}));
  EXPECT_THAT(error_of([] { (void)positive(zeros({2}, kBool)); }), HasSubstr("The `+` operator, on a bool tensor is not supported."));
  EXPECT_EQ(tile(arange(3), {2}).sizes().vec(), (std::vector<int64_t>{6}));
  EXPECT_EQ(tile(zeros({2, 3}), {2}).sizes().vec(), (std::vector<int64_t>{2, 6}));  // torch 2.15
  EXPECT_EQ(values<float>(fliplr(make<float>({1, 2, 3, 4}, {2, 2}))), (Floats{2, 1, 4, 3}));
  EXPECT_THAT(error_of([] { (void)fliplr(zeros({3})); }), HasSubstr("Input must be >= 2-d."));
  EXPECT_THAT(error_of([] { (void)flipud(scalar_tensor(1.0)); }), HasSubstr("Input must be >= 1-d."));
  EXPECT_EQ(concatenate({x, y}).numel(), 6);
  EXPECT_EQ(ravel(zeros({2, 3}).t()).sizes().vec(), (std::vector<int64_t>{6}));
  EXPECT_EQ(broadcast_to(x, {2, 3}).sizes().vec(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values<float>(inner(make<float>({1, 2, 3, 4}, {2, 2}), make<float>({1, 1}))), (Floats{3, 7}));
  EXPECT_EQ(values<float>(inner(scalar_tensor(2.0f), ones({3}))), (Floats{2, 2, 2}));
  EXPECT_THAT(error_of([] { (void)inner(zeros({2, 3}), zeros({4})); }),
              HasSubstr("inner() the last dimension must match on both input tensors but got shapes [2, 3] and [4]"));
}

TEST(LibraryFunctions, HostileSizesAreErrors) {
  EXPECT_THAT(error_of([] { (void)diag_embed(zeros({2}), INT64_MIN); }), HasSubstr("[diag_embed] offset"));
  EXPECT_THAT(error_of([] { (void)diag_embed(zeros({2}), INT64_MAX); }), HasSubstr("more than 2^63 elements"));
  EXPECT_THAT(error_of([] { (void)rot90(zeros({2, 2}), 1, {INT64_MIN, 1}); }), HasSubstr("Dimension out of range"));
  const Tensor wide = zeros({1}).expand({int64_t{1} << 40});
  EXPECT_THAT(error_of([&] { (void)kron(wide, wide); }), HasSubstr("does not fit in int64"));
}

TEST(LibraryFunctions, ChainsPowersAndCrossCheckWhatPyTorchChecks) {
  EXPECT_THAT(error_of([] { (void)linalg_multi_dot({zeros({2, 2})}); }), HasSubstr("multi_dot(): expected at least 2 tensors but got 1"));
  EXPECT_THAT(error_of([] { (void)linalg_multi_dot({zeros({2, 2}), zeros({2}), zeros({2, 2})}); }),
              HasSubstr("multi_dot(): tensor 1 must be 2D but got 1D"));
  EXPECT_THAT(error_of([] { (void)linalg_multi_dot({zeros({2, 3}), zeros({3, 2}, kDouble)}); }),
              HasSubstr("multi_dot(): all tensors must have be the same dtype but tensor 0 is float and tensor 1 double"));
  EXPECT_THAT(error_of([] { (void)linalg_multi_dot({zeros({3}), zeros({4, 4})}); }),
              HasSubstr("multi_dot(): tensors 0 and 1 with shapes [3] and [4, 4] cannot be multiplied"));
  EXPECT_THAT(error_of([] { (void)chain_matmul({zeros({2})}); }), HasSubstr("Tensor dimension is 1, expected 2 instead."));
  EXPECT_THAT(error_of([] { (void)matrix_power(zeros({2, 3}), 2); }),
              HasSubstr("linalg.matrix_power: A must be batches of square matrices, but they are 2 by 3 matrices"));
  EXPECT_THAT(error_of([] { (void)matrix_power(eye(2), -1); }), HasSubstr("needs the matrix inverse"));
  const Tensor a = ones({2, 2}).requires_grad_();
  matrix_power(a, 0).sum().backward();
  EXPECT_EQ(values<float>(a.grad()), (Floats{0, 0, 0, 0}));
  EXPECT_THAT(error_of([] { (void)addbmm(zeros({2, 4}), zeros({3, 2, 5}), zeros({2, 5, 4})); }),
              HasSubstr("batch1 and batch2 must have same number of batches, got 3 and 2"));
  EXPECT_THAT(error_of([] { (void)linalg_cross(zeros({2, 4}), zeros({2, 4})); }),
              HasSubstr("linalg.cross: inputs dimension -1 must have length 3. Got 4 and 4"));
  EXPECT_THAT(error_of([] { (void)cross(zeros({2, 2}), zeros({2, 2})); }), HasSubstr("no dimension of size 3 in input"));
  // An integer product takes beta and alpha truncated to its dtype, as PyTorch's addmm does.
  const Tensor one = ones({2, 2}, kLong);
  const Tensor product = addmm(one, one, one, 0.5, 2);
  EXPECT_EQ(product.dtype(), kLong);
  EXPECT_EQ(product.to_vector<int64_t>(), (std::vector<int64_t>{4, 4, 4, 4}));
  EXPECT_EQ(addbmm(one, one.unsqueeze(0), one.unsqueeze(0), 0.5, 1.5).to_vector<int64_t>(), (std::vector<int64_t>{2, 2, 2, 2}));
}

TEST(LibraryFunctions, MultiDotMultipliesInTheCheapestOrder) {
  // [10, 2] [2, 10] [10, 2] [2, 10]: the dynamic program picks A ((B C) D), as ATen's does; a
  // different order rounds these values differently.
  const Tensor a = wave_like({10, 2}, 0.1), b = wave_like({2, 10}, 0.7), c = wave_like({10, 2}, 1.3), d = wave_like({2, 10}, 2.1);
  EXPECT_TRUE(equal(linalg_multi_dot({a, b, c, d}), mm(a, mm(mm(b, c), d))));
  auto f = compile([](const Tensor& p, const Tensor& q, const Tensor& r) { return linalg_multi_dot({p, q, r}); });
  const Tensor p = wave_like({3}, 0.2), q = wave_like({3, 4}, 0.5), r = wave_like({4}, 0.9);
  EXPECT_EQ(f(p, q, r).dim(), 0);  // a row and a column at the ends: a 0-dim result
  EXPECT_EQ(f.explain(p, q, r).find("= multi_dot("), std::string::npos);
}

TEST(LibraryFunctions, IndexTuplesAndTriangles) {
  EXPECT_EQ(combinations(arange(4), 2).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 0, 2, 0, 3, 1, 2, 1, 3, 2, 3}));
  EXPECT_EQ(combinations(arange(3), 2, true).sizes().vec(), (std::vector<int64_t>{6, 2}));
  EXPECT_EQ(combinations(arange(3), 0).sizes().vec(), (std::vector<int64_t>{0}));
  EXPECT_EQ(combinations(arange(2), 3).sizes().vec(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(combinations(zeros({0}), 2, true).sizes().vec(), (std::vector<int64_t>{0, 2}));
  const Tensor v = arange(3);
  EXPECT_EQ(cartesian_prod({v}).impl(), v.impl());  // one input is returned as it is
  // The coordinates are tril / triu's nonzero positions, row-major, for every size and offset.
  for (int64_t rows = 0; rows <= 4; ++rows)
    for (int64_t cols = 0; cols <= 4; ++cols)
      for (int64_t offset = -6; offset <= 6; ++offset) {
        const Tensor full_matrix = ones({rows, cols});
        EXPECT_TRUE(equal(tril_indices(rows, cols, offset), nonzero(tril(full_matrix, offset)).t())) << rows << cols << offset;
        EXPECT_TRUE(equal(triu_indices(rows, cols, offset), nonzero(triu(full_matrix, offset)).t())) << rows << cols << offset;
      }
  EXPECT_EQ(tril_indices(2, 2, 0, kInt).dtype(), kInt);
  EXPECT_THAT(error_of([] { (void)tril_indices(-1, 2); }), HasSubstr("row must be non-negative, got-1"));
  EXPECT_THAT(error_of([] { (void)triu_indices(2, 2, 0, kFloat); }), HasSubstr("\"triu_indices\" not implemented for 'Float'"));
  EXPECT_THAT(error_of([] { (void)combinations(zeros({2, 2})); }), HasSubstr("Expect a 1D vector, but got shape [2, 2]"));
  // Hostile sizes: counted in closed form, so neither a hang nor an overflow.
  EXPECT_EQ(tril_indices(INT64_MAX, 0).size(1), 0);
  EXPECT_EQ(tril_indices(INT64_MAX, 2, INT64_MIN + 3).size(1), 3);  // only the last rows hold elements
  EXPECT_EQ(triu_indices(3, 3, INT64_MIN).size(1), 9);
  EXPECT_THAT(error_of([] { (void)tril_indices(int64_t{1} << 40, int64_t{1} << 40); }), HasSubstr("more than 2^62 elements"));
  EXPECT_THAT(error_of([] { (void)combinations(arange(100), 60); }), HasSubstr("number more than 2^63"));
  EXPECT_THAT(error_of([] { (void)combinations(arange(3), INT64_MAX, true); }), HasSubstr("number more than 2^63"));
}

TEST(LibraryFunctions, PositionalFillsCopiesAndReductions) {
  EXPECT_EQ(values<float>(index_fill(zeros({2, 3}), 1, make<int64_t>({-1, 0}), 5)), (Floats{5, 0, 5, 5, 0, 5}));
  EXPECT_THAT(error_of([] { (void)index_fill(zeros({3}), 0, make<int32_t>({0}), 1); }),
              HasSubstr("index_fill_(): Expected dtype int64 for index."));
  EXPECT_THAT(error_of([] { (void)index_fill(zeros({3}), 0, make<int64_t>({-4}), 1); }), HasSubstr("index -4 is out of bounds"));
  EXPECT_THAT(error_of([] { (void)index_fill(zeros({3}), 0, make<int64_t>({0}), zeros({1})); }),
              HasSubstr("index_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s)."));
  // The value tensor's gradient counts each filled position once, however often it is named.
  const Tensor value = full({}, 2.0).requires_grad_();
  index_fill(zeros({3}), 0, make<int64_t>({1, 1}), value).sum().backward();
  EXPECT_EQ(value.grad().item<float>(), 1.0f);
  EXPECT_EQ(values<float>(index_copy(zeros({3}), 0, make<int64_t>({2, 0}), make<float>({7, 8}))), (Floats{8, 0, 7}));
  EXPECT_THAT(error_of([] { (void)index_copy(zeros({3}), 0, make<int64_t>({-1}), make<float>({7})); }),
              HasSubstr("out of bounds"));  // no negative positions, as PyTorch
  EXPECT_THAT(error_of([] { (void)index_copy(zeros({3, 4}), 1, make<int64_t>({0, 1}), zeros({2, 5})); }),
              HasSubstr("Destination slice shape: 3 at dimension 1 and source slice shape: 2 at dimension 0."));
  // Integer means divide with floor: (-1 - 2 - 2) / 3 = -2.
  const Tensor mean_of = index_reduce(make<int64_t>({-1, 0}), 0, make<int64_t>({0, 0}), make<int64_t>({-2, -2}), "mean");
  EXPECT_EQ(mean_of.to_vector<int64_t>(), (std::vector<int64_t>{-2, 0}));
  EXPECT_THAT(error_of([] { (void)index_reduce(zeros({3}), 0, make<int64_t>({0}), zeros({}), "amax"); }),
              HasSubstr("source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = [3] source.shape = []"));
  EXPECT_THAT(error_of([] { (void)index_reduce(zeros({2}), 0, make<int64_t>({0}), zeros({1}), "sum"); }),
              HasSubstr("index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got sum."));
  EXPECT_EQ(values<float>(take(make<float>({1, 2, 3, 4}, {2, 2}).t(), make<int64_t>({-1, 1}))), (Floats{4, 3}));
  EXPECT_THAT(error_of([] { (void)take(zeros({0}), make<int64_t>({0})); }), HasSubstr("take(): tried to take from an empty tensor"));
  EXPECT_EQ(values<float>(put(zeros({2, 2}), make<int64_t>({-1, 3}), make<float>({1, 2}), true)), (Floats{0, 0, 0, 3}));
  EXPECT_THAT(error_of([] { (void)put(zeros({2}), make<int64_t>({0, 1}), zeros({1})); }),
              HasSubstr("put_(): Expected source and index to have the same number of elements"));
}

TEST(LibraryFunctions, StatisticsAsPyTorchComputesThem) {
  // The rank q (n - 1) is a double: f32 0.1 times 10 is just above 1, so "higher" picks 2.
  EXPECT_EQ(quantile(arange(11, kFloat), 0.1, std::nullopt, false, "higher").item<float>(), 2.0f);
  EXPECT_EQ(quantile(arange(4, kFloat), 0.5, std::nullopt, false, "nearest").item<float>(), 2.0f);  // half to even
  EXPECT_TRUE(std::isnan(quantile(make<float>({1, NAN, 3}), 0.5).item<float>()));
  EXPECT_EQ(nanquantile(make<float>({1, NAN, 3}), 0.5).item<float>(), 2.0f);
  EXPECT_TRUE(std::isnan(nanquantile(make<float>({NAN, NAN}), 0.5).item<float>()));
  EXPECT_THAT(error_of([] { (void)quantile(zeros({2}, kLong), 1.5); }), HasSubstr("quantile() q must be in the range [0, 1] but got 1.5"));
  EXPECT_THAT(error_of([] { (void)quantile(zeros({2}, kHalf), 0.5); }),
              HasSubstr("quantile() input tensor must be either float or double dtype"));
  // A q that is an input of a compiled function is checked where it is read.
  auto f = compile([](const Tensor& x, const Tensor& q) { return quantile(x, q); });
  EXPECT_FLOAT_EQ(f(arange(5, kFloat), full({}, 0.5)).item<float>(), 2.0f);
  EXPECT_THAT(error_of([&] { (void)f(arange(5, kFloat), full({}, 1.5)); }), HasSubstr("out of bounds"));

  EXPECT_THAT(error_of([] { (void)cov(zeros({2, 2, 2})); }),
              HasSubstr("cov(): expected input to have two or fewer dimensions but got an input with 3 dimensions"));
  EXPECT_THAT(error_of([] { (void)cov(zeros({3}), 1, make<int64_t>({1, -1, 1})); }), HasSubstr("cov(): fweights cannot be negative"));
  EXPECT_THAT(error_of([] { (void)cov(zeros({2}), 1, std::nullopt, make<float>({0, 0})); }),
              HasSubstr("cov(): weights sum to zero, can't be normalized"));
  EXPECT_EQ(cov(make<int64_t>({1, 2, 3})).dtype(), kFloat);
  EXPECT_FLOAT_EQ(cov(make<float>({1, 2, 3})).item<float>(), 1.0f);
  // Weights that are inputs of a compiled function are checked eagerly (the function runs eagerly).
  auto g = compile([](const Tensor& x, const Tensor& w) { return cov(x, 1, std::nullopt, w); });
  const Tensor x = make<float>({1, 2, 4, 7}), w = make<float>({1, 2, 1, 0.5});
  EXPECT_TRUE(allclose(g(x, w), cov(x, 1, std::nullopt, w)));
  const Tensor r = corrcoef(make<float>({1, 2, 3, 2, 2, 2, 3, 2, 1}, {3, 3}));
  EXPECT_EQ(values<float>(r)[2], -1.0f);
  EXPECT_TRUE(std::isnan(values<float>(r)[1]));  // a constant row: 0 / 0

  EXPECT_EQ(values<float>(histc(make<float>({0, 1, 2, 3, 3, -1, NAN}), 3, 0, 3)), (Floats{1, 1, 3}));  // 3 itself in the last bin
  EXPECT_EQ(values<float>(histc(make<float>({2, 2, 2}), 4)), (Floats{0, 0, 3, 0}));  // range [1, 3]
  EXPECT_THAT(error_of([] { (void)histc(make<float>({1, INFINITY}), 2); }), HasSubstr("torch.histc: range of [1, inf] is not finite"));
  EXPECT_THAT(error_of([] { (void)histc(arange(3), 2, 0, 1); }), HasSubstr("\"histogram_cpu\" not implemented for 'Long'"));
  EXPECT_EQ(bincount(make<int64_t>({1, 3, 1})).to_vector<int64_t>(), (std::vector<int64_t>{0, 2, 0, 1}));
  EXPECT_EQ(bincount(make<int64_t>({0}), make<float>({0.5})).dtype(), kFloat);
  EXPECT_EQ(bincount(make<int64_t>({0}), zeros({1}, kHalf)).dtype(), kDouble);
  EXPECT_EQ(bincount(zeros({0}, kLong), zeros({3}), 2).dtype(), kLong);  // empty: int64 zeros, the weights unread
  EXPECT_THAT(error_of([] { (void)bincount(make<int64_t>({1, -1})); }), HasSubstr("bincount only supports 1-d non-negative integral inputs."));

  EXPECT_FLOAT_EQ(trapezoid(make<float>({1, 2, 4}), make<float>({0, 1, 3})).item<float>(), 7.5f);
  EXPECT_EQ(trapezoid(zeros({2, 0}, kLong)).dtype(), kLong);  // no samples: zeros of y's dtype
  EXPECT_EQ(values<float>(cumulative_trapezoid(make<float>({1, 2, 4}), 2)), (Floats{3, 9}));
  EXPECT_THAT(error_of([] { (void)renorm(zeros({2, 2}), 0, 0, 1); }), HasSubstr("renorm: non-positive-norm not supported"));
  EXPECT_TRUE(allclose(renorm(make<float>({3, 4, 0.3f, 0.4f}, {2, 2}), 2, 0, 1), make<float>({0.6f, 0.8f, 0.3f, 0.4f}, {2, 2})));
  EXPECT_EQ(logspace(0, 2, 5, 10, kLong).to_vector<int64_t>(), (std::vector<int64_t>{1, 3, 10, 31, 100}));
  EXPECT_EQ(logspace(0, 3, 7, 2, kLong).to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 2, 2, 4, 5, 8}));
  EXPECT_EQ(ldexp(zeros({2}, kHalf), make<int64_t>({1, 2})).dtype(), kHalf);
  EXPECT_EQ(values<float>(ldexp(make<int64_t>({3}), make<int64_t>({2}))), (Floats{12}));
  // A floating self scales exactly: 2^-10 * 2^20 is 1024 in f16, although 2^20 is not an f16.
  EXPECT_EQ(values<float>(ldexp(make<float>({0x1p-10f, 0, 1e4f}).to(kHalf), make<int64_t>({20, 30, -30})).to(kFloat)),
            (Floats{1024, 0, static_cast<float>(Half(1e4f * 0x1p-30f))}));
  EXPECT_EQ(ldexp(full({}, 0x1p-100, kDouble), full({}, int64_t{1100})).item<double>(), 0x1p1000);
  EXPECT_EQ(ldexp(full({}, 0x1p-100), full({}, int64_t{200})).item<float>(), 0x1p100f);
  // logspace takes the base as a double and the range in double for integers (int8: no wrap).
  EXPECT_EQ(logspace(190, 200, 2, 1.1, kLong).to_vector<int64_t>(), (std::vector<int64_t>{73216704, 189905276}));
  EXPECT_EQ(logspace(-100, 100, 3, 1.01, kChar).to_vector<int8_t>(), (std::vector<int8_t>{0, 1, 2}));
  auto spaced = compile([](const Tensor& t) { return t + logspace(0, 1, 3); });
  (void)spaced(zeros({3}));
  EXPECT_EQ(spaced.stats().compiles, 1);  // traced and compiled, not run eagerly
  // An f16 position past 65504 counts in bin 0, as PyTorch's does.
  EXPECT_EQ(values<float>(histc(make<float>({1000, 700, 656}).to(kHalf), 100, 0, 1000).narrow(0, 0, 1).to(kFloat)), (Floats{3}));
}

TEST(LibraryMethods, InPlaceAndNewTensors) {
  Tensor x = make<float>({-1, 4});
  x.relu_().sqrt_();
  EXPECT_EQ(values<float>(x), (Floats{0, 2}));
  x.clamp_(0.5, 1.5).pow_(2);
  EXPECT_EQ(values<float>(x), (Floats{0.25, 2.25}));
  x.masked_fill_(make<bool>({true, false}), 7);
  EXPECT_EQ(values<float>(x), (Floats{7, 2.25}));
  Tensor i = arange(3);
  EXPECT_THAT(error_of([&] { i.sqrt_(); }), HasSubstr("result type Float can't be cast to the desired output type Long"));
  const Tensor h = zeros({2}, kHalf);
  EXPECT_EQ(h.new_zeros({3}).dtype(), kHalf);
  EXPECT_EQ(h.new_full({2, 2}, 1.5, kDouble).dtype(), kDouble);
  EXPECT_EQ(h.new_ones({1}).item<float>(), 1.0f);
  EXPECT_EQ(arange(3).type_as(h).dtype(), kHalf);
  EXPECT_EQ(values<float>(make<float>({1, 2}).where(make<bool>({true, false}), 0)), (Floats{1, 0}));
  auto [values_sorted, order] = make<float>({3, 1, 2}).sort();
  EXPECT_EQ(order.to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 0}));
  EXPECT_EQ(std::get<1>(make<float>({3, 1, 2}).max(0)).item<int64_t>(), 0);
}

TEST(LibraryMethods, PositionalAndStatisticalMethods) {
  Tensor x = zeros({2, 3});
  x.index_fill_(1, make<int64_t>({0}), 1).index_copy_(0, make<int64_t>({1}), full({1, 3}, 2.0));
  x.put_(make<int64_t>({2}), make<float>({3}), true).index_reduce_(1, make<int64_t>({2}), full({2, 1}, 4.0), "amax");
  EXPECT_EQ(values<float>(x), (Floats{1, 0, 4, 2, 2, 4}));
  EXPECT_EQ(values<float>(x.take(make<int64_t>({5}))), (Floats{4}));
  EXPECT_EQ(values<float>(x.index_fill(0, make<int64_t>({0}), 9).put(make<int64_t>({0}), make<float>({8}))),
            (Floats{8, 9, 9, 2, 2, 4}));
  EXPECT_TRUE(equal(x.narrow(1, 0, 2).matrix_power(0), eye(2)));
  EXPECT_THAT(error_of([&] { (void)x.matrix_power(2); }), HasSubstr("square"));
  EXPECT_EQ(x.diagflat().size(0), 6);
  EXPECT_EQ(x.quantile(0.5, 1).sizes().vec(), (std::vector<int64_t>{2}));
  EXPECT_EQ(x.nanquantile(make<float>({0.5, 1}), 0, true).sizes().vec(), (std::vector<int64_t>{2, 1, 3}));
  EXPECT_EQ(x.cov().sizes().vec(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(x.corrcoef().sizes().vec(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values<float>(x.histc(2, 0, 4)), (Floats{2, 4}));
  EXPECT_EQ(make<int64_t>({2}).bincount().to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(make<float>({1, 0, 0}).cross(make<float>({0, 1, 0})).to_vector<float>(), (Floats{0, 0, 1}));
  Tensor m = ones({2, 2});
  m.addbmm_(ones({3, 2, 1}), ones({3, 1, 2}), 1, 2).renorm_(1, 0, 4).ldexp_(full({}, 1.0));
  EXPECT_TRUE(allclose(m, full({2, 2}, 4.0)));  // 7 each: rows of norm 14 scaled to norm 4, then doubled
  Tensor i = arange(2);
  EXPECT_THAT(error_of([&] { i.ldexp_(arange(2)); }), HasSubstr("can't be cast to the desired output type Long"));
}

}  // namespace
}  // namespace kiln
