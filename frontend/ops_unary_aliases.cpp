// kiln/frontend/ops_unary_aliases.cpp — libtorch's other names for unary ops (frontend/ops.h):
// the NumPy spellings arccos, arcsin, arctan, arccosh, arcsinh, arctanh; absolute, positive,
// fix (trunc), sgn (sign, for real dtypes), and isposinf / isneginf (negative is ops_unary.cpp's).
#include "base/error.h"
#include "frontend/ops.h"

#include <cmath>

namespace kiln {

Tensor arccos(const Tensor& self) { return acos(self); }
Tensor arcsin(const Tensor& self) { return asin(self); }
Tensor arctan(const Tensor& self) { return atan(self); }
Tensor arccosh(const Tensor& self) { return acosh(self); }
Tensor arcsinh(const Tensor& self) { return asinh(self); }
Tensor arctanh(const Tensor& self) { return atanh(self); }
Tensor absolute(const Tensor& self) { return abs(self); }
Tensor fix(const Tensor& self) { return trunc(self); }
Tensor sgn(const Tensor& self) { return sign(self); }

// The tensor itself, as torch.positive (which refuses bool).
Tensor positive(const Tensor& self) {
  if (self.dtype() == ScalarType::Bool) fail("positive", "The `+` operator, on a bool tensor is not supported.");
  return self;
}

// Equal to +inf / -inf; never for integer and bool tensors.
Tensor isposinf(const Tensor& self) { return is_floating_point(self.dtype()) ? eq(self, INFINITY) : ne(self, self); }
Tensor isneginf(const Tensor& self) { return is_floating_point(self.dtype()) ? eq(self, -INFINITY) : ne(self, self); }

}  // namespace kiln
