// kiln/ir/text_parser.cpp — reads the graph text format back into an ir::Graph.
//
// A recursive-descent parser over ir/text_lexer.h. It reads exactly what print_graph writes,
// plus free whitespace and '#' comments: tensor arguments first, then attributes by name in
// any order, each typed by its schema ArgType. Every attribute must be present exactly once.
// Each node's declared output types are checked against ir::infer_types at the node's
// position, and the finished graph goes through ir::verify with nodes located by line:col.
// Values keep their textual names, so printing a parsed graph reproduces the text. A
// symbols(...)/guards(...) header is declared in a ShapeEnv, under which the graph is verified.
#include "base/error.h"
#include "ir/shape_env.h"
#include "ir/shape_fns.h"
#include "ir/text.h"
#include "ir/text_attr.h"
#include "ir/text_lexer.h"
#include "ir/verifier.h"

#include <charconv>
#include <limits>
#include <optional>
#include <unordered_map>

namespace kiln::ir {

namespace {

using text::Lexer;
using text::Tok;
using text::Token;

class Parser {
 public:
  explicit Parser(std::string_view src) : lex_(src), g_(std::make_unique<Graph>()) {}

  std::unique_ptr<Graph> parse(ShapeEnv* env) {
    ShapeEnv local;
    ShapeEnv* declared = nullptr;
    if (lex_.at_ident("symbols")) {
      declared = env ? env : &local;
      if (!declared->symbols().empty())
        lex_.error(lex_.peek(), "the text declares symbols, but the ShapeEnv it is parsed into has symbols already");
      parse_symbols(*declared);
      if (lex_.at_ident("guards")) parse_guards(*declared);
    }
    std::optional<ShapeEnvScope> scope;
    if (declared) scope.emplace(declared);
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
  // symbols(s0 = 4, s1 = 7): the trace's symbols in order, with their hints.
  void parse_symbols(ShapeEnv& env) {
    lex_.expect_ident("symbols");
    lex_.expect(Tok::LParen, "'(' after 'symbols'");
    while (true) {
      const Token name = lex_.expect(Tok::Ident, "a symbol name 's0'");
      const std::string want = "s" + std::to_string(env.symbols().size());
      if (name.text != want) lex_.error(name, "symbols are declared s0, s1, ... in order; expected {}, got '{}'", want, name.raw);
      lex_.expect(Tok::Equals, fmt::format("'=' after {}", name.raw));
      const Token at = lex_.peek();
      const int64_t hint = text::parse_int_literal(lex_, "the symbol's size");
      if (hint < 2) lex_.error(at, "{} = {}: a symbolic size is at least 2 (sizes 0 and 1 are never symbolic)", name.raw, hint);
      env.create_symbol(hint, name.text, /*duck=*/false);
      if (lex_.at(Tok::Comma)) {
        lex_.next();
        continue;
      }
      lex_.expect(Tok::RParen, "',' or ')' after a symbol");
      return;
    }
  }

  // guards(s0 - 1 == 1, 8 <= s1): the guards the trace recorded, in order.
  void parse_guards(ShapeEnv& env) {
    lex_.expect_ident("guards");
    lex_.expect(Tok::LParen, "'(' after 'guards'");
    while (true) {
      const Token at = lex_.peek();
      const Expr pred = text::parse_expr(lex_);
      try {
        env.assume(pred);
      } catch (const Error& e) {
        lex_.error(at, "{}", e.what());
      }
      if (lex_.at(Tok::Comma)) {
        lex_.next();
        continue;
      }
      lex_.expect(Tok::RParen, "',' or ')' after a guard");
      return;
    }
  }

  void check_fresh(const Token& name) {
    if (values_.count(name.text)) lex_.error(name, "redefinition of {}", name.raw);
  }
  void define(const Token& name, Value* v) { values_[name.text] = v; }
  Value* lookup(const Token& name) {
    auto it = values_.find(name.text);
    if (it == values_.end()) lex_.error(name, "undefined value {}", name.raw);
    return it->second;
  }

  TensorType parse_type() { return text::parse_tensor_type(lex_); }

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
    attrs[static_cast<size_t>(idx)] = text::parse_attr_value(lex_, info.schema.attr_args[static_cast<size_t>(idx)]);
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

std::unique_ptr<Graph> parse_graph(std::string_view text, ShapeEnv* env) { return Parser(text).parse(env); }

bool declares_symbols(std::string_view text) {
  text::Lexer lex(text);
  return lex.at_ident("symbols");
}

}  // namespace kiln::ir
