// kiln/test/test_compile_matmul.cpp — matrix products of integers as generated kernels.
//
// BLAS has no integer GEMM, so the cpu computes an integer mm or bmm as a Matmul group: a
// kernel over the result whose reduce stage sums the k products of each element, scheduled
// as an outer reduction (k walked outside a tile of columns). Operands that are views (a
// transpose, a slice) are read in place. The cuda backend does the same
// for integers and f64 (test_cuda_backend.cpp). Results equal eager mode (the library loop)
// exactly, wrapping around as it does; a bool product is the frontend's error.
#include "kiln/kiln.h"
#include "runtime/config.h"
#include "runtime/eager/eager.h"
#include "runtime/pipeline.h"
#include "test_support/check.h"
#include "test_support/interp.h"
#include "test_support/plan.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace kiln {
namespace {

using test::plan_of;
std::vector<Tensor> products(const Tensor& a, const Tensor& w, const Tensor& ba, const Tensor& bw) {
  return {mm(a, w), mm(w.t(), a.t()), bmm(ba, bw), matmul(ba, bw.transpose(1, 2).contiguous().transpose(1, 2)),
          mm(a * 3 - 1, w)};
}

TEST(CompileMatmul, IntegerProductsEqualEagerInKernels) {
  manual_seed(4);
  for (ScalarType dt : {kInt32, kInt64, kInt16, kInt8, kUInt8}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    const int64_t low = dt == kUInt8 ? 0 : -20;
    const Tensor a = randint(low, 20, {5, 7}).to(dt), w = randint(low, 20, {7, 70}).to(dt);
    const Tensor ba = randint(low, 20, {3, 4, 9}).to(dt), bw = randint(low, 20, {3, 9, 6}).to(dt);
    auto f = compile([](const Tensor& p, const Tensor& q, const Tensor& r, const Tensor& s) { return products(p, q, r, s); });
    const std::vector<Tensor> want = products(a, w, ba, bw), got = f(a, w, ba, bw);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      SCOPED_TRACE(i);
      EXPECT_EQ(got[i].dtype(), dt);
      EXPECT_EQ(got[i].sizes().vec(), want[i].sizes().vec());
      EXPECT_EQ(got[i].to(kInt64).to_vector<int64_t>(), want[i].to(kInt64).to_vector<int64_t>());
    }
  }
  // Known values.
  auto g = compile([](const Tensor& p, const Tensor& q) { return mm(p, q); });
  EXPECT_EQ(g(tensor({1, 2, 3, 4}, kInt32).reshape({2, 2}), tensor({5, 6, 7, 8}, kInt32).reshape({2, 2})).to_vector<int32_t>(),
            (std::vector<int32_t>{19, 22, 43, 50}));
}

