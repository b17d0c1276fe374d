// kiln/ir/kernel_text.cpp — reads the Kernel text format (ir/kernel_text.h) back into Kernels.
//
// A recursive-descent parser over the graph text lexer (ir/text_lexer.h) and its expression
// parser. It reads exactly what Kernel::str writes, plus free whitespace and '#' comments.
// Local mistakes (an unknown op, argument or dtype, a loop variable out of order, a bad
// literal) fail at their own line:col; scoping and structure (use before definition, stores
// to inputs, variables out of scope) are left to ir::verify_kernel, run on each finished
// kernel and reported at the kernel's header.
#include "ir/kernel_text.h"

#include "base/error.h"
#include "ir/text_attr.h"
#include "ir/text_lexer.h"

#include <charconv>
#include <limits>
#include <map>
#include <optional>
#include <set>

namespace kiln::ir {

namespace {

using text::Lexer;
using text::Tok;
using text::Token;

class KernelParser {
 public:
  explicit KernelParser(std::string_view src) : lex_(src) {}

  std::vector<Kernel> parse_all() {
    std::vector<Kernel> out;
    std::set<std::string> names;
    while (!lex_.at(Tok::End)) {
      const Token head = lex_.peek();
      Kernel k = parse_one();
      if (!names.insert(k.name).second) lex_.error(head, "redefinition of kernel {}", k.name);
      out.push_back(std::move(k));
    }
    return out;
  }

  Kernel parse_single() {
    Kernel k = parse_one();
    if (!lex_.at(Tok::End)) lex_.error(lex_.peek(), "expected end of input after the kernel, got {}", got());
    return k;
  }

 private:
  std::string got() { return Lexer::describe(lex_.peek()); }

  Kernel parse_one() {
    const Token head = lex_.peek();
    lex_.expect_ident("kernel");
    Kernel k;
    k.name = lex_.expect(Tok::Ident, "a kernel name").text;
    lex_.expect(Tok::LParen, fmt::format("'(' after kernel {}", k.name));
    if (!lex_.at(Tok::RParen)) {
      while (true) {
        k.args.push_back(parse_arg(k));
        if (!take(Tok::Comma)) break;
      }
    }
    if (!take(Tok::RParen)) lex_.error(lex_.peek(), "expected ',' or ')' after a kernel argument, got {}", got());
    if (lex_.at_ident("params")) {
      lex_.next();
      lex_.expect(Tok::LParen, "'(' after 'params'");
      if (!lex_.at(Tok::RParen)) {
        while (true) {
          Token p = lex_.expect(Tok::Ident, "a parameter name");
          for (const std::string& q : k.params)
            if (q == p.text) lex_.error(p, "duplicate parameter {}", p.text);
          k.params.push_back(p.text);
          if (!take(Tok::Comma)) break;
        }
      }
      if (!take(Tok::RParen)) lex_.error(lex_.peek(), "expected ',' or ')' after a parameter, got {}", got());
    }
    lex_.expect_ident("grid");
    k.grid = parse_nest(grid_var);
    parse_schedule(k.schedule);
    lex_.expect(Tok::LBrace, "'{' after the kernel header");
    types_.clear();
    while (!take(Tok::RBrace)) k.stages.push_back(parse_stage(k));
    try {
      verify_kernel(k);
    } catch (const InternalError& e) {
      std::string_view msg = e.what();
      constexpr std::string_view prefix = "internal error: ";
      if (msg.substr(0, prefix.size()) == prefix) msg.remove_prefix(prefix.size());
      lex_.error(head, "{}", msg);
    }
    return k;
  }

  bool take(Tok t) {
    if (!lex_.at(t)) return false;
    lex_.next();
    return true;
  }

  KernelArg parse_arg(const Kernel& k) {
    Token name = lex_.expect(Tok::Ident, "a kernel argument name");
    for (const KernelArg& a : k.args)
      if (a.name == name.text) lex_.error(name, "redefinition of argument {}", name.text);
    lex_.expect(Tok::Colon, fmt::format("':' after argument {}", name.text));
    KernelArg a;
    a.name = name.text;
    if (lex_.at_ident("out")) {
      lex_.next();
      a.output = true;
    }
    a.dtype = parse_dtype();
    return a;
  }

