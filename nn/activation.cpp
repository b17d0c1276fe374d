// kiln/nn/activation.cpp — PReLU's parameter (nn/activation.h); the other activation modules
// are defined in the header.
#include "nn/activation.h"

#include "frontend/ops_factory.h"
#include "nn/init.h"

namespace kiln::nn {

PReLUImpl::PReLUImpl(int64_t num_parameters, double init)
    : Module("PReLU"), num_parameters(num_parameters), init(init) {
  weight = register_parameter("weight", kiln::empty({num_parameters}));
  reset_parameters();
}

void PReLUImpl::reset_parameters() { init::constant_(weight, init); }

}  // namespace kiln::nn
