// kiln/codegen_cuda/cuda_scalar.cpp — renders scalar types, literals, casts, prims and index math as CUDA C.
//
// One switch per op family (UnaryOp, BinaryOp, TernaryOp, CastOp) with no default, each case
// choosing the C spelling for the operand dtype: float math calls the `f`-suffixed CUDA
// functions (f16/bf16 compute in float), double the plain ones; integer arithmetic goes
// through the wrapping helpers of the prelude; ops a dtype does not accept (the ops.def traits
// FloatOnly, IntOnly, NoBool) are internal errors, since the frontend promotes before lowering.
// The semantics follow runtime/interp_*.cpp; the helpers they call are in cuda_prelude.cpp.
#include "codegen_cuda/cuda_scalar.h"

#include "base/error.h"
#include "base/half.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

namespace kiln::cuda::detail {

std::string compute_type(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "bool";
    case ScalarType::UInt8: return "kiln_u8";
    case ScalarType::Int8: return "kiln_i8";
    case ScalarType::Int16: return "kiln_i16";
    case ScalarType::Int32: return "kiln_i32";
    case ScalarType::Int64: return "kiln_i64";
    case ScalarType::Half:
    case ScalarType::BFloat16:
    case ScalarType::Float: return "float";
    case ScalarType::Double: return "double";
  }
  internal_fail("cuda: unknown dtype {}", static_cast<int>(t));
}

std::string storage_type(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "kiln_u8";
    case ScalarType::Half: return "__half";
    case ScalarType::BFloat16: return "__nv_bfloat16";
    case ScalarType::UInt8:
    case ScalarType::Int8:
    case ScalarType::Int16:
    case ScalarType::Int32:
    case ScalarType::Int64:
    case ScalarType::Float:
    case ScalarType::Double: return compute_type(t);
  }
  internal_fail("cuda: unknown dtype {}", static_cast<int>(t));
}

namespace {

// A finite float/double as the shortest decimal that reads back exactly, with a '.' or an
// exponent so that the `f` suffix is valid; negative values in parentheses.
template <typename F> std::string float_literal(F v, bool is_double) {
  const char* suffix = is_double ? "" : "f";
  const char* zero = is_double ? "0.0" : "0.0f";
  if (std::isnan(v)) return fmt::format("kiln_qnan({})", zero);
  if (std::isinf(v)) return v < 0 ? fmt::format("(-kiln_inf({}))", zero) : fmt::format("kiln_inf({})", zero);
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  s += suffix;
  return (v < 0 || std::signbit(v)) ? "(" + s + ")" : s;
}

std::string int_literal(int64_t v, ScalarType t) {
  if (v == std::numeric_limits<int64_t>::min()) return "((kiln_i64)0x8000000000000000ULL)";
  const std::string digits = v < 0 ? fmt::format("({}LL)", v) : fmt::format("{}LL", v);
  return t == ScalarType::Int64 ? digits : fmt::format("(({}){})", compute_type(t), digits);
}

[[noreturn]] void unsupported(const ir::KInst& in, ScalarType t) {
  internal_fail("cuda: {} does not support dtype {} (%{})", ir::op_name(in.op), dtype_name(t), in.id);
}

// The signed type of t's width (the shift amount is read through it, as in the interpreter).
std::string signed_type(ScalarType t) {
  switch (t) {
    case ScalarType::UInt8:
    case ScalarType::Int8: return "kiln_i8";
    case ScalarType::Int16: return "kiln_i16";
    case ScalarType::Int32: return "kiln_i32";
    case ScalarType::Int64: return "kiln_i64";
    case ScalarType::Bool:
    case ScalarType::Half:
    case ScalarType::BFloat16:
    case ScalarType::Float:
    case ScalarType::Double: break;
  }
  internal_fail("cuda: no signed integer type for {}", dtype_name(t));
}

}  // namespace

std::string literal(const Scalar& v, ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return v.to_bool() ? "true" : "false";
    case ScalarType::UInt8: return int_literal(v.to<uint8_t>(), t);
    case ScalarType::Int8: return int_literal(v.to<int8_t>(), t);
    case ScalarType::Int16: return int_literal(v.to<int16_t>(), t);
    case ScalarType::Int32: return int_literal(v.to<int32_t>(), t);
    case ScalarType::Int64: return int_literal(v.to<int64_t>(), t);
    case ScalarType::Half: return float_literal(static_cast<float>(Half(v.to<float>())), false);
    case ScalarType::BFloat16: return float_literal(static_cast<float>(BFloat16(v.to<float>())), false);
    case ScalarType::Float: return float_literal(v.to<float>(), false);
    case ScalarType::Double: return float_literal(v.to_double(), true);
  }
  internal_fail("cuda: unknown dtype {}", static_cast<int>(t));
}

