// kiln/nn/init.cpp — parameter initialization (nn/init.h). Every draw is made in float64 (f32
// for f32 tensors) and written with copy_ under NoGradGuard, so a parameter that requires grad
// can be initialized and records no history.
#include "nn/init.h"

#include "base/error.h"
#include "frontend/grad_mode.h"
#include "frontend/ops.h"
#include "frontend/ops_factory.h"

#include <cmath>

namespace kiln::nn::init {

namespace {

Tensor& fill_from(Tensor& t, const Tensor& values) {
  NoGradGuard no_grad;
  t.copy_(values);
  return t;
}

void check(const Tensor& t, const char* op) {
  if (!t.defined()) fail(op, "the tensor is undefined");
  if (!is_floating_point(t.dtype())) fail(op, "expected a floating point tensor, got {}", dtype_name(t.dtype()));
}

// Draws in the tensor's dtype when it is f32 or f64, in f32 for f16/bf16 (rounded on copy).
TensorOptions draw_options(const Tensor& t) {
  const ScalarType d = t.dtype() == ScalarType::Double ? ScalarType::Double : ScalarType::Float;
  return TensorOptions(d).device(t.device());
}

int64_t fan(const Tensor& t, const std::string& mode, const char* op) {
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  if (mode == "fan_in") return fan_in;
  if (mode == "fan_out") return fan_out;
  fail(op, "Mode {} not supported, please use one of fan_in, fan_out", mode);
}

}  // namespace

double calculate_gain(const std::string& nonlinearity, double param) {
  if (nonlinearity == "linear" || nonlinearity == "conv1d" || nonlinearity == "conv2d" ||
      nonlinearity == "conv3d" || nonlinearity == "conv_transpose1d" || nonlinearity == "conv_transpose2d" ||
      nonlinearity == "conv_transpose3d" || nonlinearity == "sigmoid")
    return 1.0;
  if (nonlinearity == "tanh") return 5.0 / 3.0;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") return std::sqrt(2.0 / (1.0 + param * param));
  if (nonlinearity == "selu") return 3.0 / 4.0;
  fail("calculate_gain", "Unsupported nonlinearity {}", nonlinearity);
}

std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t) {
  if (t.dim() < 2)
    fail("calculate_fan_in_and_fan_out", "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions");
  int64_t receptive = 1;
  for (int64_t d = 2; d < t.dim(); ++d) receptive *= t.size(d);
  return {t.size(1) * receptive, t.size(0) * receptive};
}

Tensor uniform_(Tensor t, double a, double b) {
  check(t, "uniform_");
  return fill_from(t, rand(t.sizes(), draw_options(t)) * (b - a) + a);
}

Tensor normal_(Tensor t, double mean, double std) {
  check(t, "normal_");
  return fill_from(t, randn(t.sizes(), draw_options(t)) * std + mean);
}

Tensor constant_(Tensor t, double value) {
  if (!t.defined()) fail("constant_", "the tensor is undefined");
  NoGradGuard no_grad;
  t.fill_(value);
  return t;
}

Tensor ones_(Tensor t) { return constant_(std::move(t), 1.0); }
Tensor zeros_(Tensor t) { return constant_(std::move(t), 0.0); }

Tensor eye_(Tensor t) {
  if (!t.defined() || t.dim() != 2) fail("eye_", "Only tensors with 2 dimensions are supported");
  return fill_from(t, eye(t.size(0), t.size(1), TensorOptions(t.dtype()).device(t.device())));
}

Tensor xavier_uniform_(Tensor t, double gain) {
  check(t, "xavier_uniform_");
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  const double bound = std::sqrt(3.0) * gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
  return uniform_(std::move(t), -bound, bound);
}

Tensor xavier_normal_(Tensor t, double gain) {
  check(t, "xavier_normal_");
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  return normal_(std::move(t), 0.0, gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out)));
}

Tensor kaiming_uniform_(Tensor t, double a, const std::string& mode, const std::string& nonlinearity) {
  check(t, "kaiming_uniform_");
  if (t.numel() == 0) return t;  // PyTorch warns and leaves an empty tensor as it is
  const double std = calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan(t, mode, "kaiming_uniform_")));
  const double bound = std::sqrt(3.0) * std;
  return uniform_(std::move(t), -bound, bound);
}

Tensor kaiming_normal_(Tensor t, double a, const std::string& mode, const std::string& nonlinearity) {
  check(t, "kaiming_normal_");
  if (t.numel() == 0) return t;
  const double std = calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan(t, mode, "kaiming_normal_")));
  return normal_(std::move(t), 0.0, std);
}

Tensor trunc_normal_(Tensor t, double mean, double std, double a, double b) {
  check(t, "trunc_normal_");
  if (!(a < b)) fail("trunc_normal_", "the bounds must satisfy a < b, got a = {}, b = {}", a, b);
  auto cdf = [](double x) { return (1.0 + std::erf(x / std::sqrt(2.0))) / 2.0; };
  const double l = cdf((a - mean) / std), u = cdf((b - mean) / std);
  // Uniform on [2l - 1, 2u - 1], then the inverse of the normal CDF through erfinv.
  const Tensor v = rand(t.sizes(), TensorOptions(ScalarType::Double).device(t.device())) * (2 * u - 2 * l) + (2 * l - 1);
  return fill_from(t, clamp(erfinv(v) * (std * std::sqrt(2.0)) + mean, Scalar(a), Scalar(b)));
}

}  // namespace kiln::nn::init
