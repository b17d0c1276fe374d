// kiln/test/test_support/opdb_activation.cpp — op database entries: activations (gelu, silu,
// relu, elu, selu, celu, leaky_relu, hardswish, hardsigmoid, mish, softplus, hardtanh, relu6,
// softsign, tanhshrink, hardshrink, softshrink, threshold, glu, prelu, rrelu).
#include "test_support/opdb.h"

namespace kiln::opdb {

namespace {

// The activations kiln writes with the ops they are made of (frontend/ops_activation_composed.cpp).
void add_activation_composed(std::vector<OpEntry>& db) {
  auto act = [&](std::string name, std::string torch, Fn f, std::vector<Sample> extra = {}) {
    std::vector<Sample> samples = float_samples();
    samples.push_back({ints({2, 3})});
    for (Sample& e : extra) samples.push_back(std::move(e));
    db.push_back({name, "activation", f, torch, samples});
  };
  // Integers give floats (PyTorch writes both in Python); a bool is refused (abs, sub).
  act("softsign", "torch.nn.functional.softsign(a0)", one([](const std::vector<Tensor>& in) { return softsign(in[0]); }),
      {{seq({2, 3}, kBool)}});
  act("tanhshrink", "torch.nn.functional.tanhshrink(a0)",
      one([](const std::vector<Tensor>& in) { return tanhshrink(in[0]); }), {{seq({2, 3}, kBool)}});
  // The kinks: -0.5, 0.25 and 1.0 of seq lie on or beside +-lambd.
  act("hardshrink", "torch.nn.functional.hardshrink(a0)",
      one([](const std::vector<Tensor>& in) { return hardshrink(in[0]); }));
  act("hardshrink:lambd", "torch.nn.functional.hardshrink(a0, 1.0)",
      one([](const std::vector<Tensor>& in) { return hardshrink(in[0], 1.0); }));
  act("hardshrink:negative", "torch.nn.functional.hardshrink(a0, -1.0)",  // no check: everything passes
      one([](const std::vector<Tensor>& in) { return hardshrink(in[0], -1.0); }));
  act("softshrink", "torch.nn.functional.softshrink(a0)",
      one([](const std::vector<Tensor>& in) { return softshrink(in[0]); }));
  act("softshrink:lambd", "torch.nn.functional.softshrink(a0, 0.3)",
      one([](const std::vector<Tensor>& in) { return softshrink(in[0], 0.3); }));
  // lambd outside [0, the dtype's largest]: every sample raises, with the dtype's bound.
  db.push_back({"softshrink:range", "activation", one([](const std::vector<Tensor>& in) { return softshrink(in[0], 70000.0); }),
                "torch.nn.functional.softshrink(a0, 70000.0)",
                {{seq({2, 3})}, {seq({2, 3}, kHalf)}, {seq({2, 3}, kBFloat16)}}});
  db.push_back({"softshrink:negative", "activation", one([](const std::vector<Tensor>& in) { return softshrink(in[0], -1.0); }),
                "torch.nn.functional.softshrink(a0, -1.0)", {{seq({2, 3})}, {seq({2, 3}, kDouble)}}});
  std::vector<Sample> th = float_samples();
  th.push_back({seq({2, 3}, kBool)});
  db.push_back({"threshold", "activation", one([](const std::vector<Tensor>& in) { return threshold(in[0], 0.25, 20.0); }),
                "torch.nn.functional.threshold(a0, 0.25, 20.0)", th});
  // Integers: the threshold and the value converted first (1.5 -> 1, -2.5 -> -2).
  db.push_back({"threshold:int", "activation", one([](const std::vector<Tensor>& in) { return threshold(in[0], 1.5, -2.5); }),
                "torch.nn.functional.threshold(a0, 1.5, -2.5)",
                {{ints({2, 4})}, {seq({2, 3}, kByte, 0.0, 1.0)}, {seq({4}, kShort)}, {seq({2, 3}, kHalf)}}});
  db.push_back({"threshold:overflow", "activation", one([](const std::vector<Tensor>& in) { return threshold(in[0], 0.0, 70000.0); }),
                "torch.nn.functional.threshold(a0, 0.0, 70000.0)", {{seq({2, 3}, kHalf)}, {seq({2, 3}, kFloat)}}});
  // glu: an even dim halved; odd sizes, 0-dim and integer inputs raise.
  db.push_back({"glu", "activation", one([](const std::vector<Tensor>& in) { return glu(in[0]); }),
                "torch.nn.functional.glu(a0)",
                {{seq({2, 4})}, {seq({4, 2}).t()}, {seq({3, 0})}, {specials().reshape({2, 6})}, {seq({4}, kHalf)},
                 {seq({2, 4}, kBFloat16)}, {seq({6}, kDouble)}, {seq({2, 3})}, {seq({})}, {ints({2, 4})}}});
  db.push_back({"glu:dim0", "activation", one([](const std::vector<Tensor>& in) { return glu(in[0], 0); }),
                "torch.nn.functional.glu(a0, 0)", {{seq({4, 3})}, {seq({3, 4}).t()}, {seq({2, 3, 2})}, {seq({3, 2})}}});
  // prelu: one slope, or one per channel (dim 1; a 1-D input has one channel).
  db.push_back({"prelu", "activation", one([](const std::vector<Tensor>& in) { return prelu(in[0], in[1]); }),
                "torch.prelu(a0, a1)",
                {{seq({2, 3}), f32({0.25, -0.5, 2.0})},
                 {seq({2, 3, 4}), f32({0.1, 0.2, 0.3})},
                 {seq({3, 2}).t(), f32({0.5, 1.5, -1.0})},
                 {seq({2, 3}), f32({0.3})},
                 {seq({2, 3}), seq({}, kFloat, 0.3)},
                 {seq({5}), f32({0.3})},
                 {seq({}), f32({0.3})},
                 {specials(), f32({0.5})},
                 {seq({0, 3}), f32({0.25, -0.5, 2.0})},
                 {seq({2, 3}, kDouble), seq({3}, kDouble)},
                 {seq({2, 3}, kHalf), seq({3}, kHalf)},
                 {seq({2, 3}, kBFloat16), seq({1}, kBFloat16, 0.3)},
                 {seq({2, 3}), f32({0.1, 0.2})},                  // not one per channel
                 {seq({}), f32({0.1, 0.2})},                      // 0-dim with several slopes
                 {seq({2, 3}), f32({0.1, 0.2, 0.3}, {3, 1})},     // a 2-D weight
                 {seq({2, 3}, kDouble), f32({0.1, 0.2, 0.3})},    // dtypes differ
                 {ints({2, 3}), i64({1})}}});                     // integers
  // rrelu: in evaluation, leaky_relu with the mean slope; in training, random slopes (shape and
  // dtype compared; their range and gradient in test_nn_activation.cpp).
  act("rrelu", "torch.nn.functional.rrelu(a0)", one([](const std::vector<Tensor>& in) { return rrelu(in[0]); }));
  act("rrelu:bounds", "torch.nn.functional.rrelu(a0, 0.5, 0.1)",  // lower > upper raises
      one([](const std::vector<Tensor>& in) { return rrelu(in[0], 0.5, 0.1); }));
  db.push_back({"rrelu:training", "activation",
                one([](const std::vector<Tensor>& in) { return rrelu(in[0], 0.1, 0.3, /*training=*/true); }),
                "torch.nn.functional.rrelu(a0, 0.1, 0.3, training=True)",
                {{seq({2, 3})}, {seq({3, 2}).t()}, {seq({2, 0})}, {seq({4}, kDouble)}, {ints({2, 3})}}, std::nullopt,
                /*random=*/true});
}

}  // namespace

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
  add_activation_composed(db);
}

}  // namespace kiln::opdb
