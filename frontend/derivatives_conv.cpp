// kiln/frontend/derivatives_conv.cpp — the Conv family's derivatives (frontend/derivatives.h).
#include "frontend/derivatives_detail.h"

namespace kiln::autograd {

void add_conv_derivatives(DerivativeTable& t) { (void)t; }

}  // namespace kiln::autograd
