// kiln/ir/exec_plan_text.cpp — reads the ExecPlan text format (ExecPlan::str) back into a plan.
//
// The header (buffers, slots, random draws, parameters, steps, return) is read with the graph
// text lexer and its expression, type and attribute readers (ir/text_attr.h); the kernels
// after it with the kernel parser (ir/kernel_text.h), and each kernel step takes the kernel
// of its name. A kernel step's buffers are listed inputs first, then outputs, as describe()
// prints them; they are put back in the kernel's argument order. Every buffer, slot, input and
// kernel a line names is checked, so a damaged plan is an error at its line:col, never a plan
// that indexes out of bounds.
#include "ir/exec_plan.h"

#include "base/error.h"
#include "ir/kernel_text.h"
#include "ir/text_attr.h"
#include "ir/text_lexer.h"

#include <charconv>
#include <map>
#include <set>

namespace kiln::ir {

namespace {

using text::Lexer;
using text::Tok;
using text::Token;

class PlanParser {
 public:
  explicit PlanParser(std::string_view src) : src_(src), lex_(src) {}

  ExecPlan parse() {
    // Buffers, then slots, then the optional lines, then steps, then return.
    while (at_numbered("b")) parse_buffer();
    while (at_numbered("slot")) parse_slot();
    if (lex_.at_ident("random")) {
      lex_.next();
      lex_.expect_ident("draws");
      lex_.expect(Tok::Colon, "':' after 'random draws'");
      plan_.random_draws = text::parse_int_literal(lex_, "the number of random draws");
      if (plan_.random_draws < 0) lex_.error(last_, "random draws cannot be negative");
    }
    if (lex_.at_ident("params")) parse_params();
    while (!lex_.at_ident("return")) parse_step();
    parse_return();
    parse_kernels_after();
    for (const PlanBuffer& b : plan_.buffers) {
      if (b.role == BufferRole::Temp && b.slot >= static_cast<int>(plan_.slots.size()))
        fail("parse", "plan: a temp is in slot{}, but the plan has {} slots", b.slot, plan_.slots.size());
    }
    return std::move(plan_);
  }

 private:
  std::string got() { return Lexer::describe(lex_.peek()); }

  // Whether the next token is `prefix` followed by a number ("b3", "slot0").
  bool at_numbered(std::string_view prefix) {
    const Token& t = lex_.peek();
    return t.kind == Tok::Ident && t.text.size() > prefix.size() && t.text.compare(0, prefix.size(), prefix) == 0 &&
           t.text.find_first_not_of("0123456789", prefix.size()) == std::string::npos;
  }
  // `prefix`N; N checked against `limit` (exclusive) when limit >= 0.
  int numbered(std::string_view prefix, int64_t limit, std::string_view what) {
    if (!at_numbered(prefix)) lex_.error(lex_.peek(), "expected {} ({}N), got {}", what, prefix, got());
    last_ = lex_.next();
    int v = 0;
    const char* first = last_.text.data() + prefix.size();
    auto [p, ec] = std::from_chars(first, last_.text.data() + last_.text.size(), v);
    if (ec != std::errc() || p != last_.text.data() + last_.text.size()) lex_.error(last_, "{} is out of range", last_.text);
    if (limit >= 0 && v >= limit) lex_.error(last_, "{} names {} {}, but there are {}", last_.text, what, v, limit);
    return v;
  }
  int buffer_ref() { return numbered("b", static_cast<int64_t>(plan_.buffers.size()), "a buffer"); }

  std::vector<Expr> expr_list(std::string_view what) {
    lex_.expect(Tok::LBracket, fmt::format("'[' to open {}", what));
    return text::parse_expr_list_tail(lex_);
  }

