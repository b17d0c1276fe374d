// kiln/frontend/ops_misc.cpp — joining (cat, stack), padding, indexing (gather, scatter,
// index_select), matrix products (mm, bmm, matmul), conversion (to, clone) and the eager
// whole-tensor comparisons equal and allclose.
//
// Validation follows PyTorch's checks and messages; cat promotes its inputs with result_type
// and skips legacy 1-D empty tensors; matmul checks torch.matmul's 1-D/2-D/N-D cases and
// dispatches the matmul composite (decomposed onto mm and bmm by passes/decompositions_linear.cpp).
#include "frontend/dispatch.h"
#include "base/error.h"
#include "frontend/factories.h"
#include "frontend/ops.h"
#include "frontend/ops_resample.h"
#include "frontend/promotion.h"
#include "frontend/symbolic.h"
#include "frontend/views.h"
#include "ir/shape_env.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

namespace kiln {

namespace {

using ir::OpKind;



// The C++ element type names PyTorch's TypeMeta prints ("float != double").
const char* cpp_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "bool";
    case ScalarType::UInt8: return "unsigned char";
    case ScalarType::Int8: return "signed char";
    case ScalarType::Int16: return "short";
    case ScalarType::Int32: return "int";
    case ScalarType::Int64: return "long";
    case ScalarType::Half: return "Half";
    case ScalarType::BFloat16: return "BFloat16";
    case ScalarType::Float: return "float";
    case ScalarType::Double: return "double";
  }
  return "?";
}

// Legacy: 1-D tensors with no elements are skipped by cat whatever the other shapes.
bool cat_should_skip(const Tensor& t) { return t.dim() == 1 && ir::sym_eq(sym_numel(t), ir::Expr(0)); }

// Whether dim da of a and dim db of b have equal sizes (decided with a guard when symbolic).
bool same_size(const Tensor& a, int64_t da, const Tensor& b, int64_t db) {
  return ir::sym_eq(sym_size(a, da), sym_size(b, db));
}
// The size for messages: the hint of a symbolic size (no guard).
int64_t hint_size(const Tensor& t, int64_t d) {
  return t.impl()->sizes()[static_cast<size_t>(normalize_dim("size", d, t.dim(), false))];
}

void check_index_dtype(std::string_view op, const Tensor& index) {
  if (index.dtype() != ScalarType::Int64 && index.dtype() != ScalarType::Int32)
    fail(op, "{}(): Expected dtype int32/int64 for index", op);
}

// gather/scatter: ranks agree (0-dim counts as 1-D) and the index fits.
void scatter_gather_shape_check(std::string_view op, const Tensor& self, int64_t dim, const Tensor& index,
                                const Tensor* src) {
  auto nonempty_dim = [](const Tensor& t) { return std::max<int64_t>(t.dim(), 1); };
  auto nonempty_size = [](const Tensor& t, int64_t d) { return t.dim() == 0 ? 1 : t.size(d); };
  int64_t rank = nonempty_dim(self);
  if (nonempty_dim(index) != rank) {
    fail(op, "Index tensor must have the same number of dimensions as {} tensor", src ? "self" : "input");
  }
  if (src && nonempty_dim(*src) != rank) fail(op, "Index tensor must have the same number of dimensions as src tensor");
  for (int64_t d = 0; d < rank; ++d) {
    int64_t isz = nonempty_size(index, d);
    bool bad = d != dim && isz > nonempty_size(self, d);
    if (src) bad = bad || isz > nonempty_size(*src, d);
    if (!bad) continue;
    if (src) {
      fail(op, "Expected index {} to be smaller than self {} apart from dimension {} and to be smaller size than src {}",
           shape_str(index.sizes()), shape_str(self.sizes()), dim, shape_str(src->sizes()));
    }
    fail(op, "Size does not match at dimension {} expected index {} to be smaller than self {} apart of dimension {}", d,
         shape_str(index.sizes()), shape_str(self.sizes()), dim);
  }
}

Tensor scatter_impl(OpKind kind, std::string_view op, const Tensor& self, int64_t dim, const Tensor& index,
                    const Tensor& src) {
  int64_t d = normalize_dim(op, dim, self.dim());
  check_index_dtype(op, index);
  if (self.dtype() != src.dtype()) fail(op, "Expected self.dtype to be equal to src.dtype");
  scatter_gather_shape_check(op, self, d, index, &src);
  return dispatch1(kind, {self, index, src}, {d});
}

void check_same_dtype(std::string_view op, const char* a, const char* b, const Tensor& x, const Tensor& y) {
  if (x.dtype() != y.dtype()) {
    fail(op, "expected {} and {} to have the same dtype, but got: {} != {}", a, b, cpp_type_name(x.dtype()),
         cpp_type_name(y.dtype()));
  }
}