TEST(CompileMatmul, IntegerProductsAreOneKernelEachAndFloatsNameTheirLibrary) {
  const Tensor a = randint(-5, 5, {6, 8}), w = randint(-5, 5, {8, 3});
  const ir::ExecPlan plan = plan_of([](const std::vector<Tensor>& in) { return std::vector<Tensor>{mm(in[0], in[1])}; }, {a, w});
  ASSERT_EQ(plan.steps.size(), 1u) << plan.str();
  EXPECT_EQ(plan.steps[0].kind, ir::StepKind::Kernel);
  EXPECT_TRUE(plan.steps[0].kernel.schedule.outer_reduction) << plan.str();
  EXPECT_NE(plan.str().find("reduce sum [r0 < 8]"), std::string::npos) << plan.str();
  // Views of the operands are read in place: still one kernel.
  const ir::ExecPlan views = plan_of([](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{mm(in[1].t(), in[0].t().narrow(1, 2, 3))};
  }, {a, w});
  ASSERT_EQ(views.steps.size(), 1u) << views.str();
  EXPECT_EQ(views.steps[0].kind, ir::StepKind::Kernel);
  const ir::ExecPlan f64 = plan_of([](const std::vector<Tensor>& in) { return std::vector<Tensor>{mm(in[0], in[1])}; },
                                   {a.to(kDouble), w.to(kDouble)});
  ASSERT_EQ(f64.steps.size(), 1u) << f64.str();
  EXPECT_EQ(f64.steps[0].kind, ir::StepKind::Extern) << f64.str();
  // Each floating product names its library (runtime/cpu/parallel_gemm.h gemm_library): f64 on
  // OpenBLAS; f32, f16 and bf16 (computed in f32) on OpenBLAS up to 64^3 multiply-adds and on
  // oneDNN's SGEMM past that (kiln's own with KILN_SGEMM=kiln: KilnSgemmChoosesTheLibrary).
  EXPECT_EQ(f64.steps[0].lowering, "openblas") << f64.str();
  const Tensor big_a = randn({64, 80}), big_w = randn({80, 72});  // 368640 multiply-adds
  for (ScalarType dt : {kFloat, kHalf, kBFloat16}) {
    for (const auto& [x, y, library] : {std::tuple{a, w, "openblas"}, std::tuple{big_a, big_w, "onednn"}}) {
      const ir::ExecPlan p = plan_of([](const std::vector<Tensor>& in) { return std::vector<Tensor>{bmm(in[0], in[1])}; },
                                     {x.to(dt).unsqueeze(0), y.to(dt).unsqueeze(0)});
      ASSERT_EQ(p.steps.size(), 1u) << p.str();
      EXPECT_EQ(p.steps[0].lowering, library) << p.str();
    }
  }
}

// A product of a 3-D input ([B, T, K] @ [K, N]: an mm of the rows, reshaped back) returns the
// library's result as a view of its memory (passes/fuse.cpp): no kernel copies it. The memory is
// the call's own each time: an earlier result keeps its values.
TEST(CompileMatmul, AReshapedProductIsReturnedWithoutACopy) {
  manual_seed(4);
  const Tensor x = randn({2, 3, 80}), w = randn({80, 72});
  const auto fn = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0].matmul(in[1])}; };
  const ir::ExecPlan plan = plan_of(fn, {x, w});
  ASSERT_EQ(plan.steps.size(), 1u) << plan.str();
  EXPECT_EQ(plan.steps[0].kind, ir::StepKind::Extern) << plan.str();
  const ir::PlanBuffer& out = plan.buffers.at(static_cast<size_t>(plan.outputs.at(0).buffer));
  EXPECT_EQ(out.role, ir::BufferRole::View) << plan.str();
  EXPECT_EQ(plan.buffers.at(static_cast<size_t>(out.base)).role, ir::BufferRole::Output) << plan.str();
  auto f = compile([](const Tensor& x, const Tensor& w) { return x.matmul(w); });
  const Tensor first = f(x, w), want = x.matmul(w);
  EXPECT_TRUE(allclose(first, want, 1e-5, 1e-5));
  EXPECT_TRUE(first.is_contiguous());
  EXPECT_EQ(first.sizes().vec(), (std::vector<int64_t>{2, 3, 72}));
  const Tensor second = f(x * 2, w);
  EXPECT_TRUE(allclose(second, want * 2, 1e-5, 1e-5));
  EXPECT_TRUE(allclose(first, want, 1e-5, 1e-5)) << "the second call wrote into the first's result";
  // Used by a kernel as well, the product is still in memory once.
  const ir::ExecPlan both = plan_of([](const std::vector<Tensor>& in) {
    const Tensor y = in[0].matmul(in[1]);
    return std::vector<Tensor>{y, y.sum({2})};
  }, {x, w});
  EXPECT_EQ(both.kernels().size(), 1u) << both.str();
}