std::string lowest_literal(ScalarType t) {
  if (is_floating_point(t)) return literal(Scalar(-std::numeric_limits<double>::infinity()), t);
  if (t == ScalarType::Bool) return "false";
  if (!is_signed(t)) return int_literal(0, t);
  const int bits = static_cast<int>(element_size(t)) * 8;
  return int_literal(bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1)), t);
}

std::string highest_literal(ScalarType t) {
  if (is_floating_point(t)) return literal(Scalar(std::numeric_limits<double>::infinity()), t);
  if (t == ScalarType::Bool) return "true";
  const int bits = static_cast<int>(element_size(t)) * 8 - (is_signed(t) ? 1 : 0);
  return int_literal(bits == 63 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << bits) - 1, t);
}

std::string convert(const std::string& x, ScalarType from, ScalarType to) {
  if (from == to) return x;
  const std::string c = compute_type(to);
  if (to == ScalarType::Bool) return fmt::format("(({}) != 0)", x);
  if (is_integral(to, false) && is_floating_point(from)) {
    return fmt::format("(({}){}((double)({})))", c, float_to_int_via_int32(to) ? "kiln_f2i32" : "kiln_f2i", x);
  }
  if (to == ScalarType::Half) return fmt::format("__half2float(__float2half_rn((float)({})))", x);
  if (to == ScalarType::BFloat16) return fmt::format("__bfloat162float(__float2bfloat16_rn((float)({})))", x);
  return fmt::format("(({})({}))", c, x);
}

std::string load_value(const std::string& elem, ScalarType t) {
  if (t == ScalarType::Half) return fmt::format("__half2float({})", elem);
  if (t == ScalarType::BFloat16) return fmt::format("__bfloat162float({})", elem);
  if (t == ScalarType::Bool) return fmt::format("({} != 0)", elem);
  return elem;
}

std::string store_value(const std::string& x, ScalarType t) {
  if (t == ScalarType::Half) return fmt::format("__float2half_rn({})", x);
  if (t == ScalarType::BFloat16) return fmt::format("__float2bfloat16_rn({})", x);
  if (t == ScalarType::Bool) return fmt::format("(kiln_u8)({})", x);
  return x;
}

namespace {

struct Renderer {
  Renderer(const ir::KInst& inst, const std::vector<std::string>& operands, ScalarType operand_dtype)
      : in(inst), ops(operands), dt(operand_dtype) {}
  const ir::KInst& in;
  const std::vector<std::string>& ops;
  ScalarType dt;  // the operands' dtype
  bool fl = is_floating_point(dt);
  bool is_bool = dt == ScalarType::Bool;
  bool is_int = is_integral(dt, false);

  const std::string& a() const { return ops.at(0); }
  const std::string& b() const { return ops.at(1); }
  // The CUDA math function for the operand type: expf for float (f16/bf16 too), exp for double.
  std::string fn(std::string_view name) const {
    if (!fl) unsupported(in, dt);
    return fmt::format("{}{}", name, dt == ScalarType::Double ? "" : "f");
  }
  std::string call1(std::string_view name) const { return fmt::format("{}({})", fn(name), a()); }
  std::string call2(std::string_view name) const { return fmt::format("{}({}, {})", fn(name), a(), b()); }
  std::string one() const { return dt == ScalarType::Double ? "1.0" : "1.0f"; }
  std::string infix(std::string_view op) const { return fmt::format("({} {} {})", a(), op, b()); }
  std::string helper2(std::string_view name) const { return fmt::format("{}({}, {})", name, a(), b()); }
  void no_bool() const {
    if (is_bool) unsupported(in, dt);
  }
  void int_only() const {
    if (fl) unsupported(in, dt);
  }

