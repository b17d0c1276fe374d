// kiln/ir/text_lexer.h — tokens of the IR text format and the expression parser on top of them.
//
// The lexer reads on demand with one token of lookahead, tracking line:column (1-based) for
// messages of the form "[parse] 3:17: expected ...". '#' starts a comment to the end of the
// line. `%name` is a value reference, except in expression mode (sizes and SymInt attributes),
// where '%' is always the modulo operator. parse_expr reads the grammar Expr::str prints:
//   cmp   := sum [('==' | '!=' | '<' | '<=') sum]
//   sum   := prod {('+' | '-') prod}
//   prod  := unary {('*' | '//' | '%') unary}
//   unary := '-' unary | atom
//   atom  := INT | SYMBOL | ('min' | 'max') '(' cmp ',' cmp ')' | '(' cmp ')'
// Text comes from anyone (repro files are replayed by strangers): an expression nested
// deeper than kMaxExprNesting (parentheses, minus signs, or the tree a chain like x//2//2...
// builds) is a parse error at its position, never a recursion without bound.
#pragma once

#include "base/error.h"
#include "ir/expr.h"

#include <optional>
#include <string>
#include <string_view>

namespace kiln::ir::text {

inline constexpr int kMaxExprNesting = 256;

enum class Tok {
  End,
  ValueRef,  // %name (text: name without '%')
  Ident,
  Int,
  Float,
  String,  // text: the unescaped contents
  LParen,
  RParen,
  LBracket,
  RBracket,
  LBrace,
  RBrace,
  Comma,
  Colon,
  Equals,
  At,
  Plus,
  Minus,
  Star,
  SlashSlash,
  Percent,
  EqEq,
  NotEq,
  Less,
  LessEq,
  Arrow,  // -> (a plan step's inputs -> outputs)
};

struct Token {
  Tok kind = Tok::End;
  std::string text;  // see Tok
  std::string raw;   // the source text, for messages
  int line = 1;
  int col = 1;
  size_t begin = 0, end = 0;  // byte offsets in the source
};

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  const Token& peek();
  Token next();
  bool at(Tok k) { return peek().kind == k; }
  bool at_ident(std::string_view word) { return peek().kind == Tok::Ident && peek().text == word; }
  // Consumes a token of kind k or fails with "expected <what>, got <token>".
  Token expect(Tok k, std::string_view what);
  void expect_ident(std::string_view word);

  // In expression mode '%' is the modulo operator and never starts a value reference.
  void set_expr_mode(bool on) { expr_mode_ = on; }
  bool expr_mode() const { return expr_mode_; }
  // Nesting of the expression being parsed (see kMaxExprNesting).
  int& expr_depth() { return expr_depth_; }

  // Throws kiln::Error "[parse] line:col: message".
  template <typename... Args>
  [[noreturn]] void error_at(int line, int col, fmt::format_string<Args...> f, Args&&... args) const {
    fail("parse", "{}:{}: {}", line, col, fmt::format(f, std::forward<Args>(args)...));
  }
  template <typename... Args>
  [[noreturn]] void error(const Token& at, fmt::format_string<Args...> f, Args&&... args) const {
    error_at(at.line, at.col, f, std::forward<Args>(args)...);
  }
  // "'foo'" for a token, "end of input" at the end.
  static std::string describe(const Token& t);

 private:
  Token lex();
  void skip_space();
  std::string_view src_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
  bool expr_mode_ = false;
  int expr_depth_ = 0;
  std::optional<Token> look_;
  bool look_mode_ = false;
  // Position after the lookahead (valid while look_ is set).
  size_t look_pos_ = 0;
  int look_line_ = 1, look_col_ = 1;
};

// Reads one expression (comparisons included) in expression mode, restoring the mode after.
Expr parse_expr(Lexer& lex);
// Reads a signed int64 literal: ['-'] INT (accepts -9223372036854775808).
int64_t parse_int_literal(Lexer& lex, std::string_view what);

}  // namespace kiln::ir::text