// A returned reshape of a call's result that another call also reads in place, or that a
// kernel reads beside a channels-last convolution: each result keeps its own memory and
// values (the base of a returned view is an output, never a reused slot; a value whose view is
// returned stays contiguous).
TEST(CompileMatmul, ReturnedViewsOfCallResultsKeepTheirValues) {
  manual_seed(8);
  const Tensor x = randn({2, 3, 6, 6}), w = randn({4, 3, 3, 3}), lw = randn({5, 64}), lw2 = randn({64, 5});
  // f, a view of the convolution's result, is read in place by a product; later temporaries.
  const auto read_by_a_call = [](const Tensor& x, const Tensor& w, const Tensor& lw, const Tensor& lw2) {
    const Tensor f = conv2d(x, w).flatten(1);
    return std::make_tuple(f, linear(relu(linear(relu(linear(f, lw)), lw2)), lw));
  };
  auto f = compile(read_by_a_call);
  const auto [a, b] = f(x, w, lw, lw2);
  const auto [ea, eb] = read_by_a_call(x, w, lw, lw2);
  EXPECT_TRUE(allclose(a, ea, 1e-4, 1e-4)) << a << ea;
  EXPECT_TRUE(allclose(b, eb, 1e-3, 1e-3));
  // f read by a pointwise kernel beside it: the convolution's result stays NCHW.
  const auto read_by_a_kernel = [](const Tensor& x, const Tensor& w) {
    const Tensor f = conv2d(x, w).flatten(1);
    return std::make_tuple(f, relu(f));
  };
  auto g = compile(read_by_a_kernel);
  const auto [c, d] = g(x, w);
  const auto [ec, ed] = read_by_a_kernel(x, w);
  EXPECT_TRUE(allclose(c, ec, 1e-4, 1e-4)) << c << ec;
  EXPECT_TRUE(allclose(d, ed, 1e-4, 1e-4));
}

// Products on either side of the library switch, and a few-row product split by columns, equal
// the f64 product of the same values within f32 rounding.
TEST(CompileMatmul, ProductsOnEitherLibraryMatchTheF64Product) {
  manual_seed(9);
  for (const auto& [m, k, n] : {std::tuple{8, 8, 8}, {64, 64, 64}, {64, 64, 65}, {1, 512, 1000}, {4, 512, 1000}, {300, 70, 90}}) {
    SCOPED_TRACE(fmt::format("{}x{}x{}", m, k, n));
    const Tensor x = randn({m, k}), w = randn({n, k});
    auto f = compile([](const Tensor& p, const Tensor& q) { return linear(p, q); });
    const Tensor got = f(x, w), want = mm(x.to(kDouble), w.to(kDouble).t());
    EXPECT_TRUE(allclose(got.to(kDouble), want, 1e-5, 1e-4)) << (got.to(kDouble) - want).abs().max();
    EXPECT_TRUE(allclose(linear(x, w).to(kDouble), want, 1e-5, 1e-4));  // eager: the same call
  }
}

// KILN_SGEMM=kiln runs f32 products past 64^3 of 16 or more rows on kiln's own SGEMM (fewer rows
// stay on oneDNN), named so in the plan; every choice gives the f64 product within f32 rounding.
TEST(CompileMatmul, KilnSgemmChoosesTheLibrary) {
  manual_seed(10);
  const Tensor x = randn({8, 512}), w = randn({96, 512}), y = randn({64, 80}), v = randn({72, 80});
  const Tensor want_few = mm(x.to(kDouble), w.to(kDouble).t()), want_big = mm(y.to(kDouble), v.to(kDouble).t());
  for (const auto& [choice, few, big] : {std::tuple{"kiln", "onednn", "kiln"}, std::tuple{"onednn", "onednn", "onednn"}}) {
    SCOPED_TRACE(choice);
    setenv("KILN_SGEMM", choice, 1);
    rt::reload_config_for_testing();
    for (const auto& [a, b, want, library] : {std::tuple{x, w, want_few, few}, std::tuple{y, v, want_big, big}}) {
      const ir::ExecPlan p = plan_of([](const std::vector<Tensor>& in) { return std::vector<Tensor>{linear(in[0], in[1])}; }, {a, b});
      EXPECT_NE(p.str().find(fmt::format("[{}]", library)), std::string::npos) << p.str();
      auto f = compile([](const Tensor& p0, const Tensor& q0) { return linear(p0, q0); });
      EXPECT_TRUE(allclose(f(a, b).to(kDouble), want, 1e-5, 1e-4));
      EXPECT_TRUE(allclose(linear(a, b).to(kDouble), want, 1e-5, 1e-4));  // eager: the same call
    }
  }
  unsetenv("KILN_SGEMM");
  rt::reload_config_for_testing();
}

