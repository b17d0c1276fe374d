// kiln/ir/attr.cpp — printing attribute values, matching them to schema types, reading by name.
//
// attr_str writes each value exactly as the IR text parser reads it back: integers plainly,
// doubles in shortest round-trip form that always shows they are floating (a '.', an
// exponent, inf, -inf or nan), quoted strings with escapes, [lists], dtypes by short name,
// devices as cpu / cuda:N, expressions through Expr::str, and none for an absent optional.
#include "ir/attr.h"

#include "base/error.h"

#include <cmath>

namespace kiln::ir {

namespace {

std::string double_str(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  std::string s = fmt::format("{}", d);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
        else out += ch;
    }
  }
  return out + "\"";
}

std::string scalar_str(const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Bool: return s.to_bool() ? "true" : "false";
    case Scalar::Kind::Int: return fmt::format("{}", s.to_int());
    case Scalar::Kind::Float: return double_str(s.to_double());
  }
  return "";
}

template <class... Fs> struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs> Overloaded(Fs...) -> Overloaded<Fs...>;

}  // namespace

std::string attr_str(const AttrValue& v) {
  return std::visit(
      Overloaded{
          [](std::monostate) -> std::string { return "none"; },
          [](int64_t i) -> std::string { return fmt::format("{}", i); },
          [](double d) { return double_str(d); },
          [](bool b) -> std::string { return b ? "true" : "false"; },
          [](const std::string& s) { return quote(s); },
          [](const std::vector<int64_t>& l) { return fmt::format("[{}]", fmt::join(l, ", ")); },
          [](ScalarType t) { return std::string(dtype_short_name(t)); },
          [](const Scalar& s) { return scalar_str(s); },
          [](const Expr& e) { return e.str(); },
          [](const std::vector<Expr>& l) { return str(l); },
          [](const Device& d) { return d.str(); },
      },
      v);
}

bool attr_matches(const AttrValue& v, ArgType t) {
  switch (t) {
    case ArgType::Tensor:
    case ArgType::TensorList: return false;
    case ArgType::Int: return std::holds_alternative<int64_t>(v);
    case ArgType::OptInt: return std::holds_alternative<int64_t>(v) || std::holds_alternative<std::monostate>(v);
    case ArgType::IntList: return std::holds_alternative<std::vector<int64_t>>(v);
    case ArgType::Float: return std::holds_alternative<double>(v);
    case ArgType::Bool: return std::holds_alternative<bool>(v);
    case ArgType::Str: return std::holds_alternative<std::string>(v);
    case ArgType::OptStr: return std::holds_alternative<std::string>(v) || std::holds_alternative<std::monostate>(v);
    case ArgType::ScalarType: return std::holds_alternative<ScalarType>(v);
    case ArgType::Scalar: return std::holds_alternative<Scalar>(v);
    case ArgType::SymInt: return std::holds_alternative<Expr>(v);
    case ArgType::SymIntList: return std::holds_alternative<std::vector<Expr>>(v);
    case ArgType::Device: return std::holds_alternative<Device>(v);
  }
  return false;
}

const AttrValue& AttrList::at(OpKind k, std::string_view name) const {
  const OpInfo& info = op_info(k);
  int i = info.schema.attr_index(name);
  if (i < 0) internal_fail("op {} has no attribute '{}' (schema: {})", info.name, name, info.schema_text);
  if (static_cast<size_t>(i) >= values_.size())
    internal_fail("attribute '{}' of {} is missing: the node holds {} of {} attributes", name, info.name,
                  values_.size(), info.schema.attr_args.size());
  return values_[static_cast<size_t>(i)];
}

void AttrList::throw_type_mismatch(OpKind k, std::string_view name) {
  const OpInfo& info = op_info(k);
  int i = info.schema.attr_index(name);
  std::string_view want = i < 0 ? "?" : arg_type_name(info.schema.attr_args[static_cast<size_t>(i)].type);
  internal_fail("attribute '{}' of {} was read as another type than the one it holds (schema type {})", name,
                info.name, want);
}

void AttrList::throw_index_mismatch(size_t i) const {
  if (i >= values_.size()) internal_fail("attribute {} requested from a list of {}", i, values_.size());
  internal_fail("attribute {} ({}) was read as another type than the one it holds", i, attr_str(values_[i]));
}

}  // namespace kiln::ir
