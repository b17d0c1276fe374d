// kiln/test/test_support/opdb_binary.cpp — op database entries: binary elementwise ops
// (arithmetic, pow, atan2, hypot, copysign, maximum, minimum, fmax, fmin, comparisons, logical and
// bitwise ops, shifts): mixed dtypes, alpha, scalar operands, rsub and div's rounding modes.
#include "test_support/opdb.h"

namespace kiln::opdb {

namespace {

using Binary = Tensor (*)(const Tensor&, const Tensor&);

void binary(std::vector<OpEntry>& db, const std::string& name, Binary f, ScalarType da, ScalarType dbt) {
  const std::string op = name.substr(0, name.find(':'));
  db.push_back({name, "binary", one([f](const std::vector<Tensor>& in) { return f(in[0], in[1]); }),
                "torch." + op + "(a0, a1)", binary_samples(da, dbt)});
}

}  // namespace

void add_binary(std::vector<OpEntry>& db) {
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
  db.push_back({"add:alpha", "binary", one([](const std::vector<Tensor>& in) { return add(in[0], in[1], 2); }),
                "torch.add(a0, a1, alpha=2)", binary_samples(kFloat, kFloat)});
  db.push_back({"sub:alpha_int", "binary", one([](const std::vector<Tensor>& in) { return sub(in[0], in[1], 3); }),
                "torch.sub(a0, a1, alpha=3)", binary_samples(kInt, kShort)});
  db.push_back({"add:scalar", "binary", one([](const std::vector<Tensor>& in) { return in[0] + 2.5; }), "a0 + 2.5",
                unary_samples(kInt)});
  db.push_back({"rsub:scalar", "binary", one([](const std::vector<Tensor>& in) { return 1 - in[0]; }), "1 - a0",
                unary_samples(kHalf)});
  db.push_back({"div:floor_int", "binary",
                one([](const std::vector<Tensor>& in) { return div(in[0], in[1].abs() + 1, "floor"); }),
                "torch.div(a0, a1.abs() + 1, rounding_mode='floor')", binary_samples(kLong, kLong)});
  db.push_back({"div:trunc", "binary", one([](const std::vector<Tensor>& in) { return div(in[0], in[1], "trunc"); }),
                "torch.div(a0, a1, rounding_mode='trunc')", binary_samples(kFloat, kDouble)});
  db.push_back({"bitwise_left_shift", "binary",
                one([](const std::vector<Tensor>& in) { return bitwise_left_shift(in[0], in[1].abs()) >> 1; }),
                "torch.bitwise_left_shift(a0, a1.abs()) >> 1", {{ints({2, 3}), ints({2, 3}, 0)}, {ints({3, 1}), ints({4}, 0)}}});
}

}  // namespace kiln::opdb
