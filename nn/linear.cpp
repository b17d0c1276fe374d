// kiln/nn/linear.cpp — Linear and Bilinear (nn/linear.h).
#include "nn/linear.h"

#include "base/error.h"
#include "frontend/ops.h"
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

BilinearImpl::BilinearImpl(const BilinearOptions& o) : Module("Bilinear"), options(o) {
  if (o.in1_features_ <= 0 || o.in2_features_ <= 0 || o.out_features_ < 0)
    fail("Bilinear", "in1_features and in2_features must be positive and out_features non-negative, got {}, {}, {}",
         o.in1_features_, o.in2_features_, o.out_features_);
  weight = register_parameter("weight", kiln::empty({o.out_features_, o.in1_features_, o.in2_features_}));
  bias = register_parameter("bias", o.bias_ ? kiln::empty({o.out_features_}) : Tensor());
  reset_parameters();
}

void BilinearImpl::reset_parameters() {
  const double bound = 1.0 / std::sqrt(static_cast<double>(options.in1_features_));
  init::uniform_(weight, -bound, bound);
  if (bias.defined()) init::uniform_(bias, -bound, bound);
}

Tensor BilinearImpl::forward(const Tensor& input1, const Tensor& input2) const {
  if (input1.dim() < 1 || input1.dim() != input2.dim())
    fail("Bilinear", "input1 and input2 must have the same number of dims, got {} and {}", input1.dim(), input2.dim());
  for (int64_t d = 0; d + 1 < input1.dim(); ++d)
    if (input1.size(d) != input2.size(d))
      fail("Bilinear", "input1 and input2 must have the same leading dims, got {} and {}", shape_str(input1.sizes()),
           shape_str(input2.sizes()));
  if (input1.size(-1) != options.in1_features_ || input2.size(-1) != options.in2_features_)
    fail("Bilinear", "expected inputs of {} and {} features, got {} and {}", options.in1_features_,
         options.in2_features_, input1.size(-1), input2.size(-1));
  const Tensor y = einsum("...i,oij,...j->...o", {input1, weight, input2});
  return bias.defined() ? y + bias : y;
}

void BilinearImpl::pretty_print(std::ostream& os) const {
  os << "Bilinear(in1_features=" << options.in1_features_ << ", in2_features=" << options.in2_features_
     << ", out_features=" << options.out_features_ << ", bias=" << (bias.defined() ? "true" : "false") << ")";
}

}  // namespace kiln::nn
