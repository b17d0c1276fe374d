// kiln/frontend/symbolic.h — sizes as expressions, for ops that must stay dynamic when traced.
//
// A traced tensor's value has sizes that may be symbolic (f32[s0, 64]); its integer sizes()
// are the hints, and reading them through the public API specializes (a guard pins each
// symbol read to its hint, as PyTorch's guard_int). Frontend ops that shape their outputs
// from their inputs' sizes (broadcasting, reshape, expand, slice, cat, the *_like factories,
// mean's element count, matmul's reshapes) use these functions instead, so they record
// symbolic attributes and guard only what they must decide. For eager tensors every size is
// a constant and the decisions are plain integer comparisons.
#pragma once

#include "frontend/tensor.h"
#include "ir/expr.h"

#include <string_view>
#include <vector>

namespace kiln {

// Whether `t` is traced with at least one symbolic size.
bool is_symbolic(const Tensor& t);
std::vector<ir::Expr> sym_sizes(const Tensor& t);
ir::Expr sym_size(const Tensor& t, int64_t dim);  // dim may be negative
ir::Expr sym_numel(const Tensor& t);
ir::Expr sym_product(const std::vector<ir::Expr>& sizes);

// Guards the sizes of a traced tensor that user code read as integers (Tensor::sizes(),
// size(d), numel()); `dim` < 0: every dim.
void specialize_read(const TensorImpl& impl, int64_t dim);

// PyTorch's broadcasting rule on symbolic sizes: a pair of dims that are neither equal nor 1
// is decided by a guard (s0 == s1, or s0 == 1) in the current ShapeEnv.
std::vector<ir::Expr> sym_broadcast_shapes(std::string_view op, const std::vector<ir::Expr>& a,
                                           const std::vector<ir::Expr>& b);
// Whether two size lists are equal (equal ranks; each pair decided with guards).
bool sym_same_sizes(const std::vector<ir::Expr>& a, const std::vector<ir::Expr>& b);
// Whether sizes `from` expand to `to` (each trailing dim equal or 1, decided with guards).
bool sym_expandable(const std::vector<ir::Expr>& from, const std::vector<ir::Expr>& to);
// Expands `t` to `shape` (already validated by sym_broadcast_shapes); no-op when equal.
Tensor sym_expand(const Tensor& t, const std::vector<ir::Expr>& shape);
// reshape with symbolic sizes (the -1 already inferred).
Tensor sym_reshape(const Tensor& t, const std::vector<ir::Expr>& shape);
// full(shape, value) with symbolic sizes.
Tensor sym_full(const std::vector<ir::Expr>& shape, const Scalar& value, ScalarType dtype, Device device);
// embedding_dense_backward (frontend/ops.h) with num_weights an expression.
Tensor sym_embedding_dense_backward(const Tensor& grad_output, const Tensor& indices, const ir::Expr& num_weights,
                                    int64_t padding_idx, bool scale_grad_by_freq);
// 0, 1, ..., length - 1 (the iota prim) for a symbolic length.
Tensor sym_iota(const ir::Expr& length, ScalarType dtype, Device device);
// The int64 positions 0..t.size(dim)-1 along dim, shaped [1, .., n, .., 1] to broadcast
// against t (dim already normalized; t has at least one dim).
Tensor sym_positions(const Tensor& t, int64_t dim);
// A 0-dim tensor holding the value of a size expression (mean's element count): a constant
// for static sizes, else read from the sizes at run time.
Tensor sym_scalar_tensor(const ir::Expr& value, ScalarType dtype, Device device);
// t / n in t's dtype: a Scalar divisor for a constant n, else n read at run time
// (sym_scalar_tensor), so a symbolic count divides as a constant one does without pinning it.
Tensor sym_div(const Tensor& t, const ir::Expr& n);

}  // namespace kiln
