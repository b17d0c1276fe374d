// kiln/ir/text_parser.cpp — reads the graph text format back into an ir::Graph.
//
// A recursive-descent parser over ir/text_lexer.h. It reads exactly what print_graph writes,
// plus free whitespace and '#' comments: tensor arguments first, then attributes by name in
// any order, each typed by its schema ArgType. Every attribute must be present exactly once.
// Each node's declared output types are checked against ir::infer_types at the node's
// position, and the finished graph goes through ir::verify with nodes located by line:col.
// Values keep their textual names, so printing a parsed graph reproduces the text.
#include "frontend/error.h"
#include "ir/shape_fns.h"
#include "ir/text.h"
#include "ir/text_lexer.h"
#include "ir/verifier.h"

#include <charconv>
#include <limits>
#include <unordered_map>

namespace kiln::ir {

namespace {

using text::Lexer;
using text::Tok;
using text::Token;

class Parser {
 public:
  explicit Parser(std::string_view src) : lex_(src), g_(std::make_unique<Graph>()) {}

  std::unique_ptr<Graph> parse() {
    lex_.expect_ident("graph");
    lex_.expect(Tok::LParen, "'(' after 'graph'");
    if (!lex_.at(Tok::RParen)) {
      while (true) {
        Token name = lex_.expect(Tok::ValueRef, "a graph input '%name'");
        check_fresh(name);
        lex_.expect(Tok::Colon, fmt::format("':' after {}", name.raw));
        TensorType t = parse_type();
        define(name, g_->add_input(std::move(t), name.text));
        if (lex_.at(Tok::Comma)) {
          lex_.next();
          continue;
        }
        if (!lex_.at(Tok::RParen))
          lex_.error(lex_.peek(), "expected ',' or ')' after graph input, got {}", Lexer::describe(lex_.peek()));
        break;
      }
    }
    lex_.next();
    lex_.expect(Tok::LBrace, "'{' after the graph inputs");
    while (true) {
      if (lex_.at_ident("return")) break;
      if (!lex_.at(Tok::ValueRef))
        lex_.error(lex_.peek(), "expected a node '%name : type = op(...)' or 'return', got {}", Lexer::describe(lex_.peek()));
      parse_node();
    }
    parse_return();
    lex_.expect(Tok::RBrace, "'}' after return");
    if (!lex_.at(Tok::End)) lex_.error(lex_.peek(), "expected end of input after '}}', got {}", Lexer::describe(lex_.peek()));
    verify(*g_, [this](const Node* n) {
      auto it = node_pos_.find(n);
      return it == node_pos_.end() ? std::string() : fmt::format("{}:{}: ", it->second.first, it->second.second);
    });
    return std::move(g_);
  }

 private:
  void check_fresh(const Token& name) {
    if (values_.count(name.text)) lex_.error(name, "redefinition of {}", name.raw);
  }
  void define(const Token& name, Value* v) { values_[name.text] = v; }
  Value* lookup(const Token& name) {
    auto it = values_.find(name.text);
    if (it == values_.end()) lex_.error(name, "undefined value {}", name.raw);
    return it->second;
  }

  // dtype '[' sizes ']' ['@' device]
  TensorType parse_type() {
    if (!lex_.at(Tok::Ident)) lex_.error(lex_.peek(), "expected a tensor type like f32[4, s0], got {}", Lexer::describe(lex_.peek()));
    Token dt = lex_.next();
    auto dtype = dtype_from_short_name(dt.text);
    if (!dtype) lex_.error(dt, "unknown dtype '{}'", dt.text);
    lex_.expect(Tok::LBracket, fmt::format("'[' after dtype {}", dt.text));
    std::vector<Expr> sizes = parse_expr_list_tail();
    Device dev;
    if (lex_.at(Tok::At)) {
      lex_.next();
      dev = parse_device();
    }
    return TensorType(*dtype, std::move(sizes), dev);
  }

