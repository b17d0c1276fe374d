// kiln/test/test_support/opdb_nn.cpp — op database entries: softmax, norms, activations,
// linear, cross_entropy.
#include "test_support/opdb.h"

#include "test_support/make.h"

namespace kiln::opdb {

void add_nn(std::vector<OpEntry>& db) {
  auto rows = [&](std::string name, std::string torch, Fn f) {
    db.push_back({name, "nn", f, torch,
                  {{seq({2, 3})}, {seq({3, 2}).t()}, {seq({2, 0})}, {seq({2, 3}, kHalf)}, {seq({4}, kDouble)}}});
  };
  rows("softmax", "torch.softmax(a0, -1)", one([](const std::vector<Tensor>& in) { return softmax(in[0], -1); }));
  rows("softmax:dim0_f64", "a0.softmax(0, torch.float64)",
       one([](const std::vector<Tensor>& in) { return in[0].softmax(0, kDouble); }));
  rows("log_softmax", "torch.log_softmax(a0, -1)", one([](const std::vector<Tensor>& in) { return log_softmax(in[0], -1); }));
  rows("gelu", "torch.nn.functional.gelu(a0)", one([](const std::vector<Tensor>& in) { return gelu(in[0]); }));
  rows("gelu:tanh", "torch.nn.functional.gelu(a0, approximate='tanh')",
       one([](const std::vector<Tensor>& in) { return gelu(in[0], "tanh"); }));
  rows("silu", "torch.nn.functional.silu(a0)", one([](const std::vector<Tensor>& in) { return silu(in[0]); }));
  rows("layer_norm", "torch.nn.functional.layer_norm(a0, [a0.shape[-1]])",
       one([](const std::vector<Tensor>& in) { return layer_norm(in[0], {in[0].size(-1)}); }));
  rows("rms_norm", "torch.nn.functional.rms_norm(a0, [a0.shape[-1]])",
       one([](const std::vector<Tensor>& in) { return rms_norm(in[0], {in[0].size(-1)}); }));
  rows("var", "a0.var(-1, keepdim=True)", one([](const std::vector<Tensor>& in) { return in[0].var({-1}, std::nullopt, true); }));
  rows("var:all_c0", "torch.var(a0, unbiased=False)", one([](const std::vector<Tensor>& in) { return var(in[0], false); }));
  db.push_back({"layer_norm:affine", "nn",
                one([](const std::vector<Tensor>& in) { return layer_norm(in[0], {3}, in[1], in[2], 1e-3); }),
                "torch.nn.functional.layer_norm(a0, [3], a1, a2, 1e-3)",
                {{seq({2, 3}), seq({3}), seq({3}, kFloat, 1.0)}, {seq({2, 2, 3}), seq({3}), seq({3})},
                 {seq({2, 4}), seq({3}), seq({3})}}});  // the last raises
  db.push_back({"rms_norm:weight", "nn", one([](const std::vector<Tensor>& in) { return rms_norm(in[0], {2, 3}, in[1]); }),
                "torch.nn.functional.rms_norm(a0, [2, 3], a1)",
                {{seq({2, 3}), seq({2, 3})}, {seq({4, 2, 3}, kHalf), seq({2, 3}, kHalf)}}});
  db.push_back({"linear", "nn", one([](const std::vector<Tensor>& in) { return linear(in[0], in[1], in[2]); }),
                "torch.nn.functional.linear(a0, a1, a2)",
                {{seq({2, 3}), seq({4, 3}), seq({4})}, {seq({3}), seq({2, 3}), seq({2})}, {seq({2, 2, 3}), seq({1, 3}), seq({})}}});
  // Activations: floating inputs, special values, and an integer input PyTorch rejects.
  auto act = [&](std::string name, std::string torch, Fn f) {
    std::vector<Sample> samples = float_samples();
    samples.push_back({ints({2, 3})});
    db.push_back({name, "nn", f, torch, samples});
  };
  act("elu", "torch.nn.functional.elu(a0)", one([](const std::vector<Tensor>& in) { return elu(in[0]); }));
  act("elu:params", "torch.ops.aten.elu(a0, 0.5, 2.0, 1.5)",
      one([](const std::vector<Tensor>& in) { return elu(in[0], 0.5, 2.0, 1.5); }));
  act("selu", "torch.nn.functional.selu(a0)", one([](const std::vector<Tensor>& in) { return selu(in[0]); }));
  act("celu", "torch.nn.functional.celu(a0, alpha=0.5)", one([](const std::vector<Tensor>& in) { return celu(in[0], 0.5); }));
  act("leaky_relu", "torch.nn.functional.leaky_relu(a0)", one([](const std::vector<Tensor>& in) { return leaky_relu(in[0]); }));
  act("leaky_relu:slope", "torch.nn.functional.leaky_relu(a0, 0.2)",
      one([](const std::vector<Tensor>& in) { return leaky_relu(in[0], 0.2); }));
  act("hardswish", "torch.nn.functional.hardswish(a0)", one([](const std::vector<Tensor>& in) { return hardswish(in[0]); }));
  act("hardsigmoid", "torch.nn.functional.hardsigmoid(a0)",
      one([](const std::vector<Tensor>& in) { return hardsigmoid(in[0]); }));
  act("mish", "torch.nn.functional.mish(a0)", one([](const std::vector<Tensor>& in) { return mish(in[0]); }));
  act("softplus", "torch.nn.functional.softplus(a0)", one([](const std::vector<Tensor>& in) { return softplus(in[0]); }));
  act("softplus:beta", "torch.nn.functional.softplus(a0, beta=2.0, threshold=3.0)",
      one([](const std::vector<Tensor>& in) { return softplus(in[0], 2.0, 3.0); }));
  // hardtanh also takes integers (not bool).
  std::vector<Sample> ht = float_samples();
  ht.push_back({ints({2, 3})});
  ht.push_back({seq({2, 3}, kBool)});
  db.push_back({"hardtanh", "nn", one([](const std::vector<Tensor>& in) { return hardtanh(in[0]); }),
                "torch.nn.functional.hardtanh(a0)", ht});
  db.push_back({"hardtanh:bounds", "nn", one([](const std::vector<Tensor>& in) { return hardtanh(in[0], -0.5, 2); }),
                "torch.nn.functional.hardtanh(a0, -0.5, 2)", float_samples()});
  db.push_back({"relu6", "nn", one([](const std::vector<Tensor>& in) { return relu6(in[0]); }),
                "torch.nn.functional.relu6(a0)", ht});

  const Tensor target = test::make<int64_t>({2, -100, 0});
  db.push_back({"cross_entropy", "nn", one([target](const std::vector<Tensor>& in) { return cross_entropy(in[0], target); }),
                "torch.nn.functional.cross_entropy(a0, " + py_tensor(target) + ")",
                {{seq({3, 4})}, {seq({4, 3}).t()}, {seq({3, 4}, kDouble)}}});
  const Tensor target2 = test::make<int64_t>({2, 1, 0});
  db.push_back({"cross_entropy:weight_smoothing", "nn",
                one([target2](const std::vector<Tensor>& in) { return cross_entropy(in[0], target2, in[1], "none", 1, 0.25); }),
                "torch.nn.functional.cross_entropy(a0, " + py_tensor(target2) +
                    ", a1, reduction='none', ignore_index=1, label_smoothing=0.25)",
                {{seq({3, 4}), seq({4}, kFloat, 0.5, 0.5)}}});
}

}  // namespace kiln::opdb