  ScalarType parse_dtype() {
    if (!lex_.at(Tok::Ident)) lex_.error(lex_.peek(), "expected a dtype like f32, got {}", got());
    Token t = lex_.next();
    auto dt = dtype_from_short_name(t.text);
    if (!dt) lex_.error(t, "unknown dtype '{}'", t.text);
    return *dt;
  }

  // '[' [v0 '<' extent {',' v1 '<' extent}] ']', the variables named by `var` in order.
  std::vector<Expr> parse_nest(std::string (*var)(size_t)) {
    lex_.expect(Tok::LBracket, "'[' to open a loop nest");
    std::vector<Expr> extents;
    if (take(Tok::RBracket)) return extents;
    while (true) {
      const std::string want = var(extents.size());
      if (!lex_.at_ident(want)) lex_.error(lex_.peek(), "expected loop variable {}, got {}", want, got());
      lex_.next();
      lex_.expect(Tok::Less, fmt::format("'<' after {}", want));
      extents.push_back(text::parse_expr(lex_));
      if (take(Tok::Comma)) continue;
      if (!take(Tok::RBracket)) lex_.error(lex_.peek(), "expected ',' or ']' in a loop nest, got {}", got());
      return extents;
    }
  }

  // A positive integer in parentheses after a schedule field's name.
  int64_t parse_paren_int(std::string_view field) {
    lex_.next();
    lex_.expect(Tok::LParen, fmt::format("'(' after '{}'", field));
    const Token t = lex_.peek();
    const int64_t v = text::parse_int_literal(lex_, "a positive integer");
    if (v <= 0) lex_.error(t, "{} must be positive", field);
    lex_.expect(Tok::RParen, fmt::format("')' after the value of {}", field));
    return v;
  }

  // name '=' positive integer, inside a field list.
  int64_t parse_named_int(std::string_view field) {
    lex_.next();
    lex_.expect(Tok::Equals, fmt::format("'=' after '{}'", field));
    const Token t = lex_.peek();
    const int64_t v = text::parse_int_literal(lex_, "a positive integer");
    if (v <= 0) lex_.error(t, "{} must be positive", field);
    return v;
  }

  // The kernel header's schedule fields after the grid, in the order Kernel::str prints them.
  void parse_schedule(KSchedule& s) {
    if (lex_.at_ident("outer_reduction_tile")) {
      s.outer_reduction_tile = parse_paren_int("outer_reduction_tile");
      s.outer_reduction = true;
    } else if (lex_.at_ident("outer_reduction")) {
      lex_.next();
      s.outer_reduction = true;
    }
    if (lex_.at_ident("tile_rows")) s.tile_rows = parse_paren_int("tile_rows");
    if (lex_.at_ident("vector_bits")) s.vector_bits = static_cast<int>(parse_paren_int("vector_bits"));
    if (!lex_.at_ident("launch")) return;
    lex_.next();
    lex_.expect(Tok::LParen, "'(' after 'launch'");
    const Token kind = lex_.expect(Tok::Ident, "a launch kind (thread_per_point or block_per_point)");
    if (kind.text == "thread_per_point") s.launch.kind = LaunchKind::ThreadPerPoint;
    else if (kind.text == "block_per_point") s.launch.kind = LaunchKind::BlockPerPoint;
    else lex_.error(kind, "unknown launch kind '{}'; expected thread_per_point or block_per_point", kind.text);
    while (take(Tok::Comma)) {
      if (lex_.at_ident("threads")) {
        s.launch.threads = parse_named_int("threads");
      } else if (lex_.at_ident("sms")) {
        s.launch.sms = parse_named_int("sms");
      } else if (lex_.at_ident("vector")) {
        s.launch.vector = parse_named_int("vector");
      } else if (lex_.at_ident("row_split")) {
        s.launch.row_split = parse_named_int("row_split");
      } else if (lex_.at_ident("row_items")) {
        s.launch.row_items = parse_named_int("row_items");
      } else if (lex_.at_ident("row_cache")) {
        lex_.next();
        s.launch.row_cache = true;
      } else if (lex_.at_ident("index32")) {
        lex_.next();
        s.launch.index32 = true;
      } else if (lex_.at_ident("work")) {
        lex_.next();
        lex_.expect(Tok::Equals, "'=' after 'work'");
        s.launch.work = text::parse_expr(lex_);
      } else {
        lex_.error(lex_.peek(), "expected threads=, work=, sms=, vector=, row_split=, row_items=, row_cache or index32 in launch(...), got {}", got());
      }
    }
    lex_.expect(Tok::RParen, "')' after the launch fields");
  }

