// kiln/test/test_support/opdb_pointwise.cpp — op database entries: unary, binary and ternary
// pointwise ops, scalar operands, casts.
#include "test_support/opdb.h"

namespace kiln::opdb {

namespace {

using Unary = Tensor (*)(const Tensor&);
using Binary = Tensor (*)(const Tensor&, const Tensor&);

void unary(std::vector<OpEntry>& db, const std::string& name, Unary f, ScalarType dt = kFloat) {
  const std::string op = name.substr(0, name.find(':'));
  db.push_back({name, "pointwise", one([f](const std::vector<Tensor>& in) { return f(in[0]); }),
                "torch." + op + "(a0)", unary_samples(dt)});
}

void binary(std::vector<OpEntry>& db, const std::string& name, Binary f, ScalarType da, ScalarType dbt) {
  const std::string op = name.substr(0, name.find(':'));
  db.push_back({name, "pointwise", one([f](const std::vector<Tensor>& in) { return f(in[0], in[1]); }),
                "torch." + op + "(a0, a1)", binary_samples(da, dbt)});
}

}  // namespace

void add_pointwise(std::vector<OpEntry>& db) {
  for (auto [name, f] : std::vector<std::pair<std::string, Unary>>{
           {"abs", abs},         {"neg", neg},       {"exp", exp},     {"exp2", exp2},     {"expm1", expm1},
           {"log", log},         {"log2", log2},     {"log10", log10}, {"log1p", log1p},   {"sqrt", sqrt},
           {"rsqrt", rsqrt},     {"reciprocal", reciprocal},           {"sin", sin},       {"cos", cos},
           {"tan", tan},         {"asin", asin},     {"acos", acos},   {"atan", atan},     {"sinh", sinh},
           {"cosh", cosh},       {"tanh", tanh},     {"asinh", asinh}, {"acosh", acosh},   {"atanh", atanh},
           {"erf", erf},         {"erfc", erfc},     {"erfinv", erfinv}, {"lgamma", lgamma}, {"sigmoid", sigmoid},
           {"floor", floor},     {"ceil", ceil},     {"round", round}, {"trunc", trunc},   {"frac", frac},
           {"sign", sign},       {"signbit", signbit}, {"isnan", isnan}, {"isinf", isinf}, {"isfinite", isfinite},
           {"logical_not", logical_not}, {"relu", relu}, {"square", square}}) {
    unary(db, name, f);
  }
  // Integer inputs: float ops promote to the default dtype, the rest keep the dtype.
  db.push_back({"round:decimals", "pointwise", one([](const std::vector<Tensor>& in) { return round(in[0], 2); }),
                "torch.round(a0, decimals=2)",
                {{seq({2, 3}, kFloat, -2.5, 0.3333)}, {seq({4}, kDouble, 0.125, 1.0 / 3)}, {specials()}, {ints({3})}}});
  db.push_back({"round:negative_decimals", "pointwise", one([](const std::vector<Tensor>& in) { return round(in[0], -1); }),
                "torch.round(a0, decimals=-1)", {{seq({2, 3}, kFloat, -25.0, 10.0)}}});
  unary(db, "exp:int", exp, kLong);
  unary(db, "sqrt:int", sqrt, kInt);
  unary(db, "abs:int", abs, kInt);
  unary(db, "neg:int8", neg, kChar);
  unary(db, "bitwise_not:int", bitwise_not, kLong);
  unary(db, "sigmoid:f16", sigmoid, kHalf);
  unary(db, "tanh:bf16", tanh, kBFloat16);
  unary(db, "abs:bool", abs, kBool);  // PyTorch raises

  for (auto [name, f] : std::vector<std::pair<std::string, Binary>>{
           {"mul", mul},       {"div", div},         {"remainder", remainder}, {"fmod", fmod},
           {"pow", pow},       {"atan2", atan2},     {"hypot", hypot},         {"copysign", copysign},
           {"maximum", maximum}, {"minimum", minimum}, {"fmax", fmax},         {"fmin", fmin},
           {"eq", eq},         {"ne", ne},           {"lt", lt},               {"le", le},
           {"gt", gt},         {"ge", ge},           {"logical_and", logical_and}, {"logical_or", logical_or},
           {"logical_xor", logical_xor}, {"floor_divide", floor_divide}}) {
    binary(db, name, f, kFloat, kFloat);
    binary(db, name + ":f32,i64", f, kFloat, kLong);
    binary(db, name + ":i32,f64", f, kInt, kDouble);
  }
  for (auto [name, f] : std::vector<std::pair<std::string, Binary>>{
           {"bitwise_and", bitwise_and}, {"bitwise_or", bitwise_or}, {"bitwise_xor", bitwise_xor}}) {
    binary(db, name, f, kLong, kInt);
  }
  binary(db, "bitwise_and:float", bitwise_and, kFloat, kFloat);  // PyTorch raises
  db.push_back({"add:alpha", "pointwise", one([](const std::vector<Tensor>& in) { return add(in[0], in[1], 2); }),
                "torch.add(a0, a1, alpha=2)", binary_samples(kFloat, kFloat)});
  db.push_back({"sub:alpha_int", "pointwise", one([](const std::vector<Tensor>& in) { return sub(in[0], in[1], 3); }),
                "torch.sub(a0, a1, alpha=3)", binary_samples(kInt, kShort)});
  db.push_back({"add:scalar", "pointwise", one([](const std::vector<Tensor>& in) { return in[0] + 2.5; }), "a0 + 2.5",
                unary_samples(kInt)});
  db.push_back({"rsub:scalar", "pointwise", one([](const std::vector<Tensor>& in) { return 1 - in[0]; }), "1 - a0",
                unary_samples(kHalf)});
  db.push_back({"div:floor_int", "pointwise",
                one([](const std::vector<Tensor>& in) { return div(in[0], in[1].abs() + 1, "floor"); }),
                "torch.div(a0, a1.abs() + 1, rounding_mode='floor')", binary_samples(kLong, kLong)});
  db.push_back({"div:trunc", "pointwise", one([](const std::vector<Tensor>& in) { return div(in[0], in[1], "trunc"); }),
                "torch.div(a0, a1, rounding_mode='trunc')", binary_samples(kFloat, kDouble)});
  db.push_back({"bitwise_left_shift", "pointwise",
                one([](const std::vector<Tensor>& in) { return bitwise_left_shift(in[0], in[1].abs()) >> 1; }),
                "torch.bitwise_left_shift(a0, a1.abs()) >> 1", {{ints({2, 3}), ints({2, 3}, 0)}, {ints({3, 1}), ints({4}, 0)}}});
  db.push_back({"where", "pointwise", one([](const std::vector<Tensor>& in) { return where(in[0] > 0, in[0], in[1]); }),
                "torch.where(a0 > 0, a0, a1)", binary_samples(kFloat, kLong)});
  db.push_back({"clamp:scalar", "pointwise", one([](const std::vector<Tensor>& in) { return clamp(in[0], -1.0, 1.5); }),
                "torch.clamp(a0, -1.0, 1.5)", unary_samples(kFloat)});
  db.push_back({"clamp:tensor", "pointwise",
                one([](const std::vector<Tensor>& in) { return clamp(in[0], std::optional<Tensor>(in[1]), std::nullopt); }),
                "torch.clamp(a0, a1, None)", binary_samples(kFloat, kFloat)});
  db.push_back({"to:f16", "pointwise", one([](const std::vector<Tensor>& in) { return in[0].to(kHalf); }),
                "a0.to(torch.float16)", unary_samples(kFloat)});
  db.push_back({"to:i8", "pointwise", one([](const std::vector<Tensor>& in) { return in[0].to(kChar); }),
                "a0.to(torch.int8)", unary_samples(kFloat)});
  // lerp, addcmul, addcdiv: three operands broadcast together.
  auto three = [](ScalarType a, ScalarType b, ScalarType c) {
    return std::vector<Sample>{{seq({2, 3}, a), seq({2, 3}, b, 1.25, 0.5), seq({2, 3}, c, 0.0, 0.25)},
                               {seq({3, 1}, a), seq({4}, b, 1.25, 0.5), seq({}, c, 0.75)},
                               {seq({3, 2}, a).t(), seq({2, 3}, b, 0.5, 1.0), seq({3}, c, -0.5, 0.75)},
                               {seq({0, 3}, a), seq({3}, b), seq({1}, c)}};
  };
  db.push_back({"lerp", "pointwise", one([](const std::vector<Tensor>& in) { return lerp(in[0], in[1], in[2]); }),
                "torch.lerp(a0, a1, a2)", three(kFloat, kFloat, kFloat)});
  std::vector<Sample> lerp_bad = three(kDouble, kDouble, kDouble);
  lerp_bad.push_back({seq({2, 3}), seq({2, 3}, kDouble), seq({2, 3})});  // PyTorch raises: end's dtype
  lerp_bad.push_back({ints({2, 3}), ints({2, 3}), ints({2, 3})});        // PyTorch raises: integers
  db.push_back({"lerp:f64", "pointwise", one([](const std::vector<Tensor>& in) { return lerp(in[0], in[1], in[2]); }),
                "torch.lerp(a0, a1, a2)", lerp_bad});
  db.push_back({"lerp:scalar", "pointwise", one([](const std::vector<Tensor>& in) { return lerp(in[0], in[1], 0.75); }),
                "torch.lerp(a0, a1, 0.75)", binary_samples(kFloat, kFloat)});
  db.push_back({"lerp:f16", "pointwise", one([](const std::vector<Tensor>& in) { return lerp(in[0], in[1], 0.25); }),
                "torch.lerp(a0, a1, 0.25)", binary_samples(kHalf, kHalf)});
  db.push_back({"addcmul", "pointwise", one([](const std::vector<Tensor>& in) { return addcmul(in[0], in[1], in[2], 0.5); }),
                "torch.addcmul(a0, a1, a2, value=0.5)", three(kFloat, kFloat, kFloat)});
  std::vector<Sample> addcmul_mixed = three(kLong, kLong, kLong);
  addcmul_mixed.push_back({seq({2, 3}, kInt), seq({2, 3}, kFloat), seq({3}, kLong)});
  addcmul_mixed.push_back({seq({2, 3}, kBool), seq({2, 3}, kBool), seq({3}, kBool)});  // PyTorch raises
  db.push_back({"addcmul:int", "pointwise", one([](const std::vector<Tensor>& in) { return addcmul(in[0], in[1], in[2], 2); }),
                "torch.addcmul(a0, a1, a2, value=2)", addcmul_mixed});
  // A float value on integer tensors is truncated to the dtype (found by the fuzzer, seed 20261862).
  db.push_back({"addcmul:int_float_value", "pointwise",
                one([](const std::vector<Tensor>& in) { return addcmul(in[0], in[1], in[2], -2.5); }),
                "torch.addcmul(a0, a1, a2, value=-2.5)", {{ints({2, 3}), ints({2, 3}), ints({3})}, {ints({1, 0}), ints({1, 0}), ints({1, 0})}}});
  std::vector<Sample> addcdiv_samples = three(kFloat, kFloat, kFloat);
  addcdiv_samples.push_back({seq({2, 3}, kHalf), seq({2, 3}, kHalf), seq({2, 3}, kHalf, 0.5, 0.25)});
  addcdiv_samples.push_back({ints({2, 3}), ints({2, 3}), ints({2, 3}, 1)});  // PyTorch raises
  db.push_back({"addcdiv", "pointwise", one([](const std::vector<Tensor>& in) { return addcdiv(in[0], in[1], in[2], -1.5); }),
                "torch.addcdiv(a0, a1, a2, value=-1.5)", addcdiv_samples});
  const std::vector<Sample> nan_samples = {{specials()}, {specials(kHalf)}, {specials(kBFloat16)}, {specials(kDouble)},
                                           {ints({2, 3})}, {seq({3, 2}).t()}};
  db.push_back({"nan_to_num", "pointwise", one([](const std::vector<Tensor>& in) { return nan_to_num(in[0]); }),
                "torch.nan_to_num(a0)", nan_samples});
  db.push_back({"nan_to_num:values", "pointwise",
                one([](const std::vector<Tensor>& in) { return nan_to_num(in[0], 1.5, 100.0, -7.0); }),
                "torch.nan_to_num(a0, 1.5, 100.0, -7.0)", nan_samples});
  db.push_back({"clone", "pointwise", one([](const std::vector<Tensor>& in) { return in[0].clone(); }), "a0.clone()",
                unary_samples(kFloat)});
}

}  // namespace kiln::opdb
