// kiln/ir/tensor_type.cpp — printing and element counts of tensor types.
#include "ir/tensor_type.h"

namespace kiln::ir {

Expr TensorType::numel() const {
  Expr n = 1;
  for (const Expr& s : sizes) n = n * s;
  return n;
}

std::string TensorType::str() const {
  std::string out(dtype_short_name(dtype));
  out += "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i) out += ", ";
    out += sizes[i].str();
  }
  out += "]";
  if (!device.is_cpu()) out += "@" + device.str();
  return out;
}

std::vector<Expr> contiguous_strides(const std::vector<Expr>& sizes) {
  std::vector<Expr> st(sizes.size());
  Expr acc = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    st[i] = acc;
    acc = acc * sizes[i];
  }
  return st;
}

}  // namespace kiln::ir