  // Optional `vectorize(interleave=N, lanes=N, masked_tail, partials=N)` after a stage's loop nest.
  KVectorize parse_vectorize() {
    KVectorize v;
    if (!lex_.at_ident("vectorize")) return v;
    lex_.next();
    lex_.expect(Tok::LParen, "'(' after 'vectorize'");
    while (true) {
      if (lex_.at_ident("interleave")) {
        v.interleave = static_cast<int>(parse_named_int("interleave"));
      } else if (lex_.at_ident("lanes")) {
        v.lanes = static_cast<int>(parse_named_int("lanes"));
      } else if (lex_.at_ident("masked_tail")) {
        lex_.next();
        v.masked_tail = true;
      } else if (lex_.at_ident("partials")) {
        v.partials = static_cast<int>(parse_named_int("partials"));
      } else {
        lex_.error(lex_.peek(), "expected interleave=, lanes=, masked_tail or partials= in vectorize(...), got {}",
                   got());
      }
      if (!take(Tok::Comma)) break;
    }
    lex_.expect(Tok::RParen, "')' after the vectorize fields");
    return v;
  }

  int parse_id(std::string_view what) {
    Token t = lex_.expect(Tok::ValueRef, what);
    int id = 0;
    auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), id);
    if (ec != std::errc() || p != t.text.data() + t.text.size() || id < 0)
      lex_.error(t, "expected a numbered value like %3, got {}", Lexer::describe(t));
    return id;
  }

  KStage parse_stage(const Kernel& k) {
    KStage st;
    const std::map<int, ScalarType> outer = types_;
    if (lex_.at_ident("loop")) {
      lex_.next();
      st.kind = StageKind::Loop;
      if (lex_.at_ident("ordered")) {
        lex_.next();
        st.ordered = true;
      }
      st.extents = parse_nest(stage_var);
      st.vectorize = parse_vectorize();
      lex_.expect(Tok::LBrace, "'{' after the loop nest");
      while (!take(Tok::RBrace)) st.body.push_back(parse_inst(k, false));
      types_ = outer;
      return st;
    }
    if (!lex_.at(Tok::ValueRef)) lex_.error(lex_.peek(), "expected a stage ('loop' or '%N = reduce') or '}}', got {}", got());
    st.kind = StageKind::Reduce;
    st.result = parse_id("a reduce result");
    lex_.expect(Tok::Equals, "'=' after the reduce result");
    lex_.expect_ident("reduce");
    Token op = lex_.expect(Tok::Ident, "a reduction (sum, prod, amax, ...)");
    auto kind = op_from_name(op.text);
    if (!kind || op_info(*kind).family != OpFamily::Reduction) lex_.error(op, "unknown reduction '{}'", op.text);
    st.reduce_op = as_reduction(*kind);
    st.extents = parse_nest(stage_var);
    st.vectorize = parse_vectorize();
    lex_.expect(Tok::LBrace, "'{' after the reduce nest");
    while (!lex_.at_ident("yield")) {
      if (lex_.at(Tok::RBrace)) lex_.error(lex_.peek(), "expected 'yield %N' before '}}' of a reduce stage");
      st.body.push_back(parse_inst(k, true));
    }
    lex_.next();
    st.yield = parse_id("the yielded value %N");
    lex_.expect(Tok::RBrace, "'}' after yield");
    lex_.expect(Tok::Colon, "':' and the accumulator dtype after the reduce stage");
    st.acc_dtype = parse_dtype();
    types_ = outer;
    // argmax/argmin give the i64 position (ir/kernel.h), whatever they compare.
    const bool arg = st.reduce_op == ReductionOp::argmax || st.reduce_op == ReductionOp::argmin;
    types_.emplace(st.result, arg ? ScalarType::Int64 : st.acc_dtype);
    if (lex_.at_ident("sum_exp")) {
      lex_.next();
      st.sum_exp = parse_id("the sum_exp result %N");
      lex_.expect(Tok::Colon, "':' and the dtype after the sum_exp result");
      st.sum_exp_dtype = parse_dtype();
      types_.emplace(st.sum_exp, st.sum_exp_dtype);
    }
    return st;
  }

