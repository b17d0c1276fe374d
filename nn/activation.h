// kiln/nn/activation.h — the activation and dropout modules, as torch::nn's: ReLU, GELU, Tanh,
// Sigmoid, SiLU, LeakyReLU, Softmax, LogSoftmax and Dropout (which zeroes with probability p
// in training mode and passes the input through in evaluation mode).
#pragma once

#include "frontend/ops.h"
#include "frontend/ops_activation.h"
#include "frontend/ops_dropout.h"
#include "frontend/ops_softmax.h"
#include "nn/module.h"

#include <ostream>
#include <string>

namespace kiln::nn {

class ReLUImpl : public Module {
 public:
  ReLUImpl() : Module("ReLU") {}
  Tensor forward(const Tensor& x) const { return relu(x); }
};
KILN_MODULE(ReLU);

class GELUImpl : public Module {
 public:
  explicit GELUImpl(std::string approximate = "none") : Module("GELU"), approximate(std::move(approximate)) {}
  Tensor forward(const Tensor& x) const { return gelu(x, approximate); }
  void pretty_print(std::ostream& os) const override { os << "GELU(approximate='" << approximate << "')"; }
  std::string approximate;
};
KILN_MODULE(GELU);

class TanhImpl : public Module {
 public:
  TanhImpl() : Module("Tanh") {}
  Tensor forward(const Tensor& x) const { return tanh(x); }
};
KILN_MODULE(Tanh);

class SigmoidImpl : public Module {
 public:
  SigmoidImpl() : Module("Sigmoid") {}
  Tensor forward(const Tensor& x) const { return sigmoid(x); }
};
KILN_MODULE(Sigmoid);

class SiLUImpl : public Module {
 public:
  SiLUImpl() : Module("SiLU") {}
  Tensor forward(const Tensor& x) const { return silu(x); }
};
KILN_MODULE(SiLU);

class LeakyReLUImpl : public Module {
 public:
  explicit LeakyReLUImpl(double negative_slope = 0.01) : Module("LeakyReLU"), negative_slope(negative_slope) {}
  Tensor forward(const Tensor& x) const { return leaky_relu(x, negative_slope); }
  void pretty_print(std::ostream& os) const override { os << "LeakyReLU(negative_slope=" << negative_slope << ")"; }
  double negative_slope;
};
KILN_MODULE(LeakyReLU);

class SoftmaxImpl : public Module {
 public:
  explicit SoftmaxImpl(int64_t dim) : Module("Softmax"), dim(dim) {}
  Tensor forward(const Tensor& x) const { return softmax(x, dim); }
  void pretty_print(std::ostream& os) const override { os << "Softmax(dim=" << dim << ")"; }
  int64_t dim;
};
KILN_MODULE(Softmax);

class LogSoftmaxImpl : public Module {
 public:
  explicit LogSoftmaxImpl(int64_t dim) : Module("LogSoftmax"), dim(dim) {}
  Tensor forward(const Tensor& x) const { return log_softmax(x, dim); }
  void pretty_print(std::ostream& os) const override { os << "LogSoftmax(dim=" << dim << ")"; }
  int64_t dim;
};
KILN_MODULE(LogSoftmax);

class DropoutImpl : public Module {
 public:
  explicit DropoutImpl(double p = 0.5) : Module("Dropout"), p(p) {
    if (p < 0 || p > 1) fail("Dropout", "dropout probability has to be between 0 and 1, but got {}", p);
  }
  Tensor forward(const Tensor& x) const { return dropout(x, p, is_training()); }
  void pretty_print(std::ostream& os) const override { os << "Dropout(p=" << p << ")"; }
  double p;
};
KILN_MODULE(Dropout);

}  // namespace kiln::nn
