// kiln/test/test_support/fuzz_ops.cpp — the fuzzer's op table: shared helpers, pointwise ops,
// reductions and scans. One row per op: name, weight, flags, argument generator, kiln call,
// PyTorch spelling (fuzz_program.h, OpSpec). The other families are in fuzz_ops_shape.cpp.
#include "test_support/fuzz_ops.h"

#include <algorithm>
#include <stdexcept>

namespace kiln::fuzz {

// ---- shared helpers -----------------------------------------------------------------------------

bool prefers(const GenValue& v, Pref p) {
  switch (p) {
    case Pref::Any: return true;
    case Pref::Float: return is_floating_point(v.dtype);
    case Pref::Int: return !is_floating_point(v.dtype);
    case Pref::IntNoBool: return !is_floating_point(v.dtype) && v.dtype != kBool;
    case Pref::NonBool: return v.dtype != kBool;
  }
  return true;
}

int pick_pref(GenCtx& c, Pref p) {
  int v = c.rng.chance(0.9) ? c.pick([p](const GenValue& g) { return prefers(g, p); }) : -1;
  return v >= 0 ? v : c.pick();
}

bool broadcastable(const Dims& a, const Dims& b) {
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    const auto& x = a[a.size() - 1 - i];
    const auto& y = b[b.size() - 1 - i];
    if (x != y && x != std::array<int64_t, 2>{1, 1} && y != std::array<int64_t, 2>{1, 1}) return false;
  }
  return true;
}

int64_t random_dim(GenCtx& c, int64_t r) {
  int64_t d = c.rng.range(0, r - 1);
  return c.rng.chance(0.3) ? d - r : d;
}

std::vector<int64_t> random_dims_subset(GenCtx& c, int64_t r, bool nonempty) {
  std::vector<int64_t> all;
  for (int64_t d = 0; d < r; ++d) all.push_back(d);
  for (int64_t k = r - 1; k > 0; --k) std::swap(all[static_cast<size_t>(k)], all[static_cast<size_t>(c.rng.range(0, k))]);
  int64_t n = c.rng.range(nonempty ? 1 : 0, r);
  all.resize(static_cast<size_t>(std::max<int64_t>(0, n)));
  for (int64_t& d : all)
    if (c.rng.chance(0.2)) d -= r;
  return all;
}

int second_operand(GenCtx& c, int a, bool allow_scalar_none) {
  double x = c.rng.real();
  const GenValue& va = c.vals.at(static_cast<size_t>(a));
  if (allow_scalar_none && x < 0.15) return -1;
  if (x < 0.5) {
    ScalarType dt = c.rng.chance(0.6) ? va.dtype : c.random_dtype();
    return c.broadcast_input(va.dims, dt);
  }
  if (x < 0.55) return a;
  Dims dims = va.dims;
  int b = c.pick([&](const GenValue& g) { return broadcastable(g.dims, dims) || c.rng.chance(0.03); });
  return b >= 0 ? b : a;
}

std::string py_value(const std::string& raw) {
  if (raw.empty()) return "''";
  if (raw == "True" || raw == "False" || raw[0] == '[' || raw[0] == '-' || raw[0] == '.' ||
      (raw[0] >= '0' && raw[0] <= '9'))
    return raw;
  static const std::vector<std::pair<std::string, std::string>> dtypes = {
      {"bool", "torch.bool"},      {"u8", "torch.uint8"},     {"i8", "torch.int8"},       {"i16", "torch.int16"},
      {"i32", "torch.int32"},      {"i64", "torch.int64"},    {"f16", "torch.float16"},   {"bf16", "torch.bfloat16"},
      {"f32", "torch.float32"},    {"f64", "torch.float64"}};
  for (const auto& [k, v] : dtypes)
    if (k == raw) return v;
  return "'" + raw + "'";
}

std::string py_kwargs(const Attrs& a, std::initializer_list<std::string_view> skip) {
  std::string s;
  for (const auto& [k, v] : a.kv) {
    if (std::find(skip.begin(), skip.end(), k) != skip.end()) continue;
    s += ", " + k + "=" + py_value(v);
  }
  return s;
}