  // bN: input T = argK strides [..] | temp T [in slotK] [strides [..]] | output T [strides [..]] [in place of
  // argK] | view T = view of bK strides [..]
  void parse_buffer() {
    const Token head = lex_.peek();
    const int id = numbered("b", -1, "a buffer");
    if (id != static_cast<int>(plan_.buffers.size()))
      lex_.error(last_, "buffer b{} out of order: expected b{}", id, plan_.buffers.size());
    lex_.expect(Tok::Colon, "':' after the buffer");
    const Token role = lex_.expect(Tok::Ident, "a buffer role (input, temp, output, view)");
    PlanBuffer b;
    b.type = text::parse_tensor_type(lex_);
    if (role.text == "input") {
      b.role = BufferRole::Input;
      lex_.expect(Tok::Equals, "'=' and the argument after an input buffer's type");
      b.input_index = numbered("arg", -1, "an argument");
      lex_.expect_ident("strides");
      b.strides = expr_list("the strides");
    } else if (role.text == "temp") {
      b.role = BufferRole::Temp;
      b.strides = contiguous_strides(b.type.sizes);
      if (lex_.at_ident("in")) {
        lex_.next();
        b.slot = numbered("slot", -1, "a memory slot");
      }
      if (lex_.at_ident("strides")) {
        lex_.next();
        b.strides = expr_list("the strides");
      }
    } else if (role.text == "output") {
      b.role = BufferRole::Output;
      b.strides = contiguous_strides(b.type.sizes);
      if (lex_.at_ident("strides")) {
        lex_.next();
        b.strides = expr_list("the strides");
      }
    } else if (role.text == "view") {
      b.role = BufferRole::View;
      lex_.expect(Tok::Equals, "'= view of bN' after a view's type");
      lex_.expect_ident("view");
      lex_.expect_ident("of");
      b.base = buffer_ref();
      lex_.expect_ident("strides");
      b.strides = expr_list("the strides");
    } else {
      lex_.error(role, "unknown buffer role '{}'; expected input, temp, output or view", role.text);
    }
    if (b.strides.size() != b.type.sizes.size())
      lex_.error(head, "buffer b{} has {} sizes but {} strides", id, b.type.sizes.size(), b.strides.size());
    if (lex_.at_ident("in")) {  // in place of argK
      lex_.next();
      lex_.expect_ident("place");
      lex_.expect_ident("of");
      b.donor_input = numbered("arg", -1, "an argument");
    }
    plan_.buffers.push_back(std::move(b));
  }

  void parse_slot() {
    const int id = numbered("slot", -1, "a memory slot");
    if (id != static_cast<int>(plan_.slots.size()))
      lex_.error(last_, "slot{} out of order: expected slot{}", id, plan_.slots.size());
    lex_.expect(Tok::Colon, "':' after the slot");
    MemorySlot s;
    s.bytes = text::parse_expr(lex_);
    lex_.expect_ident("bytes");
    plan_.slots.push_back(std::move(s));
  }

  void parse_params() {
    lex_.next();
    lex_.expect(Tok::Colon, "':' after 'params'");
    std::set<std::string> seen;
    while (true) {
      const Token p = lex_.expect(Tok::Ident, "a parameter name");
      if (!seen.insert(p.text).second) lex_.error(p, "duplicate parameter {}", p.text);
      plan_.params.push_back(p.text);
      if (!lex_.at(Tok::Comma)) break;
      lex_.next();
    }
  }

