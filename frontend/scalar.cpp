// kiln/frontend/scalar.cpp — printing scalars.
#include "frontend/scalar.h"

#include <fmt/format.h>

#include <cmath>

namespace kiln {

std::string Scalar::str() const {
  switch (kind_) {
    case Kind::Bool: return i_ ? "true" : "false";
    case Kind::Int: return fmt::format("{}", i_);
    case Kind::Float: {
      if (std::isnan(d_)) return "nan";
      if (std::isinf(d_)) return d_ > 0 ? "inf" : "-inf";
      std::string s = fmt::format("{}", d_);
      if (s.find_first_of(".e") == std::string::npos) s += ".0";
      return s;
    }
  }
  return "";
}

}  // namespace kiln
