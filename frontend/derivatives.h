// kiln/frontend/derivatives.h — the derivative rule of every differentiable op, keyed by op,
// as PyTorch's derivatives.yaml.
//
// A rule maps the gradients of an op's outputs to the gradients of its inputs (a vector-Jacobian
// product) and is written with kiln's own ops, so that it runs eagerly (the autograd engine,
// frontend/autograd_engine.cpp), traces (the grad/vjp transforms, frontend/function_transforms.cpp,
// and compiled backward passes), fuses, compiles, and can itself be differentiated (a second
// derivative). The rules live by family, in frontend/derivatives_<family>.cpp, beside the
// family's decompositions (docs/adding_an_op.md).
//
// Every op of ir/ops.def is one of:
//   - a rule (with what the eager tape must save for it: inputs and outputs by position);
//   - not differentiable, with the reason (integer or bool results, indices, random draws);
//   - a composite without a rule of its own, differentiated through its decomposition.
// test/test_autograd_rules.cpp fails when a differentiable prim has neither rule nor reason.
#pragma once

#include "frontend/autograd_node.h"
#include "frontend/tensor.h"
#include "ir/attr.h"
#include "ir/op.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace kiln::autograd {

// What a rule receives. Eagerly, only the inputs and outputs the rule saves are defined; in a
// traced transform all are. Gradients of outputs no gradient reached are undefined (zero).
struct GradArgs {
  ir::OpKind op;
  const ir::AttrList& attrs;
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
  std::vector<TensorMeta> input_meta;
  std::vector<TensorMeta> output_meta;
  std::vector<Tensor> grads;
  std::vector<bool> needs;  // which inputs want a gradient

  const Tensor& in(size_t i) const;
  const Tensor& out(size_t i) const;
  // The gradient of output i: zeros of its type where none reached it.
  Tensor grad(size_t i = 0) const;
  bool has_grad(size_t i) const { return i < grads.size() && grads[i].defined(); }
  bool need(size_t i) const { return i < needs.size() && needs[i]; }
  const TensorMeta& meta(size_t i) const { return input_meta.at(i); }
  template <typename T> const T& attr(std::string_view name) const { return attrs.get<T>(op, name); }
  template <typename T> std::optional<T> attr_opt(std::string_view name) const { return attrs.get_opt<T>(op, name); }
};

// One gradient per input (undefined: none, for an input that is not differentiable or not
// needed).
using RuleFn = std::vector<Tensor> (*)(const GradArgs&);

inline constexpr uint32_t kNone = 0;
inline constexpr uint32_t kAll = ~uint32_t{0};
constexpr uint32_t bit(int i) { return uint32_t{1} << i; }

struct Derivative {
  RuleFn fn = nullptr;
  uint32_t saved_inputs = kNone;   // bit i: input i is saved by the eager tape
  uint32_t saved_outputs = kNone;  // bit i: output i
  // Two-input ops: bit i of saved_inputs applies only when the other input needs a gradient
  // (mul saves y for x's gradient and x for y's: nothing of a weight that is not learned).
  uint32_t only_for_other = kNone;
  const char* not_differentiable = nullptr;  // the reason, when the op has no derivative
  // bit j: output j is differentiable (requires grad when an input does). PyTorch marks the
  // statistics of the native norms as not.
  uint32_t outputs = kAll;
};

// The entry of `op`, or null for a composite differentiated through its decomposition.
const Derivative* derivative(ir::OpKind op);

// Whether `op` has a derivative rule of its own (the transforms keep such ops whole).
bool has_rule(ir::OpKind op);

// The table the families fill (frontend/derivatives_<family>.cpp), and its entries.
class DerivativeTable {
 public:
  Derivative& rule(ir::OpKind op, RuleFn fn, uint32_t saved_inputs = kNone, uint32_t saved_outputs = kNone,
                   uint32_t only_for_other = kNone);
  void none(ir::OpKind op, const char* reason);
  const Derivative* find(ir::OpKind op) const;

 private:
  std::vector<Derivative> entries_;
  std::vector<bool> present_;
};

void add_unary_derivatives(DerivativeTable& t);
void add_binary_derivatives(DerivativeTable& t);
void add_ternary_derivatives(DerivativeTable& t);
void add_cast_derivatives(DerivativeTable& t);
void add_reduction_derivatives(DerivativeTable& t);
void add_moments_derivatives(DerivativeTable& t);
void add_scan_derivatives(DerivativeTable& t);
void add_view_derivatives(DerivativeTable& t);
void add_shape_derivatives(DerivativeTable& t);
void add_index_derivatives(DerivativeTable& t);
void add_factory_derivatives(DerivativeTable& t);
void add_random_derivatives(DerivativeTable& t);
void add_matmul_derivatives(DerivativeTable& t);
void add_linear_derivatives(DerivativeTable& t);
void add_conv_derivatives(DerivativeTable& t);
void add_sort_derivatives(DerivativeTable& t);
void add_softmax_derivatives(DerivativeTable& t);
void add_norm_derivatives(DerivativeTable& t);
void add_pool_derivatives(DerivativeTable& t);
void add_attention_derivatives(DerivativeTable& t);
void add_dropout_derivatives(DerivativeTable& t);
void add_activation_derivatives(DerivativeTable& t);

}  // namespace kiln::autograd
