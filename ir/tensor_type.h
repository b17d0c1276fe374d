// kiln/ir/tensor_type.h — the type of an IR value: dtype, device and (symbolic) sizes.
//
// Graph values are functional: they carry no strides. Layout is decided by the passes and the
// backends, and eager tensors keep their own strides.
#pragma once

#include "base/device.h"
#include "base/dtype.h"
#include "ir/expr.h"

#include <string>
#include <vector>

namespace kiln::ir {

struct TensorType {
  ScalarType dtype = ScalarType::Float;
  Device device;
  std::vector<Expr> sizes;

  TensorType() = default;
  TensorType(ScalarType dt, std::vector<Expr> sz, Device dev = Device()) : dtype(dt), device(dev), sizes(std::move(sz)) {}

  int64_t rank() const { return static_cast<int64_t>(sizes.size()); }
  bool is_static() const { return all_const(sizes); }
  std::vector<int64_t> static_sizes() const { return to_ints(sizes); }
  Expr numel() const;
  // "f32[4, s0]" and, off the CPU, "f32[4, s0]@cuda:0".
  std::string str() const;
  bool operator==(const TensorType& o) const { return dtype == o.dtype && device == o.device && sizes == o.sizes; }
  bool operator!=(const TensorType& o) const { return !(*this == o); }
};

// Contiguous (row-major) strides for sizes.
std::vector<Expr> contiguous_strides(const std::vector<Expr>& sizes);

}  // namespace kiln::ir
