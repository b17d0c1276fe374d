// kiln/test/test_support/opdb_pointwise.cpp — op database entries: the Pointwise family of
// ir/ops.def: lerp, addcmul, addcdiv, nan_to_num, tril and triu.
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
  auto tri = [](ScalarType dt) {
    return std::vector<Sample>{{seq({3, 4}, dt)}, {seq({4, 3}, dt).t()}, {seq({2, 3, 2}, dt)}, {seq({0, 3}, dt)}, {seq({5}, dt)}};
  };
  db.push_back({"tril", "pointwise", one([](const std::vector<Tensor>& in) { return tril(in[0]); }), "torch.tril(a0)", tri(kFloat)});
  db.push_back({"tril:diag", "pointwise", one([](const std::vector<Tensor>& in) { return tril(in[0], -1); }), "torch.tril(a0, -1)",
                tri(kLong)});
  db.push_back({"triu", "pointwise", one([](const std::vector<Tensor>& in) { return triu(in[0]); }), "torch.triu(a0)", tri(kBool)});
  db.push_back({"triu:diag", "pointwise", one([](const std::vector<Tensor>& in) { return triu(in[0], 2); }), "torch.triu(a0, 2)",
                tri(kDouble)});
}

}  // namespace kiln::opdb
