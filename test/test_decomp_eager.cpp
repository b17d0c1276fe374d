// kiln/test/test_decomp_eager.cpp — composite ops run eagerly (through their decompositions)
// against hand-computed values, and their argument errors in PyTorch's wording.
//
// Expected values were computed in double precision from the definitions (Python's math
// module: exp, log, erf, tanh) and agree with PyTorch's documented results (gelu(1) =
// 0.8413447..., tanh approximation 0.8411920...). f64 inputs are compared to 1e-12 relative,
// f32 inputs to 1e-6, f16 results to their rounding (2^-10 relative).
#include "kiln/kiln.h"
#include "runtime/eager/eager.h"
#include "test_support/check.h"
#include "test_support/make.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kiln {
namespace {

using test::Doubles;
using test::error_of;
using test::expect_close;
using test::mk;
using test::sizes_of;

TEST(DecompEager, SoftmaxRowsSumToOneAndMatchHandValues) {
  Tensor x = mk<double>({1, 2, 3, 1, 2, 3}, {2, 3});
  Tensor y = softmax(x, -1);
  EXPECT_EQ(y.dtype(), kDouble);
  EXPECT_EQ(sizes_of(y), (test::Ints{2, 3}));
  const Doubles row = {0.09003057317038046, 0.24472847105479764, 0.6652409557748218};
  expect_close(y, {row[0], row[1], row[2], row[0], row[1], row[2]}, 1e-12);
  expect_close(y.sum({1}), {1.0, 1.0}, 1e-15);
  // Along dim 0 the two equal rows split evenly.
  expect_close(x.softmax(0), {0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, 0);
  // Large inputs do not overflow: the row maximum is subtracted first.
  expect_close(softmax(mk<float>({1000, 1001, 1002}), 0), {row[0], row[1], row[2]}, 1e-6);
}

TEST(DecompEager, SoftmaxDtypeAndLowPrecision) {
  Tensor x = mk<int64_t>({1, 2, 3});
  Tensor y = softmax(x, 0, kDouble);  // dtype casts the input first
  EXPECT_EQ(y.dtype(), kDouble);
  expect_close(y, {0.09003057317038046, 0.24472847105479764, 0.6652409557748218}, 1e-12);
  Tensor h = softmax(mk<Half>({1, 2, 3}), 0);
  EXPECT_EQ(h.dtype(), kHalf);
  expect_close(h, {0.09003057317038046, 0.24472847105479764, 0.6652409557748218}, 1.0 / 1024);
  // A 0-dim input is its own row: softmax 1, log_softmax 0.
  test::expect_exact(softmax(mk<float>({4}, {}), 0), kFloat, {1.0});
  // An empty dim gives an empty result.
  EXPECT_EQ(sizes_of(softmax(mk<float>({}, {2, 0}), 1)), (test::Ints{2, 0}));
}

TEST(DecompEager, LogSoftmax) {
  Tensor y = log_softmax(mk<double>({1, 2, 3}), 0);
  expect_close(y, {-2.40760596444438, -1.4076059644443804, -0.40760596444438046}, 1e-12);
  test::expect_exact(mk<float>({7}, {}).log_softmax(0), kFloat, {0.0});
}

TEST(DecompEager, LayerNormOfAKnownVector) {
  Tensor x = mk<double>({1, 2, 3, 4});
  const Doubles plain = {-1.3416354199689269, -0.447211806656309, 0.447211806656309, 1.3416354199689269};
  expect_close(layer_norm(x, {4}), plain, 1e-12);
  Tensor w = mk<double>({1, 2, 1, 2}), b = mk<double>({0, 0, 1, 1});
  expect_close(layer_norm(x, {4}, w, b), {-1.3416354199689269, -0.894423613312618, 1.447211806656309, 3.6832708399378538},
               1e-12);
  expect_close(layer_norm(x, {4}, std::nullopt, b),
               {-1.3416354199689269, -0.447211806656309, 1.447211806656309, 2.341635419968927}, 1e-12);
  expect_close(layer_norm(x, {4}, w), {plain[0], 2 * plain[1], plain[2], 2 * plain[3]}, 1e-12);
  // Two rows normalized independently over a 2-D normalized_shape.
  Tensor x2 = mk<float>({1, 2, 3, 4, 10, 20, 30, 40}, {2, 2, 2});
  Tensor y2 = layer_norm(x2, {2, 2});
  expect_close(y2.select(0, 0).flatten(), plain, 1e-5);
  expect_close(y2.select(0, 1).flatten(), plain, 1e-5);
  // f16 input: computed in f32, result f16.
  Tensor h = layer_norm(mk<Half>({1, 2, 3, 4}), {4});
  EXPECT_EQ(h.dtype(), kHalf);
  expect_close(h, plain, 1.0 / 1024);
}

// f32 norms take their statistics in one f64 pass over data shifted by the slice's first
// element (decomp::moments). Rows far from zero (mean 1e6, spread 1: the textbook
// E[x^2] - E[x]^2 in f64 loses most digits there, and centering on the f32-rounded mean, off by
// up to 1/32, biased the variance by ~1e-3) keep mean and rstd within f32 rounding of the f64
// two-pass statistics of the same f32 values, eagerly and compiled, for var and batch_norm too.
TEST(DecompEager, NormStatisticsOfRowsFarFromZero) {
  Tensor x = randn({4, 1024}) + 1e6;
  ASSERT_EQ(x.dtype(), kFloat32);
  Tensor x64 = x.to(kFloat64);
  Tensor mean64 = x64.mean({1}, /*keepdim=*/true);
  Tensor var64 = ((x64 - mean64) * (x64 - mean64)).mean({1}, /*keepdim=*/true);
  const std::vector<double> want_mean = mean64.flatten().to_vector<double>();
  const std::vector<double> want_rstd = rsqrt(var64 + 1e-5).flatten().to_vector<double>();
  auto f = [](const Tensor& t) { return native_layer_norm(t, {1024}, std::nullopt, std::nullopt, 1e-5); };
  for (bool compiled : {false, true}) {
    auto [out, mean, rstd] = compiled ? compile(f)(x) : f(x);
    const std::vector<double> got_mean = mean.to(kFloat64).flatten().to_vector<double>();
    const std::vector<double> got_rstd = rstd.to(kFloat64).flatten().to_vector<double>();
    for (size_t r = 0; r < 4; ++r) {
      EXPECT_NEAR(got_mean[r], want_mean[r], 1e6 * 6e-8) << "row " << r << (compiled ? " compiled" : " eager");
      EXPECT_NEAR(got_rstd[r], want_rstd[r], 1e-6 * want_rstd[r]) << "row " << r << (compiled ? " compiled" : " eager");
    }
  }
  // var and std (unbiased) take the same statistics.
  const std::vector<double> want_var =
      (((x64 - mean64) * (x64 - mean64)).sum({1}) / 1023.0).to_vector<double>();
  for (bool compiled : {false, true}) {
    auto g = [](const Tensor& t) { return t.var({1}); };
    const std::vector<double> got = (compiled ? compile(g)(x) : g(x)).to(kFloat64).to_vector<double>();
    for (size_t r = 0; r < 4; ++r)
      EXPECT_NEAR(got[r], want_var[r], 1e-6 * want_var[r]) << "var row " << r << (compiled ? " compiled" : " eager");
  }
  // batch_norm in training mode: each channel's statistics over [N, H, W].
  Tensor y = randn({2, 3, 16, 16}) + 1e6;
  Tensor y64 = y.to(kFloat64);
  Tensor ym = y64.mean({0, 2, 3});
  Tensor yv = ((y64 - ym.view({1, 3, 1, 1})) * (y64 - ym.view({1, 3, 1, 1}))).mean({0, 2, 3});
  auto [out, save_mean, save_invstd] =
      native_batch_norm(y, std::nullopt, std::nullopt, std::nullopt, std::nullopt, /*training=*/true, 0.1, 1e-5);
  const std::vector<double> bm = save_mean.to(kFloat64).to_vector<double>(), wm = ym.to_vector<double>();
  const std::vector<double> bi = save_invstd.to(kFloat64).to_vector<double>(),
                            wi = rsqrt(yv + 1e-5).to_vector<double>();
  for (size_t c = 0; c < 3; ++c) {
    EXPECT_NEAR(bm[c], wm[c], 1e6 * 6e-8) << "channel " << c;
    EXPECT_NEAR(bi[c], wi[c], 1e-6 * wi[c]) << "channel " << c;
  }
}

TEST(DecompEager, RmsNorm) {
  Tensor x = mk<float>({1, 2, 3, 4});
  expect_close(rms_norm(x, {4}), {0.3651483687681722, 0.7302967375363444, 1.0954451063045167, 1.4605934750726888},
               1e-6);
  expect_close(rms_norm(x, {4}, mk<float>({1, 2, 1, 2})),
               {0.3651483687681722, 1.4605934750726888, 1.0954451063045167, 2.9211869501453775}, 1e-6);
  // eps matters for a zero vector: 0 / sqrt(0 + eps) = 0, never NaN.
  test::expect_exact(rms_norm(mk<float>({0, 0}), {2}), kFloat, {0.0, 0.0});
  // An explicit eps: x / sqrt(mean(x^2) + 1) for x = [1, 1] is 1/sqrt(2).
  expect_close(rms_norm(mk<double>({1, 1}), {2}, std::nullopt, 1.0), {M_SQRT1_2, M_SQRT1_2}, 1e-15);
}

TEST(DecompEager, GeluExactAndTanhAtKnownPoints) {
  Tensor x = mk<double>({-3, -1, -0.5, 0, 0.5, 1, 2});
  expect_close(gelu(x), {-0.00404969409489031, -0.15865525393145707, -0.15426876936299344, 0.0, 0.34573123063700656,
                         0.8413447460685429, 1.9544997361036416},
               1e-12);
  expect_close(gelu(x, "tanh"), {-0.0036373920817729943, -0.15880800939172324, -0.15428599017485606, 0.0,
                                 0.34571400982514394, 0.8411919906082768, 1.954597694087775},
               1e-12);
  Tensor b = gelu(mk<BFloat16>({1}));
  EXPECT_EQ(b.dtype(), kBFloat16);
  expect_close(b, {0.8413447460685429}, 1.0 / 128);
}

TEST(DecompEager, SiluAndRelu) {
  Tensor x = mk<double>({-3, -1, -0.5, 0, 0.5, 1, 2});
  expect_close(silu(x), {-0.14227761953270035, -0.2689414213699951, -0.1887703343990727, 0.0, 0.3112296656009273,
                         0.7310585786300049, 1.7615941559557646},
               1e-12);
  test::expect_exact(relu(mk<float>({-2, -0.0, 0, 3, test::kNaN})), kFloat, {0, -0.0, 0, 3, test::kNaN});
  test::expect_exact(relu(mk<int32_t>({-2, 5})), kInt, {0, 5});
}

TEST(DecompEager, MeanAndVarWithCorrection) {
  Tensor x = mk<double>({1, 2, 3, 4});
  test::expect_exact(x.mean(), kDouble, {2.5});
  expect_close(var(x), {1.6666666666666667}, 1e-15);               // correction 1
  test::expect_exact(var(x, false), kDouble, {1.25});              // correction 0
  test::expect_exact(var(x, {0}, Scalar(int64_t{0})), kDouble, {1.25});
  expect_close(var(x, {0}, Scalar(2.5)), {5.0 / 1.5}, 1e-15);      // fractional correction
  Tensor m = mk<float>({1, 2, 3, 4, 6, 8}, {2, 3});
  Tensor v = m.var({1}, std::nullopt, /*keepdim=*/true);
  EXPECT_EQ(sizes_of(v), (test::Ints{2, 1}));
  test::expect_exact(v, kFloat, {1.0, 4.0});
  test::expect_exact(m.var({0}, Scalar(int64_t{0})), kFloat, {2.25, 4.0, 6.25});
  // A single element with correction 1 divides 0 by 0.
  EXPECT_TRUE(std::isnan(var(mk<float>({3})).item<float>()));
  // mean of f16 sums in f32: 2048 + 1 + 1 = 2050 exactly (an f16 sum would stay at 2048), and
  // 2050 / 3 = 683.33 rounds to the f16 683.5 (682.5 from an f16 sum).
  test::expect_exact(mk<Half>({2048, 1, 1}).mean(), kHalf, {683.5});
}

TEST(DecompEager, LinearWithAndWithoutBias) {
  Tensor x = mk<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor w = mk<float>({1, 0, 1, 0, 1, 0}, {2, 3});
  test::expect_exact(linear(x, w), kFloat, {4, 2, 10, 5});
  test::expect_exact(linear(x, w, mk<float>({10, 20})), kFloat, {14, 22, 20, 25});
  // 1-D input and batched input.
  test::expect_exact(linear(mk<float>({1, 2, 3}), w), kFloat, {4, 2});
  Tensor y = linear(x.reshape({2, 1, 3}), w);
  EXPECT_EQ(sizes_of(y), (test::Ints{2, 1, 2}));
}

TEST(DecompEager, CrossEntropyAgainstHandComputation) {
  Tensor x = mk<double>({1.0, 2.0, 0.5, 0.1, 0.2, 3.0, 2.0, -1.0, 0.0, 0.3, 0.3, 0.3}, {4, 3});
  Tensor t = test::make<int64_t>({1, 2, -100, 0});
  expect_close(cross_entropy(x, t, std::nullopt, "none"), {0.4643687841079449, 0.10960146452146542, 0.0, 1.0986122886681098},
               1e-12);
  expect_close(cross_entropy(x, t, std::nullopt, "sum"), {1.67258253729752}, 1e-12);
  expect_close(cross_entropy(x, t), {0.5575275124325066}, 1e-12);  // mean over the 3 counted targets
  Tensor w = mk<double>({0.2, 1.0, 3.0});
  expect_close(cross_entropy(x, t, w, "none"), {0.4643687841079449, 0.3288043935643963, 0.0, 0.21972245773362198},
               1e-12);
  expect_close(cross_entropy(x, t, w), {0.2411656274776103}, 1e-12);
  expect_close(cross_entropy(x, t, std::nullopt, "mean", -100, 0.1), {0.6486386235436178}, 1e-12);
  expect_close(cross_entropy(x, t, std::nullopt, "none", -100, 0.1),
               {0.5477021174412783, 0.2996014645214654, 0.0, 1.0986122886681098}, 1e-12);
  expect_close(cross_entropy(x, t, w, "mean", -100, 0.1), {0.3369288001000841}, 1e-12);
  // ignore_index chosen to drop class 2 instead.
  Tensor t2 = test::make<int64_t>({1, 2, 0, 0});
  Tensor l2 = cross_entropy(x, t2, std::nullopt, "none", 2);
  EXPECT_EQ(test::doubles(l2)[1], 0.0);
  // Unbatched logits [C] with a 0-dim target.
  Tensor x1 = mk<double>({1.0, 2.0, 0.5});
  Tensor l1 = cross_entropy(x1, test::make<int64_t>({1}, {}));
  EXPECT_EQ(l1.dim(), 0);
  expect_close(l1, {0.4643687841079449}, 1e-12);
  // Every target ignored: the mean divides 0 by 0.
  EXPECT_TRUE(std::isnan(cross_entropy(x, test::make<int64_t>({-100, -100, -100, -100})).item<double>()));
}

TEST(DecompEager, MatmulRankCases) {
  Tensor v = mk<float>({1, 2, 3}), u = mk<float>({4, 5, 6});
  Tensor dot = matmul(v, u);
  EXPECT_EQ(dot.dim(), 0);
  test::expect_exact(dot, kFloat, {32});
  Tensor m = mk<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  test::expect_exact(matmul(m, v), kFloat, {14, 32});                 // 2-D . 1-D
  test::expect_exact(matmul(mk<float>({1, 1}), m), kFloat, {5, 7, 9});  // 1-D . 2-D
  Tensor b = mk<float>({1, 0, 0, 1, 2, 0, 0, 2}, {2, 2, 2});         // [I, 2I]
  Tensor r = matmul(b, mk<float>({1, 2, 3, 4}, {2, 2}));             // batched . 2-D broadcast
  EXPECT_EQ(sizes_of(r), (test::Ints{2, 2, 2}));
  test::expect_exact(r, kFloat, {1, 2, 3, 4, 2, 4, 6, 8});
  Tensor r2 = matmul(mk<float>({1, 1}), b);  // 1-D . batched: [2, 2]
  test::expect_exact(r2, kFloat, {1, 1, 2, 2});
  Tensor r3 = matmul(b.reshape({2, 1, 2, 2}), b);  // batch dims [2, 1] and [2] broadcast to [2, 2]
  EXPECT_EQ(sizes_of(r3), (test::Ints{2, 2, 2, 2}));
  test::expect_exact(r3.select(0, 1).select(0, 1), kFloat, {4, 0, 0, 4});
}

TEST(DecompEager, ErrorsNameTheCompositeWithPyTorchWording) {
  Tensor x = mk<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(error_of([&] { layer_norm(x, {2}); }),
            "[layer_norm] Given normalized_shape=[2], expected input with shape [*, 2], but got input of size[2, 3]");
  EXPECT_EQ(error_of([&] { layer_norm(x, {3}, mk<float>({1, 1})); }),
            "[layer_norm] Expected weight to be of same shape as normalized_shape, but got weight of shape [2] and "
            "normalized_shape = [3]");
  EXPECT_EQ(error_of([&] { layer_norm(x, {}); }),
            "[layer_norm] Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
            "element, but got normalized_shape = []");
  EXPECT_EQ(error_of([&] { rms_norm(x, {2, 3}, mk<float>({1, 1, 1})); }),
            "[rms_norm] Expected weight to be of same shape as normalized_shape, but got weight of shape [3] and "
            "normalized_shape = [2, 3]");
  EXPECT_EQ(error_of([&] { gelu(x, "fast"); }), "[gelu] approximate argument must be either none or tanh.");
  EXPECT_EQ(error_of([&] { softmax(mk<int64_t>({1, 2}), 0); }),
            "[softmax] \"softmax_lastdim_kernel_impl\" not implemented for 'Long'");
  EXPECT_EQ(error_of([&] { var(mk<int32_t>({1, 2})); }), "[var] std and var only support floating point and complex dtypes");
  EXPECT_EQ(error_of([&] { relu(mk<bool>({1, 0})); }), "[relu] Boolean inputs not supported for relu");
  EXPECT_EQ(error_of([&] { linear(x, mk<float>({1, 2, 3, 4}, {2, 2})); }),
            "[linear] mat1 and mat2 shapes cannot be multiplied (2x3 and 2x2)");
  Tensor t = test::make<int64_t>({0, 1});
  EXPECT_EQ(error_of([&] { cross_entropy(x, t.to(kInt)); }), "[cross_entropy] expected scalar type Long but found Int");
  EXPECT_EQ(error_of([&] { cross_entropy(x, test::make<int64_t>({0, 1, 2})); }),
            "[cross_entropy] Expected input batch_size (2) to match target batch_size (3).");
  EXPECT_EQ(error_of([&] { cross_entropy(x, test::make<int64_t>({0, 1, 2, 0}, {2, 2})); }),
            "[cross_entropy] 0D or 1D target tensor expected, multi-target not supported");
  EXPECT_EQ(error_of([&] { cross_entropy(x, t, mk<float>({1, 1})); }),
            "[cross_entropy] weight tensor should be defined either for all 3 classes or no classes but got weight "
            "tensor of shape: [2]");
  EXPECT_EQ(error_of([&] { cross_entropy(x, t, std::nullopt, "avg"); }),
            "[cross_entropy] avg is not a valid value for reduction");
  EXPECT_EQ(error_of([&] { matmul(mk<float>({1, 2}), mk<float>({1, 2, 3}, {3, 1})); }),
            "[matmul] shapes [2] and [3, 1] cannot be multiplied");
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// From its second call on, an eager composite op runs as one compiled program
// (runtime/eager/eager_composite.cpp), whose results agree with its decomposition, for every size
// (one program serves them: Dynamic::True).
TEST(EagerComposite, SoftmaxRunsAsOneCompiledProgramAfterItsFirstCall) {
  const Tensor x = randn({6, 37});
  const rt::EagerStats before = rt::eager_stats();
  const Tensor first = softmax(x, -1);   // the decomposition (it returns no view: checked)
  const Tensor second = softmax(x, -1);  // compiled now
  const Tensor other = softmax(randn({11, 5}), -1);
  const rt::EagerStats after = rt::eager_stats();
  EXPECT_EQ(after.composite_programs - before.composite_programs, 2);
  EXPECT_TRUE(allclose(second, first, 1e-6, 1e-7));
  EXPECT_TRUE(allclose(other.sum(-1), ones({11}), 1e-6, 1e-6));
  // Bad input still raises the op's own error, from the decomposition.
  EXPECT_NE(error_of([&] { softmax(x, 5); }).find("softmax"), std::string::npos);
}

// A user's lowering that runs its own op eagerly does not recurse: eager composites compile
// without users' lowerings (test_extend_lowering.cpp registers one for gelu on cpu).
TEST(EagerComposite, LayerNormAndGeluAgreeWithTheirDecompositions) {
  const Tensor x = randn({4, 64}), w = randn({64}), b = randn({64});
  for (int call = 0; call < 3; ++call) {
    const Tensor ln = layer_norm(x, {64}, w, b);
    const Tensor mean = x.mean({1}, true);
    const Tensor var = ((x - mean) * (x - mean)).mean({1}, true);
    EXPECT_TRUE(allclose(ln, (x - mean) / sqrt(var + 1e-5) * w + b, 1e-5, 1e-5)) << "call " << call;
    EXPECT_TRUE(allclose(gelu(x), x * 0.5 * (erf(x / std::sqrt(2.0)) + 1), 1e-6, 1e-6)) << "call " << call;
  }
}

// lerp with a scalar weight reaches the op as a stride-0 expanded tensor, whose sizes stay
// static while the other operands' become symbols. The node's type and its decomposition's must
// agree ([s0, s1] against [2, 3] was an InternalError that left lerp to its decomposition).
TEST(EagerComposite, LerpWithAnExpandedScalarWeightRunsAsAProgram) {
  const Tensor a = randn({2, 3}), b = randn({2, 3});
  const Tensor w = full({2, 3}, 0.25);
  const Tensor first = lerp(a, b, 0.25);
  const rt::EagerStats before = rt::eager_stats();
  const Tensor second = lerp(a, b, 0.25);
  const Tensor third = addcmul(a, b, full({}, 2.0).expand({2, 3}));
  const Tensor fourth = addcmul(a, b, full({}, 2.0).expand({2, 3}));
  const rt::EagerStats after = rt::eager_stats();
  EXPECT_EQ(after.composite_programs - before.composite_programs, 2);
  EXPECT_TRUE(allclose(first, a + (b - a) * w, 1e-6, 1e-6));
  EXPECT_TRUE(allclose(second, first, 0, 0));
  EXPECT_TRUE(allclose(third, a + b * 2.0, 1e-6, 1e-6));
  EXPECT_TRUE(allclose(fourth, third, 0, 0));
}

// An op whose result is empty by its nature still compiles: evaluation-mode batch norm returns
// empty statistics, and an empty result once kept the op from ever being judged, so each call
// ran its decomposition op by op (eight times slower on [1, 64, 56, 56]). The empty-input case
// stays unjudged until a call with elements.
TEST(EagerComposite, EvaluationBatchNormRunsAsAProgramDespiteItsEmptyStatistics) {
  NoGradGuard no_grad;
  const Tensor x = randn({2, 3, 4, 5}), mean = randn({3}), var = rand({3}) + 0.5, w = randn({3}), b = randn({3});
  const Tensor want = (x - mean.reshape({3, 1, 1})) / sqrt(var.reshape({3, 1, 1}) + 1e-5) * w.reshape({3, 1, 1}) +
                      b.reshape({3, 1, 1});
  (void)batch_norm(randn({0, 3, 4, 5}), w, b, mean, var, false, 0.1, 1e-5);  // empty input: tells nothing
  const Tensor first = batch_norm(x, w, b, mean, var, false, 0.1, 1e-5);  // judged: returns no view
  const rt::EagerStats before = rt::eager_stats();
  const Tensor second = batch_norm(x, w, b, mean, var, false, 0.1, 1e-5);
  const Tensor other = batch_norm(randn({5, 3, 7, 2}), w, b, mean, var, false, 0.1, 1e-5);
  const rt::EagerStats after = rt::eager_stats();
  EXPECT_EQ(after.composite_programs - before.composite_programs, 2);
  EXPECT_EQ(after.composite_decomposed - before.composite_decomposed, 0);
  EXPECT_TRUE(allclose(first, want, 1e-5, 1e-6));
  EXPECT_TRUE(allclose(second, want, 1e-5, 1e-6));
  EXPECT_EQ(other.sizes().vec(), (std::vector<int64_t>{5, 3, 7, 2}));
}

}  // namespace
}  // namespace kiln
