// kiln/test/test_support/linear_epilogues.h — functions of (x, w, b) whose product, bias and
// activation the backends fold into one library call (passes/matmul_epilogues.h), shared by the
// cpu and cuda plan tests (test_compile_matmul_epilogues.cpp, test_cuda_backend.cpp).
#pragma once

#include "kiln/kiln.h"

#include <functional>
#include <vector>

namespace kiln::test::epilogues {

using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

inline const Fn relu_linear = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{relu(linear(in[0], in[1], in[2]))}; };
inline const Fn plain = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{linear(in[0], in[1], in[2])}; };
inline const Fn gelu_tanh_linear = [](const std::vector<Tensor>& in) {
  return std::vector<Tensor>{gelu(linear(in[0], in[1], in[2]), "tanh")};
};
// The sum before the activation is also a result (as a backward pass saves it): the bias only.
inline const Fn saved = [](const std::vector<Tensor>& in) {
  const Tensor y = linear(in[0], in[1], in[2]);
  return std::vector<Tensor>{relu(y), y};
};
// The product itself is a result: nothing folds.
inline const Fn shared = [](const std::vector<Tensor>& in) {
  const Tensor p = in[0].matmul(in[1].t());
  return std::vector<Tensor>{relu(p + in[2]), p};
};

}  // namespace kiln::test::epilogues
