// kiln/frontend/operands.h — internal: the operands of an elementwise op, made ready for its
// prim: one dtype, one device, one (broadcast) shape. Used by the Unary, Binary, Ternary and
// Pointwise families' frontends. Not part of the public API.
#pragma once

#include "frontend/promotion.h"
#include "frontend/tensor.h"
#include "ir/expr.h"

#include <string_view>
#include <vector>

namespace kiln {

// A scalar's own type, or a tensor's dtype.
ScalarType operand_type(const TensorOrScalar& op);

// The device of the tensor operands; all must agree, except that a 0-dim CPU tensor may join
// tensors on another device (as PyTorch allows). Fails naming op.
Device common_device(std::string_view op, const std::vector<TensorOrScalar>& operands);

// The broadcast shape of some tensors: integers, or expressions when any is traced with
// symbolic sizes (decided with guards, frontend/symbolic.h).
struct BroadcastShape {
  bool symbolic = false;
  std::vector<int64_t> ints;
  std::vector<ir::Expr> exprs;

  BroadcastShape(std::string_view op, const std::vector<const Tensor*>& ts);
  Tensor expand(const Tensor& t) const;
};

// Every operand as a tensor of `dtype` on the common device with the broadcast shape of the
// tensors (scalars become 0-dim `full` tensors first).
std::vector<Tensor> promote_and_broadcast(std::string_view op, const std::vector<TensorOrScalar>& operands,
                                          ScalarType dtype);

}  // namespace kiln
