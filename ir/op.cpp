// kiln/ir/op.cpp — the op table built from ir/ops.def, with schemas parsed at start-up.
#include "ir/op.h"

#include "base/error.h"

#include <array>
#include <cctype>
#include <unordered_map>

namespace kiln::ir {

namespace {

struct Row {
  OpKind kind;
  std::string_view name;
  OpFamily family;
  OpLevel level;
  uint32_t traits;
  std::string_view schema;
};

using namespace traits;
constexpr OpLevel Composite = OpLevel::Composite;
constexpr OpLevel Core = OpLevel::Core;
constexpr OpLevel Prim = OpLevel::Prim;

constexpr Row kRows[] = {
#define KILN_OP(name, family, level, traits, schema) \
  {OpKind::name, #name, OpFamily::family, level, static_cast<uint32_t>(traits), schema},
#include "ir/ops.def"
};
static_assert(sizeof(kRows) / sizeof(kRows[0]) == kNumOps);

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

ArgType parse_arg_type(std::string_view t, std::string_view schema) {
  static const std::pair<std::string_view, ArgType> kTypes[] = {
      {"Tensor", ArgType::Tensor}, {"Tensor[]", ArgType::TensorList}, {"int", ArgType::Int},
      {"int?", ArgType::OptInt},   {"int[]", ArgType::IntList},       {"float", ArgType::Float},
      {"bool", ArgType::Bool},     {"str", ArgType::Str},             {"str?", ArgType::OptStr},
      {"ScalarType", ArgType::ScalarType}, {"Scalar", ArgType::Scalar}, {"SymInt", ArgType::SymInt},
      {"SymInt[]", ArgType::SymIntList},   {"Device", ArgType::Device},
  };
  for (auto& [name, type] : kTypes)
    if (name == t) return type;
  internal_fail("schema '{}': unknown argument type '{}'", schema, t);
}

// Parses "name(Type a, Type b) -> Tensor" or "-> (Tensor, Tensor)".
OpSchema parse_schema(std::string_view text) {
  OpSchema s;
  size_t lp = text.find('('), rp = text.find(')'), arrow = text.find("->");
  if (lp == std::string_view::npos || rp == std::string_view::npos || arrow == std::string_view::npos || rp < lp)
    internal_fail("malformed schema '{}'", text);
  s.name = std::string(trim(text.substr(0, lp)));
  std::string_view args = text.substr(lp + 1, rp - lp - 1);
  while (!trim(args).empty()) {
    size_t comma = args.find(',');
    std::string_view a = trim(args.substr(0, comma));
    size_t sp = a.rfind(' ');
    if (sp == std::string_view::npos) internal_fail("schema '{}': argument '{}' lacks a name", text, a);
    std::string_view type_text = trim(a.substr(0, sp));
    const bool optional_tensor = type_text == "Tensor?";
    if (optional_tensor) type_text = "Tensor";
    SchemaArg arg{std::string(trim(a.substr(sp + 1))), parse_arg_type(type_text, text), optional_tensor};
    if (arg.is_tensor()) {
      if (!s.attr_args.empty()) internal_fail("schema '{}': tensor arguments must come first", text);
      if (!arg.optional && !s.tensor_args.empty() && s.tensor_args.back().optional)
        internal_fail("schema '{}': a required tensor argument follows a Tensor?", text);
      s.tensor_args.push_back(arg);
    } else {
      s.attr_args.push_back(arg);
    }
    if (comma == std::string_view::npos) break;
    args.remove_prefix(comma + 1);
  }
  std::string_view ret = trim(text.substr(arrow + 2));
  if (ret == "Tensor") {
    s.num_outputs = 1;
  } else if (ret.size() > 2 && ret.front() == '(' && ret.back() == ')') {
    s.num_outputs = 1;
    for (char c : ret)
      if (c == ',') ++s.num_outputs;
  } else {
    internal_fail("schema '{}': unsupported return '{}'", text, ret);
  }
  for (const SchemaArg& a : s.tensor_args)
    if (a.type == ArgType::TensorList && s.tensor_args.size() != 1)
      internal_fail("schema '{}': a Tensor[] must be the only tensor argument", text);
  return s;
}

struct Table {
  std::array<OpInfo, kNumOps> infos;
  std::unordered_map<std::string_view, OpKind> by_name;
  Table() {
    std::array<uint16_t, 13> family_counts{};
    for (size_t i = 0; i < kNumOps; ++i) {
      const Row& r = kRows[i];
      if (static_cast<size_t>(r.kind) != i) internal_fail("ops.def row {} out of order", r.name);
      OpSchema schema = parse_schema(r.schema);
      if (schema.name != r.name) internal_fail("ops.def row {}: schema names '{}'", r.name, schema.name);
      uint16_t fi = family_counts[static_cast<size_t>(r.family)]++;
      infos[i] = OpInfo{r.kind, r.name, r.family, r.level, r.traits, r.schema, std::move(schema), fi};
      by_name.emplace(r.name, r.kind);
    }
  }
};

const Table& table() {
  static const Table t;
  return t;
}

}  // namespace

size_t OpSchema::min_tensor_args() const {
  size_t n = 0;
  while (n < tensor_args.size() && !tensor_args[n].optional) ++n;
  return n;
}

int OpSchema::attr_index(std::string_view n) const {
  for (size_t i = 0; i < attr_args.size(); ++i)
    if (attr_args[i].name == n) return static_cast<int>(i);
  return -1;
}

std::string_view arg_type_name(ArgType t) {
  switch (t) {
    case ArgType::Tensor: return "Tensor";
    case ArgType::TensorList: return "Tensor[]";
    case ArgType::Int: return "int";
    case ArgType::OptInt: return "int?";
    case ArgType::IntList: return "int[]";
    case ArgType::Float: return "float";
    case ArgType::Bool: return "bool";
    case ArgType::Str: return "str";
    case ArgType::OptStr: return "str?";
    case ArgType::ScalarType: return "ScalarType";
    case ArgType::Scalar: return "Scalar";
    case ArgType::SymInt: return "SymInt";
    case ArgType::SymIntList: return "SymInt[]";
    case ArgType::Device: return "Device";
  }
  return "?";
}

const OpInfo& op_info(OpKind k) {
  size_t i = static_cast<size_t>(k);
  if (i >= kNumOps) internal_fail("bad OpKind {}", i);
  return table().infos[i];
}

std::optional<OpKind> op_from_name(std::string_view name) {
  auto it = table().by_name.find(name);
  if (it == table().by_name.end()) return std::nullopt;
  return it->second;
}

std::string_view family_name(OpFamily f) {
  switch (f) {
    case OpFamily::Unary: return "unary";
    case OpFamily::Binary: return "binary";
    case OpFamily::Ternary: return "ternary";
    case OpFamily::Cast: return "cast";
    case OpFamily::Reduction: return "reduction";
    case OpFamily::Scan: return "scan";
    case OpFamily::View: return "view";
    case OpFamily::Shape: return "shape";
    case OpFamily::Index: return "index";
    case OpFamily::Factory: return "factory";
    case OpFamily::Random: return "random";
    case OpFamily::Matmul: return "matmul";
    case OpFamily::Composite: return "composite";
  }
  return "?";
}

std::string_view level_name(OpLevel l) {
  switch (l) {
    case OpLevel::Composite: return "composite";
    case OpLevel::Core: return "core";
    case OpLevel::Prim: return "prim";
  }
  return "?";
}

}  // namespace kiln::ir
