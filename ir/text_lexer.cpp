// kiln/ir/text_lexer.cpp — the IR text lexer and the precedence parser of expressions.
//
// See text_lexer.h for the token set and the expression grammar. Every problem throws
// kiln::Error "[parse] line:col: ...", naming what was expected and the token found.
#include "ir/text_lexer.h"

#include "ir/text.h"

#include <cctype>
#include <charconv>

namespace kiln::ir::text {

namespace {

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return is_ident_char(c) || c == '.'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::string Lexer::describe(const Token& t) {
  if (t.kind == Tok::End) return "end of input";
  return "'" + t.raw + "'";
}

void Lexer::skip_space() {
  while (pos_ < src_.size()) {
    char c = src_[pos_];
    if (c == '#') {
      while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_, ++col_;
    } else if (c == '\n') {
      ++pos_, ++line_, col_ = 1;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      ++pos_, ++col_;
    } else {
      break;
    }
  }
}

Token Lexer::lex() {
  skip_space();
  Token t;
  t.line = line_;
  t.col = col_;
  t.begin = pos_;
  auto finish = [&](Tok k, size_t len) {
    t.kind = k;
    t.raw = std::string(src_.substr(pos_, len));
    if (t.text.empty() && k != Tok::String) t.text = t.raw;
    pos_ += len;
    col_ += static_cast<int>(len);
    t.end = pos_;
    return t;
  };
  if (pos_ >= src_.size()) {
    t.kind = Tok::End;
    t.end = pos_;
    return t;
  }
  const char c = src_[pos_];
  auto next_is = [&](size_t off, char want) { return pos_ + off < src_.size() && src_[pos_ + off] == want; };
  if (is_ident_start(c)) {
    size_t n = 1;
    for (;;) {
      while (pos_ + n < src_.size() && is_ident_char(src_[pos_ + n])) ++n;
      // A qualified name (a custom op: "mylib::softclip") is one identifier.
      if (!(next_is(n, ':') && next_is(n + 1, ':') && pos_ + n + 2 < src_.size() && is_ident_start(src_[pos_ + n + 2])))
        break;
      n += 3;
    }
    return finish(Tok::Ident, n);
  }
  if (is_digit(c)) {
    size_t n = 1;
    while (pos_ + n < src_.size() && is_digit(src_[pos_ + n])) ++n;
    bool is_float = false;
    if (pos_ + n < src_.size() && src_[pos_ + n] == '.') {
      is_float = true;
      ++n;
      while (pos_ + n < src_.size() && is_digit(src_[pos_ + n])) ++n;
    }
    if (pos_ + n < src_.size() && (src_[pos_ + n] == 'e' || src_[pos_ + n] == 'E')) {
      size_t m = n + 1;
      if (pos_ + m < src_.size() && (src_[pos_ + m] == '+' || src_[pos_ + m] == '-')) ++m;
      if (pos_ + m < src_.size() && is_digit(src_[pos_ + m])) {
        while (pos_ + m < src_.size() && is_digit(src_[pos_ + m])) ++m;
        n = m;
        is_float = true;
      }
    }
    return finish(is_float ? Tok::Float : Tok::Int, n);
  }
  if (c == '%' && !expr_mode_ && pos_ + 1 < src_.size() && is_name_char(src_[pos_ + 1])) {
    size_t n = 1;
    while (pos_ + n < src_.size() && is_name_char(src_[pos_ + n])) ++n;
    Token r = finish(Tok::ValueRef, n);
    r.text = r.raw.substr(1);
    return r;
  }
  if (c == '"') {
    std::string value;
    size_t n = 1;
    while (true) {
      if (pos_ + n >= src_.size() || src_[pos_ + n] == '\n') error_at(line_, col_, "unterminated string");
      char ch = src_[pos_ + n];
      if (ch == '"') {
        ++n;
        break;
      }
      if (ch != '\\') {
        value += ch;
        ++n;
        continue;
      }
      if (pos_ + n + 1 >= src_.size()) error_at(line_, col_, "unterminated string");
      char esc = src_[pos_ + n + 1];
      int ecol = col_ + static_cast<int>(n);
      n += 2;
      switch (esc) {
        case '"': value += '"'; break;
        case '\\': value += '\\'; break;
        case 'n': value += '\n'; break;
        case 't': value += '\t'; break;
        case 'r': value += '\r'; break;
        case 'x': {
          unsigned v = 0;
          auto [p, ec] = std::from_chars(src_.data() + pos_ + n, src_.data() + std::min(src_.size(), pos_ + n + 2), v, 16);
          if (ec != std::errc() || p != src_.data() + pos_ + n + 2) error_at(line_, ecol, "bad escape in string: \\x needs two hex digits");
          value += static_cast<char>(v);
          n += 2;
          break;
        }
        default: error_at(line_, ecol, "unknown escape '\\{}' in string", esc);
      }
    }
    t.text = value;
    return finish(Tok::String, n);
  }
  switch (c) {
    case '(': return finish(Tok::LParen, 1);
    case ')': return finish(Tok::RParen, 1);
    case '[': return finish(Tok::LBracket, 1);
    case ']': return finish(Tok::RBracket, 1);
    case '{': return finish(Tok::LBrace, 1);
    case '}': return finish(Tok::RBrace, 1);
    case ',': return finish(Tok::Comma, 1);
    case ':': return finish(Tok::Colon, 1);
    case '@': return finish(Tok::At, 1);
    case '+': return finish(Tok::Plus, 1);
    case '-': return next_is(1, '>') ? finish(Tok::Arrow, 2) : finish(Tok::Minus, 1);
    case '*': return finish(Tok::Star, 1);
    case '%': return finish(Tok::Percent, 1);
    case '=': return next_is(1, '=') ? finish(Tok::EqEq, 2) : finish(Tok::Equals, 1);
    case '<': return next_is(1, '=') ? finish(Tok::LessEq, 2) : finish(Tok::Less, 1);
    case '!':
      if (next_is(1, '=')) return finish(Tok::NotEq, 2);
      break;
    case '/':
      if (next_is(1, '/')) return finish(Tok::SlashSlash, 2);
      break;
    default: break;
  }
  error_at(line_, col_, "unexpected character '{}'", c);
}

const Token& Lexer::peek() {
  if (look_ && look_mode_ == expr_mode_) return *look_;
  size_t p = pos_;
  int l = line_, c = col_;
  look_ = lex();
  look_mode_ = expr_mode_;
  look_pos_ = pos_;
  look_line_ = line_;
  look_col_ = col_;
  pos_ = p;
  line_ = l;
  col_ = c;
  return *look_;
}

Token Lexer::next() {
  peek();
  Token t = std::move(*look_);
  look_.reset();
  pos_ = look_pos_;
  line_ = look_line_;
  col_ = look_col_;
  return t;
}

Token Lexer::expect(Tok k, std::string_view what) {
  if (peek().kind != k) error(peek(), "expected {}, got {}", what, describe(peek()));
  return next();
}

void Lexer::expect_ident(std::string_view word) {
  if (!at_ident(word)) error(peek(), "expected '{}', got {}", word, describe(peek()));
  next();
}

int64_t parse_int_literal(Lexer& lex, std::string_view what) {
  bool neg = false;
  if (lex.at(Tok::Minus)) {
    lex.next();
    neg = true;
  }
  if (!lex.at(Tok::Int)) lex.error(lex.peek(), "expected {}, got {}", what, Lexer::describe(lex.peek()));
  Token t = lex.next();
  uint64_t mag = 0;
  auto [p, ec] = std::from_chars(t.raw.data(), t.raw.data() + t.raw.size(), mag);
  uint64_t limit = neg ? (uint64_t{1} << 63) : (uint64_t{1} << 63) - 1;
  if (ec != std::errc() || p != t.raw.data() + t.raw.size() || mag > limit)
    lex.error(t, "integer literal '{}{}' is out of range", neg ? "-" : "", t.raw);
  return neg ? static_cast<int64_t>(uint64_t{0} - mag) : static_cast<int64_t>(mag);
}

namespace {

Expr parse_cmp(Lexer& lex);

// One more level of nesting at token t for the duration of a scope.
class Nest {
 public:
  Nest(Lexer& lex, const Token& t) : lex_(lex) {
    if (++lex_.expr_depth() > kMaxExprNesting)
      lex_.error(t, "expression nested deeper than {} levels", kMaxExprNesting);
  }
  ~Nest() { --lex_.expr_depth(); }
  Nest(const Nest&) = delete;
  Nest& operator=(const Nest&) = delete;