TEST(CompileMatmul, IntegerProductsWrapAroundAsEagerDoes) {
  const Tensor a = full({2, 3}, Scalar(int64_t{4000000007}), kInt64), w = full({3, 2}, Scalar(int64_t{3000000019}), kInt64);
  auto f = compile([](const Tensor& p, const Tensor& q) { return mm(p, q); });
  EXPECT_EQ(f(a, w).to_vector<int64_t>(), mm(a, w).to_vector<int64_t>());
  const uint64_t one = uint64_t{4000000007} * uint64_t{3000000019};
  EXPECT_EQ(f(a, w).to_vector<int64_t>()[0], static_cast<int64_t>(one * 3));
  const Tensor b = full({2, 4}, Scalar(int64_t{100}), kInt8), c = full({4, 1}, Scalar(int64_t{3}), kInt8);
  EXPECT_EQ(f(b, c).to_vector<int8_t>(), mm(b, c).to_vector<int8_t>());
  EXPECT_EQ(f(b, c).to_vector<int8_t>()[0], static_cast<int8_t>(1200 % 256 - 256));
}

TEST(CompileMatmul, AConvolutionsPaddedTapsFollowPyTorchPerDtype) {
  // A tap on a convolution's zero padding under an infinite weight, as PyTorch 2.15's CPU
  // kernels at these sizes: f64 (im2col) multiplies the padded zero, 0 * inf = NaN; f32
  // (oneDNN, PyTorch's mkldnn path) adds nothing. The interpreter, eager and compiled agree.
  // (Fuzzer seeds 7102302 and 5301134; torch's own f32 im2col path, taken for a [1, 1, 3]
  // input, gives NaN too.) A transposed convolution drops the taps past its output:
  // [-inf, inf, 1] in both dtypes.
  const double inf = std::numeric_limits<double>::infinity();
  for (ScalarType dt : {kFloat32, kFloat64}) {
    const Tensor x = tensor(std::vector<double>{1, -2, 3}, {1, 1, 3}).to(dt);
    const Tensor w = tensor(std::vector<double>{inf, 1, 1}, {1, 1, 3}).to(dt);
    auto conv = [](const Tensor& a, const Tensor& b) { return conv1d(a, b, {}, 1, 1); };
    auto transposed = [](const Tensor& a, const Tensor& b) { return conv_transpose1d(a, b, {}, 1, 1); };
    CompileOptions interp;
    interp.backend = "interpreter";
    for (const char* mode : {"eager", "interpreter", "cpu"}) {
      const std::string what = fmt::format("{} {}", mode, dtype_name(dt));
      const Tensor y = mode == std::string("eager")         ? conv(x, w)
                       : mode == std::string("interpreter") ? compile(conv, interp)(x, w)
                                                            : compile(conv)(x, w);
      SCOPED_TRACE(what);
      test::expect_exact(y.reshape({3}), dt, {dt == kFloat64 ? std::nan("") : -1.0, inf, -inf});
      const Tensor t = mode == std::string("eager")         ? transposed(x, w)
                       : mode == std::string("interpreter") ? compile(transposed, interp)(x, w)
                                                            : compile(transposed)(x, w);
      test::expect_exact(t.reshape({3}), dt, {-inf, inf, 1});
    }
  }
  // f64 in 2-D with groups, stride and dilation: im2col agrees with the interpreter element for
  // element, infinities and NaN included.
  manual_seed(5);
  const Tensor x = randn({2, 4, 7, 6}, kFloat64);
  Tensor w = randn({6, 2, 3, 3}, kFloat64);
  w.select(0, 0).select(0, 1).select(0, 0).select(0, 2).fill_(inf);
  w.select(0, 4).select(0, 0).select(0, 2).select(0, 1).fill_(std::nan(""));
  auto conv2 = [](const Tensor& a, const Tensor& b) { return conv2d(a, b, {}, {2, 1}, {1, 2}, {1, 2}, 2); };
  CompileOptions interp;
  interp.backend = "interpreter";
  const Tensor got = conv2(x, w), want = compile(conv2, interp)(x, w);
  ASSERT_EQ(got.sizes().vec(), want.sizes().vec());
  const std::vector<double> g = test::doubles(got), e = test::doubles(want);
  int64_t non_finite = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    non_finite += !std::isfinite(e[i]);
    if (std::isnan(e[i])) EXPECT_TRUE(std::isnan(g[i])) << "element " << i;
    else if (std::isinf(e[i])) EXPECT_EQ(g[i], e[i]) << "element " << i;
    else EXPECT_NEAR(g[i], e[i], 1e-12 * (1 + std::fabs(e[i]))) << "element " << i;
  }
  EXPECT_GT(non_finite, 0);
}

