// kiln/test/test_support/opdb_activation.cpp — op database entries: activations (gelu, silu,
// relu, elu, selu, celu, leaky_relu, hardswish, hardsigmoid, mish, softplus, hardtanh, relu6).
#include "test_support/opdb.h"

namespace kiln::opdb {

void add_activation(std::vector<OpEntry>& db) {
  auto rows = [&](std::string name, std::string torch, Fn f) {
    db.push_back({name, "activation", f, torch,
                  {{seq({2, 3})}, {seq({3, 2}).t()}, {seq({2, 0})}, {seq({2, 3}, kHalf)}, {seq({4}, kDouble)}}});
  };
  rows("gelu", "torch.nn.functional.gelu(a0)", one([](const std::vector<Tensor>& in) { return gelu(in[0]); }));
  rows("gelu:tanh", "torch.nn.functional.gelu(a0, approximate='tanh')",
       one([](const std::vector<Tensor>& in) { return gelu(in[0], "tanh"); }));
  rows("silu", "torch.nn.functional.silu(a0)", one([](const std::vector<Tensor>& in) { return silu(in[0]); }));
  // Activations: floating inputs, special values, and an integer input PyTorch rejects.
  auto act = [&](std::string name, std::string torch, Fn f) {
    std::vector<Sample> samples = float_samples();
    samples.push_back({ints({2, 3})});
    db.push_back({name, "activation", f, torch, samples});
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
  db.push_back({"hardtanh", "activation", one([](const std::vector<Tensor>& in) { return hardtanh(in[0]); }),
                "torch.nn.functional.hardtanh(a0)", ht});
  db.push_back({"hardtanh:bounds", "activation", one([](const std::vector<Tensor>& in) { return hardtanh(in[0], -0.5, 2); }),
                "torch.nn.functional.hardtanh(a0, -0.5, 2)", float_samples()});
  db.push_back({"relu6", "activation", one([](const std::vector<Tensor>& in) { return relu6(in[0]); }),
                "torch.nn.functional.relu6(a0)", ht});
  db.push_back({"relu", "activation", one([](const std::vector<Tensor>& in) { return relu(in[0]); }), "torch.relu(a0)",
                unary_samples(kFloat)});
}

}  // namespace kiln::opdb
