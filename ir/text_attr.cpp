// kiln/ir/text_attr.cpp — attribute values, size lists and devices in the IR text formats.
#include "ir/text_attr.h"

#include "base/error.h"

#include <charconv>
#include <limits>
#include <optional>
#include <utility>

namespace kiln::ir::text {

namespace {

// The readers share one lexer; a class keeps the helpers' signatures short.
class AttrReader {
 public:
  explicit AttrReader(Lexer& lex) : lex_(lex) {}

  // After '[': expressions separated by ',' up to ']'.
  std::vector<Expr> parse_expr_list_tail() {
    std::vector<Expr> out;
    lex_.set_expr_mode(true);
    if (!lex_.at(Tok::RBracket)) {
      while (true) {
        out.push_back(parse_expr(lex_));
        lex_.set_expr_mode(true);
        if (lex_.at(Tok::Comma)) {
          lex_.next();
          continue;
        }
        if (!lex_.at(Tok::RBracket))
          lex_.error(lex_.peek(), "expected ',' or ']' in a list of sizes, got {}", Lexer::describe(lex_.peek()));
        break;
      }
    }
    lex_.next();
    lex_.set_expr_mode(false);
    return out;
  }

  Device parse_device() {
    const Token& t = lex_.peek();
    if (t.kind == Tok::Ident && t.text == "cpu") {
      lex_.next();
      return Device();
    }
    if (t.kind == Tok::Ident && t.text == "cuda") {
      lex_.next();
      if (!lex_.at(Tok::Colon)) return Device(DeviceType::CUDA, 0);
      lex_.next();
      Token idx = lex_.expect(Tok::Int, "a device index after 'cuda:'");
      int v = 0;
      auto [p, ec] = std::from_chars(idx.raw.data(), idx.raw.data() + idx.raw.size(), v);
      if (ec != std::errc() || p != idx.raw.data() + idx.raw.size()) lex_.error(idx, "device index {} is out of range", idx.raw);
      return Device(DeviceType::CUDA, v);
    }
    lex_.error(t, "expected a device (cpu or cuda:N), got {}", Lexer::describe(t));
  }

  [[noreturn]] void bad_value(const SchemaArg& arg, const Token& t) {
    lex_.error(t, "expected {} for attribute '{}', got {}", arg_type_name(arg.type), arg.name, Lexer::describe(t));
  }

  bool take_ident(std::string_view word) {
    if (!lex_.at_ident(word)) return false;
    lex_.next();
    return true;
  }

  int64_t parse_int(const SchemaArg& arg) {
    return text::parse_int_literal(lex_, fmt::format("int for attribute '{}'", arg.name));
  }

  std::vector<int64_t> parse_int_list(const SchemaArg& arg) {
    if (!lex_.at(Tok::LBracket)) bad_value(arg, lex_.peek());
    lex_.next();
    std::vector<int64_t> out;
    if (!lex_.at(Tok::RBracket)) {
      while (true) {
        out.push_back(parse_int(arg));
        if (!lex_.at(Tok::Comma)) break;
        lex_.next();
      }
    }
    lex_.expect(Tok::RBracket, fmt::format("',' or ']' in attribute '{}'", arg.name));
    return out;
  }

  // A number with optional sign: ints and floats as written, inf and nan. Returns the token
  // kind that carried it (Int for integers).
  std::optional<std::pair<Tok, double>> parse_number(int64_t* as_int, const SchemaArg& arg) {
    bool neg = lex_.at(Tok::Minus);
    Token sign_tok = lex_.peek();
    if (neg) lex_.next();
    const Token t = lex_.peek();
    if (t.kind == Tok::Int) {
      lex_.next();
      if (as_int) {
        uint64_t mag = 0;
        auto [p, ec] = std::from_chars(t.raw.data(), t.raw.data() + t.raw.size(), mag);
        uint64_t limit = neg ? (uint64_t{1} << 63) : (uint64_t{1} << 63) - 1;
        if (ec != std::errc() || p != t.raw.data() + t.raw.size() || mag > limit)
          lex_.error(t, "integer literal '{}{}' is out of range", neg ? "-" : "", t.raw);
        *as_int = neg ? static_cast<int64_t>(uint64_t{0} - mag) : static_cast<int64_t>(mag);
      }
      return std::pair<Tok, double>{Tok::Int, to_double(t, neg)};
    }
    if (t.kind == Tok::Float) {
      lex_.next();
      return std::pair<Tok, double>{Tok::Float, to_double(t, neg)};
    }
    if (t.kind == Tok::Ident && (t.text == "inf" || t.text == "nan")) {
      lex_.next();
      double v = t.text == "inf" ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
      return std::pair<Tok, double>{Tok::Float, neg ? -v : v};
    }
    bad_value(arg, neg ? sign_tok : t);
  }

  double to_double(const Token& t, bool neg) {
    double v = 0;
    auto [p, ec] = std::from_chars(t.raw.data(), t.raw.data() + t.raw.size(), v);
    if (ec != std::errc() || p != t.raw.data() + t.raw.size()) lex_.error(t, "bad number '{}'", t.raw);
    return neg ? -v : v;
  }

