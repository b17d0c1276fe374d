// kiln/ir/expr_eval.h — Expr compiled to a flat stack program over a parameter array.
//
// Shape-generic kernels and plans read sizes and strides at run time; evaluating their Exprs
// through Expr::evaluate (a map of names) on every call would cost microseconds. A FastExpr
// is compiled once, with each symbol resolved to an index into the parameter vector, and
// evaluates in a few nanoseconds per operation.
#pragma once

#include "ir/expr.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::ir {

class FastExpr {
 public:
  FastExpr() = default;
  // `params[i]` names the symbol bound to values[i] in eval(); other symbols are an internal error.
  FastExpr(const Expr& e, const std::vector<std::string>& params);
  int64_t eval(const int64_t* values) const;
  bool is_const() const { return code_.size() == 1 && code_[0].op == Op::Const; }

 private:
  enum class Op : uint8_t { Const, Param, Add, Mul, FloorDiv, Mod, Min, Max, Eq, Ne, Lt, Le };
  struct Ins {
    Op op;
    uint32_t n;   // operand count (Add/Mul) or parameter index
    int64_t c;    // Const
  };
  void emit(const Expr& e, const std::vector<std::string>& params);
  std::vector<Ins> code_;
};

}  // namespace kiln::ir
