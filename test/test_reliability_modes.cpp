// kiln/test/test_reliability_modes.cpp — results and errors that must not differ between modes,
// and the small things a careful user trips on (issue 28's items 3, 9-12).
//
// Integer division by zero is PyTorch's ZeroDivisionError eagerly, compiled (the kernel checks
// the divisor and the program raises after the launch) and on the interpreter; the mean, var
// and std of an empty tensor are the same NaN in every mode; an element count whose bytes
// overflow is an error, not a small buffer; a size symbol no input binds is a verifier error; a
// graph typed for a missing device fails instead of running on the host; `kiln opt --passes`
// names its passes; LLVM's remarks stay off stderr; arange sizes an integer range with a
// fractional step as PyTorch does.
#include "kiln/kiln.h"
#include "ir/text.h"
#include "runtime/pipeline.h"
#include "runtime/interpreter/interpreter.h"
#include "runtime/log.h"
#include "runtime/debug/opt.h"
#include "runtime/debug/repro.h"
#include "runtime/debug/run_graph.h"
#include "test_support/check.h"
#include "test_support/files.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace kiln {
namespace {

using test::error_of;

TEST(ReliabilityModes, ByteCountsThatOverflowAreErrors) {
  EXPECT_NE(error_of([] { (void)empty({(int64_t{1} << 62) + 1}).fill_(1); }).find("[empty] storage size calculation overflowed"),
            std::string::npos);
  EXPECT_NE(error_of([] { (void)empty({int64_t{1} << 40, int64_t{1} << 40}); }).find("overflows int64"), std::string::npos);
  EXPECT_NE(error_of([] { (void)empty_strided({2, 2}, {int64_t{1} << 62, 1}); }).find("overflowed"), std::string::npos);
  // A parsed graph whose sizes overflow in bytes: the run fails with the error, no segfault.
  const auto g = ir::parse_graph(
      "graph(%x : f32[1]) {\n  %e : f32[4611686018427387905] = expand(%x, size=[4611686018427387905])\n"
      "  %n : f32[4611686018427387905] = neg(%e)\n  return (%n)\n}\n");
  for (const char* backend : {"cpu", "interpreter"}) {
    const rt::RunResult r = rt::run_graph(*g, {ones({1})}, backend);
    EXPECT_EQ(r.status, rt::RunResult::Status::UserError) << backend << ": " << r.message;
    EXPECT_NE(r.message.find("overflow"), std::string::npos) << backend << ": " << r.message;
  }
}

TEST(ReliabilityModes, IntegerDivisionByZeroRaisesInEveryMode) {
  for (ScalarType dt : {kInt64, kInt32, kInt8, kUInt8}) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor a = tensor(std::vector<int64_t>{7, -7, 3}).to(dt);
    const Tensor b = tensor(std::vector<int64_t>{2, 0, 1}).to(dt);
    EXPECT_EQ(error_of([&] { (void)floor_divide(a, b); }), "[div] ZeroDivisionError");
    EXPECT_EQ(error_of([&] { (void)remainder(a, b); }), "[remainder] ZeroDivisionError");
    EXPECT_EQ(error_of([&] { (void)fmod(a, b); }), "[fmod] ZeroDivisionError");
    EXPECT_EQ(error_of([&] { (void)div(a, b, "trunc"); }), "[div] ZeroDivisionError");
    auto f = compile([](const Tensor& x, const Tensor& y) { return floor_divide(x + 1, y) * 2; });
    EXPECT_EQ(error_of([&] { (void)f(a, b); }), "[div] ZeroDivisionError");
    auto g = compile([](const Tensor& x, const Tensor& y) { return remainder(x, y).sum(); });
    EXPECT_EQ(error_of([&] { (void)g(a, b); }), "[remainder] ZeroDivisionError");
    // Without a zero, the same programs run and agree with eager.
    const Tensor c = tensor(std::vector<int64_t>{2, -3, 1}).to(dt);
    EXPECT_TRUE(equal(f(a, c), floor_divide(a + 1, c) * 2));
    EXPECT_TRUE(equal(g(a, c), remainder(a, c).sum()));
  }
  // Dynamic shapes, and a zero in the last of many elements (the vectorized loop's tail).
  auto h = compile([](const Tensor& x, const Tensor& y) { return fmod(x, y); }, {.dynamic = Dynamic::True});
  std::vector<int64_t> den(1000, 1);
  EXPECT_TRUE(equal(h(arange(1000), tensor(den)), fmod(arange(1000), tensor(den))));
  den.back() = 0;
  EXPECT_EQ(error_of([&] { (void)h(arange(1000), tensor(den)); }), "[fmod] ZeroDivisionError");
  // Floats divide by zero as IEEE does, with no check.
  EXPECT_TRUE(std::isinf(floor_divide(ones({1}), zeros({1})).item().to_double()));
}

