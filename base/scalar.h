// kiln/base/scalar.h — a number that is not a tensor: bool, integer or floating.
//
// Scalars take part in type promotion as "wrapped numbers" (PyTorch's Python scalars): they
// never raise the category of a tensor operand's dtype, only its kind (int -> float).
#pragma once

#include "base/dtype.h"

#include <cstdint>
#include <string_view>
#include <string>
#include <type_traits>

namespace kiln {

class Scalar {
 public:
  enum class Kind : int8_t { Bool, Int, Float };

  Scalar() : kind_(Kind::Int), i_(0) {}
  template <typename T, std::enable_if_t<std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::Bool), i_(v ? 1 : 0) {}  // NOLINT
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::Int), i_(static_cast<int64_t>(v)) {}  // NOLINT
  template <typename T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind_(Kind::Float), d_(static_cast<double>(v)) {}  // NOLINT
  Scalar(Half v) : kind_(Kind::Float), d_(static_cast<float>(v)) {}      // NOLINT
  Scalar(BFloat16 v) : kind_(Kind::Float), d_(static_cast<float>(v)) {}  // NOLINT

  Kind kind() const { return kind_; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_floating_point() const { return kind_ == Kind::Float; }

  double to_double() const { return kind_ == Kind::Float ? d_ : static_cast<double>(i_); }
  int64_t to_int() const { return to<int64_t>(); }
  bool to_bool() const { return kind_ == Kind::Float ? d_ != 0.0 : i_ != 0; }
  template <typename T> T to() const;

  // The dtype this scalar has on its own: bool, int64 or float64.
  ScalarType type() const {
    return kind_ == Kind::Bool ? kBool : kind_ == Kind::Int ? kLong : kDouble;
  }
  std::string str() const;  // "3", "2.5", "true"
  // Whether converting to `dtype` overflows, by c10's checked_convert rules: an integer must
  // fit the target (negative values may wrap into unsigned types); a floating value must be
  // finite and in range for integer targets, and finite-in-range, inf or NaN for floating ones.
  bool overflows(ScalarType dtype) const;
  bool operator==(const Scalar& o) const {
    return kind_ == o.kind_ && (kind_ == Kind::Float ? (d_ == o.d_ || (d_ != d_ && o.d_ != o.d_)) : i_ == o.i_);
  }

 private:
  Kind kind_;
  union {
    int64_t i_;
    double d_;
  };
};

// Throws "[op] value cannot be converted to type uint8_t without overflow" when v.overflows(dtype).
void check_scalar_fits(std::string_view op, const Scalar& v, ScalarType dtype);

// Unchecked conversion (wraps like a C cast). A floating value converts to an integer as
// PyTorch's x86 build does instead of being undefined behaviour: int64 and uint8 through int64
// (NaN and out-of-range give INT64_MIN), int32, int16 and int8 through int32 (INT32_MIN); the
// interpreter's convert() (runtime/interpreter/interp_math.h) has the measurements.
template <typename T> T Scalar::to() const {
  if constexpr (std::is_same_v<T, bool>) {
    return to_bool();
  } else if constexpr (std::is_integral_v<T>) {
    if (kind_ != Kind::Float) return static_cast<T>(i_);
    if constexpr (std::is_signed_v<T> && sizeof(T) <= 4) {
      const bool in_range = d_ >= -2147483648.0 && d_ < 2147483648.0;  // false for NaN
      return static_cast<T>(in_range ? static_cast<int32_t>(d_) : INT32_MIN);
    }
    const bool in_range = d_ >= -9223372036854775808.0 && d_ < 9223372036854775808.0;  // false for NaN
    return static_cast<T>(in_range ? static_cast<int64_t>(d_) : INT64_MIN);
  } else {
    return static_cast<T>(static_cast<float>(to_double()));
  }
}
template <> inline double Scalar::to<double>() const { return to_double(); }

}  // namespace kiln