  std::string unary(ir::UnaryOp op) const {
    using U = ir::UnaryOp;
    switch (op) {
      case U::abs: no_bool(); return fl ? call1("fabs") : fmt::format("kiln_iabs({})", a());
      case U::neg: no_bool(); return fl ? fmt::format("(-{})", a()) : fmt::format("kiln_wneg({})", a());
      case U::exp: return call1("exp");
      case U::exp2: return call1("exp2");
      case U::expm1: return call1("expm1");
      case U::log: return call1("log");
      case U::log2: return call1("log2");
      case U::log10: return call1("log10");
      case U::log1p: return call1("log1p");
      case U::sqrt: return call1("sqrt");
      case U::rsqrt: return call1("rsqrt");
      case U::reciprocal: fn("reciprocal"); return fmt::format("({} / {})", one(), a());
      case U::sin: return call1("sin");
      case U::cos: return call1("cos");
      case U::tan: return call1("tan");
      case U::asin: return call1("asin");
      case U::acos: return call1("acos");
      case U::atan: return call1("atan");
      case U::sinh: return call1("sinh");
      case U::cosh: return call1("cosh");
      case U::tanh: return call1("tanh");
      case U::asinh: return call1("asinh");
      case U::acosh: return call1("acosh");
      case U::atanh: return call1("atanh");
      case U::erf: return call1("erf");
      case U::erfc: return call1("erfc");
      case U::erfinv: return call1("erfinv");
      case U::lgamma: return call1("lgamma");
      case U::sigmoid: return fmt::format("({0} / ({0} + {1}(-{2})))", one(), fn("exp"), a());
      case U::floor: no_bool(); return fl ? call1("floor") : a();  // integers are unchanged
      case U::ceil: no_bool(); return fl ? call1("ceil") : a();
      case U::round: no_bool(); return fl ? call1("rint") : a();  // half to even
      case U::trunc: no_bool(); return fl ? call1("trunc") : a();
      case U::frac: return fmt::format("({} - {})", a(), call1("trunc"));
      case U::sign: return is_bool ? a() : fmt::format("kiln_sign({})", a());
      case U::signbit:
        if (fl) return fmt::format("kiln_signbit({})", a());
        return is_signed(dt) ? fmt::format("({} < 0)", a()) : "false";
      case U::isnan: return fl ? fmt::format("kiln_isnan({})", a()) : "false";
      case U::isinf: return fl ? fmt::format("kiln_isinf({})", a()) : "false";
      case U::isfinite: return fl ? fmt::format("kiln_isfinite({})", a()) : "true";
      case U::bitwise_not:
        int_only();
        return is_bool ? fmt::format("(!{})", a()) : fmt::format("(({})~{})", compute_type(dt), a());
      case U::logical_not: return fmt::format("({} == 0)", a());
    }
    internal_fail("cuda: unknown unary op {}", static_cast<int>(op));
  }

  std::string binary(ir::BinaryOp op) const {
    using B = ir::BinaryOp;
    switch (op) {
      case B::add: return is_bool ? infix("||") : fl ? infix("+") : helper2("kiln_wadd");
      case B::sub: no_bool(); return fl ? infix("-") : helper2("kiln_wsub");
      case B::mul: return is_bool ? infix("&&") : fl ? infix("*") : helper2("kiln_wmul");
      case B::div: {
        no_bool();
        std::optional<std::string> mode;
        if (in.attrs.size() > 0) mode = in.attrs.get_opt<std::string>(ir::OpKind::div, "rounding_mode");
        if (!mode) {
          if (!fl) unsupported(in, dt);  // true division of integers: the frontend promotes first
          return infix("/");
        }
        if (*mode == "trunc") return fl ? fmt::format("{}({})", fn("trunc"), infix("/")) : helper2("kiln_div_trunc");
        if (*mode == "floor") return helper2("kiln_div_floor");
        internal_fail("cuda: div rounding_mode \"{}\" (%{})", *mode, in.id);
      }
      case B::remainder: no_bool(); return helper2("kiln_remainder");
      case B::fmod: no_bool(); return fl ? call2("fmod") : helper2("kiln_rem_trunc");
      case B::pow: no_bool(); return fl ? call2("pow") : helper2("kiln_ipow");
      case B::atan2: return call2("atan2");
      case B::hypot: return call2("hypot");
      case B::copysign: return call2("copysign");
      case B::maximum: return helper2("kiln_maximum");
      case B::minimum: return helper2("kiln_minimum");
      case B::fmax: return fl ? call2("fmax") : helper2("kiln_maximum");
      case B::fmin: return fl ? call2("fmin") : helper2("kiln_minimum");
      case B::eq: return infix("==");
      case B::ne: return infix("!=");
      case B::lt: return infix("<");
      case B::le: return infix("<=");
      case B::gt: return infix(">");
      case B::ge: return infix(">=");
      case B::logical_and: return fmt::format("(({} != 0) && ({} != 0))", a(), b());
      case B::logical_or: return fmt::format("(({} != 0) || ({} != 0))", a(), b());
      case B::logical_xor: return fmt::format("(({} != 0) != ({} != 0))", a(), b());
      case B::bitwise_and: return bits("&");
      case B::bitwise_or: return bits("|");
      case B::bitwise_xor: return bits("^");
      case B::bitwise_left_shift: return shift("kiln_shl");
      case B::bitwise_right_shift: return shift("kiln_shr");
    }
    internal_fail("cuda: unknown binary op {}", static_cast<int>(op));
  }

