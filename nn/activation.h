// kiln/nn/activation.h — the activation and dropout modules, as torch::nn's: ReLU, GELU, Tanh,
// Sigmoid, SiLU, LeakyReLU, ELU, SELU, CELU, Hardtanh, ReLU6, Hardswish, Hardsigmoid, Mish,
// Softplus, Softsign, Tanhshrink, Hardshrink, Softshrink, Threshold, LogSigmoid, GLU, PReLU
// (a learned slope per channel, or one), RReLU (random slopes in training mode), Softmax,
// Softmin, LogSoftmax, Dropout (which zeroes with probability p in training mode and passes
// the input through in evaluation mode) and Dropout1d/2d/3d (whole channels). Each prints as libtorch's does, without "torch::nn::".
#pragma once

#include "frontend/ops.h"
#include "frontend/ops_activation.h"
#include "frontend/ops_dropout.h"
#include "frontend/ops_linear.h"
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

// A module of one activation without options: Name()(x) is fn(x).
#define KILN_PLAIN_ACTIVATION(Name, fn)                          \
  class Name##Impl : public Module {                             \
   public:                                                       \
    Name##Impl() : Module(#Name) {}                              \
    Tensor forward(const Tensor& x) const { return fn(x); }      \
  };                                                             \
  KILN_MODULE(Name)
KILN_PLAIN_ACTIVATION(SELU, selu);
KILN_PLAIN_ACTIVATION(ReLU6, relu6);
KILN_PLAIN_ACTIVATION(Hardswish, hardswish);
KILN_PLAIN_ACTIVATION(Hardsigmoid, hardsigmoid);
KILN_PLAIN_ACTIVATION(Mish, mish);
KILN_PLAIN_ACTIVATION(Softsign, softsign);
KILN_PLAIN_ACTIVATION(Tanhshrink, tanhshrink);
KILN_PLAIN_ACTIVATION(LogSigmoid, log_sigmoid);
#undef KILN_PLAIN_ACTIVATION

class ELUImpl : public Module {
 public:
  explicit ELUImpl(double alpha = 1.0) : Module("ELU"), alpha(alpha) {}
  Tensor forward(const Tensor& x) const { return elu(x, alpha); }
  void pretty_print(std::ostream& os) const override { os << "ELU(alpha=" << alpha << ")"; }
  double alpha;
};
KILN_MODULE(ELU);

class CELUImpl : public Module {
 public:
  explicit CELUImpl(double alpha = 1.0) : Module("CELU"), alpha(alpha) {}
  Tensor forward(const Tensor& x) const { return celu(x, alpha); }
  void pretty_print(std::ostream& os) const override { os << "CELU(alpha=" << alpha << ")"; }
  double alpha;
};
KILN_MODULE(CELU);

class HardtanhImpl : public Module {
 public:
  explicit HardtanhImpl(double min_val = -1.0, double max_val = 1.0) : Module("Hardtanh"), min_val(min_val), max_val(max_val) {
    if (max_val <= min_val) fail("Hardtanh", "max_val must be greater than min_val");
  }
  Tensor forward(const Tensor& x) const { return hardtanh(x, min_val, max_val); }
  void pretty_print(std::ostream& os) const override { os << "Hardtanh(min_val=" << min_val << ", max_val=" << max_val << ")"; }
  double min_val, max_val;
};
KILN_MODULE(Hardtanh);

class SoftplusImpl : public Module {
 public:
  explicit SoftplusImpl(double beta = 1.0, double threshold = 20.0) : Module("Softplus"), beta(beta), threshold(threshold) {}
  Tensor forward(const Tensor& x) const { return softplus(x, beta, threshold); }
  void pretty_print(std::ostream& os) const override { os << "Softplus(beta=" << beta << ", threshold=" << threshold << ")"; }
  double beta, threshold;
};
KILN_MODULE(Softplus);

class HardshrinkImpl : public Module {
 public:
  explicit HardshrinkImpl(double lambda = 0.5) : Module("Hardshrink"), lambda(lambda) {}
  Tensor forward(const Tensor& x) const { return hardshrink(x, lambda); }
  void pretty_print(std::ostream& os) const override { os << "Hardshrink(" << lambda << ")"; }
  double lambda;
};
KILN_MODULE(Hardshrink);