TEST(CompileMatmul, EmptyProductsAndBoolErrors) {
  auto f = compile([](const Tensor& p, const Tensor& q) { return mm(p, q); });
  const Tensor a = zeros({3, 0}, kInt32), w = zeros({0, 4}, kInt32);
  EXPECT_EQ(f(a, w).to_vector<int32_t>(), std::vector<int32_t>(12, 0));
  EXPECT_EQ(f(zeros({0, 2}, kInt32), ones({2, 5}, kInt32)).sizes().vec(), (std::vector<int64_t>{0, 5}));
  const Tensor t = ones({2, 2}, kBool);
  const std::string eager = test::error_of([&] { (void)mm(t, t); });
  EXPECT_EQ(eager, "[mm] \"addmm_impl_cpu_\" not implemented for 'Bool'");  // torch 2.15's CPU wording
  EXPECT_EQ(test::error_of([&] { (void)f(t, t); }).rfind(eager, 0), 0u);
}

// Eagerly too: an integer mm or bmm runs as a duck-sized program (runtime/eager/eager_key.h):
// one Matmul kernel per pattern of equal sizes, reused across sizes, equal to the interpreter's.
TEST(CompileMatmul, EagerIntegerProductsAreDuckSizedKernels) {
  auto check = [](int64_t m, int64_t k, int64_t n) {
    const Tensor a = randint(-50, 50, {m, k}, TensorOptions(kInt32)), w = randint(-50, 50, {k, n}, TensorOptions(kInt32));
    const Tensor ba = randint(-50, 50, {3, m, k}, TensorOptions(kInt16)), bw = randint(-50, 50, {3, k, n}, TensorOptions(kInt16));
    const rt::EagerStats before = rt::eager_stats();
    const Tensor y = mm(a, w), by = bmm(ba, bw);
    const rt::EagerStats after = rt::eager_stats();
    EXPECT_EQ(after.interpreted_calls, before.interpreted_calls);
    EXPECT_EQ(y.to_vector<int32_t>(), test::run(ir::OpKind::mm, {a, w}).to_vector<int32_t>());
    EXPECT_EQ(by.to_vector<int16_t>(), test::run(ir::OpKind::bmm, {ba, bw}).to_vector<int16_t>());
    return after.kernels_compiled - before.kernels_compiled;
  };
  check(7, 13, 5);
  EXPECT_EQ(check(17, 5, 40), 0);  // the same pattern of equal sizes: the same two kernels
  check(6, 6, 6);                  // one size: a pattern of its own
}

}  // namespace
}  // namespace kiln