  // '(' buffers '->' buffers ')': the two lists.
  std::pair<std::vector<int>, std::vector<int>> buffer_lists() {
    lex_.expect(Tok::LParen, "'(' and the step's buffers");
    std::pair<std::vector<int>, std::vector<int>> out;
    std::vector<int>* into = &out.first;
    while (!lex_.at(Tok::RParen)) {
      if (lex_.at(Tok::Arrow)) {
        if (into == &out.second) lex_.error(lex_.peek(), "a second '->' in a step's buffers");
        lex_.next();
        into = &out.second;
        continue;
      }
      into->push_back(buffer_ref());
      if (lex_.at(Tok::Comma)) lex_.next();
    }
    lex_.next();
    if (into != &out.second) lex_.error(last_, "expected '->' between a step's inputs and outputs");
    return out;
  }
  void parse_step() {
    const Token kind = lex_.expect(Tok::Ident, "a step (kernel, extern or fallback) or 'return'");
    PlanStep st;
    if (kind.text == "kernel") {
      st.kind = StepKind::Kernel;
      st.kernel.name = lex_.expect(Tok::Ident, "the kernel's name").text;
      auto [ins, outs] = buffer_lists();
      kernel_steps_.push_back({plan_.steps.size(), kind, std::move(ins), std::move(outs)});
      plan_.steps.push_back(std::move(st));
      return;
    }
    if (kind.text != "extern" && kind.text != "fallback")
      lex_.error(kind, "expected a step (kernel, extern or fallback) or 'return', got '{}'", kind.text);
    st.kind = kind.text == "extern" ? StepKind::Extern : StepKind::Fallback;
    const Token op = lex_.expect(Tok::Ident, "the step's op");
    const std::optional<OpKind> k = op_from_name(op.text);
    if (!k) lex_.error(op, "unknown op '{}'", op.text);
    st.op = *k;
    if (lex_.at(Tok::LBracket)) {  // [lowering words]
      lex_.next();
      while (!lex_.at(Tok::RBracket)) {
        const Token w = lex_.next();
        if (w.kind == Tok::End) lex_.error(w, "expected ']' after the step's lowering");
        st.lowering += (st.lowering.empty() ? "" : " ") + w.raw;
      }
      lex_.next();
    }
    auto [ins, outs] = buffer_lists();
    const size_t n_out = static_cast<size_t>(op_info(st.op).schema.num_outputs);
    if (outs.size() != n_out) lex_.error(op, "{} has {} outputs, the step lists {}", op.text, n_out, outs.size());
    st.buffers = std::move(ins);
    st.buffers.insert(st.buffers.end(), outs.begin(), outs.end());
    if (lex_.at(Tok::LBrace)) st.attrs = text::parse_named_attrs(lex_, st.op);
    else if (!op_info(st.op).schema.attr_args.empty())
      lex_.error(lex_.peek(), "expected the attributes of {} ('{{name=value, ...}}'), got {}", op.text, got());
    plan_.steps.push_back(std::move(st));
  }

  void parse_return() {
    lex_.next();
    while (true) {
      plan_.outputs.push_back({buffer_ref()});
      if (!lex_.at(Tok::Comma)) break;
      lex_.next();
    }
  }

  // The kernels after the header; each kernel step takes the one of its name.
  void parse_kernels_after() {
    const Token& t = lex_.peek();
    std::vector<Kernel> kernels;
    if (t.kind != Tok::End) {
      // Padded so that the kernel parser's line:col are the plan text's.
      std::string rest(static_cast<size_t>(t.line - 1), '\n');
      rest.append(static_cast<size_t>(t.col - 1), ' ');
      rest.append(src_.substr(t.begin));
      kernels = parse_kernels(rest);
    }
    std::map<std::string, Kernel*> by_name;
    for (Kernel& k : kernels) by_name[k.name] = &k;
    std::set<std::string> used;
    for (KernelStep& ks : kernel_steps_) {
      PlanStep& st = plan_.steps[ks.step];
      auto it = by_name.find(st.kernel.name);
      if (it == by_name.end()) lex_.error(ks.at, "kernel {} is not defined after the plan", st.kernel.name);
      if (!used.insert(st.kernel.name).second) lex_.error(ks.at, "kernel {} is run by two steps", st.kernel.name);
      st.kernel = *it->second;
      size_t in = 0, out = 0;
      for (const KernelArg& a : st.kernel.args) {
        std::vector<int>& from = a.output ? ks.outs : ks.ins;
        size_t& next = a.output ? out : in;
        if (next >= from.size()) break;
        st.buffers.push_back(from[next++]);
      }
      if (st.buffers.size() != st.kernel.args.size() || in != ks.ins.size() || out != ks.outs.size())
        lex_.error(ks.at, "kernel {} takes {} arguments, the step lists {} inputs and {} outputs", st.kernel.name,
                   st.kernel.args.size(), ks.ins.size(), ks.outs.size());
    }
    if (used.size() != kernels.size()) fail("parse", "plan: {} kernels are defined, {} run", kernels.size(), used.size());
  }

  struct KernelStep {
    size_t step;
    Token at;
    std::vector<int> ins, outs;
  };
  std::string_view src_;
  Lexer lex_;
  Token last_;
  ExecPlan plan_;
  std::vector<KernelStep> kernel_steps_;
};

}  // namespace

ExecPlan parse_plan(std::string_view text) { return PlanParser(text).parse(); }

}  // namespace kiln::ir
