// kiln/frontend/operands.cpp — elementwise operands (frontend/operands.h).
#include "frontend/operands.h"

#include "base/error.h"
#include "frontend/ops_factory.h"
#include "frontend/symbolic.h"
#include "frontend/ops_view.h"
#include "ir/shape_env.h"

#include <optional>
#include <vector>

namespace kiln {

namespace {

std::vector<const Tensor*> tensors_in(const std::vector<TensorOrScalar>& operands) {
  std::vector<const Tensor*> ts;
  for (const TensorOrScalar& o : operands)
    if (const Tensor* t = std::get_if<Tensor>(&o)) ts.push_back(t);
  return ts;
}

}  // namespace

ScalarType operand_type(const TensorOrScalar& op) {
  if (const Tensor* t = std::get_if<Tensor>(&op)) return t->dtype();
  return std::get<Scalar>(op).type();
}

Device common_device(std::string_view op, const std::vector<TensorOrScalar>& operands) {
  std::optional<Device> dev;
  std::optional<Device> cpu_scalar;
  for (const TensorOrScalar& o : operands) {
    const Tensor* t = std::get_if<Tensor>(&o);
    if (!t) continue;
    if (t->dim() == 0 && t->device().is_cpu()) {
      cpu_scalar = t->device();
      continue;
    }
    if (!dev) {
      dev = t->device();
    } else if (*dev != t->device()) {
      fail(op, "Expected all tensors to be on the same device, but found at least two devices, {} and {}!",
           dev->str(), t->device().str());
    }
  }
  if (dev) return *dev;
  if (cpu_scalar) return *cpu_scalar;
  return Device();
}

BroadcastShape::BroadcastShape(std::string_view op, const std::vector<const Tensor*>& ts) {
  for (const Tensor* t : ts) symbolic = symbolic || is_symbolic(*t);
  for (size_t i = 0; i < ts.size(); ++i) {
    if (symbolic) exprs = i == 0 ? sym_sizes(*ts[i]) : sym_broadcast_shapes(op, exprs, sym_sizes(*ts[i]));
    else ints = i == 0 ? ts[i]->sizes().vec() : broadcast_shapes(op, ints, ts[i]->sizes());
  }
}

Tensor BroadcastShape::expand(const Tensor& t) const {
  if (symbolic) return sym_expand(t, exprs);
  return t.sizes() == IntArrayRef(ints) ? t : t.expand(ints);
}

std::vector<Tensor> promote_and_broadcast(std::string_view op, const std::vector<TensorOrScalar>& operands,
                                          ScalarType dtype) {
  Device device = common_device(op, operands);
  const BroadcastShape shape(op, tensors_in(operands));
  std::vector<Tensor> out;
  out.reserve(operands.size());
  for (const TensorOrScalar& o : operands) {
    Tensor t;
    if (const Tensor* pt = std::get_if<Tensor>(&o)) {
      t = pt->to(dtype);
      if (t.device() != device && !t.is_traced()) t = t.to(device);  // a 0-dim cpu tensor joins as a scalar
    } else {
      t = wrapped_number(std::get<Scalar>(o), dtype, device);
    }
    out.push_back(shape.expand(t));
  }
  return out;
}

}  // namespace kiln
