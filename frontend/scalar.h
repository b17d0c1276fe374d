// kiln/frontend/scalar.h — a number that is not a tensor: bool, integer or floating.
//
// Scalars take part in type promotion as "wrapped numbers" (PyTorch's Python scalars): they
// never raise the category of a tensor operand's dtype, only its kind (int -> float).
#pragma once

#include "frontend/dtype.h"

#include <cstdint>
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
  int64_t to_int() const { return kind_ == Kind::Float ? static_cast<int64_t>(d_) : i_; }
  bool to_bool() const { return kind_ == Kind::Float ? d_ != 0.0 : i_ != 0; }
  template <typename T> T to() const;

  // The dtype this scalar has on its own: bool, int64 or float64.
  ScalarType type() const {
    return kind_ == Kind::Bool ? kBool : kind_ == Kind::Int ? kLong : kDouble;
  }
  std::string str() const;  // "3", "2.5", "true"
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

template <typename T> T Scalar::to() const {
  if constexpr (std::is_same_v<T, bool>) return to_bool();
  else if constexpr (std::is_integral_v<T>) return static_cast<T>(kind_ == Kind::Float ? static_cast<int64_t>(d_) : i_);
  else return static_cast<T>(static_cast<float>(to_double()));
}
template <> inline double Scalar::to<double>() const { return to_double(); }

}  // namespace kiln
