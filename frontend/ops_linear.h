// kiln/frontend/ops_linear.h — the Linear family: linear, cross_entropy, pdist, cdist, einsum and
// the vector products (dot, mv, outer, addr, tensordot, kron; matmul, addmm and baddbmm are
// declared in frontend/ops.h).
//
// Names, argument order, defaults and semantics follow libtorch. Each validates its arguments
// with PyTorch's wording, resolves defaults and dispatches one composite op: traced, it is
// recorded as a single node that passes/decompose.h expands; eager, its decomposition runs
// prim by prim.
// einsum contracts its operands pairwise, left to right, as permute + reshape + bmm (repeated
// subscripts take a diagonal, subscripts needed by no later operand or the output are summed
// first, size-1 dims broadcast).
#pragma once

#include "frontend/tensor.h"

#include <optional>
#include <string_view>
#include <vector>

namespace kiln {

// input @ weight^T + bias; weight is [out_features, in_features].
Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt);

// Cross entropy of logits [N, C] or [C] (or [N, C, d1, ...]) against int64 class indices (the
// logits' shape without C), or against class probabilities of the logits' own shape (any
// floating dtype; ignore_index must stay negative, and 'mean' divides by the number of rows).
// reduction: "mean", "sum" or "none".
Tensor cross_entropy(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight = std::nullopt,
                     std::string_view reduction = "mean", int64_t ignore_index = -100, double label_smoothing = 0.0);

// The p-norm distances between the rows of input [N, M], pairs i < j in row-major order:
// [N * (N - 1) / 2], as torch.pdist.
Tensor pdist(const Tensor& input, double p = 2.0);

// "ij,jk->ik", "bij,bjk", "...ij,...jk->...ik", "ii->i"; subscripts in [a-zA-Z]. Without "->"
// the output is the ellipsis dims, then every subscript used once, in sorted order.
Tensor einsum(std::string_view equation, const std::vector<Tensor>& tensors);

// Distances between the rows of x1 [..., P, M] and x2 [..., R, M]: [..., P, R], batch dims
// broadcast. compute_mode: none or 0 uses the matrix-product form for p = 2 when P or R exceeds
// 25, 1 always does, 2 never does.
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2.0, std::optional<int64_t> compute_mode = std::nullopt);

// ---- losses beside cross_entropy (frontend/ops_linear_losses.cpp) ------------------------------
// torch.nn.functional's, with a reduction of "mean", "sum" or "none" ("batchmean" for kl_div:
// the sum over the first dim's size). Arguments follow at::'s order, as cross_entropy's do.
Tensor mse_loss(const Tensor& self, const Tensor& target, std::string_view reduction = "mean");
Tensor l1_loss(const Tensor& self, const Tensor& target, std::string_view reduction = "mean");
Tensor smooth_l1_loss(const Tensor& self, const Tensor& target, std::string_view reduction = "mean", double beta = 1.0);
Tensor huber_loss(const Tensor& self, const Tensor& target, std::string_view reduction = "mean", double delta = 1.0);
// -self[target] along the class dim (1; 0 for a 1-D self), weighted; ignore_index contributes
// nothing, and "mean" divides by the weights of the targets that count.
Tensor nll_loss(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight = std::nullopt,
                std::string_view reduction = "mean", int64_t ignore_index = -100);
// log(sigmoid(x)) without overflow (F.logsigmoid).
Tensor log_sigmoid(const Tensor& self);
// self holds probabilities in [0, 1] (checked where the values are at hand); with logits the
// positive class of each element weighs pos_weight (broadcast over the last dims).
Tensor binary_cross_entropy(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight = std::nullopt,
                            std::string_view reduction = "mean");
Tensor binary_cross_entropy_with_logits(const Tensor& self, const Tensor& target,
                                        const std::optional<Tensor>& weight = std::nullopt,
                                        const std::optional<Tensor>& pos_weight = std::nullopt,
                                        std::string_view reduction = "mean");
// self holds log-probabilities; target probabilities (log_target: log-probabilities).
Tensor kl_div(const Tensor& self, const Tensor& target, std::string_view reduction = "mean", bool log_target = false);
Tensor soft_margin_loss(const Tensor& self, const Tensor& target, std::string_view reduction = "mean");
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin = 0.0,
                           std::string_view reduction = "mean");
Tensor hinge_embedding_loss(const Tensor& self, const Tensor& target, double margin = 1.0,
                            std::string_view reduction = "mean");
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin = 0.0,
                             std::string_view reduction = "mean");
Tensor poisson_nll_loss(const Tensor& self, const Tensor& target, bool log_input = true, bool full = false,
                        double eps = 1e-8, std::string_view reduction = "mean");
