// kiln/base/dtype.cpp — dtype names, sizes, the promotion lattice and the default dtype.
#include "base/dtype.h"

#include "base/error.h"

#include <atomic>
#include <array>
#include <limits>

namespace kiln {

size_t element_size(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
    case ScalarType::UInt8:
    case ScalarType::Int8: return 1;
    case ScalarType::Int16:
    case ScalarType::Half:
    case ScalarType::BFloat16: return 2;
    case ScalarType::Int32:
    case ScalarType::Float: return 4;
    case ScalarType::Int64:
    case ScalarType::Double: return 8;
  }
  internal_fail("bad ScalarType {}", static_cast<int>(t));
}

namespace {
constexpr std::array<std::string_view, kNumScalarTypes> kNames = {
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"};
constexpr std::array<std::string_view, kNumScalarTypes> kC10Names = {
    "Bool", "Byte", "Char", "Short", "Int", "Long", "Half", "BFloat16", "Float", "Double"};
constexpr std::array<std::string_view, kNumScalarTypes> kShortNames = {
    "bool", "u8", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64"};
}  // namespace

std::string_view dtype_name(ScalarType t) { return kNames.at(static_cast<size_t>(t)); }
std::string_view c10_type_name(ScalarType t) { return kC10Names.at(static_cast<size_t>(t)); }
std::string_view dtype_short_name(ScalarType t) { return kShortNames.at(static_cast<size_t>(t)); }

double finfo_eps(ScalarType t) {
  switch (t) {
    case ScalarType::Half: return 0.0009765625;   // 2^-10
    case ScalarType::BFloat16: return 0.0078125;  // 2^-7
    case ScalarType::Float: return std::numeric_limits<float>::epsilon();
    case ScalarType::Double: return std::numeric_limits<double>::epsilon();
    case ScalarType::Bool:
    case ScalarType::UInt8:
    case ScalarType::Int8:
    case ScalarType::Int16:
    case ScalarType::Int32:
    case ScalarType::Int64: return 0.0;
  }
  return 0.0;
}

int64_t iinfo_min(ScalarType t) {
  switch (t) {
    case ScalarType::Int8: return std::numeric_limits<int8_t>::min();
    case ScalarType::Int16: return std::numeric_limits<int16_t>::min();
    case ScalarType::Int32: return std::numeric_limits<int32_t>::min();
    case ScalarType::Int64: return std::numeric_limits<int64_t>::min();
    case ScalarType::Bool:
    case ScalarType::UInt8:
    case ScalarType::Half:
    case ScalarType::BFloat16:
    case ScalarType::Float:
    case ScalarType::Double: return 0;
  }
  return 0;
}

int64_t iinfo_max(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return 1;
    case ScalarType::UInt8: return std::numeric_limits<uint8_t>::max();
    case ScalarType::Int8: return std::numeric_limits<int8_t>::max();
    case ScalarType::Int16: return std::numeric_limits<int16_t>::max();
    case ScalarType::Int32: return std::numeric_limits<int32_t>::max();
    case ScalarType::Int64: return std::numeric_limits<int64_t>::max();
    case ScalarType::Half:
    case ScalarType::BFloat16:
    case ScalarType::Float:
    case ScalarType::Double: return 0;
  }
  return 0;
}

double finfo_max(ScalarType t) {
  switch (t) {
    case ScalarType::Half: return 65504.0;
    case ScalarType::BFloat16: return 3.3895313892515355e38;  // (2 - 2^-7) * 2^127
    case ScalarType::Float: return std::numeric_limits<float>::max();
    case ScalarType::Double: return std::numeric_limits<double>::max();
    case ScalarType::Bool:
    case ScalarType::UInt8:
    case ScalarType::Int8:
    case ScalarType::Int16:
    case ScalarType::Int32:
    case ScalarType::Int64: return 0.0;
  }
  return 0.0;
}

std::optional<ScalarType> dtype_from_short_name(std::string_view s) {
  for (size_t i = 0; i < kShortNames.size(); ++i)
    if (kShortNames[i] == s) return static_cast<ScalarType>(i);
  return std::nullopt;
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  // PyTorch's promoteTypes table restricted to our dtypes (rows a, columns b), in enum order
  // b1 u1 i1 i2 i4 i8 f2 bf f4 f8.
  constexpr ScalarType b1 = kBool, u1 = kUInt8, i1 = kInt8, i2 = kInt16, i4 = kInt32, i8 = kInt64, f2 = kHalf,
                       bf = kBFloat16, f4 = kFloat, f8 = kDouble;
  static constexpr ScalarType table[kNumScalarTypes][kNumScalarTypes] = {
      /* b1 */ {b1, u1, i1, i2, i4, i8, f2, bf, f4, f8},
      /* u1 */ {u1, u1, i2, i2, i4, i8, f2, bf, f4, f8},
      /* i1 */ {i1, i2, i1, i2, i4, i8, f2, bf, f4, f8},
      /* i2 */ {i2, i2, i2, i2, i4, i8, f2, bf, f4, f8},
      /* i4 */ {i4, i4, i4, i4, i4, i8, f2, bf, f4, f8},
      /* i8 */ {i8, i8, i8, i8, i8, i8, f2, bf, f4, f8},
      /* f2 */ {f2, f2, f2, f2, f2, f2, f2, f4, f4, f8},
      /* bf */ {bf, bf, bf, bf, bf, bf, f4, bf, f4, f8},
      /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f4, f4, f8},
      /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8},
  };
  return table[static_cast<int>(a)][static_cast<int>(b)];
}

namespace {
std::atomic<ScalarType> g_default_dtype{ScalarType::Float};
}

ScalarType get_default_dtype() { return g_default_dtype.load(std::memory_order_relaxed); }

void set_default_dtype(ScalarType t) {
  KILN_CHECK(is_floating_point(t), "set_default_dtype", "only floating-point types are supported as the default type, got {}",
             dtype_name(t));
  g_default_dtype.store(t, std::memory_order_relaxed);
}

}  // namespace kiln
