// kiln/frontend/derivatives_softmax.cpp — the Softmax family's derivatives (frontend/derivatives.h).
#include "frontend/derivatives_detail.h"

namespace kiln::autograd {

void add_softmax_derivatives(DerivativeTable& t) { (void)t; }

}  // namespace kiln::autograd
