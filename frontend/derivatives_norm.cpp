// kiln/frontend/derivatives_norm.cpp — the Norm family's derivatives (frontend/derivatives.h).
#include "frontend/derivatives_detail.h"

namespace kiln::autograd {

void add_norm_derivatives(DerivativeTable& t) { (void)t; }

}  // namespace kiln::autograd