void check_eager(std::string_view op, const Tensor& a, const Tensor& b) {
  if (a.is_traced() || b.is_traced()) {
    fail(op, "{}() reads tensor values and cannot run on traced tensors; use eq()/isclose-style ops with all() and "
             "where() instead",
         op);
  }
}

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
  if (!ref) {  // every input is a legacy empty tensor: the result is one too
    return full({0}, 0, TensorOptions(dtype).device(tensors[0].device()));
  }
  int64_t d = normalize_dim("cat", dim, ref->dim());
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (cat_should_skip(t)) continue;
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
  check_scalar_fits("constant_pad_nd", value, self.dtype());
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
  }
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

// ---- indexing ------------------------------------------------------------------------------------------

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index) {
  int64_t d = normalize_dim("gather", dim, self.dim());
  check_index_dtype("gather", index);
  scatter_gather_shape_check("gather", self, d, index, nullptr);
  return dispatch1(OpKind::gather, {self, index}, {d});
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_impl(OpKind::scatter, "scatter", self, dim, index, src);
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  Tensor src = scalar_tensor(value, TensorOptions(self.dtype()).device(self.device()));
  if (index.dim() > 0) src = src.expand(index.sizes());
  return scatter_impl(OpKind::scatter, "scatter", self, dim, index, src);
}

Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_impl(OpKind::scatter_add, "scatter_add", self, dim, index, src);
}

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  if (index.dim() > 1) fail("index_select", "index_select(): Index is supposed to be a vector");
  if (index.dtype() != ScalarType::Int64 && index.dtype() != ScalarType::Int32) {
    fail("index_select", "index_select(): Expected dtype int32 or int64 for index");
  }
  int64_t d = normalize_dim("index_select", dim, self.dim());
  Tensor idx = index.to(ScalarType::Int64);
  if (idx.dim() == 0) idx = idx.reshape({1});
  return dispatch1(OpKind::index_select, {self, idx}, {d});
}

// ---- matrix products ------------------------------------------------------------------------------------

namespace {

// mm's and bmm's checks (addmm and baddbmm make them too, with their own op name).
void check_mm(std::string_view op, const Tensor& self, const Tensor& mat2) {
  if (self.dim() != 2) fail(op, "self must be a matrix");
  if (mat2.dim() != 2) fail(op, "mat2 must be a matrix");
  check_same_dtype(op, "m1", "m2", self, mat2);
  if (!same_size(self, 1, mat2, 0)) {
    fail(op, "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})", hint_size(self, 0), hint_size(self, 1),
         hint_size(mat2, 0), hint_size(mat2, 1));
  }
}

void check_bmm(std::string_view op, const Tensor& self, const Tensor& mat2) {
  if (self.dim() != 3) fail(op, "batch1 must be a 3D tensor");
  if (mat2.dim() != 3) fail(op, "batch2 must be a 3D tensor");
  check_same_dtype(op, "batch1", "batch2", self, mat2);
  if (!same_size(mat2, 0, self, 0) || !same_size(mat2, 1, self, 2)) {
    fail(op, "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: [{}, {}].",
         hint_size(self, 0), hint_size(self, 2), hint_size(mat2, 0), hint_size(mat2, 1));
  }
}

// addmm / baddbmm: self has the product's dtype and broadcasts to its shape.
Tensor add_product(ir::OpKind kind, std::string_view op, const Tensor& self, const Tensor& a, const Tensor& b,
                   const Scalar& beta, const Scalar& alpha) {
  if (self.dtype() != a.dtype())
    fail(op, "self and mat2 must have the same dtype, but got {} and {}", c10_type_name(self.dtype()), c10_type_name(a.dtype()));
  if (a.dtype() == ScalarType::Bool) fail(op, "\"addmm_impl_cpu_\" not implemented for 'Bool'");
  std::vector<ir::Expr> out = {sym_size(a, -2), sym_size(b, -1)};
  if (kind == OpKind::baddbmm) out.insert(out.begin(), sym_size(a, 0));
  const std::vector<ir::Expr> s = sym_sizes(self);
  if (!sym_expandable(s, out))
    fail(op, "self of shape {} cannot be broadcast to the product's shape {}", ir::str(s), ir::str(out));
  check_scalar_fits(op, beta, a.dtype());
  check_scalar_fits(op, alpha, a.dtype());
  return dispatch1(kind, {sym_expand(self, out), a, b}, {beta, alpha});
}

// tril / triu: a 2-D or batched matrix.
Tensor triangle(ir::OpKind kind, std::string_view op, const Tensor& self, int64_t diagonal) {
  if (self.dim() < 2) fail(op, "{}: input tensor must have at least 2 dimensions", op);
  return dispatch1(kind, {self}, {diagonal});
}

}  // namespace