class SoftshrinkImpl : public Module {
 public:
  explicit SoftshrinkImpl(double lambda = 0.5) : Module("Softshrink"), lambda(lambda) {}
  Tensor forward(const Tensor& x) const { return softshrink(x, lambda); }
  void pretty_print(std::ostream& os) const override { os << "Softshrink(" << lambda << ")"; }
  double lambda;
};
KILN_MODULE(Softshrink);

class ThresholdImpl : public Module {
 public:
  ThresholdImpl(double threshold, double value) : Module("Threshold"), threshold(threshold), value(value) {}
  Tensor forward(const Tensor& x) const { return kiln::threshold(x, threshold, value); }
  void pretty_print(std::ostream& os) const override { os << "Threshold(threshold=" << threshold << ", value=" << value << ")"; }
  double threshold, value;
};
KILN_MODULE(Threshold);

class GLUImpl : public Module {
 public:
  explicit GLUImpl(int64_t dim = -1) : Module("GLU"), dim(dim) {}
  Tensor forward(const Tensor& x) const { return glu(x, dim); }
  void pretty_print(std::ostream& os) const override { os << "GLU(dim=" << dim << ")"; }
  int64_t dim;
};
KILN_MODULE(GLU);

// weight: num_parameters slopes (1, or the input's channels), each `init` at first (no check, as
// libtorch's: a weight of another size is refused when called).
class PReLUImpl : public Module {
 public:
  explicit PReLUImpl(int64_t num_parameters = 1, double init = 0.25);
  void reset_parameters();  // every slope back to `init`
  Tensor forward(const Tensor& x) const { return prelu(x, weight); }
  void pretty_print(std::ostream& os) const override { os << "PReLU(num_parameters=" << num_parameters << ")"; }
  int64_t num_parameters;
  double init;
  Tensor weight;  // [num_parameters]
};
KILN_MODULE(PReLU);

// Random slopes in U(lower, upper) in training mode; their mean in evaluation mode. The bounds
// are checked when called, as libtorch checks them.
class RReLUImpl : public Module {
 public:
  explicit RReLUImpl(double lower = 1.0 / 8, double upper = 1.0 / 3) : Module("RReLU"), lower(lower), upper(upper) {}
  Tensor forward(const Tensor& x) const { return rrelu(x, lower, upper, is_training()); }
  void pretty_print(std::ostream& os) const override { os << "RReLU(lower=" << lower << ", upper=" << upper << ")"; }
  double lower, upper;
};
KILN_MODULE(RReLU);

class SoftmaxImpl : public Module {
 public:
  explicit SoftmaxImpl(int64_t dim) : Module("Softmax"), dim(dim) {}
  Tensor forward(const Tensor& x) const { return softmax(x, dim); }
  void pretty_print(std::ostream& os) const override { os << "Softmax(dim=" << dim << ")"; }
  int64_t dim;
};
KILN_MODULE(Softmax);

class SoftminImpl : public Module {
 public:
  explicit SoftminImpl(int64_t dim) : Module("Softmin"), dim(dim) {}
  Tensor forward(const Tensor& x) const { return softmin(x, dim); }
  void pretty_print(std::ostream& os) const override { os << "Softmin(dim=" << dim << ")"; }
  int64_t dim;
};
KILN_MODULE(Softmin);

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

// Channel-wise dropout (frontend/ops_dropout.h): Dropout1d on [N, C, L] or [C, L], Dropout2d
// on [N, C, H, W], Dropout3d on [N, C, D, H, W] or [C, D, H, W].
#define KILN_CHANNEL_DROPOUT(Name, fn)                                                                      \
  class Name##Impl : public Module {                                                                        \
   public:                                                                                                  \
    explicit Name##Impl(double p = 0.5) : Module(#Name), p(p) {                                             \
      if (p < 0 || p > 1) fail(#Name, "dropout probability has to be between 0 and 1, but got {}", p);      \
    }                                                                                                       \
    Tensor forward(const Tensor& x) const { return fn(x, p, is_training()); }                               \
    void pretty_print(std::ostream& os) const override { os << #Name "(p=" << p << ")"; }                   \
    double p;                                                                                               \
  };                                                                                                        \
  KILN_MODULE(Name)
KILN_CHANNEL_DROPOUT(Dropout1d, dropout1d);
KILN_CHANNEL_DROPOUT(Dropout2d, dropout2d);
KILN_CHANNEL_DROPOUT(Dropout3d, dropout3d);
#undef KILN_CHANNEL_DROPOUT

}  // namespace kiln::nn
