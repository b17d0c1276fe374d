// kiln/nn/linear.h — Linear, Bilinear and Identity, as torch::nn's.
//   Linear    y = x W^T + b; W and b from U(-1/sqrt(in_features), 1/sqrt(in_features)) (PyTorch's
//             kaiming_uniform_(a = sqrt(5)) and bias rule)
//   Bilinear  y_o = x1^T W_o x2 + b_o with W [out, in1, in2]; W and b from U(-1/sqrt(in1),
//             1/sqrt(in1)); x1 [..., in1] and x2 [..., in2] share their leading dims
#pragma once

#include "nn/module.h"

namespace kiln::nn {

struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features) : in_features_(in_features), out_features_(out_features) {}
  LinearOptions& bias(bool on) {
    bias_ = on;
    return *this;
  }
  int64_t in_features_, out_features_;
  bool bias_ = true;
};

class LinearImpl : public Module {
 public:
  LinearImpl(int64_t in_features, int64_t out_features) : LinearImpl(LinearOptions(in_features, out_features)) {}
  explicit LinearImpl(const LinearOptions& options);
  void reset_parameters();
  Tensor forward(const Tensor& input) const;
  void pretty_print(std::ostream& os) const override;

  LinearOptions options;
  Tensor weight;  // [out_features, in_features]
  Tensor bias;    // [out_features], undefined without bias
};
KILN_MODULE(Linear);

struct BilinearOptions {
  BilinearOptions(int64_t in1_features, int64_t in2_features, int64_t out_features)
      : in1_features_(in1_features), in2_features_(in2_features), out_features_(out_features) {}
  BilinearOptions& bias(bool on) {
    bias_ = on;
    return *this;
  }
  int64_t in1_features_, in2_features_, out_features_;
  bool bias_ = true;
};

class BilinearImpl : public Module {
 public:
  BilinearImpl(int64_t in1, int64_t in2, int64_t out) : BilinearImpl(BilinearOptions(in1, in2, out)) {}
  explicit BilinearImpl(const BilinearOptions& options);
  void reset_parameters();
  Tensor forward(const Tensor& input1, const Tensor& input2) const;
  void pretty_print(std::ostream& os) const override;

  BilinearOptions options;
  Tensor weight;  // [out, in1, in2]
  Tensor bias;    // [out]
};
KILN_MODULE(Bilinear);

class IdentityImpl : public Module {
 public:
  IdentityImpl() : Module("Identity") {}
  Tensor forward(const Tensor& input) const { return input; }
};
KILN_MODULE(Identity);

}  // namespace kiln::nn