TEST(ReliabilityModes, TheMomentsOfAnEmptyTensorAreTheSameNanEverywhere) {
  const Tensor e = empty({0});
  auto bits = [](const Tensor& t) {
    const double v = t.item().to_double();
    EXPECT_TRUE(std::isnan(v));
    return std::signbit(v);
  };
  const bool m = bits(e.mean()), v = bits(e.var()), s = bits(e.std());
  auto fm = compile([](const Tensor& x) { return x.mean(); });
  auto fv = compile([](const Tensor& x) { return x.var(); });
  auto fs = compile([](const Tensor& x) { return x.std(); });
  EXPECT_EQ(bits(fm(e)), m);
  EXPECT_EQ(bits(fv(e)), v);
  EXPECT_EQ(bits(fs(e)), s);
  auto dm = compile([](const Tensor& x) { return x.mean(); }, {.dynamic = Dynamic::True});
  EXPECT_EQ(bits(dm(e)), m);
  EXPECT_EQ(bits(dm(empty({0, 3}))), m);
  EXPECT_FALSE(m);  // the positive NaN: printed as nan, as PyTorch prints it
  EXPECT_EQ(e.mean().str(), "tensor(nan)");
  EXPECT_EQ(fm(e).item().str(), "nan");
  // A slice without degrees of freedom but with spread divides by zero: inf, as PyTorch gives.
  EXPECT_TRUE(std::isinf(tensor(std::vector<float>{1, 2}).var({0}, Scalar(2.0)).item().to_double()));
}

TEST(ReliabilityModes, ASizeSymbolNoInputBindsIsAVerifierError) {
  const std::string e = error_of([] {
    (void)ir::parse_graph("graph() {\n  %0 : f32[s0, 2] = full(size=[s0, 2], value=1.0, dtype=f32, device=cpu)\n"
                          "  return (%0)\n}\n");
  });
  EXPECT_NE(e.find("[verify] 2:3: node %0 = full()"), std::string::npos) << e;
  EXPECT_NE(e.find("uses the size symbol s0"), std::string::npos) << e;
  EXPECT_NE(e.find("no graph input binds"), std::string::npos) << e;
  // Bound by an input dim, the same node is fine.
  (void)ir::parse_graph("graph(%x : f32[s0]) {\n  %0 : f32[s0, 2] = full(size=[s0, 2], value=1.0, dtype=f32, device=cpu)\n"
                        "  return (%0)\n}\n");
}

