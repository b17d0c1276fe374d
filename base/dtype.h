// kiln/base/dtype.h — scalar types, their properties and PyTorch's promotion lattice.
//
// A leaf vocabulary header shared by every layer (the IR's TensorType uses it too).
#pragma once

#include "base/half.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

namespace kiln {

enum class ScalarType : int8_t {
  Bool,
  UInt8,
  Int8,
  Int16,
  Int32,
  Int64,
  Half,
  BFloat16,
  Float,
  Double,
};
inline constexpr int kNumScalarTypes = 10;
// libtorch spells the type both ways (torch::Dtype is c10::ScalarType).
using Dtype = ScalarType;

inline constexpr ScalarType kBool = ScalarType::Bool;
inline constexpr ScalarType kByte = ScalarType::UInt8;
inline constexpr ScalarType kUInt8 = ScalarType::UInt8;
inline constexpr ScalarType kChar = ScalarType::Int8;
inline constexpr ScalarType kInt8 = ScalarType::Int8;
inline constexpr ScalarType kShort = ScalarType::Int16;
inline constexpr ScalarType kInt16 = ScalarType::Int16;
inline constexpr ScalarType kInt = ScalarType::Int32;
inline constexpr ScalarType kInt32 = ScalarType::Int32;
inline constexpr ScalarType kLong = ScalarType::Int64;
inline constexpr ScalarType kInt64 = ScalarType::Int64;
inline constexpr ScalarType kHalf = ScalarType::Half;
inline constexpr ScalarType kFloat16 = ScalarType::Half;
inline constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
inline constexpr ScalarType kFloat = ScalarType::Float;
inline constexpr ScalarType kFloat32 = ScalarType::Float;
inline constexpr ScalarType kDouble = ScalarType::Double;
inline constexpr ScalarType kFloat64 = ScalarType::Double;

size_t element_size(ScalarType t);
// "float32", "int64", ... (PyTorch's names, printed as torch.<name>).
std::string_view dtype_name(ScalarType t);
// "f32", "i64", "bool", ... (the IR's short names).
std::string_view dtype_short_name(ScalarType t);
std::optional<ScalarType> dtype_from_short_name(std::string_view s);
// "Float", "Long", ... (c10's names, as PyTorch's error messages and libtorch print them).
std::string_view c10_type_name(ScalarType t);
// torch.finfo(t).eps and .max (f16: 2^-10 and 65504, bf16: 2^-7 and 3.39e38); 0 for
// non-floating dtypes.
double finfo_eps(ScalarType t);
double finfo_max(ScalarType t);
// torch.iinfo(t).min / .max of an integral dtype (bool: 0 and 1); 0 for floating dtypes.
int64_t iinfo_min(ScalarType t);
int64_t iinfo_max(ScalarType t);
// Whether a floating value converts to integer dtype t through int32 (int32, int16, int8: NaN
// and out-of-range give INT32_MIN) rather than through int64 (int64, uint8: INT64_MIN), as
// PyTorch's x86 build does (docs/decisions/numerics-and-semantics.md, Float-to-integer casts).
constexpr bool float_to_int_via_int32(ScalarType t) {
  return t == ScalarType::Int32 || t == ScalarType::Int16 || t == ScalarType::Int8;
}

constexpr bool is_floating_point(ScalarType t) {
  return t == ScalarType::Half || t == ScalarType::BFloat16 || t == ScalarType::Float ||
         t == ScalarType::Double;
}
// Integral types; bool counts only when include_bool.
constexpr bool is_integral(ScalarType t, bool include_bool) {
  return (include_bool && t == ScalarType::Bool) ||
         (t >= ScalarType::UInt8 && t <= ScalarType::Int64);
}
constexpr bool is_signed(ScalarType t) { return t != ScalarType::Bool && t != ScalarType::UInt8; }

// PyTorch's promote_types lattice (torch.promote_types).
ScalarType promote_types(ScalarType a, ScalarType b);

// The default floating dtype used for integer inputs to float ops and for float scalars.
ScalarType get_default_dtype();
void set_default_dtype(ScalarType t);  // must be a floating type

// Maps C++ element types to ScalarType.
template <typename T> struct CppTypeToScalarType;
#define KILN_MAP_CPP_TYPE(cpp, st) \
  template <> struct CppTypeToScalarType<cpp> { static constexpr ScalarType value = ScalarType::st; };
KILN_MAP_CPP_TYPE(bool, Bool)
KILN_MAP_CPP_TYPE(uint8_t, UInt8)
KILN_MAP_CPP_TYPE(int8_t, Int8)
KILN_MAP_CPP_TYPE(int16_t, Int16)
KILN_MAP_CPP_TYPE(int32_t, Int32)
KILN_MAP_CPP_TYPE(int64_t, Int64)
KILN_MAP_CPP_TYPE(Half, Half)
KILN_MAP_CPP_TYPE(BFloat16, BFloat16)
KILN_MAP_CPP_TYPE(float, Float)
KILN_MAP_CPP_TYPE(double, Double)
#undef KILN_MAP_CPP_TYPE
template <typename T> inline constexpr ScalarType scalar_type_of = CppTypeToScalarType<T>::value;

// Calls fn(T{}) with T the C++ element type of `t`: KILN_DISPATCH is spelled as a function.
template <typename Fn>
decltype(auto) dispatch_dtype(ScalarType t, Fn&& fn) {
  switch (t) {
    case ScalarType::Bool: return fn(bool{});
    case ScalarType::UInt8: return fn(uint8_t{});
    case ScalarType::Int8: return fn(int8_t{});
    case ScalarType::Int16: return fn(int16_t{});
    case ScalarType::Int32: return fn(int32_t{});
    case ScalarType::Int64: return fn(int64_t{});
    case ScalarType::Half: return fn(Half{});
    case ScalarType::BFloat16: return fn(BFloat16{});
    case ScalarType::Float: return fn(float{});
    case ScalarType::Double: return fn(double{});
  }
  return fn(float{});  // unreachable: every enumerator is handled above
}

}  // namespace kiln
