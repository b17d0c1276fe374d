// kiln/frontend/tensor_options.h — dtype and device for factories, as torch::TensorOptions.
#pragma once

#include "base/device.h"
#include "base/dtype.h"

#include <optional>

namespace kiln {

// The device a factory uses when its options name none: the cpu, or within a
// DefaultDeviceScope that scope's device. kiln runs a composite op's decomposition on cuda
// tensors inside one, so the constants the decomposition makes (arange, scalar tensors) live
// beside its inputs. Per thread.
Device default_device();
class DefaultDeviceScope {
 public:
  explicit DefaultDeviceScope(Device d);
  ~DefaultDeviceScope();
  DefaultDeviceScope(const DefaultDeviceScope&) = delete;
  DefaultDeviceScope& operator=(const DefaultDeviceScope&) = delete;

 private:
  Device previous_;
};

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
  Device device_or() const { return device_ ? *device_ : default_device(); }
  Device device_or(Device fallback) const { return device_.value_or(fallback); }
};

inline TensorOptions dtype(ScalarType t) { return TensorOptions(t); }
inline TensorOptions device(Device d) { return TensorOptions(d); }

}  // namespace kiln