  AttrValue parse_attr_value(const SchemaArg& arg) {
    const Token t = lex_.peek();
    switch (arg.type) {
      case ArgType::Tensor:
      case ArgType::TensorList: internal_fail("parse_attr_value: tensor argument '{}'", arg.name);
      case ArgType::Int: return parse_int(arg);
      case ArgType::OptInt:
        if (take_ident("none")) return std::monostate{};
        return parse_int(arg);
      case ArgType::IntList: return parse_int_list(arg);
      case ArgType::Float: return parse_number(nullptr, arg)->second;
      case ArgType::Bool:
        if (take_ident("true")) return true;
        if (take_ident("false")) return false;
        bad_value(arg, t);
      case ArgType::Str:
        if (t.kind != Tok::String) bad_value(arg, t);
        return lex_.next().text;
      case ArgType::OptStr:
        if (take_ident("none")) return std::monostate{};
        if (t.kind != Tok::String) bad_value(arg, t);
        return lex_.next().text;
      case ArgType::ScalarType: {
        if (t.kind != Tok::Ident) bad_value(arg, t);
        auto dt = dtype_from_short_name(t.text);
        if (!dt) lex_.error(t, "unknown dtype '{}'", t.text);
        lex_.next();
        return *dt;
      }
      case ArgType::Scalar: {
        if (take_ident("true")) return Scalar(true);
        if (take_ident("false")) return Scalar(false);
        int64_t i = 0;
        auto num = parse_number(&i, arg);
        if (num->first == Tok::Int) return Scalar(i);
        return Scalar(num->second);
      }
      case ArgType::SymInt: return parse_expr(lex_);
      case ArgType::SymIntList:
        if (t.kind != Tok::LBracket) bad_value(arg, t);
        lex_.next();
        return parse_expr_list_tail();
      case ArgType::Device: return parse_device();
    }
    internal_fail("parse_attr_value: bad ArgType");
  }


 private:
  Lexer& lex_;
};

}  // namespace

std::vector<Expr> parse_expr_list_tail(Lexer& lex) { return AttrReader(lex).parse_expr_list_tail(); }
Device parse_device(Lexer& lex) { return AttrReader(lex).parse_device(); }
AttrValue parse_attr_value(Lexer& lex, const SchemaArg& arg) { return AttrReader(lex).parse_attr_value(arg); }

TensorType parse_tensor_type(Lexer& lex) {
  if (!lex.at(Tok::Ident)) lex.error(lex.peek(), "expected a tensor type like f32[4, s0], got {}", Lexer::describe(lex.peek()));
  Token dt = lex.next();
  auto dtype = dtype_from_short_name(dt.text);
  if (!dtype) lex.error(dt, "unknown dtype '{}'", dt.text);
  lex.expect(Tok::LBracket, fmt::format("'[' after dtype {}", dt.text));
  std::vector<Expr> sizes = parse_expr_list_tail(lex);
  Device dev;
  if (lex.at(Tok::At)) {
    lex.next();
    dev = parse_device(lex);
  }
  return TensorType(*dtype, std::move(sizes), dev);
}

std::string named_attrs_str(OpKind op, const AttrList& attrs) {
  if (attrs.size() == 0) return "";
  const OpSchema& schema = op_info(op).schema;
  std::string s = " {";
  for (size_t i = 0; i < attrs.size(); ++i)
    s += fmt::format("{}{}={}", i ? ", " : "", schema.attr_args.at(i).name, attr_str(attrs[i]));
  return s + "}";
}

AttrList parse_named_attrs(Lexer& lex, OpKind op) {
  const OpInfo& info = op_info(op);
  lex.expect(Tok::LBrace, "'{' to open the attributes");
  std::vector<std::optional<AttrValue>> vals(info.schema.attr_args.size());
  while (true) {
    Token name = lex.expect(Tok::Ident, "an attribute name");
    int idx = info.schema.attr_index(name.text);
    if (idx < 0) lex.error(name, "unknown attribute '{}' for {} (schema: {})", name.text, info.name, info.schema_text);
    auto& slot = vals[static_cast<size_t>(idx)];
    if (slot) lex.error(name, "duplicate attribute '{}'", name.text);
    lex.expect(Tok::Equals, fmt::format("'=' after attribute name '{}'", name.text));
    slot = parse_attr_value(lex, info.schema.attr_args[static_cast<size_t>(idx)]);
    if (lex.at(Tok::Comma)) {
      lex.next();
      continue;
    }
    if (!lex.at(Tok::RBrace)) lex.error(lex.peek(), "expected ',' or '}}' after an attribute, got {}", Lexer::describe(lex.peek()));
    break;
  }
  const Token close = lex.next();
  std::vector<AttrValue> out;
  for (size_t i = 0; i < vals.size(); ++i) {
    if (!vals[i])
      lex.error(close, "missing attribute '{}' for {} (schema: {})", info.schema.attr_args[i].name, info.name,
                info.schema_text);
    out.push_back(std::move(*vals[i]));
  }
  return AttrList(std::move(out));
}

}  // namespace kiln::ir::text
