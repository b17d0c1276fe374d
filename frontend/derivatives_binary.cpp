// kiln/frontend/derivatives_binary.cpp — the Binary family's derivatives (frontend/derivatives.h).
//
// Binary prims see operands of one shape and dtype (the frontend broadcast them with expand,
// whose derivative sums back), so each gradient here has the output's shape. Formulas are
// PyTorch's: pow's exponent gradient is 0 where the base is 0 and the exponent >= 0; maximum and
// minimum split a tie's gradient in half, and so do fmax/fmin, which give the rest to the
// operand that is the number; division with a rounding mode, remainder's and fmod's first operand, and
// copysign's sign operand follow PyTorch too. Comparisons, logical and bitwise ops have none.
#include "frontend/derivatives_detail.h"

namespace kiln::autograd {

namespace {

using ir::OpKind;
constexpr uint32_t A = bit(0), B = bit(1), Y = bit(0);

std::vector<Tensor> d_add(const GradArgs& a) { return {a.grad(), a.grad()}; }
std::vector<Tensor> d_sub(const GradArgs& a) { return {a.grad(), a.need(1) ? -a.grad() : Tensor()}; }
std::vector<Tensor> d_mul(const GradArgs& a) {
  return {a.need(0) ? a.grad() * a.in(1) : Tensor(), a.need(1) ? a.grad() * a.in(0) : Tensor()};
}
std::vector<Tensor> d_div(const GradArgs& a) {
  if (a.attr_opt<std::string>("rounding_mode")) return {a.meta(0).zeros(), a.meta(1).zeros()};
  const Tensor& b = a.in(1);
  return {a.need(0) ? a.grad() / b : Tensor(), a.need(1) ? -a.grad() * a.in(0) / (b * b) : Tensor()};
}
std::vector<Tensor> d_remainder(const GradArgs& a) {
  return {a.grad(), a.need(1) ? -a.grad() * div(a.in(0), a.in(1), "floor") : Tensor()};
}
std::vector<Tensor> d_fmod(const GradArgs& a) {
  return {a.grad(), a.need(1) ? -a.grad() * div(a.in(0), a.in(1), "trunc") : Tensor()};
}
std::vector<Tensor> d_pow(const GradArgs& a) {
  const Tensor& x = a.in(0);
  const Tensor& p = a.in(1);
  Tensor gx, gp;
  if (a.need(0))  // p * x^(p - 1), and 0 where p == 0 (x^-1 would be inf at x == 0)
    gx = where(eq(p, 0), Scalar(0.0), a.grad() * p * pow(x, p - 1));
  if (a.need(1))  // x^p log x, and 0 where x == 0 and p >= 0
    gp = where(logical_and(eq(x, 0), ge(p, 0)), Scalar(0.0), a.grad() * a.out(0) * log(x));
  return {gx, gp};
}
std::vector<Tensor> d_atan2(const GradArgs& a) {
  const Tensor& x = a.in(0);
  const Tensor& z = a.in(1);
  const Tensor r = a.grad() / (x * x + z * z);
  return {a.need(0) ? r * z : Tensor(), a.need(1) ? -r * x : Tensor()};
}
std::vector<Tensor> d_hypot(const GradArgs& a) {
  const Tensor r = a.grad() / a.out(0);
  return {a.need(0) ? r * a.in(0) : Tensor(), a.need(1) ? r * a.in(1) : Tensor()};
}
// copysign(x, s): d/dx is y / x where x != 0 (its sign flip), 0 at x == 0; none for s.
std::vector<Tensor> d_copysign(const GradArgs& a) {
  const Tensor& x = a.in(0);
  return {where(eq(x, 0), Scalar(0.0), a.grad() * (a.out(0) / x)), a.meta(1).zeros()};
}
std::vector<Tensor> d_max_min(const GradArgs& a, bool is_max) {
  const Tensor& x = a.in(0);
  const Tensor& z = a.in(1);
  const Tensor tie = eq(x, z);
  const Tensor half = where(tie, a.grad() * 0.5, a.grad());
  const Tensor x_loses = is_max ? lt(x, z) : gt(x, z);
  const Tensor z_loses = is_max ? gt(x, z) : lt(x, z);
  return {a.need(0) ? where(x_loses, Scalar(0.0), half) : Tensor(), a.need(1) ? where(z_loses, Scalar(0.0), half) : Tensor()};
}
std::vector<Tensor> d_maximum(const GradArgs& a) { return d_max_min(a, true); }
std::vector<Tensor> d_minimum(const GradArgs& a) { return d_max_min(a, false); }
// fmax(x, z): x's where x > z or z is NaN (both NaN included), half each at a tie, else z's
// (PyTorch 2.15, measured; it gave a tie to x before).
std::vector<Tensor> d_fmax_fmin(const GradArgs& a, bool is_max) {
  const Tensor& x = a.in(0);
  const Tensor& z = a.in(1);
  const Tensor x_wins = logical_or(is_max ? gt(x, z) : lt(x, z), isnan(z));
  const Tensor tie = eq(x, z);
  const Tensor half = where(tie, a.grad() * 0.5, Scalar(0.0));
  return {a.need(0) ? where(x_wins, a.grad(), half) : Tensor(),
          a.need(1) ? where(x_wins, Scalar(0.0), where(tie, half, a.grad())) : Tensor()};
}
std::vector<Tensor> d_fmax(const GradArgs& a) { return d_fmax_fmin(a, true); }
std::vector<Tensor> d_fmin(const GradArgs& a) { return d_fmax_fmin(a, false); }

}  // namespace

void add_binary_derivatives(DerivativeTable& t) {
  t.rule(OpKind::add, d_add);
  t.rule(OpKind::sub, d_sub);
  t.rule(OpKind::mul, d_mul, A | B, kNone, A | B);
  t.rule(OpKind::div, d_div, A | B, kNone, A);
  t.rule(OpKind::remainder, d_remainder, A | B);
  t.rule(OpKind::fmod, d_fmod, A | B);
  t.rule(OpKind::pow, d_pow, A | B, Y);
  t.rule(OpKind::atan2, d_atan2, A | B);
  t.rule(OpKind::hypot, d_hypot, A | B, Y);
  t.rule(OpKind::copysign, d_copysign, A, Y);
  t.rule(OpKind::maximum, d_maximum, A | B);
  t.rule(OpKind::minimum, d_minimum, A | B);
  t.rule(OpKind::fmax, d_fmax, A | B);
  t.rule(OpKind::fmin, d_fmin, A | B);
  for (OpKind op : {OpKind::eq, OpKind::ne, OpKind::lt, OpKind::le, OpKind::gt, OpKind::ge, OpKind::logical_and,
                    OpKind::logical_or, OpKind::logical_xor})
    t.none(op, "its result is bool");
  for (OpKind op : {OpKind::bitwise_and, OpKind::bitwise_or, OpKind::bitwise_xor, OpKind::bitwise_left_shift,
                    OpKind::bitwise_right_shift})
    t.none(op, "it takes integers");
}

}  // namespace kiln::autograd