TorchFn torch_fn(std::string fn) {
  return [fn](const std::vector<std::string>& ops, const Attrs& a) {
    std::string s = fn + "(";
    for (size_t i = 0; i < ops.size(); ++i) s += (i ? ", " : "") + ops[i];
    if (a.has("other")) s += ", " + py_value(a.raw("other"));
    std::string kw = py_kwargs(a, {"other"});
    if (ops.empty() && !a.has("other") && !kw.empty()) kw = kw.substr(2);
    return s + kw + ")";
  };
}

// ---- pointwise ----------------------------------------------------------------------------------

namespace {

GenFn g_unary(Pref p) {
  return [p](GenCtx& c, Node& n) {
    int v = pick_pref(c, p);
    if (v < 0) return false;
    n.args = {v};
    return true;
  };
}

// Binary: operands a and b (or a scalar `other` when scalar_ok).
GenFn g_binary(Pref p, bool scalar_ok, std::function<void(GenCtx&, Node&)> extra = {}) {
  return [=](GenCtx& c, Node& n) {
    int a = pick_pref(c, p);
    if (a < 0) return false;
    int b = second_operand(c, a, scalar_ok);
    n.args = {a};
    if (b >= 0) n.args.push_back(b);
    else n.attrs.set("other", c.scalar_for(c.vals[static_cast<size_t>(a)].dtype));
    if (extra) extra(c, n);
    return true;
  };
}

}  // namespace

