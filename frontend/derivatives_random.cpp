// kiln/frontend/derivatives_random.cpp — the Random family has no derivatives: its ops take no
// tensors, and a draw is a constant of the program.
#include "frontend/derivatives_detail.h"

namespace kiln::autograd {

void add_random_derivatives(DerivativeTable& t) {
  t.none(ir::OpKind::uniform, "it is a random draw");
  t.none(ir::OpKind::normal, "it is a random draw");
}

}  // namespace kiln::autograd
