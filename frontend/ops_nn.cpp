// kiln/frontend/ops_nn.cpp — the composite neural-network ops of frontend/ops_nn.h.
//
// Each op checks what PyTorch checks before computing (with its wording), resolves every
// default into an attribute (normalized dim, the dtype to compute in, eps) and dispatches the
// composite op. dispatch() records it when an input is traced and otherwise runs its
// decomposition eagerly; the composite's shape function (ir/shape_fns_composite.cpp) repeats
// the shape checks so that graphs read from text are checked too. A missing optional tensor
// is left out of the node's inputs; layer_norm with a bias but no weight passes a weight of
// ones, since only trailing optional tensors may be missing (docs/decisions.md).
#include "frontend/ops_nn.h"

#include "frontend/dispatch.h"
#include "base/error.h"
#include "frontend/symbolic.h"
#include "ir/shape_env.h"
#include "frontend/factories.h"
#include "frontend/ops.h"
#include "frontend/views.h"

#include <limits>
#include <string>
#include <vector>

namespace kiln {

namespace {

using ir::OpKind;

bool present(const std::optional<Tensor>& t) { return t.has_value() && t->defined(); }

Tensor softmax_like(OpKind op, std::string_view name, const Tensor& self, int64_t dim,
                    std::optional<ScalarType> dtype) {
  int64_t d = normalize_dim(name, dim, self.dim());
  return dispatch1(op, {self}, {d, dtype.value_or(self.dtype())});
}

// The dtype PyTorch computes f16/bf16 norms in (its opmath type): f32.
ScalarType compute_dtype_of(ScalarType t) {
  return (t == ScalarType::Half || t == ScalarType::BFloat16) ? ScalarType::Float : t;
}

}  // namespace

Tensor softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_like(OpKind::softmax, "softmax", self, dim, dtype);
}

Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_like(OpKind::log_softmax, "log_softmax", self, dim, dtype);
}

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps) {
  std::vector<Tensor> ins{input};
  if (present(weight)) {
    ins.push_back(*weight);
  } else if (present(bias)) {
    if (!(bias->sizes() == normalized_shape))
      fail("layer_norm",
           "Expected bias to be of same shape as normalized_shape, but got bias of shape {} and normalized_shape = {}",
           shape_str(bias->sizes()), shape_str(normalized_shape));
    ins.push_back(ones(normalized_shape, bias->options()));
  }
  if (present(bias)) ins.push_back(*bias);
  return dispatch1(OpKind::layer_norm, std::move(ins), {normalized_shape.vec(), eps});
}

Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                std::optional<double> eps) {
  std::vector<Tensor> ins{input};
  if (present(weight)) ins.push_back(*weight);
  return dispatch1(OpKind::rms_norm, std::move(ins), {normalized_shape.vec(), eps.value_or(finfo_eps(compute_dtype_of(input.dtype())))});
}

Tensor gelu(const Tensor& self, std::string_view approximate) {
  if (approximate != "none" && approximate != "tanh") fail("gelu", "approximate argument must be either none or tanh.");
  return dispatch1(OpKind::gelu, {self}, {std::string(approximate)});
}

Tensor silu(const Tensor& self) { return dispatch1(OpKind::silu, {self}); }

Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  if (input.dim() == 0) fail("linear", "both arguments to linear need to be at least 1D, but they are 0D and {}D", weight.dim());
  if (weight.dim() == 2 && !ir::sym_eq(sym_size(input, -1), sym_size(weight, 1))) {
    const IntArrayRef in = input.impl()->sizes(), w = weight.impl()->sizes();  // hints, for the message
    const int64_t rows = in.back() == 0 ? 0 : input.impl()->numel() / in.back();
    fail("linear", "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})", input.dim() == 1 ? 1 : rows,
         in.back(), w[1], w[0]);
  }
  // With a bias PyTorch runs addmm, which wants a matrix (a 1-D weight works only without one).
  if (present(bias) && weight.dim() != 2)
    fail("linear", "addmm: mat2 must be a matrix, got {}-D tensor", weight.dim());
  if (input.dtype() != weight.dtype())
    fail("linear", "mat1 and mat2 must have the same dtype, but got {} and {}", c10_type_name(input.dtype()),
         c10_type_name(weight.dtype()));
  std::vector<Tensor> ins{input, weight};
  if (present(bias)) ins.push_back(*bias);
  return dispatch1(OpKind::linear, std::move(ins));
}

Tensor cross_entropy(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                     std::string_view reduction, int64_t ignore_index, double label_smoothing) {
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    fail("cross_entropy", "{} is not a valid value for reduction", reduction);
  std::vector<Tensor> ins{self, target};
  if (present(weight)) ins.push_back(*weight);
  return dispatch1(OpKind::cross_entropy, std::move(ins), {std::string(reduction), ignore_index, label_smoothing});
}

// ---- Tensor methods -------------------------------------------------------------------------------

Tensor Tensor::softmax(int64_t d, std::optional<ScalarType> dtype) const { return kiln::softmax(*this, d, dtype); }
Tensor Tensor::log_softmax(int64_t d, std::optional<ScalarType> dtype) const {
  return kiln::log_softmax(*this, d, dtype);
}
Tensor Tensor::var(IntArrayRef dims, const std::optional<Scalar>& correction, bool keepdim) const {
  return kiln::var(*this, dims, correction, keepdim);
}
Tensor Tensor::std(IntArrayRef dims, const std::optional<Scalar>& correction, bool keepdim) const {
  return kiln::std(*this, dims, correction, keepdim);
}

}  // namespace kiln
