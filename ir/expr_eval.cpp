// kiln/ir/expr_eval.cpp — compiling and evaluating FastExpr stack programs.
#include "ir/expr_eval.h"

#include "base/error.h"

#include <algorithm>

namespace kiln::ir {

namespace {

int64_t floordiv(int64_t a, int64_t b) {
  if (b == 0) fail("expr", "division by zero in a size expression");
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t pymod(int64_t a, int64_t b) {
  if (b == 0) fail("expr", "modulo by zero in a size expression");
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

}  // namespace

FastExpr::FastExpr(const Expr& e, const std::vector<std::string>& params) {
  emit(e, params);
  int depth = 0, most = 0;
  for (const Ins& in : code_) {
    depth += (in.op == Op::Const || in.op == Op::Param) ? 1 : (in.op == Op::Add || in.op == Op::Mul) ? 1 - static_cast<int>(in.n) : -1;
    most = std::max(most, depth);
  }
  if (most > 64) internal_fail("FastExpr: expression {} is too deep to evaluate", e.str());
}

void FastExpr::emit(const Expr& e, const std::vector<std::string>& params) {
  switch (e.kind()) {
    case ExprKind::Const: code_.push_back({Op::Const, 0, e.as_const()}); return;
    case ExprKind::Symbol:
      for (size_t i = 0; i < params.size(); ++i)
        if (params[i] == e.symbol_name()) {
          code_.push_back({Op::Param, static_cast<uint32_t>(i), 0});
          return;
        }
      internal_fail("FastExpr: symbol {} is not a parameter", e.symbol_name());
    case ExprKind::Add:
    case ExprKind::Mul:
    case ExprKind::FloorDiv:
    case ExprKind::Mod:
    case ExprKind::Min:
    case ExprKind::Max:
    case ExprKind::Eq:
    case ExprKind::Ne:
    case ExprKind::Lt:
    case ExprKind::Le: break;
  }
  for (const Expr& o : e.operands()) emit(o, params);
  Op op = Op::Add;
  switch (e.kind()) {
    case ExprKind::Add: op = Op::Add; break;
    case ExprKind::Mul: op = Op::Mul; break;
    case ExprKind::FloorDiv: op = Op::FloorDiv; break;
    case ExprKind::Mod: op = Op::Mod; break;
    case ExprKind::Min: op = Op::Min; break;
    case ExprKind::Max: op = Op::Max; break;
    case ExprKind::Eq: op = Op::Eq; break;
    case ExprKind::Ne: op = Op::Ne; break;
    case ExprKind::Lt: op = Op::Lt; break;
    case ExprKind::Le: op = Op::Le; break;
    case ExprKind::Const:
    case ExprKind::Symbol: break;
  }
  code_.push_back({op, static_cast<uint32_t>(e.operands().size()), 0});
}

int64_t FastExpr::eval(const int64_t* values) const {
  int64_t stack[64];
  int sp = 0;
  for (const Ins& in : code_) {
    switch (in.op) {
      case Op::Const: stack[sp++] = in.c; continue;
      case Op::Param: stack[sp++] = values[in.n]; continue;
      case Op::Add:
      case Op::Mul: {
        int64_t acc = stack[sp - static_cast<int>(in.n)];
        for (int k = sp - static_cast<int>(in.n) + 1; k < sp; ++k) acc = in.op == Op::Add ? acc + stack[k] : acc * stack[k];
        sp -= static_cast<int>(in.n);
        stack[sp++] = acc;
        continue;
      }
      case Op::FloorDiv:
      case Op::Mod:
      case Op::Min:
      case Op::Max:
      case Op::Eq:
      case Op::Ne:
      case Op::Lt:
      case Op::Le: {
        const int64_t b = stack[--sp], a = stack[--sp];
        int64_t r = 0;
        switch (in.op) {
          case Op::FloorDiv: r = floordiv(a, b); break;
          case Op::Mod: r = pymod(a, b); break;
          case Op::Min: r = a < b ? a : b; break;
          case Op::Max: r = a > b ? a : b; break;
          case Op::Eq: r = a == b; break;
          case Op::Ne: r = a != b; break;
          case Op::Lt: r = a < b; break;
          case Op::Le: r = a <= b; break;
          case Op::Const:
          case Op::Param:
          case Op::Add:
          case Op::Mul: break;
        }
        stack[sp++] = r;
        continue;
      }
    }
  }
  if (sp != 1) internal_fail("FastExpr: malformed program");
  return stack[0];
}

}  // namespace kiln::ir
