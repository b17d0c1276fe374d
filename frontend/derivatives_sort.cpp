// kiln/frontend/derivatives_sort.cpp — the Sort family's derivatives (frontend/derivatives.h):
// argsort's result is indices (none); sort and topk are differentiated through their
// decompositions, whose values are a gather of the input at those indices.
#include "frontend/derivatives_detail.h"

namespace kiln::autograd {

void add_sort_derivatives(DerivativeTable& t) { t.none(ir::OpKind::argsort, "its result is indices"); }

}  // namespace kiln::autograd
