// kiln/ir/op.cpp — the op table built from ir/ops.def, with schemas parsed at start-up.
#include "ir/op.h"

#include "base/error.h"
#include "ir/custom_ops.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <mutex>
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

// Schema parsing: a cursor over the text that reports errors with their column.
class SchemaParser {
 public:
  explicit SchemaParser(std::string_view text) : t_(text) {}

  OpSchema parse() {
    OpSchema s;
    skip_ws();
    s.name = qualified_name();
    expect('(');
    skip_ws();
    if (!at(')')) {
      for (;;) {
        arg(s);
        skip_ws();
        if (at(')')) break;
        if (!at(',')) error("expected ',' or ')'");
        ++pos_;
      }
    }
    expect(')');
    skip_ws();
    if (t_.substr(pos_, 2) != "->") error("expected '->' before the result");
    pos_ += 2;
    skip_ws();
    if (at('(')) {
      ++pos_;
      s.num_outputs = 0;
      for (;;) {
        skip_ws();
        result_type();
        ++s.num_outputs;
        skip_ws();
        if (at(')')) break;
        expect(',');
      }
      ++pos_;
    } else {
      result_type();
      s.num_outputs = 1;
    }
    skip_ws();
    if (pos_ != t_.size()) error("unexpected text after the result");
    for (const SchemaArg& a : s.tensor_args)
      if (a.type == ArgType::TensorList && s.tensor_args.size() != 1) error("a Tensor[] must be the only tensor argument");
    return s;
  }

 private:
  [[noreturn]] void error(std::string_view what) const {
    fail("schema", "{} at column {} of '{}'", what, pos_ + 1, t_);
  }
  bool at(char c) const { return pos_ < t_.size() && t_[pos_] == c; }
  void skip_ws() {
    while (pos_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[pos_]))) ++pos_;
  }
  void expect(char c) {
    skip_ws();
    if (!at(c)) error(fmt::format("expected '{}'", c));
    ++pos_;
  }
  std::string_view ident() {
    const size_t b = pos_;
    if (pos_ < t_.size() && (std::isalpha(static_cast<unsigned char>(t_[pos_])) || t_[pos_] == '_')) {
      while (pos_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[pos_])) || t_[pos_] == '_')) ++pos_;
    }
    if (pos_ == b) error("expected a name");
    return t_.substr(b, pos_ - b);
  }
  // name or namespace::name
  std::string qualified_name() {
    std::string n(ident());
    if (t_.substr(pos_, 2) == "::") {
      pos_ += 2;
      n += "::";
      n += ident();
    }
    return n;
  }
  // A type: a name followed by "?" and/or "[]".
  std::string type_text() {
    std::string ty(ident());
    if (at('[')) {
      ++pos_;
      if (!at(']')) error("expected ']'");
      ++pos_;
      ty += "[]";
    }
    if (at('?')) {
      ++pos_;
      ty += "?";
    }
    return ty;
  }
  void result_type() {
    const size_t b = pos_;
    if (type_text() != "Tensor") {
      pos_ = b;
      error("results must be Tensor");
    }
  }
  void arg(OpSchema& s) {
    skip_ws();
    const size_t type_col = pos_;
    std::string ty = type_text();
    const bool optional_tensor = ty == "Tensor?";
    if (optional_tensor) ty = "Tensor";
    static const std::pair<std::string_view, ArgType> kTypes[] = {
        {"Tensor", ArgType::Tensor}, {"Tensor[]", ArgType::TensorList}, {"int", ArgType::Int},
        {"int?", ArgType::OptInt},   {"int[]", ArgType::IntList},       {"float", ArgType::Float},
        {"bool", ArgType::Bool},     {"str", ArgType::Str},             {"str?", ArgType::OptStr},
        {"ScalarType", ArgType::ScalarType}, {"Scalar", ArgType::Scalar}, {"SymInt", ArgType::SymInt},
        {"SymInt[]", ArgType::SymIntList},   {"Device", ArgType::Device},
    };
    std::optional<ArgType> type;
    for (auto& [name, t] : kTypes)
      if (name == ty) type = t;
    if (!type) {
      pos_ = type_col;
      error(fmt::format("unknown argument type '{}' (expected Tensor, Tensor?, Tensor[], int, int?, int[], float, "
                        "bool, str, str?, ScalarType, Scalar, SymInt, SymInt[] or Device)",
                        ty));
    }
    skip_ws();
    const size_t name_col = pos_;
    SchemaArg a{std::string(ident()), *type, optional_tensor};
    for (const auto& list : {s.tensor_args, s.attr_args})
      for (const SchemaArg& o : list)
        if (o.name == a.name) {
          pos_ = name_col;
          error(fmt::format("argument '{}' appears twice", a.name));
        }
    if (a.is_tensor()) {
      if (!s.attr_args.empty()) {
        pos_ = type_col;
        error("tensor arguments must come before the other arguments");
      }
      if (!a.optional && !s.tensor_args.empty() && s.tensor_args.back().optional) {
        pos_ = type_col;
        error("a required tensor argument follows a Tensor?");
      }
      s.tensor_args.push_back(std::move(a));
    } else {
      s.attr_args.push_back(std::move(a));
    }
  }

  std::string_view t_;
  size_t pos_ = 0;
};

}  // namespace