  // After '[': expressions separated by ',' up to ']'.
  std::vector<Expr> parse_expr_list_tail() {
    std::vector<Expr> out;
    lex_.set_expr_mode(true);
    if (!lex_.at(Tok::RBracket)) {
      while (true) {
        out.push_back(text::parse_expr(lex_));
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

  void parse_node() {
    const Token first = lex_.peek();
    std::vector<std::pair<Token, TensorType>> outs;
    while (true) {
      Token name = lex_.expect(Tok::ValueRef, "an output '%name'");
      check_fresh(name);
      for (const auto& o : outs)
        if (o.first.text == name.text) lex_.error(name, "redefinition of {}", name.raw);
      lex_.expect(Tok::Colon, fmt::format("':' after {}", name.raw));
      TensorType t = parse_type();
      outs.emplace_back(std::move(name), std::move(t));
      if (!lex_.at(Tok::Comma)) break;
      lex_.next();
    }
    lex_.expect(Tok::Equals, "'=' or ',' after the output type");
    if (!lex_.at(Tok::Ident)) lex_.error(lex_.peek(), "expected an op name, got {}", Lexer::describe(lex_.peek()));
    Token op_tok = lex_.next();
    auto op = op_from_name(op_tok.text);
    if (!op) lex_.error(op_tok, "unknown op '{}'", op_tok.text);
    const OpInfo& info = op_info(*op);
    const OpSchema& schema = info.schema;
    lex_.expect(Tok::LParen, fmt::format("'(' after {}", info.name));

    std::vector<Value*> inputs;
    std::vector<std::optional<AttrValue>> attrs(schema.attr_args.size());
    bool seen_attr = false, seen_list = false;
    if (!lex_.at(Tok::RParen)) {
      while (true) {
        const Token t = lex_.peek();
        if (t.kind == Tok::ValueRef) {
          if (schema.variadic()) lex_.error(t, "{} takes its tensors as one list [%a, %b, ...]", info.name);
          if (seen_attr) lex_.error(t, "tensor argument {} after attributes", t.raw);
          if (inputs.size() >= schema.tensor_args.size())
            lex_.error(t, "too many tensor arguments for {} (schema: {})", info.name, info.schema_text);
          inputs.push_back(lookup(lex_.next()));
        } else if (t.kind == Tok::LBracket && schema.variadic() && !seen_attr && !seen_list) {
          lex_.next();
          seen_list = true;
          parse_value_list(inputs);
        } else if (t.kind == Tok::Ident) {
          seen_attr = true;
          parse_attr(info, attrs);
        } else {
          lex_.error(t, "expected a tensor argument or name=value, got {}", Lexer::describe(t));
        }
        if (lex_.at(Tok::Comma)) {
          lex_.next();
          continue;
        }
        if (!lex_.at(Tok::RParen))
          lex_.error(lex_.peek(), "expected ',' or ')' after argument, got {}", Lexer::describe(lex_.peek()));
        break;
      }
    }
    const Token close = lex_.next();
    if (schema.variadic() ? !seen_list : !schema.accepts_tensor_count(inputs.size()))
      lex_.error(close, "{} takes {} tensor argument{}, got {} (schema: {})", info.name,
                 schema.variadic() ? "a list of" : std::to_string(schema.tensor_args.size()),
                 schema.tensor_args.size() == 1 && !schema.variadic() ? "" : "s", inputs.size(), info.schema_text);
    std::vector<AttrValue> values;
    for (size_t i = 0; i < attrs.size(); ++i) {
      if (!attrs[i])
        lex_.error(close, "missing attribute '{}' for {} (schema: {})", schema.attr_args[i].name, info.name,
                   info.schema_text);
      values.push_back(std::move(*attrs[i]));
    }
    AttrList attr_list(std::move(values));

    if (outs.size() != static_cast<size_t>(schema.num_outputs))
      lex_.error(first, "{} has {} output{}, but {} {} declared", info.name, schema.num_outputs,
                 schema.num_outputs == 1 ? "" : "s", outs.size(), outs.size() == 1 ? "is" : "are");
    std::vector<TensorType> in_types;
    for (const Value* v : inputs) in_types.push_back(v->type());
    std::vector<TensorType> inferred;
    try {
      inferred = infer_types(*op, in_types, attr_list);
    } catch (const Error& e) {
      lex_.error(op_tok, "{}", e.what());
    }
    std::vector<TensorType> declared;
    for (size_t i = 0; i < outs.size(); ++i) {
      if (i < inferred.size() && inferred[i] != outs[i].second)
        lex_.error(outs[i].first, "{} is declared as {}, but {} gives {}", outs[i].first.raw, outs[i].second.str(),
                   info.name, inferred[i].str());
      declared.push_back(outs[i].second);
    }
    Node* n = g_->create(*op, std::move(inputs), std::move(attr_list), std::move(declared));
    for (size_t i = 0; i < outs.size(); ++i) {
      n->output(i)->set_name(outs[i].first.text);
      define(outs[i].first, n->output(i));
    }
    node_pos_[n] = {first.line, first.col};
  }

  // After '[': %a, %b, ... ']'
  void parse_value_list(std::vector<Value*>& out) {
    if (lex_.at(Tok::RBracket)) {
      lex_.next();
      return;
    }
    while (true) {
      Token v = lex_.expect(Tok::ValueRef, "a tensor '%name' in the list");
      out.push_back(lookup(v));
      if (lex_.at(Tok::Comma)) {
        lex_.next();
        continue;
      }
      lex_.expect(Tok::RBracket, "',' or ']' in the tensor list");
      return;
    }
  }

  void parse_attr(const OpInfo& info, std::vector<std::optional<AttrValue>>& attrs) {
    Token name = lex_.next();
    int idx = info.schema.attr_index(name.text);
    if (idx < 0) lex_.error(name, "unknown attribute '{}' for {} (schema: {})", name.text, info.name, info.schema_text);
    if (attrs[static_cast<size_t>(idx)]) lex_.error(name, "duplicate attribute '{}'", name.text);
    lex_.expect(Tok::Equals, fmt::format("'=' after attribute name '{}'", name.text));
    attrs[static_cast<size_t>(idx)] = parse_attr_value(info.schema.attr_args[static_cast<size_t>(idx)]);
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
      case ArgType::SymInt: return text::parse_expr(lex_);
      case ArgType::SymIntList:
        if (t.kind != Tok::LBracket) bad_value(arg, t);
        lex_.next();
        return parse_expr_list_tail();
      case ArgType::Device: return parse_device();
    }
    internal_fail("parse_attr_value: bad ArgType");
  }

  void parse_return() {
    lex_.next();  // 'return'
    lex_.expect(Tok::LParen, "'(' after return");
    if (!lex_.at(Tok::RParen)) {
      while (true) {
        Token v = lex_.expect(Tok::ValueRef, "a returned value '%name'");
        g_->add_output(lookup(v));
        if (lex_.at(Tok::Comma)) {
          lex_.next();
          continue;
        }
        if (!lex_.at(Tok::RParen))
          lex_.error(lex_.peek(), "expected ',' or ')' after returned value, got {}", Lexer::describe(lex_.peek()));
        break;
      }
    }
    lex_.next();
  }

  Lexer lex_;
  std::unique_ptr<Graph> g_;
  std::unordered_map<std::string, Value*> values_;
  std::unordered_map<const Node*, std::pair<int, int>> node_pos_;
};

}  // namespace

std::unique_ptr<Graph> parse_graph(std::string_view text) { return Parser(text).parse(); }

}  // namespace kiln::ir