// var: self's shape, or one dim short of it (or a last dim of 1); its entries must not be
// negative, which is read from its values (traced, DataDependentError: compile() runs eagerly).
Tensor gaussian_nll_loss(const Tensor& self, const Tensor& target, const Tensor& var, bool full = false,
                         double eps = 1e-6, std::string_view reduction = "mean");
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative, double margin = 1.0,
                           double p = 2.0, double eps = 1e-6, bool swap = false, std::string_view reduction = "mean");
Tensor multilabel_soft_margin_loss(const Tensor& self, const Tensor& target,
                                   const std::optional<Tensor>& weight = std::nullopt, std::string_view reduction = "mean");
// Multi-class hinge losses over [N, C] scores (or one sample [C], or a 0-dim score). multi_margin_loss:
// target [N] class indices (int64), p 1 or 2, weight [C] per class. multilabel_margin_loss: target
// [N, C] (or [C]) of class indices, each row's list ending at its first -1.
Tensor multi_margin_loss(const Tensor& self, const Tensor& target, double p = 1.0, double margin = 1.0,
                         const std::optional<Tensor>& weight = std::nullopt, std::string_view reduction = "mean");
Tensor multilabel_margin_loss(const Tensor& self, const Tensor& target, std::string_view reduction = "mean");
// The connectionist temporal classification loss (frontend/ops_linear_ctc.cpp). log_probs [T, N, C]
// (or [T, C], one sample) of log-probabilities; targets [N, S] of labels padded past each length,
// or 1-D with the samples' labels one after another; input_lengths and target_lengths [N]
// (integer tensors, or integer lists). "mean" divides each sample's loss by its target length
// (at least 1) before averaging; zero_infinity makes an impossible alignment's inf loss 0.
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, int64_t blank = 0, std::string_view reduction = "mean",
                bool zero_infinity = false);
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths, IntArrayRef target_lengths,
                int64_t blank = 0, std::string_view reduction = "mean", bool zero_infinity = false);

// ---- vector and tensor products (frontend/ops_linear_products.cpp) ----------------------------

// The inner product of two 1-D tensors of one dtype and length (vdot: the same for real dtypes).
Tensor dot(const Tensor& self, const Tensor& other);
Tensor vdot(const Tensor& self, const Tensor& other);
// matrix [n, m] @ vector [m] -> [n]; addmv: beta * self + alpha * mat @ vec (self [n], [1] or 0-dim).
Tensor mv(const Tensor& self, const Tensor& vec);
Tensor addmv(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta = 1, const Scalar& alpha = 1);
// The outer product [n] x [m] -> [n, m], dtypes promoted (ger is its old name); addr adds it to
// self: beta * self + alpha * outer(vec1, vec2).
Tensor outer(const Tensor& self, const Tensor& vec2);
Tensor ger(const Tensor& self, const Tensor& vec2);
Tensor addr(const Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta = 1, const Scalar& alpha = 1);
// Contracts the listed dims pairwise (or self's last `dims` with other's first `dims`): the result
// has self's free dims, then other's.
Tensor tensordot(const Tensor& self, const Tensor& other, IntArrayRef dims_self, IntArrayRef dims_other);
Tensor tensordot(const Tensor& self, const Tensor& other, int64_t dims = 2);
// The Kronecker product.
Tensor kron(const Tensor& self, const Tensor& other);
// The inner product over the last dims (a 0-dim operand multiplies): tensordot of both last dims.
Tensor inner(const Tensor& self, const Tensor& other);
// The cross product along dim (size 3 in both; other dims broadcast, one dtype). cross without a
// dim takes the first dim of size 3.
Tensor linalg_cross(const Tensor& self, const Tensor& other, int64_t dim = -1);
Tensor cross(const Tensor& self, const Tensor& other, std::optional<int64_t> dim = std::nullopt);

// ---- products of several matrices (frontend/ops_linear_chains.cpp) -----------------------------

// The product of a chain of matrices in its cheapest order; the first may be 1-D (a row) and
// the last 1-D (a column), and their dims are dropped from the result. chain_matmul: 2-D only,
// one matrix is copied.
Tensor linalg_multi_dot(const std::vector<Tensor>& tensors);
Tensor chain_matmul(const std::vector<Tensor>& matrices);
// A^n for square (batches of) matrices, n >= 0 (n = 0: the identity).
Tensor linalg_matrix_power(const Tensor& self, int64_t n);
Tensor matrix_power(const Tensor& self, int64_t n);
// beta * self + alpha * the sum over b of batch1[b] @ batch2[b].
Tensor addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
              const Scalar& alpha = 1);

// ---- distances (frontend/ops_linear_distances.cpp) ---------------------------------------------

// The cosine of the angle between x1 and x2 along dim (broadcast; each norm clamped below at eps).
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim = 1, double eps = 1e-8);
// The p-norm of x1 - x2 + eps along the last dim (broadcast).
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p = 2.0, double eps = 1e-6, bool keepdim = false);

}  // namespace kiln
