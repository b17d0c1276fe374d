// kiln/test/test_support/opdb_pointwise.cpp — op database entries: the Pointwise family of
// ir/ops.def: lerp, addcmul, addcdiv, nan_to_num, tril and triu; and the pointwise functions that
// record other ops: logaddexp, logaddexp2, xlogy, logit, sinc, deg2rad, rad2deg, heaviside,
// float_power, isclose.
#include "test_support/opdb.h"

namespace kiln::opdb {

void add_pointwise(std::vector<OpEntry>& db) {
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
  // The pointwise functions that record other ops (frontend/ops_pointwise_math.cpp).
  auto unary = [](auto f) { return one([f](const std::vector<Tensor>& in) { return f(in[0]); }); };
  auto binary = [](auto f) { return one([f](const std::vector<Tensor>& in) { return f(in[0], in[1]); }); };
  std::vector<Sample> logaddexp_samples = binary_samples(kFloat, kFloat);
  logaddexp_samples.push_back({specials(), flip(specials(), {0})});
  logaddexp_samples.push_back({seq({2, 3}, kHalf), seq({3}, kHalf, 1.0, -0.5)});
  logaddexp_samples.push_back({ints({3}), ints({3})});  // raises: integers
  db.push_back({"logaddexp", "pointwise", binary([](const Tensor& a, const Tensor& b) { return logaddexp(a, b); }),
                "torch.logaddexp(a0, a1)", logaddexp_samples});
  db.push_back({"logaddexp2", "pointwise", binary([](const Tensor& a, const Tensor& b) { return logaddexp2(a, b); }),
                "torch.logaddexp2(a0, a1)", {logaddexp_samples[0], logaddexp_samples[1], {seq({4}, kDouble), seq({4}, kDouble, 3.0)}}});
  db.push_back({"xlogy", "pointwise", binary([](const Tensor& a, const Tensor& b) { return xlogy(a, b); }),
                "torch.xlogy(a0, a1)",
                {{seq({2, 3}), seq({2, 3}, kFloat, 0.25, 0.5)},
                 {f32({0, 0, 1, 2, 0, -1, 0}), f32({0, NAN, 0, 3, -1, 2, 0.5})},  // x = 0, y > 0: x's gradient is log y
                 {ints({2, 3}), ints({3}, 0)},
                 {seq({3}, kHalf), seq({3}, kHalf, 0.5)}}});
  db.push_back({"logit", "pointwise", unary([](const Tensor& a) { return logit(a); }), "torch.logit(a0)",
                {{seq({2, 3}, kFloat, 0.05, 0.15)}, {f32({0, 1, 0.5, -1, 2})}, {ints({3}, 0)}, {seq({4}, kBFloat16, 0.1, 0.2)}}});
  db.push_back({"logit:eps", "pointwise", unary([](const Tensor& a) { return logit(a, 0.1); }), "torch.logit(a0, eps=0.1)",
                {{seq({2, 4}, kFloat, -0.5, 0.25)}, {seq({3}, kDouble, 0.05, 0.45)}}});
  db.push_back({"logit:wide_eps", "pointwise", unary([](const Tensor& a) { return logit(a, 0.6); }), "torch.logit(a0, eps=0.6)",
                {{seq({5}, kFloat, 0.1, 0.2)}}});  // lo 0.6 > hi 0.4: below lo gives lo
  db.push_back({"sinc", "pointwise", unary([](const Tensor& a) { return sinc(a); }), "torch.sinc(a0)",
                {{seq({2, 3})}, {f32({0, 0.5, -1, 2.25, 1e-3})}, {ints({4})}, {seq({3, 2}, kDouble).t()}}});
  db.push_back({"deg2rad", "pointwise", unary([](const Tensor& a) { return deg2rad(a); }), "torch.deg2rad(a0)",
                {{seq({2, 3}, kFloat, -180, 90)}, {ints({3})}, {seq({2}, kBool)}, {seq({3}, kHalf, 30, 45)}}});
  db.push_back({"rad2deg", "pointwise", unary([](const Tensor& a) { return rad2deg(a); }), "torch.rad2deg(a0)",
                {{seq({2, 3})}, {ints({3})}, {seq({3}, kDouble)}}});
  db.push_back({"heaviside", "pointwise", binary([](const Tensor& a, const Tensor& b) { return heaviside(a, b); }),
                "torch.heaviside(a0, a1)",
                {{f32({-1, 0, 2, 0, NAN}), f32({0.5, 0.25, 0.5, 7, 0.5})},
                 {ints({2, 3}), ints({3}, 5)},
                 {seq({2, 3}), seq({2, 3}, kDouble)}}});  // raises: dtypes
  db.push_back({"float_power", "pointwise", binary([](const Tensor& a, const Tensor& b) { return float_power(a, b); }),
                "torch.float_power(a0, a1)",
                {{seq({2, 3}), seq({3}, kFloat, 0.0, 0.5)}, {ints({2, 3}), ints({3}, 0)}, {seq({3}, kHalf), seq({}, kFloat, 2.0)}}});
  db.push_back({"float_power:scalar", "pointwise", unary([](const Tensor& a) { return float_power(a, 2.5); }),
                "torch.float_power(a0, 2.5)", {{seq({2, 3}, kFloat, 0.0, 0.5)}, {ints({3}, 0)}}});
  const std::vector<Sample> close_samples = {
      {f32({1, 1, INFINITY, NAN, 0, 1e-9, -INFINITY}), f32({1.000001, 1.1, INFINITY, NAN, 1e-9, 0, INFINITY})},
      {ints({2, 3}), ints({3}, -2)},
      {seq({3}, kByte, 0, 1), seq({3}, kByte, 1, 0)},  // integers compare in float: 0 - 1 does not wrap
      {seq({2}, kBool), seq({2}, kBool, 1.0)},
      {seq({3}), seq({3}, kDouble)}};  // raises: dtypes
  db.push_back({"isclose", "pointwise", binary([](const Tensor& a, const Tensor& b) { return isclose(a, b); }),
                "torch.isclose(a0, a1)", close_samples});
  db.push_back({"isclose:tolerances", "pointwise",
                binary([](const Tensor& a, const Tensor& b) { return isclose(a, b, 0.1, 0.01, true); }),
                "torch.isclose(a0, a1, rtol=0.1, atol=0.01, equal_nan=True)", {close_samples[0], close_samples[1]}});
  db.push_back({"isclose:atol", "pointwise", binary([](const Tensor& a, const Tensor& b) { return isclose(a, b, 0, 2); }),
                "torch.isclose(a0, a1, rtol=0, atol=2)", {close_samples[2]}});
  auto tri = [](ScalarType dt) {
    return std::vector<Sample>{{seq({3, 4}, dt)}, {seq({4, 3}, dt).t()}, {seq({2, 3, 2}, dt)}, {seq({0, 3}, dt)}, {seq({5}, dt)}};
  };
  db.push_back({"tril", "pointwise", one([](const std::vector<Tensor>& in) { return tril(in[0]); }), "torch.tril(a0)", tri(kFloat)});
  db.push_back({"tril:diag", "pointwise", one([](const std::vector<Tensor>& in) { return tril(in[0], -1); }), "torch.tril(a0, -1)",
                tri(kLong)});
  db.push_back({"triu", "pointwise", one([](const std::vector<Tensor>& in) { return triu(in[0]); }), "torch.triu(a0)", tri(kBool)});
  db.push_back({"triu:diag", "pointwise", one([](const std::vector<Tensor>& in) { return triu(in[0], 2); }), "torch.triu(a0, 2)",
                tri(kDouble)});

  db.push_back({"ldexp", "pointwise", binary([](const Tensor& a, const Tensor& b) { return ldexp(a, b); }), "torch.ldexp(a0, a1)",
                {{seq({2, 3}), ints({2, 3})}, {ints({3}), ints({3}, -1)}, {seq({2, 2}, kHalf), seq({2}, kHalf, 1.0, 2.0)},
                 {seq({2, 3}, kDouble), seq({3}, kFloat, -1.5, 0.5)}}});
}

}  // namespace kiln::opdb
