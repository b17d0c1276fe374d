// kiln/nn/linear.cpp — Linear (nn/linear.h).
#include "nn/linear.h"

#include "base/error.h"
#include "frontend/ops_factory.h"
#include "frontend/ops_linear.h"
#include "nn/init.h"

#include <cmath>
#include <ostream>

namespace kiln::nn {

LinearImpl::LinearImpl(const LinearOptions& o) : Module("Linear"), options(o) {
  if (o.in_features_ < 0 || o.out_features_ < 0)
    fail("Linear", "in_features and out_features must be non-negative, got {} and {}", o.in_features_, o.out_features_);
  weight = register_parameter("weight", kiln::empty({o.out_features_, o.in_features_}));
  bias = register_parameter("bias", o.bias_ ? kiln::empty({o.out_features_}) : Tensor());
  reset_parameters();
}

void LinearImpl::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const int64_t fan_in = options.in_features_;
    const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor LinearImpl::forward(const Tensor& input) const {
  return linear(input, weight, bias.defined() ? std::optional<Tensor>(bias) : std::nullopt);
}

void LinearImpl::pretty_print(std::ostream& os) const {
  os << "Linear(in_features=" << options.in_features_ << ", out_features=" << options.out_features_
     << ", bias=" << (bias.defined() ? "true" : "false") << ")";
}

}  // namespace kiln::nn