  std::string bits(std::string_view op) const {
    int_only();
    return fmt::format("(({}){})", compute_type(dt), infix(op));
  }
  std::string shift(std::string_view helper) const {
    int_only();
    no_bool();
    return fmt::format("{}<{}, {}>({}, {})", helper, compute_type(dt), signed_type(dt), a(), b());
  }

  std::string ternary(ir::TernaryOp op) const {
    switch (op) {
      case ir::TernaryOp::where: return fmt::format("({} ? {} : {})", ops.at(0), ops.at(1), ops.at(2));
      case ir::TernaryOp::clamp: no_bool(); return fmt::format("kiln_clamp({}, {}, {})", ops.at(0), ops.at(1), ops.at(2));
    }
    internal_fail("cuda: unknown ternary op {}", static_cast<int>(op));
  }

  std::string cast(ir::CastOp op) const {
    switch (op) {
      case ir::CastOp::convert_element_type: return convert(a(), dt, in.dtype);
      case ir::CastOp::clone:
      case ir::CastOp::detach: return a();
      case ir::CastOp::no_grad_copy: break;  // a Core op: decomposed before kernels
    }
    internal_fail("cuda: unknown cast op {}", static_cast<int>(op));
  }
};

}  // namespace

std::string render_compute(const ir::KInst& in, const std::vector<std::string>& operands, ScalarType operand_dtype) {
  const Renderer r{in, operands, operand_dtype};
  const ir::OpInfo& info = ir::op_info(in.op);
  // Only the four scalar families reach a kernel (the verifier checks it); the per-op switches
  // below them have no default.
  if (info.family == ir::OpFamily::Unary) return r.unary(ir::as_unary(in.op));
  if (info.family == ir::OpFamily::Binary) return r.binary(ir::as_binary(in.op));
  if (info.family == ir::OpFamily::Ternary) return r.ternary(ir::as_ternary(in.op));
  if (info.family == ir::OpFamily::Cast) return r.cast(ir::as_cast(in.op));
  internal_fail("cuda: {} is not a scalar op (%{})", info.name, in.id);
}

namespace {

// render_expr in kiln_i64 (`narrow` false) or in int.
std::string render_index(const ir::Expr& e, bool narrow) {
  const char* suffix = narrow ? "32" : "";
  auto join = [&](std::string_view sep) {
    std::string s = "(";
    for (size_t i = 0; i < e.operands().size(); ++i) s += std::string(i ? sep : "") + render_index(e.operands()[i], narrow);
    return s + ")";
  };
  auto call = [&](std::string_view name) {
    return fmt::format("{}{}({}, {})", name, suffix, render_index(e.operands().at(0), narrow),
                       render_index(e.operands().at(1), narrow));
  };
  auto compare = [&](std::string_view op) {
    return fmt::format("(({})({} {} {}))", narrow ? "int" : "kiln_i64", render_index(e.operands().at(0), narrow), op,
                       render_index(e.operands().at(1), narrow));
  };
  switch (e.kind()) {
    case ir::ExprKind::Const:
      if (!narrow) return int_literal(e.as_const(), ScalarType::Int64);
      return e.as_const() < 0 ? fmt::format("({})", e.as_const()) : fmt::format("{}", e.as_const());
    case ir::ExprKind::Symbol: return narrow ? fmt::format("((int){})", e.symbol_name()) : e.symbol_name();
    case ir::ExprKind::Add: return join(" + ");
    case ir::ExprKind::Mul: return join(" * ");
    case ir::ExprKind::FloorDiv: return call("kiln_floordiv");
    case ir::ExprKind::Mod: return call("kiln_mod");
    case ir::ExprKind::Min: return call("kiln_imin");
    case ir::ExprKind::Max: return call("kiln_imax");
    case ir::ExprKind::Eq: return compare("==");
    case ir::ExprKind::Ne: return compare("!=");
    case ir::ExprKind::Lt: return compare("<");
    case ir::ExprKind::Le: return compare("<=");
  }
  internal_fail("cuda: unknown expression kind {}", static_cast<int>(e.kind()));
}

}  // namespace

std::string render_expr(const ir::Expr& e) { return render_index(e, false); }

std::string render_expr32(const ir::Expr& e) { return render_index(e, true); }

}  // namespace kiln::cuda::detail
