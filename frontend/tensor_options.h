// kiln/frontend/tensor_options.h — dtype and device for factories, as torch::TensorOptions.
#pragma once

#include "base/device.h"
#include "base/dtype.h"

#include <optional>

namespace kiln {

struct TensorOptions {
  std::optional<ScalarType> dtype_;
  std::optional<Device> device_;

  TensorOptions() = default;
  TensorOptions(ScalarType t) : dtype_(t) {}  // NOLINT: torch::zeros({2}, torch::kFloat64)
  TensorOptions(Device d) : device_(d) {}     // NOLINT
  TensorOptions(DeviceType d) : device_(Device(d)) {}  // NOLINT

  TensorOptions dtype(ScalarType t) const {
    TensorOptions o = *this;
    o.dtype_ = t;
    return o;
  }
  TensorOptions device(Device d) const {
    TensorOptions o = *this;
    o.device_ = d;
    return o;
  }
  ScalarType dtype_or(ScalarType fallback) const { return dtype_.value_or(fallback); }
  Device device_or(Device fallback = Device()) const { return device_.value_or(fallback); }
};

inline TensorOptions dtype(ScalarType t) { return TensorOptions(t); }
inline TensorOptions device(Device d) { return TensorOptions(d); }

}  // namespace kiln
