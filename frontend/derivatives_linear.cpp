// kiln/frontend/derivatives_linear.cpp — the Linear family's derivatives (frontend/derivatives.h).
#include "frontend/derivatives_detail.h"

namespace kiln::autograd {

void add_linear_derivatives(DerivativeTable& t) { (void)t; }

}  // namespace kiln::autograd