 private:
  Lexer& lex_;
};

// An operator chain (x//2//2//...) nests the tree without nesting the text.
Expr checked_height(Lexer& lex, const Token& at, Expr e) {
  if (e.height() > kMaxExprNesting) lex.error(at, "expression nested deeper than {} levels", kMaxExprNesting);
  return e;
}

Expr parse_atom(Lexer& lex) {
  const Token& t = lex.peek();
  switch (t.kind) {
    case Tok::Int: return Expr(parse_int_literal(lex, "an integer"));
    case Tok::Ident: {
      Token id = lex.next();
      if (id.text == "min" || id.text == "max") {
        const Nest nest(lex, id);
        lex.expect(Tok::LParen, fmt::format("'(' after '{}'", id.text));
        Expr a = parse_cmp(lex);
        lex.expect(Tok::Comma, fmt::format("',' between the arguments of {}", id.text));
        Expr b = parse_cmp(lex);
        lex.expect(Tok::RParen, fmt::format("')' after the arguments of {}", id.text));
        return id.text == "min" ? min(a, b) : max(a, b);
      }
      return Expr::symbol(id.text);
    }
    case Tok::LParen: {
      const Nest nest(lex, lex.next());
      Expr e = parse_cmp(lex);
      lex.expect(Tok::RParen, "')'");
      return e;
    }
    default: break;  // anything else cannot start an expression
  }
  lex.error(t, "expected an expression, got {}", Lexer::describe(t));
}

Expr parse_unary(Lexer& lex) {
  if (!lex.at(Tok::Minus)) return parse_atom(lex);
  // -INT is one literal (so that -9223372036854775808 reads back); otherwise negate.
  const Nest nest(lex, lex.next());
  if (lex.at(Tok::Int)) {
    Token digits = lex.peek();
    uint64_t mag = 0;
    auto [p, ec] = std::from_chars(digits.raw.data(), digits.raw.data() + digits.raw.size(), mag);
    if (ec == std::errc() && p == digits.raw.data() + digits.raw.size() && mag == (uint64_t{1} << 63)) {
      lex.next();
      return Expr(INT64_MIN);
    }
    return Expr(-parse_int_literal(lex, "an integer"));
  }
  return -parse_unary(lex);
}

Expr parse_prod(Lexer& lex) {
  Expr a = parse_unary(lex);
  while (true) {
    Tok k = lex.peek().kind;
    if (k != Tok::Star && k != Tok::SlashSlash && k != Tok::Percent) return a;
    const Token op = lex.next();
    Expr b = parse_unary(lex);
    a = checked_height(lex, op, k == Tok::Star ? a * b : k == Tok::SlashSlash ? floordiv(a, b) : mod(a, b));
  }
}

Expr parse_sum(Lexer& lex) {
  Expr a = parse_prod(lex);
  while (lex.at(Tok::Plus) || lex.at(Tok::Minus)) {
    const Token op = lex.next();
    Expr b = parse_prod(lex);
    a = checked_height(lex, op, op.kind == Tok::Plus ? a + b : a - b);
  }
  return a;
}

bool is_cmp(Tok k) { return k == Tok::EqEq || k == Tok::NotEq || k == Tok::Less || k == Tok::LessEq; }

Expr parse_cmp(Lexer& lex) {
  Expr a = parse_sum(lex);
  if (!is_cmp(lex.peek().kind)) return a;
  Tok k = lex.next().kind;
  Expr b = parse_sum(lex);
  if (is_cmp(lex.peek().kind)) lex.error(lex.peek(), "comparisons do not chain; add parentheses");
  switch (k) {
    case Tok::EqEq: return eq(a, b);
    case Tok::NotEq: return ne(a, b);
    case Tok::Less: return lt(a, b);
    default: return le(a, b);  // is_cmp admits only the four comparison tokens
  }
}

}  // namespace

Expr parse_expr(Lexer& lex) {
  bool saved = lex.expr_mode();
  lex.set_expr_mode(true);
  Expr e = parse_cmp(lex);
  lex.set_expr_mode(saved);
  return e;
}

}  // namespace kiln::ir::text

namespace kiln::ir {

Expr parse_expr(std::string_view src) {
  text::Lexer lex(src);
  Expr e = text::parse_expr(lex);
  lex.set_expr_mode(true);
  if (!lex.at(text::Tok::End)) lex.error(lex.peek(), "expected end of expression, got {}", text::Lexer::describe(lex.peek()));
  return e;
}

}  // namespace kiln::ir
