// kiln/test/test_cpu_vecmath.cpp — kiln's own f32 math (codegen_cpu/llvm_vecmath.cpp) over a
// dense sweep of the float line.
//
// Each function runs as an eager op (a generated, vectorized kernel) on every 256th float bit
// pattern (16.7M inputs covering every exponent and both signs; KILN_VECMATH_STRIDE=1 checks
// all 2^32) plus edge values, and is
// compared with the double-precision C library rounded to float — a near-correctly-rounded
// reference, stricter than the float libm the interpreter calls. The bound per function is its
// documented maximum error in ulps (docs/compiler.md, "Vector math"); the measured maximum is
// printed. Signed zeros and special values must match exactly.
#include "kiln/kiln.h"
#include "test_support/make.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

namespace kiln {
namespace {

// Bit patterns 0, stride, 2 stride, ... (KILN_VECMATH_STRIDE, default 256; 1 checks every
// float, about a minute per function) in chunks of 2^24, the edge values in the first.
uint64_t stride() {
  const char* s = std::getenv("KILN_VECMATH_STRIDE");
  const long long v = s ? std::atoll(s) : 256;
  return v >= 1 ? static_cast<uint64_t>(v) : 256;
}

std::vector<float> edge_inputs() {
  const float inf = std::numeric_limits<float>::infinity();
  return {0.0f,
          -0.0f,
          inf,
          -inf,
          std::numeric_limits<float>::quiet_NaN(),
          std::numeric_limits<float>::denorm_min(),
          -std::numeric_limits<float>::denorm_min(),
          std::numeric_limits<float>::min(),
          std::numeric_limits<float>::max(),
          -std::numeric_limits<float>::max(),
          1.0f,
          -1.0f,
          88.72283f,
          88.72284f,
          -87.33654f,
          -103.97208f,
          -103.97209f,
          0.85f,
          -0.85f,
          3.95f,
          10.0f,
          127.99999f,
          128.0f,
          -149.0f,
          -150.0f,
          1e-30f,
          -1e-30f,
          0x1p-25f,
          -0x1p-25f};
}

template <typename Fn> void for_each_chunk(Fn&& fn) {
  const uint64_t step = stride(), chunk = uint64_t{1} << 24;
  std::vector<float> v = edge_inputs();
  for (uint64_t first = 0; first < (uint64_t{1} << 32); first += chunk * step) {
    for (uint64_t k = 0; k < chunk && first + k * step < (uint64_t{1} << 32); ++k)
      v.push_back(std::bit_cast<float>(static_cast<uint32_t>(first + k * step)));
    fn(v);
    v.clear();
  }
}

int64_t ulp_distance(float a, float b) {
  auto ordered = [](float x) -> int64_t {
    const auto u = std::bit_cast<uint32_t>(x);
    const int64_t mag = u & 0x7fffffffu;
    return (u >> 31) ? -mag : mag;
  };
  return std::llabs(ordered(a) - ordered(b));
}

struct Case {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  double (*reference)(double);
  int64_t bound;  // ulps
};

void check(const Case& c) {
  int64_t worst = 0;
  float worst_at = 0;
  int failures = 0;
  size_t count = 0;
  for_each_chunk([&](const std::vector<float>& in) {
    const Tensor y = c.op(test::make<float>(in));
    ASSERT_EQ(y.dtype(), kFloat32);
    const float* got = static_cast<const float*>(y.data_ptr());
    count += in.size();
    for (size_t k = 0; k < in.size(); ++k) {
      const float want = static_cast<float>(c.reference(static_cast<double>(in[k])));
      const float g = got[k];
      bool ok;
      int64_t d = 0;
      if (std::isnan(want) || std::isnan(g)) {
        ok = std::isnan(want) && std::isnan(g);
      } else if (want == 0.0f || std::isinf(want)) {
        ok = std::bit_cast<uint32_t>(g) == std::bit_cast<uint32_t>(want) ||
             (want == 0.0f && std::fabs(g) <= std::numeric_limits<float>::denorm_min() &&
              std::signbit(g) == std::signbit(want));
        d = ok ? ulp_distance(g, want) : 0;
      } else {
        d = ulp_distance(g, want);
        ok = d <= c.bound;
      }
      if (d > worst) {
        worst = d;
        worst_at = in[k];
      }
      if (!ok && ++failures <= 5)
        ADD_FAILURE() << c.name << "(" << in[k] << " = 0x" << std::hex << std::bit_cast<uint32_t>(in[k]) << std::dec
                      << "): got " << g << ", want " << want << " (" << d << " ulp, bound " << c.bound << ")";
    }
  });
  std::printf("[ ulps ] %-8s max %lld ulp at %.9g (bound %lld, %zu inputs)\n", c.name, static_cast<long long>(worst),
              static_cast<double>(worst_at), static_cast<long long>(c.bound), count);
}

// PyTorch's formula in float, 1 / (1 + exp(-x)), with exp correctly rounded: below -88.72
// exp(-x) overflows and the result is 0, as in PyTorch (not the subnormal the math gives). exp's
// 1 ulp becomes up to 4 here: where exp(-x) lies at the top of a binade and 1 / (1 + exp(-x)) at
// the bottom of one, one ulp of the first is two to four of the second.
double sigmoid_ref(double x) { return 1.0f / (1.0f + static_cast<float>(std::exp(-x))); }

TEST(CpuVecMath, ExpFamilyOverTheFloatLine) {
  check({"exp", [](const Tensor& x) { return exp(x); }, [](double v) { return std::exp(v); }, 1});
  check({"exp2", [](const Tensor& x) { return exp2(x); }, [](double v) { return std::exp2(v); }, 1});
  check({"expm1", [](const Tensor& x) { return expm1(x); }, [](double v) { return std::expm1(v); }, 2});
  check({"sigmoid", [](const Tensor& x) { return sigmoid(x); }, sigmoid_ref, 4});
}

TEST(CpuVecMath, LogFamilyOverTheFloatLine) {
  check({"log", [](const Tensor& x) { return log(x); }, [](double v) { return std::log(v); }, 1});
  check({"log1p", [](const Tensor& x) { return log1p(x); }, [](double v) { return std::log1p(v); }, 1});
}

TEST(CpuVecMath, TanhAndErfOverTheFloatLine) {
  check({"tanh", [](const Tensor& x) { return tanh(x); }, [](double v) { return std::tanh(v); }, 2});
  check({"erf", [](const Tensor& x) { return erf(x); }, [](double v) { return std::erf(v); }, 2});
}

}  // namespace
}  // namespace kiln