// An input dim may be an expression of symbols other inputs bind (a backward program's
// cotangent of a strided convolution); a run checks it. Its symbols must be bound.
TEST(ReliabilityModes, AnInputDimIsAnExpressionOfBoundSymbols) {
  const auto g = ir::parse_graph("graph(%x : f32[s0], %g : f32[s0 - 2]) {\n"
                                 "  %0 : f32[s0 - 2] = slice(%x, dim=0, start=1, end=s0 - 1, step=1)\n"
                                 "  %1 : f32[s0 - 2] = mul(%0, %g)\n  return (%1)\n}\n");
  const Tensor out = rt::interpret(*g, {arange(5, TensorOptions(kFloat)), full({3}, 2.0)}).at(0);
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{2, 4, 6}));
  const std::string wrong = error_of([&] { rt::interpret(*g, {arange(5, TensorOptions(kFloat)), full({4}, 2.0)}); });
  EXPECT_NE(wrong.find("input 1 dim 0 should be s0 - 2 = 3, got 4"), std::string::npos) << wrong;
  const std::string unbound = error_of([] {
    (void)ir::parse_graph("graph(%g : f32[s0 - 2]) {\n  %0 : f32[s0 - 2] = neg(%g)\n  return (%0)\n}\n");
  });
  EXPECT_NE(unbound.find("graph input 0 (%g) has a dim of size s0 - 2, whose symbol s0 no input binds"), std::string::npos)
      << unbound;
}

TEST(ReliabilityModes, AGraphForAMissingDeviceDoesNotRunOnTheHost) {
  const auto g = ir::parse_graph("graph(%x : f32[2]@cuda:99) {\n  %1 : f32[2]@cuda:99 = neg(%x)\n  return (%1)\n}\n");
  EXPECT_THROW((void)rt::default_inputs(*g), Error);
  for (const char* backend : {"cpu", "interpreter"}) {
    const rt::RunResult r = rt::run_graph(*g, {ones({2})}, backend);
    EXPECT_EQ(r.status, rt::RunResult::Status::UserError) << backend;
    EXPECT_NE(r.message.find("cuda:99"), std::string::npos) << r.message;
  }
}

TEST(ReliabilityModes, UnknownPassesAreNamed) {
  rt::OptOptions o;
  o.passes = {"dce", "nope"};
  EXPECT_EQ(error_of([&] { (void)rt::opt_report("graph(%x : f32[2]) {\n  return (%x)\n}\n", o); }),
            "[opt] unknown pass 'nope'; the graph passes are lowerings, decompose, dce, cse, fold_constants, "
            "simplify_algebra");
}

// Reads what the process writes to stderr (fd 2) while fn runs.
template <typename Fn> std::string stderr_of(Fn fn) {
  std::fflush(stderr);
  const std::string path = test::make_temp_dir("kiln-stderr") + "/err";
  const int saved = ::dup(2);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ::dup2(fd, 2);
  ::close(fd);
  fn();
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  return test::read_file(path);
}

TEST(ReliabilityModes, LlvmDiagnosticsStayOffStderr) {
  std::string logged;
  const std::string err = stderr_of([&] {
    rt::set_log_sink_for_testing([&](std::string_view line) { logged += line; });
    ::setenv("KILN_LOG", "kernels", 1);
    rt::reload_config_for_testing();
    auto f = compile([](const Tensor& x) { return avg_pool2d(x, {3, 3}, {2, 2}, {1, 1}); });
    (void)f(randn({2, 3, 17, 17}));
    ::unsetenv("KILN_LOG");
    rt::reload_config_for_testing();
    rt::set_log_sink_for_testing({});
  });
  EXPECT_EQ(err, "");
  const size_t at = logged.find("llvm ");
  std::printf("[ info ] LLVM diagnostics seen under KILN_LOG=kernels: %s\n",
              at == std::string::npos ? "none on this host" : logged.substr(at, logged.find('\n', at) - at).c_str());
}

TEST(ReliabilityModes, ArangeOfAnIntegerDtypeWithAFractionalStep) {
  EXPECT_EQ(arange(0.25, 10, 0.5, kInt64).to_vector<int64_t>(), std::vector<int64_t>(20, 0));
  EXPECT_EQ(arange(0, 10, 0.3, kInt64).numel(), 34);
}

}  // namespace
}  // namespace kiln
