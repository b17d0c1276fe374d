// kiln/frontend/derivatives_factory.cpp — the Factory family has no derivatives: its ops take
// no tensors.
#include "frontend/derivatives_detail.h"

namespace kiln::autograd {

void add_factory_derivatives(DerivativeTable& t) {
  t.none(ir::OpKind::iota, "it takes no tensor");
  t.none(ir::OpKind::full, "it takes no tensor");
}


}  // namespace kiln::autograd
