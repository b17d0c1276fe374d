// kiln/test/test_support/opdb_unary.cpp — op database entries: unary elementwise ops (abs, neg,
// exp, log, sqrt, the trigonometric and hyperbolic functions, erf, lgamma, sigmoid, rounding,
// sign, isnan, isinf, isfinite, bitwise_not, logical_not, square), with integer and
// reduced-precision inputs.
#include "test_support/opdb.h"

namespace kiln::opdb {

namespace {

using Unary = Tensor (*)(const Tensor&);

void unary(std::vector<OpEntry>& db, const std::string& name, Unary f, ScalarType dt = kFloat) {
  const std::string op = name.substr(0, name.find(':'));
  db.push_back({name, "unary", one([f](const std::vector<Tensor>& in) { return f(in[0]); }),
                "torch." + op + "(a0)", unary_samples(dt)});
}

}  // namespace

void add_unary(std::vector<OpEntry>& db) {
  for (auto [name, f] : std::vector<std::pair<std::string, Unary>>{
           {"abs", abs},         {"neg", neg},       {"exp", exp},     {"exp2", exp2},     {"expm1", expm1},
           {"log", log},         {"log2", log2},     {"log10", log10}, {"log1p", log1p},   {"sqrt", sqrt},
           {"rsqrt", rsqrt},     {"reciprocal", reciprocal},           {"sin", sin},       {"cos", cos},
           {"tan", tan},         {"asin", asin},     {"acos", acos},   {"atan", atan},     {"sinh", sinh},
           {"cosh", cosh},       {"tanh", tanh},     {"asinh", asinh}, {"acosh", acosh},   {"atanh", atanh},
           {"erf", erf},         {"erfc", erfc},     {"erfinv", erfinv}, {"lgamma", lgamma}, {"sigmoid", sigmoid},
           {"floor", floor},     {"ceil", ceil},     {"round", round}, {"trunc", trunc},   {"frac", frac},
           {"sign", sign},       {"signbit", signbit}, {"isnan", isnan}, {"isinf", isinf}, {"isfinite", isfinite},
           {"logical_not", logical_not}, {"square", square}}) {
    unary(db, name, f);
  }
  // Integer inputs: float ops promote to the default dtype, the rest keep the dtype.
  db.push_back({"round:decimals", "unary", one([](const std::vector<Tensor>& in) { return round(in[0], 2); }),
                "torch.round(a0, decimals=2)",
                {{seq({2, 3}, kFloat, -2.5, 0.3333)}, {seq({4}, kDouble, 0.125, 1.0 / 3)}, {specials()}, {ints({3})}}});
  db.push_back({"round:negative_decimals", "unary", one([](const std::vector<Tensor>& in) { return round(in[0], -1); }),
                "torch.round(a0, decimals=-1)", {{seq({2, 3}, kFloat, -25.0, 10.0)}}});
  unary(db, "exp:int", exp, kLong);
  unary(db, "sqrt:int", sqrt, kInt);
  unary(db, "abs:int", abs, kInt);
  unary(db, "neg:int8", neg, kChar);
  unary(db, "bitwise_not:int", bitwise_not, kLong);
  unary(db, "sigmoid:f16", sigmoid, kHalf);
  unary(db, "tanh:bf16", tanh, kBFloat16);
  unary(db, "abs:bool", abs, kBool);  // PyTorch raises
}

}  // namespace kiln::opdb
