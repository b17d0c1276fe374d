// kiln/test/test_compile_regressions.cpp — the wrong results that random programs checked
// against PyTorch found (issue 9), one test per bug, built from its repro.
//
// Each repro runs in every mode a user has: eager, compiled on the CPU (static), compiled with
// Dynamic::True and on the interpreter backend; the expected values are PyTorch 2.15's (in
// the comments where they are not obvious).
#include "kiln/kiln.h"
#include "test_support/make.h"
#include "test_support/partial_sum.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace kiln {
namespace {

using test::make;
using test::values;

using Floats = std::vector<float>;

struct Mode {
  std::string name;
  CompileOptions opts;  // backend "" with name "eager": run the function directly
};

std::vector<Mode> modes() {
  auto opts = [](std::string backend, Dynamic dynamic) {
    CompileOptions o;
    o.backend = std::move(backend);
    o.dynamic = dynamic;
    return o;
  };
  const CompileOptions stat = opts("cpu", Dynamic::False), dyn = opts("cpu", Dynamic::True),
                       interp = opts("interpreter", Dynamic::False), interp_dyn = opts("interpreter", Dynamic::True);
  return {{"eager", {}}, {"cpu", stat}, {"cpu-dynamic", dyn}, {"interpreter", interp}, {"interpreter-dynamic", interp_dyn}};
}

// fn(args) in every mode, as f32 values in row-major order.
template <typename F, typename... Args> void expect_all_modes(F fn, const Floats& want, const Args&... args) {
  for (const Mode& m : modes()) {
    SCOPED_TRACE(m.name);
    Tensor out = m.name == "eager" ? fn(args...) : compile(fn, m.opts)(args...);
    EXPECT_EQ(values<float>(out.to(kFloat)), want);
  }
}

// fn(args) as f32 values: `want_cpu` from eager and the cpu backend, `want_ref` from the
// interpreter (where the two compute differently by design, as float sums do).
template <typename F, typename... Args>
void expect_modes(F fn, const Floats& want_cpu, const Floats& want_ref, const Args&... args) {
  for (const Mode& m : modes()) {
    SCOPED_TRACE(m.name);
    Tensor out = m.name == "eager" ? fn(args...) : compile(fn, m.opts)(args...);
    EXPECT_EQ(values<float>(out.to(kFloat)), m.name.rfind("interpreter", 0) == 0 ? want_ref : want_cpu);
  }
}

template <typename F, typename... Args> void expect_error_all_modes(F fn, const std::string& want, const Args&... args) {
  for (const Mode& m : modes()) {
    SCOPED_TRACE(m.name);
    try {
      Tensor out = m.name == "eager" ? fn(args...) : compile(fn, m.opts)(args...);
      ADD_FAILURE() << "no error; expected " << want;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  }
}

// 1. BLAS operands with size-1 dims and odd strides (stride 0 from expand, stride 2 from a
// slice) were neither passed correctly nor copied: the output stayed unwritten.
TEST(Regression, MatmulSizeOneOperandsWithOddStrides) {
  const Tensor w = scalar_tensor(2.0f).expand({1, 1});  // strides [0, 0]
  expect_all_modes([](const Tensor& a, const Tensor& b) { return mm(a, b); }, Floats{2, 2, 2}, ones({3, 1}), w);
  const Tensor v = make<float>({.5f, -.75f, -.25f}).slice(0, 1, 2, 2);  // [1], stride 2
  expect_all_modes([](const Tensor& a, const Tensor& b) { return matmul(a, b); }, Floats{-.75f, -.75f, -.75f, -.75f}, v,
                   ones({1, 4}));
  // linear's weight [out=1, in=1] with stride 0: y = x * 2 + 1.
  expect_all_modes([](const Tensor& x, const Tensor& wt) { return linear(x, wt, ones({1})); }, Floats{3, 5, 7},
                   make<float>({1, 2, 3}, {3, 1}), w);
  // Both operands' size-1 dims with stride 0, a batched one too.
  const Tensor row = make<float>({1, 2, 3}).reshape({1, 3});
  expect_all_modes([](const Tensor& a, const Tensor& b) { return mm(a, b); }, Floats{6},
                   row, ones({1}).expand({3, 1}));
  expect_all_modes([](const Tensor& a, const Tensor& b) { return bmm(a, b); }, Floats{4, 4},
                   full({1, 1, 1}, 2.0).expand({2, 1, 1}), scalar_tensor(2.0f).expand({2, 1, 1}));
}

// 2. A keepdim reduction over leading size-1 dims took the "full domain" path and produced a
// column-sum kernel the verifier rejects.
TEST(Regression, KeepdimReductionOverSizeOneDim) {
  const Tensor x = make<float>({1, 2}, {1, 2});
  expect_all_modes([](const Tensor& t) { return sum(t, {0}, true); }, Floats{1, 2}, x);
  expect_all_modes([](const Tensor& t) { return amax(t, {0}, true); }, Floats{1, 2}, x);
  expect_all_modes([](const Tensor& t) { return mean(t, {0}, true); }, Floats{1, 2}, x);
  expect_all_modes([](const Tensor& t) { return prod(t, 0, true); }, Floats{1, 2}, x);
  expect_all_modes([](const Tensor& t) { return sum(t, {0, 1}, true); }, Floats{6}, make<float>({1, 2, 3}, {1, 3}).t());
  expect_all_modes([](const Tensor& t) { return softmax(t, 0); }, Floats{1, 1}, x);
}

// 3. Under Dynamic::True a symbolic size that is 1 at the hints (s0//3) was broadcast
// without being specialized.
TEST(Regression, DynamicBroadcastOfSizeOneExpression) {
  auto f = [](const Tensor& x, const Tensor& y) { return x.reshape({-1, 3}) + y; };
  expect_all_modes(f, Floats{2, 2, 2, 2, 2, 2}, ones({3}), ones({2, 3}));
  auto g = [](const Tensor& x, const Tensor& y) { return x.slice(0, 1, x.size(0)) * y; };  // s0 - 1 == 1
  expect_all_modes(g, Floats{5, 5, 5}, make<float>({1, 5}, {2, 1}), ones({3}));
  // Once specialized, the entry is not reused for other sizes: a new trace gives the new result.
  CompileOptions dyn;
  dyn.dynamic = Dynamic::True;
  auto h = compile(f, dyn);
  EXPECT_EQ(values<float>(h(ones({3}), ones({2, 3}))), (Floats{2, 2, 2, 2, 2, 2}));
  EXPECT_EQ(values<float>(h(full({6}, 2.0), ones({2, 3}))), (Floats{3, 3, 3, 3, 3, 3}));
  EXPECT_EQ(values<float>(h(ones({3}), ones({4, 3}))), Floats(12, 2.0f));
  // Sizes equal at the hints (s0//3 and s1 both 2) are guarded equal and stay symbolic.
  auto e = compile(f, dyn);
  EXPECT_EQ(values<float>(e(ones({6}), ones({2, 3}))), Floats(6, 2.0f));
  EXPECT_EQ(values<float>(e(full({9}, 2.0), ones({3, 3}))), Floats(9, 3.0f));
  EXPECT_EQ(e.stats().compiles, 1);
  // The guard s0//3 == s1 fails; the retrace meets [2, 3] + [3, 3], which PyTorch refuses.
  EXPECT_THROW(e(ones({6}), ones({3, 3})), Error);
}

// 4. clamp of bool with one bool tensor bound runs maximum/minimum, as PyTorch's does; both
// bounds, or a scalar bound, are refused with PyTorch's messages.
TEST(Regression, ClampBoolTensorBounds) {
  const Tensor b = make<bool>({true, false, true}), lo = make<bool>({false, true, false}),
               hi = make<bool>({true, true, false});
  expect_all_modes([](const Tensor& x, const Tensor& l) { return clamp(x, std::optional<Tensor>(l)); }, Floats{1, 1, 1}, b,
                   lo);
  expect_all_modes([](const Tensor& x, const Tensor& h) { return clamp(x, std::nullopt, std::optional<Tensor>(h)); },
                   Floats{1, 0, 0}, b, hi);
  expect_error_all_modes([](const Tensor& x, const Tensor& l, const Tensor& h) { return clamp(x, l, h); },
                         "[clamp] \"clamp_cpu\" not implemented for 'Bool'", b, lo, hi);
  expect_error_all_modes([](const Tensor& x) { return clamp_max(x, true); },
                         "[clamp] \"clamp_max_scalar_cpu\" not implemented for 'Bool'", b);
}

// 5. layer_norm's weight and bias must have the input's dtype (or f32 for f16/bf16 inputs).
TEST(Regression, LayerNormParameterDtypes) {
  expect_error_all_modes([](const Tensor& x, const Tensor& w) { return layer_norm(x, {3}, w); },
                         "[layer_norm] mixed dtype (CPU): expect parameter to have scalar type of Float, got weight of Double",
                         ones({2, 3}), ones({3}, kFloat64));
  expect_error_all_modes(
      [](const Tensor& x, const Tensor& b) { return layer_norm(x, {3}, std::nullopt, b); },
      "[layer_norm] mixed dtype (CPU): expect parameter to have scalar type of Float", ones({2, 3}), ones({3}, kHalf));
  // f16 input with f32 parameters is PyTorch's mixed-type kernel: allowed, result f16.
  auto f = [](const Tensor& x, const Tensor& w) { return layer_norm(x, {3}, w, w); };
  for (const Mode& m : modes()) {
    SCOPED_TRACE(m.name);
    const Tensor x = make<float>({1, 2, 3}, {1, 3}).to(kHalf), w = ones({3});
    Tensor out = m.name == "eager" ? f(x, w) : compile(f, m.opts)(x, w);
    EXPECT_EQ(out.dtype(), kHalf);
    // (x - 2) / sqrt(2/3 + 1e-5) + 1 = -0.2247, 1, 2.2247, rounded to f16.
    EXPECT_EQ(values<float>(out.to(kFloat)), (Floats{-0.224731445f, 1.0f, 2.22460938f}));
  }
  // rms_norm accepts other floating dtypes and keeps the input's (PyTorch).
  EXPECT_EQ(rms_norm(ones({2, 3}), {3}, ones({3}, kFloat64)).dtype(), kFloat);
  // And a weight of any dtype, bool and integers included (fuzz seed 5700945): PyTorch 2.x's
  // composite multiplies by it and casts back to the input's dtype. Values from torch 2.15.
  auto g = [](const Tensor& x, const Tensor& w) { return rms_norm(x, {2}, w); };
  const Tensor x = make<float>({3, 4}, {1, 2});
  for (const Mode& m : modes()) {
    SCOPED_TRACE(m.name);
    auto run = [&](const Tensor& xx, const Tensor& w) { return m.name == "eager" ? g(xx, w) : compile(g, m.opts)(xx, w); };
    const Tensor by_int = run(x, tensor({int64_t{2}, int64_t{-1}})), by_bool = run(x, tensor({true, false}));
    EXPECT_EQ(by_int.dtype(), kFloat);
    EXPECT_EQ(by_bool.dtype(), kFloat);
    EXPECT_EQ(values<float>(by_int), (Floats{1.6970562934875488f, -1.1313709020614624f}));
    EXPECT_EQ(values<float>(by_bool), (Floats{0.8485281467437744f, 0.0f}));
    const Tensor half = run(x.to(kHalf), tensor({int64_t{2}, int64_t{-1}}));
    EXPECT_EQ(half.dtype(), kHalf);
    EXPECT_EQ(values<float>(half.to(kFloat)), (Floats{1.697265625f, -1.1318359375f}));
  }
  // The input must still be floating, as in PyTorch.
  expect_error_all_modes([](const Tensor& x, const Tensor& w) { return rms_norm(x, {2}, w); },
                         "[rms_norm] \"rms_norm\" not implemented for 'Long'", ones({1, 2}, kLong), ones({2}));
}

// 7. A braced dim list selects the dims overload of var/std (it used to bind `bool unbiased`
// and reduce every element), and of every other reduction.
TEST(Regression, BracedDimsSelectDimsOverload) {
  const Tensor x = make<float>({1, 2, 3, 4, 6, 8}, {2, 3});
  EXPECT_EQ(x.var({1}).sizes(), IntArrayRef({2}));
  EXPECT_EQ(values<float>(x.var({1})), (Floats{1, 4}));
  EXPECT_EQ(values<float>(var(x, {1})), (Floats{1, 4}));
  EXPECT_EQ(values<float>(x.std({1})), (Floats{1, 2}));
  EXPECT_EQ(values<float>(kiln::std(x, {0})), (Floats{std::sqrt(4.5f), std::sqrt(8.0f), std::sqrt(12.5f)}));
  EXPECT_EQ(x.var({1}, std::nullopt, true).sizes(), IntArrayRef({2, 1}));
  EXPECT_EQ(values<float>(x.sum({1})), (Floats{6, 18}));
  EXPECT_EQ(values<float>(x.mean({1})), (Floats{2, 6}));
  EXPECT_EQ(values<float>(x.prod({1})), (Floats{6, 192}));
  EXPECT_EQ(values<float>(x.amax({1})), (Floats{3, 8}));
  EXPECT_EQ(values<float>(x.amin({1})), (Floats{1, 4}));
  EXPECT_EQ(values<bool>(x.gt(2).any({1})), (std::vector<bool>{true, true}));
  EXPECT_EQ(values<bool>(x.gt(2).all({1})), (std::vector<bool>{false, true}));
  EXPECT_EQ(values<int64_t>(x.argmax({1})), (std::vector<int64_t>{2, 2}));
  // The bool overloads still reduce everything.
  EXPECT_EQ(x.var().dim(), 0);
  EXPECT_FLOAT_EQ(x.var(false).item<float>(), 5.6666665f);      // PyTorch: 5.666666507720947
  EXPECT_FLOAT_EQ(kiln::std(x, true).item<float>(), 2.6076810f);  // PyTorch: 2.6076810359954834
}

// 8. rms_norm's default eps for f16/bf16 is float32's, as ATen's kernel uses (the result
// differs from half's eps for rows whose mean square is comparable to 1e-3).
TEST(Regression, RmsNormDefaultEpsOfComputeType) {
  const Tensor x = full({1, 4}, 0.03125).to(kHalf);  // mean square 2^-10 == half's eps
  auto f = [](const Tensor& t) { return rms_norm(t, {4}); };
  expect_all_modes(f, Floats{1, 1, 1, 1}, x);  // eps 2^-10 would give 1/sqrt(2) = 0.7070
  expect_all_modes(f, Floats{1, 1, 1, 1}, x.to(kBFloat16));
}

// 9. bf16 linear: x W^T stays in f32 until the bias is added (PyTorch: 0.0117, not 0.0156).
TEST(Regression, ReducedPrecisionLinearRoundsOnce) {
  const Tensor x = ones({1, 3}, kBFloat16);
  const Tensor w = make<float>({1, 0.0078125f, 0.00390625f}, {1, 3}).to(kBFloat16);
  const Tensor b = make<float>({-1}).to(kBFloat16);
  auto f = [](const Tensor& a, const Tensor& ww, const Tensor& bb) { return linear(a, ww, bb); };
  expect_all_modes(f, Floats{0.01171875f}, x, w, b);
  expect_all_modes(f, Floats{0.01171875f}, x.to(kHalf), w.to(kHalf), b.to(kHalf));
}

// 10. Float sums of long rows: the interpreter accumulates in f64 and rounds once (the exact sum
// rounded); the cpu kernels add f32 values into 64 f32 partials per block of 512 and the blocks
// in f64 (ir/kernel.h KVectorize::partials), a tiled column sum four rows pairwise in f32 and
// the groups in f64: the same bits on every host, and closer to the exact sum than PyTorch's
// cascade sum.
TEST(Regression, FloatSumsAccurateForLongRows) {
  // 2^24 followed by 99,999 ones: f32 alone loses every 1 added to 2^24. The exact sum 16877215
  // rounds to 16877216, the interpreter's result. The cpu kernels lose the 7 ones that share
  // 2^24's partial in the first block: 16877208 (PyTorch's cascade sum loses 15: 16877200).
  const int64_t n = 100000;
  std::vector<float> v(static_cast<size_t>(n), 1.0f);
  v[0] = 16777216.0f;  // 2^24
  const Tensor t = make<float>(v);
  const float exact = 16777216.0f + static_cast<float>(n - 1);  // 16877215 rounds to 16877216
  // A split sum's chunks start blocks of their own, but past the first block every partial
  // holds a small integer exactly, so the chunking changes nothing here.
  const float whole = static_cast<float>(test::partial_layout_sum<float>(v.data(), n));
  EXPECT_EQ(whole, 16877208.0f);
  expect_modes([](const Tensor& a) { return sum(a); }, Floats{whole}, Floats{exact}, t);
  // Rows of 1000, then the sum of the 100 row sums.
  std::vector<float> rows(100), cols(100);
  for (size_t i = 0; i < 100; ++i) rows[i] = static_cast<float>(test::partial_layout_sum<float>(v.data() + 1000 * i, 1000));
  const float by_rows = static_cast<float>(test::partial_layout_sum<float>(rows.data(), 100));
  expect_modes([](const Tensor& a) { return sum(a.reshape({100, 1000}), {1}).sum(); }, Floats{by_rows}, Floats{exact}, t);
  // Columns of 1000 rows: four rows pairwise in f32, each group added in f64.
  for (size_t j = 0; j < 100; ++j) {
    double acc = 0;
    for (size_t r = 0; r < 1000; r += 4) {
      const float* x = v.data() + 100 * r + j;
      acc += static_cast<double>((x[0] + x[100]) + (x[200] + x[300]));
    }
    cols[j] = static_cast<float>(acc);
  }
  const float by_cols = static_cast<float>(test::partial_layout_sum<float>(cols.data(), 100));
  expect_modes([](const Tensor& a) { return sum(a.reshape({1000, 100}), {0}).sum(); }, Floats{by_cols}, Floats{exact}, t);
  for (float got : {whole, by_rows, by_cols}) EXPECT_LE(std::fabs(got - 16877215.0f), 8.0f);
  // mean of 28,679 values of 0.08, divided in f32: the interpreter's sum rounded once gives
  // 0.08000000566; the cpu kernels' partials give 0.07999999076, as PyTorch's cascade sum does.
  const Tensor r = full({28679}, 0.08);
  std::vector<float> eights(28679, 0.08f);
  const float m = static_cast<float>(28679 * static_cast<double>(0.08f)) / 28679.0f;
  const float m_cpu = static_cast<float>(test::partial_layout_sum<float>(eights.data(), 28679)) / 28679.0f;
  expect_modes([](const Tensor& a) { return mean(a); }, Floats{m_cpu}, Floats{m}, r);
}

// 11. libtorch spells the dtype type torch::Dtype.
TEST(Regression, DtypeAlias) {
  static_assert(std::is_same_v<Dtype, ScalarType>);
  const Dtype d = kFloat;
  EXPECT_EQ(zeros({2}, d).dtype(), kFloat);
}

// 12. The fuzzer against torch 2.15, 2026-12-06 (docs/testing.md): errors PyTorch raises and
// kiln computed, and a 1-D weight PyTorch multiplies and kiln refused.
TEST(Regression, BoolScansNegativePadCutsAndOneDimensionalWeights) {
  const Tensor f = make<float>({1, 2, 3}, {3});
  expect_error_all_modes([](const Tensor& a) { return cumsum(a, 0, kBool); }, "[cumsum] \"cumsum_out_cpu\" not implemented for 'Bool'", f);
  expect_error_all_modes([](const Tensor& a) { return cumprod(a, 0, kBool); }, "[cumprod] \"cumprod_out_cpu\" not implemented for 'Bool'", f);
  // A pad of [2, -1] on an empty dim: the result would have size 1, but PyTorch cuts 1 off the
  // empty input first (seed 5104120); [-1, 1] on size 0 too (seed 5101249). [-1, 2] on 3 works.
  const Tensor empty = make<float>({}, {0});
  expect_error_all_modes([](const Tensor& a) { return constant_pad_nd(a, {2, -1}, 1.0); }, "narrow(): length must be non-negative", empty);
  expect_error_all_modes([](const Tensor& a) { return constant_pad_nd(a, {-1, 1}, 1.0); }, "narrow(): length must be non-negative", empty);
  expect_all_modes([](const Tensor& a) { return constant_pad_nd(a, {-1, 2}, 7.0); }, Floats{2, 3, 7, 7}, f);
  // linear with a 1-D weight and a bias: x [2, 3, 1] @ w [1] + b -> [2, 3] (seed 5100414); a 2-D
  // input raises PyTorch's addmm error.
  const Tensor x = make<float>({1, 2, 3, 4, 5, 6}, {2, 3, 1}), w = make<float>({2}, {1}), b = make<float>({0.5}, {});
  expect_all_modes([](const Tensor& a, const Tensor& c, const Tensor& d) { return linear(a, c, d); }, Floats{2.5, 4.5, 6.5, 8.5, 10.5, 12.5}, x, w, b);
  expect_error_all_modes([](const Tensor& a, const Tensor& c, const Tensor& d) { return linear(a.reshape({6, 1}), c, d); },
                         "[linear] addmm: mat2 must be a matrix, got 1-D tensor", x, w, b);
  // A bias of one dim takes PyTorch's addmm path for a contiguous input and raises there.
  expect_error_all_modes([](const Tensor& a, const Tensor& c, const Tensor& d) { return linear(a, c, d.reshape({1})); },
                         "[linear] addmm: mat2 must be a matrix, got 1-D tensor", x, w, b);
}

// 13. The fuzzer against torch 2.15, seed 5500570: lerp's 0-dim weight tensor may have another
// dtype; PyTorch then promotes the three operands under the 0-dim rules (ATen's lerp_Tensor
// meta function), where kiln refused every weight of another dtype.
TEST(Regression, LerpPromotesAZeroDimWeight) {
  auto lerp3 = [](const Tensor& a, const Tensor& b, const Tensor& w) { return lerp(a, b, w); };
  const Tensor x = make<float>({1, 2}, {2}), end = make<float>({3, 5}, {2});
  const Tensor w64 = make<double>({0.25}, {});
  expect_all_modes(lerp3, Floats{1.5, 2.75}, x, end, w64);            // f32: a 0-dim f64 does not widen
  const Tensor a0 = make<float>({1.5}, {}), b0 = make<float>({2.5}, {});
  expect_all_modes(lerp3, Floats{4.5}, a0, b0, make<uint8_t>({3}, {}));  // an integer weight, in f32
  const Tensor half64 = make<double>({0.5}, {});
  expect_all_modes(lerp3, Floats{2}, a0, b0, half64);                 // all 0-dim: f64
  const Tensor i = make<int64_t>({1, 2}, {2}), j = make<int64_t>({3, 4}, {2});
  expect_all_modes(lerp3, Floats{2, 3}, i, j, make<float>({0.5}, {}));  // integers with a float weight: f32
  EXPECT_EQ(lerp(x, end, w64).dtype(), kFloat);
  EXPECT_EQ(lerp(a0, b0, half64).dtype(), kDouble);
  EXPECT_EQ(compile(lerp3)(a0, b0, half64).dtype(), kDouble);
  EXPECT_EQ(compile(lerp3)(i, j, make<float>({0.5}, {})).dtype(), kFloat);
  // A weight with dims must have self's dtype; the dtype computed in must be floating.
  expect_error_all_modes(lerp3, "[lerp] expected dtype float for `weight` but got dtype double", x, end,
                         make<double>({0.25, 0.5}, {2}));
  expect_error_all_modes(lerp3, "[lerp] \"lerp_kernel_tensor\" not implemented for 'Long'", i, j, make<int64_t>({2}, {}));
  // The 0-dim weight's gradient comes back in its own dtype.
  const Tensor xs = make<float>({1, 2}, {2}).requires_grad_(), ws = make<double>({0.25}, {}).requires_grad_();
  lerp(xs, end, ws).sum().backward();
  ASSERT_TRUE(ws.grad().defined());
  EXPECT_EQ(ws.grad().dtype(), kDouble);
  EXPECT_EQ(ws.grad().item<double>(), 5.0);
  EXPECT_EQ(values<float>(xs.grad()), (Floats{0.75, 0.75}));
}

// 14. The fuzzer against torch 2.15, seed 6201001: a constant pad of an empty gather. The fused
// kernel read the empty index at its clamped position 0, past its elements, and checked what it
// found there: the compiled function raised "[gather] index 99 is out of bounds". An input known
// to be empty is now not read at all. The index here is an empty view of a storage holding 99.
TEST(Regression, APadOfAnEmptyGatherReadsNoIndex) {
  const Tensor a = make<float>({1, 2, 3}, {1, 1, 3});
  const Tensor idx = full({1, 1, 1}, 99, kLong).slice(1, 0, 0);  // [1, 0, 1]
  auto padded = [](const Tensor& src, const Tensor& index) {
    return constant_pad_nd(gather(src, 0, index), {1, 1, 1, 0}, -1.0);
  };
  expect_all_modes(padded, Floats{-1, -1, -1}, a, idx);  // [1, 1, 3]
  EXPECT_EQ(compile(padded).explain(a, idx).find(" = check "), std::string::npos);  // the kernel checks no index
}

// Fuzz seed 7420031: argmax of a 0-dim logsumexp, added into the input in place, joined the
// logsumexp's row kernel while the walk that checks a group and the kernel builder disagreed on
// a reduction over no dims: "kernel ... computes other nodes than its fusion group".
TEST(Regression, ArgmaxOfAZeroDimReductionJoinsNoRowKernel) {
  auto f = compile([](Tensor x) {
    const Tensor index = argmax(logsumexp(x, {0, 1}));
    const Tensor before = acos(x);
    x.add_(index);
    return std::make_tuple(before, x);
  });
  const Tensor x = make<float>({0.5f, -0.25f, 0.75f, 0.1f}, {2, 2});
  const auto [before, after] = f(x.clone());
  EXPECT_TRUE(allclose(before, acos(x)));
  EXPECT_TRUE(equal(after, x));  // the index of a 0-dim tensor is 0
  EXPECT_EQ(argmin(full({}, NAN)).item<int64_t>(), 0);
}

}  // namespace
}  // namespace kiln