Tensor mm(const Tensor& self, const Tensor& mat2) {
  check_mm("mm", self, mat2);
  return dispatch1(OpKind::mm, {self, mat2});
}

Tensor bmm(const Tensor& self, const Tensor& mat2) {
  check_bmm("bmm", self, mat2);
  return dispatch1(OpKind::bmm, {self, mat2});
}

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha) {
  check_mm("addmm", mat1, mat2);
  return add_product(OpKind::addmm, "addmm", self, mat1, mat2, beta, alpha);
}

Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) {
  check_bmm("baddbmm", batch1, batch2);
  return add_product(OpKind::baddbmm, "baddbmm", self, batch1, batch2, beta, alpha);
}

Tensor tril(const Tensor& self, int64_t diagonal) { return triangle(OpKind::tril, "tril", self, diagonal); }
Tensor triu(const Tensor& self, int64_t diagonal) { return triangle(OpKind::triu, "triu", self, diagonal); }

Tensor matmul(const Tensor& a, const Tensor& b) {
  int64_t da = a.dim();
  int64_t db = b.dim();
  if (da == 0 || db == 0) {
    fail("matmul", "both arguments to matmul need to be at least 1D, but they are {}D and {}D", da, db);
  }
  check_same_dtype("matmul", "m1", "m2", a, b);
  // The contracted sizes: a's last dim against b's first (1-D) or second-to-last dim.
  if (!same_size(a, -1, b, db == 1 ? 0 : -2))
    fail("matmul", "shapes {} and {} cannot be multiplied", shape_str(a.impl()->sizes()), shape_str(b.impl()->sizes()));

  // Batch dims must broadcast (the decomposition in passes/decompositions_linear.cpp expands them).
  if (da > 2 || db > 2) {
    const std::vector<ir::Expr> sa = sym_sizes(a), sb = sym_sizes(b);
    std::vector<ir::Expr> batch_a(sa.begin(), sa.begin() + std::max<int64_t>(da - 2, 0));
    std::vector<ir::Expr> batch_b(sb.begin(), sb.begin() + std::max<int64_t>(db - 2, 0));
    sym_broadcast_shapes("matmul", batch_a, batch_b);
  }
  return dispatch1(OpKind::matmul, {a, b});
}

// ---- conversion -----------------------------------------------------------------------------------------

Tensor to(const Tensor& self, ScalarType dtype) {
  if (self.dtype() == dtype) return self;
  return dispatch1(OpKind::convert_element_type, {self}, {dtype});
}

Tensor clone(const Tensor& self) { return dispatch1(OpKind::clone, {self}); }

// ---- whole-tensor comparisons (eager) ---------------------------------------------------------------------

bool equal(const Tensor& a, const Tensor& b) {
  check_eager("equal", a, b);
  if (a.device() != b.device()) {
    fail("equal", "Expected all tensors to be on the same device, but found at least two devices, {} and {}!",
         a.device().str(), b.device().str());
  }
  if (a.dtype() != b.dtype()) {
    fail("equal", "Expected object of scalar type {} but got scalar type {} for argument 'other'",
         cpp_type_name(a.dtype()), cpp_type_name(b.dtype()));
  }
  if (!(a.sizes() == b.sizes())) return false;
  return all(eq(a, b)).item<bool>();
}

// torch.isclose followed by all(): |a - b| <= atol + rtol * |b| where finite, plus exact
// equality (infinities) and, with equal_nan, NaN against NaN.
bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  check_eager("allclose", a, b);
  if (a.dtype() != b.dtype()) fail("allclose", "{} did not match {}", c10_type_name(a.dtype()), c10_type_name(b.dtype()));
  if (rtol < 0) fail("allclose", "rtol must be greater than or equal to zero, but got {}", rtol);
  if (atol < 0) fail("allclose", "atol must be greater than or equal to zero, but got {}", atol);
  Tensor close = eq(a, b);
  if (equal_nan && a.is_floating_point()) close = logical_or(close, logical_and(isnan(a), isnan(b)));
  if (rtol != 0 || atol != 0) {
    Tensor ca = a.dtype() == ScalarType::Bool ? a.to(get_default_dtype()) : a;
    Tensor cb = b.dtype() == ScalarType::Bool ? b.to(get_default_dtype()) : b;
    Tensor allowed = add(abs(mul(Scalar(rtol), cb)), Scalar(atol));
    Tensor actual = abs(sub(ca, cb));
    close = logical_or(close, logical_and(isfinite(actual), le(actual, allowed)));
  }
  return all(close).item<bool>();
}

}  // namespace kiln
