// kiln/test/test_support/number_text.h — a double as the shortest text that reads back exactly
// ("0.1", "1e-30", "2"), NaN as "nan" whatever its sign, infinities as "inf" / "-inf". The
// fuzzer's program text and the op database's golden files both write values this way.
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace kiln::test {

inline std::string shortest_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

}  // namespace kiln::test
