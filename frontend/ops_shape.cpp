// kiln/frontend/ops_shape.cpp — the Shape family's frontend: joining (cat, stack, and NumPy's
// hstack, vstack, dstack and column_stack over cat) and constant padding (constant_pad_nd, and pad, which hands the index-based modes to the Resample family's
// pad_by_mode, frontend/ops_resample.cpp).
//
// Validation follows PyTorch's checks and messages; cat promotes its inputs with result_type
// and skips legacy 1-D empty tensors.
#include "base/error.h"
#include "frontend/arg_checks.h"
#include "frontend/dispatch.h"
#include "frontend/ops_factory.h"
#include "frontend/ops.h"
#include "frontend/ops_resample.h"
#include "frontend/promotion.h"
#include "frontend/symbolic.h"
#include "frontend/ops_view.h"
#include "ir/shape_env.h"

#include <algorithm>
#include <string>
#include <vector>

namespace kiln {

using ir::OpKind;

namespace {

// Legacy: 1-D tensors with no elements are skipped by cat whatever the other shapes.
bool cat_should_skip(const Tensor& t) { return t.dim() == 1 && ir::sym_eq(sym_numel(t), ir::Expr(0)); }

}  // namespace

// ---- cat, stack ---------------------------------------------------------------------------------------

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  if (tensors.empty()) fail("cat", "torch.cat(): expected a non-empty list of Tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].dim() == 0) fail("cat", "zero-dimensional tensor (at position {}) cannot be concatenated", i);
  }
  std::vector<TensorOrScalar> operands(tensors.begin(), tensors.end());
  ScalarType dtype = result_type(operands);
  const Tensor* ref = nullptr;
  for (const Tensor& t : tensors) {
    if (!cat_should_skip(t)) {
      ref = &t;
      break;
    }
  }
  // A skipped tensor still joins the op, as an empty slab of the others' shape that adds no
  // element, so that the result requires grad when it does (PyTorch's CatBackward gives it an
  // empty gradient) -- also in a trace, which learns only later which inputs require grad.
  // PyTorch does not check a skipped tensor's device: one on another device is moved (it has no
  // elements) and gets its empty gradient back on its own device.
  if (!ref) {  // every input is a legacy empty tensor: the result is one too
    std::vector<Tensor> empties;
    for (const Tensor& t : tensors) empties.push_back(t.to(dtype).to(tensors[0].device()));
    return dispatch1(OpKind::cat, empties, {int64_t{0}});
  }
  int64_t d = normalize_dim("cat", dim, ref->dim());
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (cat_should_skip(t)) {
      std::vector<ir::Expr> slab = sym_sizes(*ref);
      slab[static_cast<size_t>(d)] = ir::Expr(0);
      inputs.push_back(sym_reshape(t.to(dtype).to(ref->device()), slab));
      continue;
    }
    if (t.dim() != ref->dim()) {
      fail("cat", "Tensors must have same number of dimensions: got {} and {}", ref->dim(), t.dim());
    }
    for (int64_t k = 0; k < t.dim(); ++k) {
      if (k != d && !same_size(t, k, *ref, k)) {
        fail("cat", "Sizes of tensors must match except in dimension {}. Expected size {} but got size {} for tensor "
                    "number {} in the list.",
             d, hint_size(*ref, k), hint_size(t, k), i);
      }
    }
    if (t.device() != ref->device()) {
      fail("cat", "Expected all tensors to be on the same device, but found at least two devices, {} and {}!",
           ref->device().str(), t.device().str());
    }
    inputs.push_back(t.to(dtype));
  }
  return dispatch1(OpKind::cat, inputs, {d});
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  if (tensors.empty()) fail("stack", "stack expects a non-empty TensorList");
  int64_t d = normalize_dim("stack", dim, tensors[0].dim() + 1);
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < tensors.size(); ++i) {
    bool same = tensors[i].dim() == tensors[0].dim();
    for (int64_t k = 0; same && k < tensors[0].dim(); ++k) same = same_size(tensors[i], k, tensors[0], k);
    if (!same) {
      fail("stack", "stack expects each tensor to be equal size, but got {} at entry 0 and {} at entry {}",
           shape_str(tensors[0].impl()->sizes()), shape_str(tensors[i].impl()->sizes()), i);
    }
    inputs.push_back(tensors[i].unsqueeze(d));
  }
  return cat(inputs, d);
}