  int arg_index(const Kernel& k, const Token& name) {
    for (size_t i = 0; i < k.args.size(); ++i)
      if (k.args[i].name == name.text) return static_cast<int>(i);
    lex_.error(name, "unknown kernel argument {}", name.text);
  }

  // NAME '[' expr ']'
  void parse_access(const Kernel& k, KInst& in) {
    Token name = lex_.expect(Tok::Ident, "a kernel argument");
    in.arg = arg_index(k, name);
    lex_.expect(Tok::LBracket, fmt::format("'[' after {}", name.text));
    in.index = text::parse_expr(lex_);
    lex_.expect(Tok::RBracket, "']' after the index");
  }

  KInst parse_inst(const Kernel& k, bool in_reduce) {
    KInst in;
    if (lex_.at_ident("store")) {
      lex_.next();
      in.kind = KOp::Store;
      parse_access(k, in);
      lex_.expect(Tok::Comma, "',' and the stored value after the index");
      in.operands.push_back(parse_id("the stored value %N"));
      auto it = types_.find(in.operands[0]);
      if (it != types_.end()) in.dtype = it->second;
      return in;
    }
    if (lex_.at_ident("update")) {
      lex_.next();
      in.kind = KOp::Update;
      in.operands.push_back(parse_id("the carry %N"));
      lex_.expect(Tok::Comma, "',' and the carry's next value after the carry");
      in.operands.push_back(parse_id("the carry's next value %N"));
      auto it = types_.find(in.operands[1]);
      if (it != types_.end()) in.dtype = it->second;
      return in;
    }
    if (!lex_.at(Tok::ValueRef))
      lex_.error(lex_.peek(), "expected an instruction ('%N = ...', 'store' or 'update'){}, got {}",
                 in_reduce ? ", 'yield'" : " or '}'", got());
    in.id = parse_id("a result %N");
    lex_.expect(Tok::Equals, "'=' after the result");
    Token op = lex_.expect(Tok::Ident, "an instruction (load, const, index or an elementwise op)");
    if (op.text == "load") {
      in.kind = KOp::Load;
      parse_access(k, in);
    } else if (op.text == "const") {
      in.kind = KOp::Const;
      in.value = parse_scalar();
    } else if (op.text == "index") {
      in.kind = KOp::Index;
      in.index = text::parse_expr(lex_);
    } else if (op.text == "check") {
      parse_check(in);
    } else if (op.text == "random") {
      parse_random(in);
    } else if (op.text == "carry") {
      in.kind = KOp::Carry;
      in.value = parse_scalar();
    } else {
      in.kind = KOp::Compute;
      auto kind = op_from_name(op.text);
      if (!kind) lex_.error(op, "unknown op '{}'", op.text);
      const OpFamily f = op_info(*kind).family;
      if (f != OpFamily::Unary && f != OpFamily::Binary && f != OpFamily::Ternary && f != OpFamily::Cast)
        lex_.error(op, "{} is not an elementwise prim", op.text);
      in.op = *kind;
      if (lex_.at(Tok::ValueRef)) {
        while (true) {
          in.operands.push_back(parse_id("an operand %N"));
          if (!take(Tok::Comma)) break;
        }
      }
      if (lex_.at(Tok::LBrace)) in.attrs = text::parse_named_attrs(lex_, in.op);
    }
    lex_.expect(Tok::Colon, "':' and the result dtype");
    in.dtype = parse_dtype();
    types_.emplace(in.id, in.dtype);
    return in;
  }

  // ('uniform' | 'normal') '(' NUMBER ',' NUMBER ')' %index ',' %seed ',' %offset   (after 'random')
  void parse_random(KInst& in) {
    in.kind = KOp::Random;
    Token op = lex_.expect(Tok::Ident, "uniform or normal after 'random'");
    if (op.text != "uniform" && op.text != "normal") lex_.error(op, "expected uniform or normal, got '{}'", op.text);
    in.op = op.text == "uniform" ? OpKind::uniform : OpKind::normal;
    lex_.expect(Tok::LParen, "'(' and the draw's two parameters");
    const double a = parse_scalar().to_double();
    lex_.expect(Tok::Comma, "',' between the draw's two parameters");
    const double b = parse_scalar().to_double();
    lex_.expect(Tok::RParen, "')' after the draw's two parameters");
    in.attrs = AttrList({a, b});
    while (true) {
      in.operands.push_back(parse_id("an operand %N (index, seed, offset)"));
      if (!take(Tok::Comma)) break;
    }
  }

