// kiln/frontend/derivatives_pool.cpp — the Pool family's derivatives (frontend/derivatives.h).
#include "frontend/derivatives_detail.h"

namespace kiln::autograd {

void add_pool_derivatives(DerivativeTable& t) { (void)t; }

}  // namespace kiln::autograd
