// kiln/ir/attr.h — attribute values of nodes: the non-tensor arguments of an op's schema.
//
// A node stores its attributes in schema order; AttrList reads them by name, checked against
// the schema, so op code says attrs.get<int64_t>("dim") rather than an index.
#pragma once

#include "base/device.h"
#include "base/dtype.h"
#include "base/scalar.h"
#include "ir/expr.h"
#include "ir/op.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace kiln::ir {

// std::monostate is "none" (an absent optional).
using AttrValue = std::variant<std::monostate, int64_t, double, bool, std::string, std::vector<int64_t>,
                               ScalarType, Scalar, Expr, std::vector<Expr>, Device>;

// Prints a value as the IR text format spells it (ints, floats with a '.', true/false,
// "strings", [lists], f32, cpu / cuda:0, none, expressions).
std::string attr_str(const AttrValue& v);
// Whether `v` holds what schema type `t` expects.
bool attr_matches(const AttrValue& v, ArgType t);

class AttrList {
 public:
  AttrList() = default;
  explicit AttrList(std::vector<AttrValue> values) : values_(std::move(values)) {}

  const std::vector<AttrValue>& values() const { return values_; }
  std::vector<AttrValue>& values() { return values_; }
  size_t size() const { return values_.size(); }
  const AttrValue& operator[](size_t i) const { return values_[i]; }

  // Reads attribute `name` of op `k`; throws InternalError if the schema has no such
  // attribute or the stored value has another type.
  template <typename T> const T& get(OpKind k, std::string_view name) const {
    const AttrValue& v = at(k, name);
    if (const T* p = std::get_if<T>(&v)) return *p;
    throw_type_mismatch(k, name);
  }
  // For optional attributes (int?, str?): nullopt when none.
  template <typename T> std::optional<T> get_opt(OpKind k, std::string_view name) const {
    const AttrValue& v = at(k, name);
    if (std::holds_alternative<std::monostate>(v)) return std::nullopt;
    if (const T* p = std::get_if<T>(&v)) return *p;
    throw_type_mismatch(k, name);
  }
  const AttrValue& at(OpKind k, std::string_view name) const;
  // Attribute `i` in schema order as a T (custom ops and lowerings read theirs this way);
  // throws InternalError when there is none or it has another type.
  template <typename T> const T& get(size_t i) const {
    if (i < values_.size())
      if (const T* p = std::get_if<T>(&values_[i])) return *p;
    throw_index_mismatch(i);
  }
  bool operator==(const AttrList& o) const { return values_ == o.values_; }

 private:
  [[noreturn]] static void throw_type_mismatch(OpKind k, std::string_view name);
  [[noreturn]] void throw_index_mismatch(size_t i) const;
  std::vector<AttrValue> values_;
};

}  // namespace kiln::ir