OpSchema parse_schema(std::string_view text) { return SchemaParser(text).parse(); }

namespace {

// Every op's name, family and traits up front; its schema parsed on the op's first use. Parsing
// all ~300 schemas took 0.3 ms of a process that loads one exported program, which names a few.
struct Table {
  std::array<OpInfo, kNumOps> infos;
  std::array<std::once_flag, kNumOps> parsed;
  std::unordered_map<std::string_view, OpKind> by_name;
  Table() {
    std::array<uint16_t, static_cast<size_t>(OpFamily::Custom) + 1> family_counts{};  // Custom is the last family
    for (size_t i = 0; i < kNumOps; ++i) {
      const Row& r = kRows[i];
      if (static_cast<size_t>(r.kind) != i) internal_fail("ops.def row {} out of order", r.name);
      uint16_t fi = family_counts[static_cast<size_t>(r.family)]++;
      infos[i] = OpInfo{r.kind, r.name, r.family, r.level, r.traits, r.schema, OpSchema{}, fi};
      by_name.emplace(r.name, r.kind);
    }
  }
  const OpInfo& info(size_t i) {
    std::call_once(parsed[i], [&] {
      const Row& r = kRows[i];
      OpSchema schema;
      try {
        schema = parse_schema(r.schema);
      } catch (const Error& e) {
        internal_fail("ops.def row {}: {}", r.name, e.what());
      }
      if (schema.name != r.name) internal_fail("ops.def row {}: schema names '{}'", r.name, schema.name);
      infos[i].schema = std::move(schema);
    });
    return infos[i];
  }
};

Table& table() {
  static Table t;
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
  const size_t i = static_cast<size_t>(k);
  if (i < kNumOps) return table().info(i);
  if (const OpInfo* info = custom_op_info(k)) return *info;
  internal_fail("bad OpKind {}", i);
}

std::optional<OpKind> family_member(OpFamily family, uint16_t index) {
  for (const OpInfo& info : table().infos)  // name, family and position are set up front
    if (info.family == family && info.family_index == index) return info.kind;
  return std::nullopt;
}

std::optional<OpKind> op_from_name(std::string_view name) {
  auto it = table().by_name.find(name);
  if (it != table().by_name.end()) return it->second;
  return custom_op_from_name(name);
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
    case OpFamily::Conv: return "conv";
    case OpFamily::Sort: return "sort";
    case OpFamily::Activation: return "activation";
    case OpFamily::Softmax: return "softmax";
    case OpFamily::Moments: return "moments";
    case OpFamily::Norm: return "norm";
    case OpFamily::Linear: return "linear";
    case OpFamily::Pointwise: return "pointwise";
    case OpFamily::Pool: return "pool";
    case OpFamily::Resample: return "resample";
    case OpFamily::Attention: return "attention";
    case OpFamily::Dropout: return "dropout";
    case OpFamily::Rearrange: return "rearrange";
    case OpFamily::Custom: return "custom";
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
