// kiln/nn/linear.h — Linear and Identity, as torch::nn::Linear (y = x W^T + b) and Identity.
// A fresh Linear draws W and b from U(-1/sqrt(in_features), 1/sqrt(in_features)), PyTorch's
// kaiming_uniform_(a = sqrt(5)) and bias rule.
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

class IdentityImpl : public Module {
 public:
  IdentityImpl() : Module("Identity") {}
  Tensor forward(const Tensor& input) const { return input; }
};
KILN_MODULE(Identity);

}  // namespace kiln::nn
