// kiln/frontend/ops_binary_aliases.cpp — libtorch's other names for binary ops (frontend/ops.h):
// divide, multiply, subtract, greater, greater_equal, less, less_equal, not_equal, arctan2.
#include "frontend/ops.h"

namespace kiln {

Tensor divide(const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode) {
  return div(self, other, rounding_mode);
}
Tensor divide(const Tensor& self, const Scalar& other, std::optional<std::string_view> rounding_mode) {
  return div(self, other, rounding_mode);
}
Tensor subtract(const Tensor& self, const Tensor& other, const Scalar& alpha) { return sub(self, other, alpha); }
Tensor subtract(const Tensor& self, const Scalar& other, const Scalar& alpha) { return sub(self, other, alpha); }

#define KILN_BINARY_ALIAS(alias, name)                                                         \
  Tensor alias(const Tensor& self, const Tensor& other) { return name(self, other); }        \
  Tensor alias(const Tensor& self, const Scalar& other) { return name(self, other); }
KILN_BINARY_ALIAS(multiply, mul) KILN_BINARY_ALIAS(greater, gt) KILN_BINARY_ALIAS(greater_equal, ge)
KILN_BINARY_ALIAS(less, lt) KILN_BINARY_ALIAS(less_equal, le) KILN_BINARY_ALIAS(not_equal, ne)
KILN_BINARY_ALIAS(arctan2, atan2)
#undef KILN_BINARY_ALIAS

}  // namespace kiln
