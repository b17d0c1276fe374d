// kiln/frontend/derivatives_dropout.cpp — the Dropout family's derivatives (frontend/derivatives.h).
#include "frontend/derivatives_detail.h"

namespace kiln::autograd {

void add_dropout_derivatives(DerivativeTable& t) { (void)t; }

}  // namespace kiln::autograd
