// kiln/base/timing.h — milliseconds since a steady_clock time point (compile phase timings).
#pragma once

#include <chrono>

namespace kiln {

inline double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace kiln
