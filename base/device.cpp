// kiln/base/device.cpp — parsing and printing devices.
#include "base/device.h"

#include "base/error.h"

#include <charconv>

namespace kiln {

Device::Device(std::string_view spec) {
  if (spec == "cpu") {
    type = DeviceType::CPU;
    index = 0;
    return;
  }
  if (spec.substr(0, 4) == "cuda") {
    type = DeviceType::CUDA;
    index = 0;
    if (spec.size() == 4) return;
    if (spec[4] == ':' && spec.size() > 5) {
      int v = 0;
      auto [p, ec] = std::from_chars(spec.data() + 5, spec.data() + spec.size(), v);
      if (ec == std::errc() && p == spec.data() + spec.size() && v >= 0) {
        index = v;
        return;
      }
    }
  }
  fail("device", "expected a device string like 'cpu', 'cuda' or 'cuda:1', got '{}'", spec);
}

std::string Device::str() const { return type == DeviceType::CPU ? "cpu" : fmt::format("cuda:{}", index); }

}  // namespace kiln