  // 'nonzero' %x 'for' OP  |  %x '<' BOUND 'for' OP 'dim' INT   (after 'check')
  void parse_check(KInst& in) {
    in.kind = KOp::Check;
    const bool nonzero = take_ident("nonzero");
    in.check = nonzero ? CheckKind::NonZero : CheckKind::InBounds;
    in.operands.push_back(parse_id("the checked value %N"));
    if (!nonzero) {
      lex_.expect(Tok::Less, "'<' and the bound after the checked value");
      in.index = text::parse_expr(lex_);
    }
    lex_.expect_ident("for");
    Token op = lex_.expect(Tok::Ident, "the op whose error the check raises");
    auto kind = op_from_name(op.text);
    if (!kind) lex_.error(op, "unknown op '{}'", op.text);
    in.op = *kind;
    if (!nonzero) {
      lex_.expect_ident("dim");
      in.value = Scalar(text::parse_int_literal(lex_, "the dim the error names"));
    }
  }

  bool take_ident(std::string_view word) {
    if (!lex_.at_ident(word)) return false;
    lex_.next();
    return true;
  }

  // ['-'] (INT | FLOAT | inf | nan): an integer Scalar for INT, a floating one otherwise.
  // Returns nullopt (consuming nothing) when the next token cannot start a number.
  std::optional<Scalar> parse_number() {
    const bool neg = lex_.at(Tok::Minus);
    if (!neg && !lex_.at(Tok::Int) && !lex_.at(Tok::Float) && !lex_.at_ident("inf") && !lex_.at_ident("nan"))
      return std::nullopt;
    if (lex_.at(Tok::Int) || neg) {
      if (neg) lex_.next();
      if (lex_.at(Tok::Int)) {
        Token t = lex_.next();
        uint64_t mag = 0;
        auto [p, ec] = std::from_chars(t.raw.data(), t.raw.data() + t.raw.size(), mag);
        uint64_t limit = neg ? (uint64_t{1} << 63) : (uint64_t{1} << 63) - 1;
        if (ec != std::errc() || p != t.raw.data() + t.raw.size() || mag > limit)
          lex_.error(t, "integer literal '{}{}' is out of range", neg ? "-" : "", t.raw);
        return Scalar(neg ? static_cast<int64_t>(uint64_t{0} - mag) : static_cast<int64_t>(mag));
      }
    }
    const Token t = lex_.peek();
    double v = 0;
    if (t.kind == Tok::Float) {
      auto [p, ec] = std::from_chars(t.raw.data(), t.raw.data() + t.raw.size(), v);
      if (ec != std::errc() || p != t.raw.data() + t.raw.size()) lex_.error(t, "number '{}' is out of range", t.raw);
    } else if (t.kind == Tok::Ident && (t.text == "inf" || t.text == "nan")) {
      v = t.text == "inf" ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
    } else {
      lex_.error(t, "expected a number after '-', got {}", Lexer::describe(t));
    }
    lex_.next();
    return Scalar(neg ? -v : v);
  }

  Scalar parse_scalar() {
    if (take_ident("true")) return Scalar(true);
    if (take_ident("false")) return Scalar(false);
    if (auto s = parse_number()) return *s;
    lex_.error(lex_.peek(), "expected a constant (true, false, a number, inf or nan), got {}", got());
  }


  Lexer lex_;
  std::map<int, ScalarType> types_;  // dtypes of the values in scope (a store takes its operand's)
};

}  // namespace

std::vector<Kernel> parse_kernels(std::string_view text) { return KernelParser(text).parse_all(); }

Kernel parse_kernel(std::string_view text) { return KernelParser(text).parse_single(); }

std::string print_kernels(const std::vector<Kernel>& kernels) {
  std::string out;
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (i) out += "\n";
    out += kernels[i].str();
  }
  return out;
}

}  // namespace kiln::ir