#define KILN_FUZZ_UN(name, flags, pref) \
  t.push_back({#name, 1, flags, g_unary(pref), [](const std::vector<Tensor>& in, const Attrs&) { return kiln::name(in[0]); }, torch_fn("torch." #name)})
#define KILN_FUZZ_BIN(name, flags, pref, scalar_ok)                                                        \
  t.push_back({#name, 2, flags, g_binary(pref, scalar_ok),                                                 \
               [](const std::vector<Tensor>& in, const Attrs& a) {                                       \
                 return in.size() > 1 ? kiln::name(in[0], in[1]) : kiln::name(in[0], a.scalar("other")); \
               },                                                                                        \
               torch_fn("torch." #name)})

void add_pointwise_ops(std::vector<OpSpec>& t) {
  const uint32_t E = kExact, F = kFragile, EF = kExact | kFragile;
  KILN_FUZZ_UN(abs, E, Pref::NonBool);      KILN_FUZZ_UN(neg, E, Pref::NonBool);
  KILN_FUZZ_UN(exp, 0, Pref::Float);        KILN_FUZZ_UN(exp2, 0, Pref::Float);
  KILN_FUZZ_UN(expm1, 0, Pref::Float);      KILN_FUZZ_UN(log, F, Pref::Float);
  KILN_FUZZ_UN(log2, F, Pref::Float);       KILN_FUZZ_UN(log10, F, Pref::Float);
  KILN_FUZZ_UN(log1p, F, Pref::Float);      KILN_FUZZ_UN(sqrt, F, Pref::Float);
  KILN_FUZZ_UN(rsqrt, F, Pref::Float);      KILN_FUZZ_UN(reciprocal, F, Pref::Float);
  KILN_FUZZ_UN(sin, 0, Pref::Float);        KILN_FUZZ_UN(cos, 0, Pref::Float);
  KILN_FUZZ_UN(tan, F, Pref::Float);        KILN_FUZZ_UN(asin, F, Pref::Float);
  KILN_FUZZ_UN(acos, F, Pref::Float);       KILN_FUZZ_UN(atan, 0, Pref::Float);
  KILN_FUZZ_UN(sinh, 0, Pref::Float);       KILN_FUZZ_UN(cosh, 0, Pref::Float);
  KILN_FUZZ_UN(tanh, 0, Pref::Float);       KILN_FUZZ_UN(asinh, 0, Pref::Float);
  KILN_FUZZ_UN(acosh, F, Pref::Float);      KILN_FUZZ_UN(atanh, F, Pref::Float);
  KILN_FUZZ_UN(erf, 0, Pref::Float);        KILN_FUZZ_UN(erfc, 0, Pref::Float);
  KILN_FUZZ_UN(erfinv, F, Pref::Float);     KILN_FUZZ_UN(lgamma, F, Pref::Float);
  KILN_FUZZ_UN(sigmoid, 0, Pref::Float);    KILN_FUZZ_UN(floor, EF, Pref::NonBool);
  KILN_FUZZ_UN(ceil, EF, Pref::NonBool);    KILN_FUZZ_UN(round, EF, Pref::NonBool);
  KILN_FUZZ_UN(trunc, EF, Pref::NonBool);   KILN_FUZZ_UN(frac, F, Pref::Float);
  KILN_FUZZ_UN(sign, EF, Pref::Any);        KILN_FUZZ_UN(signbit, EF, Pref::Any);
  KILN_FUZZ_UN(isnan, EF, Pref::Any);       KILN_FUZZ_UN(isinf, EF, Pref::Any);
  KILN_FUZZ_UN(isfinite, EF, Pref::Any);    KILN_FUZZ_UN(bitwise_not, E, Pref::Int);
  KILN_FUZZ_UN(logical_not, EF, Pref::Any); KILN_FUZZ_UN(relu, E, Pref::NonBool);
  KILN_FUZZ_UN(square, 0, Pref::Any);
  t.push_back({"silu", 1, 0, g_unary(Pref::Float), [](const std::vector<Tensor>& in, const Attrs&) { return kiln::silu(in[0]); },
               torch_fn("torch.nn.functional.silu")});
  // Activations (torch.nn.functional's names); softplus and the elus are ill-conditioned only
  // where exp overflows, which the fuzzer's values do not reach.
#define KILN_FUZZ_ACT(name, flags, pref)                                                                              \
  t.push_back({#name, 1, flags, g_unary(pref), [](const std::vector<Tensor>& in, const Attrs&) { return kiln::name(in[0]); }, \
               torch_fn("torch.nn.functional." #name)})
  KILN_FUZZ_ACT(elu, 0, Pref::Float);         KILN_FUZZ_ACT(selu, 0, Pref::Float);
  KILN_FUZZ_ACT(celu, 0, Pref::Float);        KILN_FUZZ_ACT(leaky_relu, 0, Pref::Float);
  KILN_FUZZ_ACT(hardtanh, E, Pref::NonBool);  KILN_FUZZ_ACT(relu6, E, Pref::NonBool);
  KILN_FUZZ_ACT(hardswish, 0, Pref::Float);   KILN_FUZZ_ACT(hardsigmoid, 0, Pref::Float);
  KILN_FUZZ_ACT(mish, 0, Pref::Float);        KILN_FUZZ_ACT(softplus, 0, Pref::Float);
#undef KILN_FUZZ_ACT
  t.push_back({"nan_to_num", 1, E, g_unary(Pref::Any),
               [](const std::vector<Tensor>& in, const Attrs&) { return kiln::nan_to_num(in[0]); }, torch_fn("torch.nan_to_num")});
  // lerp / addcmul / addcdiv: two more operands broadcastable with the first (lerp's weight may be a scalar).
  auto g_three = [](Pref p, bool scalar_weight) -> GenFn {
    return [=](GenCtx& c, Node& n) {
      int a = pick_pref(c, p);
      if (a < 0) return false;
      n.args = {a, second_operand(c, a, false)};
      if (scalar_weight && c.rng.chance(0.5)) n.attrs.set("weight", c.rng.chance(0.5) ? "0.25" : "0.75");
      else n.args.push_back(second_operand(c, a, false));
      if (!scalar_weight && c.rng.chance(0.5)) n.attrs.set("value", c.rng.chance(0.5) ? "2" : "-0.5");
      return n.args[1] >= 0 && n.args.back() >= 0;
    };
  };
  t.push_back({"lerp", 1, 0, g_three(Pref::Float, true),
               [](const std::vector<Tensor>& in, const Attrs& a) {
                 return in.size() > 2 ? kiln::lerp(in[0], in[1], in[2]) : kiln::lerp(in[0], in[1], a.scalar("weight"));
               },
               torch_fn("torch.lerp")});
  for (bool mul : {true, false}) {
    t.push_back({mul ? "addcmul" : "addcdiv", 1, mul ? 0u : F, g_three(mul ? Pref::Any : Pref::Float, false),
                 [mul](const std::vector<Tensor>& in, const Attrs& a) {
                   Scalar v = a.has("value") ? a.scalar("value") : Scalar(int64_t{1});
                   return mul ? kiln::addcmul(in[0], in[1], in[2], v) : kiln::addcdiv(in[0], in[1], in[2], v);
                 },
                 torch_fn(mul ? "torch.addcmul" : "torch.addcdiv")});
  }

  // add/sub with alpha; div with rounding modes.
  auto alpha = [](GenCtx& c, Node& n) {
    if (c.rng.chance(0.3)) n.attrs.set("alpha", c.scalar_for(c.vals[static_cast<size_t>(n.args[0])].dtype));
  };
  auto add_like = [&](const char* name, Tensor (*tt)(const Tensor&, const Tensor&, const Scalar&),
                      Tensor (*ts)(const Tensor&, const Scalar&, const Scalar&)) {
    t.push_back({name, 3, 0, g_binary(Pref::Any, true, alpha),
                 [tt, ts](const std::vector<Tensor>& in, const Attrs& a) {
                   Scalar al = a.has("alpha") ? a.scalar("alpha") : Scalar(int64_t{1});
                   return in.size() > 1 ? tt(in[0], in[1], al) : ts(in[0], a.scalar("other"), al);
                 },
                 torch_fn(std::string("torch.") + name)});
  };
  add_like("add", kiln::add, kiln::add);
  add_like("sub", kiln::sub, kiln::sub);
  KILN_FUZZ_BIN(mul, 0, Pref::Any, true);
  // Integer division by zero raises in PyTorch and is undefined here: integer divisors are
  // scalars (never 0).
  auto int_safe = [](GenCtx& c, Node& n) {
    const GenValue& a = c.vals[static_cast<size_t>(n.args[0])];
    if (!is_floating_point(a.dtype) && n.args.size() > 1 && !is_floating_point(c.vals[static_cast<size_t>(n.args[1])].dtype)) {
      n.args = {n.args[0]};  // (not resize(1): GCC 12 -O3 warns falsely, -Warray-bounds)
      n.attrs.kv.clear();
      n.attrs.set("other", c.rng.chance(0.5) ? "3" : "-2");
    }
    if (n.attrs.has("other") && (n.attrs.raw("other") == "0" || n.attrs.raw("other") == "False"))
      n.attrs.kv = {{"other", "2"}};
  };
  t.push_back({"div", 2, 0, g_binary(Pref::Any, true, [int_safe](GenCtx& c, Node& n) {
                 if (c.rng.chance(0.4)) n.attrs.set("rounding_mode", c.rng.chance(0.5) ? "floor" : "trunc");
                 if (n.attrs.has("rounding_mode")) {  // integer division: a nonzero scalar divisor
                   const std::string mode = n.attrs.raw("rounding_mode");
                   int_safe(c, n);
                   n.attrs.set("rounding_mode", mode);
                 }
               }),
               [](const std::vector<Tensor>& in, const Attrs& a) {
                 std::optional<std::string_view> m;
                 if (a.has("rounding_mode")) m = a.raw("rounding_mode");
                 return in.size() > 1 ? kiln::div(in[0], in[1], m) : kiln::div(in[0], a.scalar("other"), m);
               },
               torch_fn("torch.div")});
  for (const char* name : {"remainder", "fmod", "floor_divide"}) {
    using B = Tensor (*)(const Tensor&, const Tensor&);
    using S = Tensor (*)(const Tensor&, const Scalar&);
    B tt = std::string(name) == "remainder" ? static_cast<B>(kiln::remainder)
           : std::string(name) == "fmod"    ? static_cast<B>(kiln::fmod)
                                            : static_cast<B>(kiln::floor_divide);
    S ts = std::string(name) == "remainder" ? static_cast<S>(kiln::remainder)
           : std::string(name) == "fmod"    ? static_cast<S>(kiln::fmod)
                                            : static_cast<S>(kiln::floor_divide);
    t.push_back({name, 1, F, g_binary(Pref::NonBool, true, int_safe),
                 [tt, ts](const std::vector<Tensor>& in, const Attrs& a) {
                   return in.size() > 1 ? tt(in[0], in[1]) : ts(in[0], a.scalar("other"));
                 },
                 torch_fn(std::string("torch.") + name)});
  }
  // pow: integer exponents are small non-negative scalars (negative ones raise in PyTorch).
  t.push_back({"pow", 1, F, g_binary(Pref::NonBool, true, [](GenCtx& c, Node& n) {
                 const GenValue& a = c.vals[static_cast<size_t>(n.args[0])];
                 bool int_exp = n.args.size() > 1 ? !is_floating_point(c.vals[static_cast<size_t>(n.args[1])].dtype)
                                                  : n.attrs.raw("other").find('.') == std::string::npos;
                 if (!is_floating_point(a.dtype) && int_exp) {
                   n.args = {n.args[0]};  // (not resize(1): GCC 12 -O3 warns falsely, -Warray-bounds)
                   n.attrs.kv = {{"other", c.rng.chance(0.5) ? "2" : "3"}};
                 }
               }),
               [](const std::vector<Tensor>& in, const Attrs& a) {
                 return in.size() > 1 ? kiln::pow(in[0], in[1]) : kiln::pow(in[0], a.scalar("other"));
               },
               torch_fn("torch.pow")});
  KILN_FUZZ_BIN(atan2, F, Pref::Float, false);
  KILN_FUZZ_BIN(hypot, 0, Pref::Float, false);
  KILN_FUZZ_BIN(copysign, F, Pref::Float, true);
  KILN_FUZZ_BIN(maximum, E, Pref::Any, false);
  KILN_FUZZ_BIN(minimum, E, Pref::Any, false);
  KILN_FUZZ_BIN(fmax, E, Pref::Any, false);
  KILN_FUZZ_BIN(fmin, E, Pref::Any, false);
  KILN_FUZZ_BIN(eq, EF, Pref::Any, true);
  KILN_FUZZ_BIN(ne, EF, Pref::Any, true);
  KILN_FUZZ_BIN(lt, EF, Pref::Any, true);
  KILN_FUZZ_BIN(le, EF, Pref::Any, true);
  KILN_FUZZ_BIN(gt, EF, Pref::Any, true);
  KILN_FUZZ_BIN(ge, EF, Pref::Any, true);
  KILN_FUZZ_BIN(logical_and, EF, Pref::Any, false);
  KILN_FUZZ_BIN(logical_or, EF, Pref::Any, false);
  KILN_FUZZ_BIN(logical_xor, EF, Pref::Any, false);
  KILN_FUZZ_BIN(bitwise_and, E, Pref::Int, true);
  KILN_FUZZ_BIN(bitwise_or, E, Pref::Int, true);
  KILN_FUZZ_BIN(bitwise_xor, E, Pref::Int, true);
  // Shifts by 0..3 (out-of-range shift counts differ between C++ and PyTorch).
  auto small_shift = [](GenCtx& c, Node& n) {
    n.args.resize(1);
    n.attrs.kv = {{"other", std::to_string(c.rng.range(0, 3))}};
  };
  t.push_back({"bitwise_left_shift", 1, E, g_binary(Pref::IntNoBool, true, small_shift),
               [](const std::vector<Tensor>& in, const Attrs& a) { return kiln::bitwise_left_shift(in[0], a.scalar("other")); },
               torch_fn("torch.bitwise_left_shift")});
  t.push_back({"bitwise_right_shift", 1, E, g_binary(Pref::IntNoBool, true, small_shift),
               [](const std::vector<Tensor>& in, const Attrs& a) { return kiln::bitwise_right_shift(in[0], a.scalar("other")); },
               torch_fn("torch.bitwise_right_shift")});

  // where(cond, a, b): cond an existing bool value or a fresh one; a or b may be scalars.
  t.push_back({"where", 3, E,
               [](GenCtx& c, Node& n) {
                 int a = c.pick();
                 if (a < 0) return false;
                 Dims dims = c.vals[static_cast<size_t>(a)].dims;
                 int cond = c.pick([&](const GenValue& g) { return g.dtype == kBool && broadcastable(g.dims, dims); });
                 if (cond < 0 || c.rng.chance(0.3)) cond = c.broadcast_input(dims, kBool);
                 n.args = {cond, a};
                 int b = second_operand(c, a, true);
                 if (b >= 0) n.args.push_back(b);
                 else n.attrs.set("other", c.scalar_for(c.vals[static_cast<size_t>(a)].dtype));
                 return true;
               },
               [](const std::vector<Tensor>& in, const Attrs& a) {
                 return in.size() > 2 ? kiln::where(in[0], in[1], in[2]) : kiln::where(in[0], in[1], a.scalar("other"));
               },
               [](const std::vector<std::string>& o, const Attrs& a) {
                 return "torch.where(" + o[0] + ", " + o[1] + ", " + (o.size() > 2 ? o[2] : py_value(a.raw("other"))) + ")";
               }});
  // clamp with scalar bounds (min, max or both, min > max allowed) or tensor bounds.
  t.push_back({"clamp", 2, E,
               [](GenCtx& c, Node& n) {
                 int a = pick_pref(c, Pref::NonBool);
                 if (a < 0) return false;
                 n.args = {a};
                 ScalarType dt = c.vals[static_cast<size_t>(a)].dtype;
                 int which = static_cast<int>(c.rng.range(0, 2));  // 0 min, 1 max, 2 both
                 if (c.rng.chance(0.5)) {
                   if (which != 1) n.attrs.set("min", c.scalar_for(dt));
                   if (which != 0) n.attrs.set("max", c.scalar_for(dt));
                 } else {
                   n.attrs.set("bounds", which == 0 ? "min" : which == 1 ? "max" : "both");
                   for (int k = 0; k < (which == 2 ? 2 : 1); ++k) n.args.push_back(second_operand(c, a, false));
                 }
                 return true;
               },
               [](const std::vector<Tensor>& in, const Attrs& a) {
                 if (!a.has("bounds")) {
                   std::optional<Scalar> lo, hi;
                   if (a.has("min")) lo = a.scalar("min");
                   if (a.has("max")) hi = a.scalar("max");
                   return kiln::clamp(in[0], lo, hi);
                 }
                 const std::string& b = a.raw("bounds");
                 std::optional<Tensor> lo, hi;
                 if (b == "min") lo = in[1];
                 else if (b == "max") hi = in[1];
                 else lo = in[1], hi = in[2];
                 return kiln::clamp(in[0], lo, hi);
               },
               [](const std::vector<std::string>& o, const Attrs& a) {
                 if (!a.has("bounds")) return "torch.clamp(" + o[0] + py_kwargs(a) + ")";
                 const std::string& b = a.raw("bounds");
                 if (b == "min") return "torch.clamp(" + o[0] + ", min=" + o[1] + ")";
                 if (b == "max") return "torch.clamp(" + o[0] + ", max=" + o[1] + ")";
                 return "torch.clamp(" + o[0] + ", min=" + o[1] + ", max=" + o[2] + ")";
               }});
  // Casts and copies.
  t.push_back({"to", 3, kExact,
               [](GenCtx& c, Node& n) {
                 int a = c.pick();
                 if (a < 0) return false;
                 n.args = {a};
                 n.attrs.set("dtype", dtype_text(c.random_dtype(false)));
                 return true;
               },
               [](const std::vector<Tensor>& in, const Attrs& a) { return in[0].to(a.dt("dtype")); },
               [](const std::vector<std::string>& o, const Attrs& a) { return o[0] + ".to(" + py_value(a.raw("dtype")) + ")"; }});
  t.push_back({"clone", 1, kExact, g_unary(Pref::Any),
               [](const std::vector<Tensor>& in, const Attrs&) { return in[0].clone(); },
               [](const std::vector<std::string>& o, const Attrs&) { return o[0] + ".clone()"; }});
  t.push_back({"contiguous", 1, kExact, g_unary(Pref::Any),
               [](const std::vector<Tensor>& in, const Attrs&) { return in[0].contiguous(); },
               [](const std::vector<std::string>& o, const Attrs&) { return o[0] + ".contiguous()"; }});
}

}  // namespace kiln::fuzz
