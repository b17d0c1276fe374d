// kiln/base/scalar.cpp — printing scalars.
#include "base/scalar.h"

#include <fmt/format.h>

#include "base/error.h"

#include <cmath>
#include <limits>

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

namespace {

template <typename T> struct Limits {
  static double lowest() { return static_cast<double>(std::numeric_limits<T>::lowest()); }
  static double max() { return static_cast<double>(std::numeric_limits<T>::max()); }
};
template <> struct Limits<Half> {
  static double lowest() { return -65504.0; }
  static double max() { return 65504.0; }
};
template <> struct Limits<BFloat16> {
  static double lowest() { return -3.3895313892515355e38; }
  static double max() { return 3.3895313892515355e38; }
};

std::string_view cpp_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "bool";
    case ScalarType::UInt8: return "uint8_t";
    case ScalarType::Int8: return "int8_t";
    case ScalarType::Int16: return "int16_t";
    case ScalarType::Int32: return "int";
    case ScalarType::Int64: return "int64_t";
    case ScalarType::Half: return "c10::Half";
    case ScalarType::BFloat16: return "c10::BFloat16";
    case ScalarType::Float: return "float";
    case ScalarType::Double: return "double";
  }
  return "?";
}

}  // namespace

bool Scalar::overflows(ScalarType dtype) const {
  return dispatch_dtype(dtype, [&](auto tag) -> bool {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, double>) {
      return false;
    } else if constexpr (std::is_integral_v<T>) {
      if (kind_ == Kind::Float) return !(d_ >= Limits<T>::lowest() && d_ <= Limits<T>::max());  // NaN, inf overflow
      const int64_t v = i_;
      if constexpr (std::is_unsigned_v<T>) {
        // Negative values may wrap, as c10 allows: -1 -> 255 for uint8.
        const uint64_t m = std::numeric_limits<T>::max();
        return v < 0 ? static_cast<uint64_t>(-(v + 1)) + 1 > m : static_cast<uint64_t>(v) > m;
      } else {
        return v < static_cast<int64_t>(std::numeric_limits<T>::lowest()) ||
               v > static_cast<int64_t>(std::numeric_limits<T>::max());
      }
    } else {  // floating targets: inf and NaN convert; finite values must be in range
      const double v = to_double();
      if (std::isnan(v) || std::isinf(v)) return false;
      return v < Limits<T>::lowest() || v > Limits<T>::max();
    }
  });
}

void check_scalar_fits(std::string_view op, const Scalar& v, ScalarType dtype) {
  if (v.overflows(dtype))
    fail(op, "value cannot be converted to type {} without overflow: {}", cpp_type_name(dtype), v.str());
}

}  // namespace kiln