// ---- padding ------------------------------------------------------------------------------------------

Tensor constant_pad_nd(const Tensor& self, IntArrayRef pad, const Scalar& value) {
  if (pad.size() % 2 != 0) fail("constant_pad_nd", "Length of pad must be even but instead it equals {}", pad.size());
  int64_t rank = self.dim();
  int64_t npad = static_cast<int64_t>(pad.size() / 2);
  if (npad > rank) {
    fail("constant_pad_nd", "Length of pad should be no more than twice the number of dimensions of the input. Pad "
                            "length is {} while the input has {} dimensions.",
         pad.size(), rank);
  }
  for (int64_t i = 0; i < npad; ++i) {
    int64_t d = rank - 1 - i;
    int64_t lo = pad[static_cast<size_t>(2 * i)];
    int64_t hi = pad[static_cast<size_t>(2 * i + 1)];
    if (ir::sym_lt(sym_size(self, d) + ir::Expr(lo + hi), ir::Expr(0))) {
      fail("constant_pad_nd", "The input size {}, plus negative padding {} and {} resulted in a negative output size, "
                              "which is invalid. Check dimension {} of your input.",
           hint_size(self, d), lo, hi, d);
    }
    // PyTorch cuts a negative pad off the input first (narrow), the left one then the right one,
    // so each cut must leave a non-negative size even where the other pad would add it back.
    const ir::Expr cut = sym_size(self, d) + ir::Expr(std::min<int64_t>(lo, 0));
    if ((lo < 0 && ir::sym_lt(cut, ir::Expr(0))) || (hi < 0 && ir::sym_lt(cut + ir::Expr(hi), ir::Expr(0))))
      fail("constant_pad_nd", "narrow(): length must be non-negative: dimension {} of size {} cut by the negative "
                              "padding {} and {}",
           d, hint_size(self, d), lo, hi);
  }
  // PyTorch writes (and converts) the value last, and only where some pad is positive; otherwise
  // it narrows.
  if (std::any_of(pad.begin(), pad.end(), [](int64_t p) { return p > 0; }))
    check_scalar_fits("constant_pad_nd", value, self.dtype());
  return dispatch1(OpKind::constant_pad, {self}, {pad.vec(), value});
}

Tensor pad(const Tensor& self, IntArrayRef pad, std::string_view mode, std::optional<double> value) {
  if (mode == "constant") return constant_pad_nd(self, pad, value.value_or(0.0));
  if (mode == "reflect" || mode == "replicate" || mode == "circular") {
    if (value.has_value() && *value != 0)
      fail("pad", "Padding mode \"{}\" doesn't take in value argument", mode);
    return pad_by_mode(self, pad, mode);
  }
  fail("pad", "Unrecognised padding mode {}", mode);
}

namespace {

void check_not_empty(const char* op, const std::vector<Tensor>& tensors) {
  if (tensors.empty()) fail(op, "{} expects a non-empty TensorList", op);
}

}  // namespace

Tensor hstack(const std::vector<Tensor>& tensors) {
  check_not_empty("hstack", tensors);
  const std::vector<Tensor> rep = atleast_1d(tensors);
  return cat(rep, rep[0].dim() == 1 ? 0 : 1);
}

Tensor vstack(const std::vector<Tensor>& tensors) {
  check_not_empty("vstack", tensors);
  return cat(atleast_2d(tensors), 0);
}

Tensor row_stack(const std::vector<Tensor>& tensors) { return vstack(tensors); }

Tensor dstack(const std::vector<Tensor>& tensors) {
  check_not_empty("dstack", tensors);
  return cat(atleast_3d(tensors), 2);
}

Tensor column_stack(const std::vector<Tensor>& tensors) {
  check_not_empty("column_stack", tensors);
  std::vector<Tensor> columns;
  for (const Tensor& t : tensors) columns.push_back(t.dim() <= 1 ? t.reshape({-1, 1}) : t);
  return cat(columns, 1);
}

}  // namespace kiln
