// kiln/test/test_support/opdb_linear.cpp — op database entries: linear, cross_entropy,
// matmul, addmm, baddbmm, einsum, cdist and pdist; dot, vdot, mv, addmv, outer, addr, tensordot
// and kron; cosine_similarity and pairwise_distance; linalg_cross and cross; linalg_multi_dot,
// chain_matmul, linalg_matrix_power and addbmm; and the losses of frontend/ops_linear_losses.cpp
// (frontend/ops_linear.h).
#include "test_support/opdb.h"

#include "test_support/make.h"

#include <cmath>
#include <limits>
#include <string>

namespace kiln::opdb {

void add_linear(std::vector<OpEntry>& db) {
  db.push_back({"linear", "linear", one([](const std::vector<Tensor>& in) { return linear(in[0], in[1], in[2]); }),
                "torch.nn.functional.linear(a0, a1, a2)",
                {{seq({2, 3}), seq({4, 3}), seq({4})}, {seq({3}), seq({2, 3}), seq({2})}, {seq({2, 2, 3}), seq({1, 3}), seq({})}}});
  const Tensor target = test::make<int64_t>({2, -100, 0});
  db.push_back({"cross_entropy", "linear", one([target](const std::vector<Tensor>& in) { return cross_entropy(in[0], target); }),
                "torch.nn.functional.cross_entropy(a0, " + py_tensor(target) + ")",
                {{seq({3, 4})}, {seq({4, 3}).t()}, {seq({3, 4}, kDouble)}}});
  const Tensor target2 = test::make<int64_t>({2, 1, 0});
  db.push_back({"cross_entropy:weight_smoothing", "linear",
                one([target2](const std::vector<Tensor>& in) { return cross_entropy(in[0], target2, in[1], "none", 1, 0.25); }),
                "torch.nn.functional.cross_entropy(a0, " + py_tensor(target2) +
                    ", a1, reduction='none', ignore_index=1, label_smoothing=0.25)",
                {{seq({3, 4}), seq({4}, kFloat, 0.5, 0.5)}}});
  // The terms of cross_entropy's own rule (frontend/derivatives_linear.cpp): class weights
  // (captured: PyTorch does not differentiate them) with 'mean' over an ignored row and label
  // smoothing, and a spatial target summed with smoothing.
  const Tensor class_weight = test::make<float>({0.5f, 2.0f, 1.0f, 1.5f});
  db.push_back({"cross_entropy:weighted_mean", "linear", one([target2, class_weight](const std::vector<Tensor>& in) {
                  return cross_entropy(in[0], target2, class_weight.to(in[0].dtype()), "mean", 1, 0.1);
                }),
                "torch.nn.functional.cross_entropy(a0, " + py_tensor(target2) + ", " + py_tensor(class_weight) +
                    ".to(a0.dtype), ignore_index=1, label_smoothing=0.1)",
                {{seq({3, 4})}, {seq({3, 4}, kDouble)}, {seq({3, 4}, kHalf)}}});
  const Tensor target3 = i64({1, -100, 2, 0}, {2, 2});
  db.push_back({"cross_entropy:spatial", "linear", one([target3](const std::vector<Tensor>& in) {
                  return cross_entropy(in[0], target3, std::nullopt, "sum", -100, 0.2);
                }),
                "torch.nn.functional.cross_entropy(a0, " + py_tensor(target3) + ", reduction='sum', label_smoothing=0.2)",
                {{seq({2, 3, 2})}, {seq({2, 3, 2}, kDouble)}}});

  // Class probabilities (a floating target of the logits' shape, differentiable too): with
  // class weights and smoothing, 'none' over a spatial input, and the refusals.
  db.push_back({"cross_entropy:probabilities", "linear", one([class_weight](const std::vector<Tensor>& in) {
                  return cross_entropy(in[0], in[1], class_weight.to(in[0].dtype()), "mean", -100, 0.2);
                }),
                "torch.nn.functional.cross_entropy(a0, a1, " + py_tensor(class_weight) + ".to(a0.dtype), label_smoothing=0.2)",
                {{seq({3, 4}), seq({3, 4}, kFloat, 0.05, 0.1)},
                 {seq({3, 4}, kDouble), seq({3, 4}, kDouble, 0.05, 0.1)},
                 {seq({4}), seq({4}, kDouble, 0.1, 0.2)},
                 {seq({3, 4}), ints({3, 4})},      // an integer target of the logits' shape raises
                 {seq({3, 4}), seq({3, 3})}}});    // as does one of neither shape
  db.push_back({"cross_entropy:probabilities_none", "linear", one([](const std::vector<Tensor>& in) {
                  return cross_entropy(in[0], in[1], std::nullopt, "none");
                }),
                "torch.nn.functional.cross_entropy(a0, a1, reduction='none')",
                {{seq({2, 3, 2}), seq({2, 3, 2}, kFloat, 0.0, 0.1)}, {seq({2, 3}), seq({2, 3}, kHalf, 0.25, 0.1)}}});
  db.push_back({"cross_entropy:probabilities_ignore", "linear", one([](const std::vector<Tensor>& in) {
                  return cross_entropy(in[0], in[1], std::nullopt, "sum", 0);
                }),
                "torch.nn.functional.cross_entropy(a0, a1, reduction='sum', ignore_index=0)",
                {{seq({2, 3}), seq({2, 3}, kFloat, 0.0, 0.1)}}});  // raises: ignore_index >= 0

  db.push_back({"matmul", "linear", one([](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); }),
                "torch.matmul(a0, a1)",
                {{seq({2, 3}), seq({3, 4})},
                 {seq({3}), seq({3, 2})},
                 {seq({2, 2, 3}), seq({3, 4})},
                 {seq({4, 3}).t(), seq({2, 1, 4, 2})},
                 {seq({2, 0}), seq({0, 3})},
                 {seq({2, 3}, kDouble), seq({3, 2}, kDouble)},
                 {seq({2, 3}), seq({4, 2})}}});  // the last raises
  const double nan = NAN;
  db.push_back({"addmm", "linear", one([](const std::vector<Tensor>& in) { return addmm(in[0], in[1], in[2]); }),
                "torch.addmm(a0, a1, a2)",
                {{seq({2, 4}), seq({2, 3}), seq({3, 4})},
                 {seq({4}), seq({3, 2}).t(), seq({3, 4})},
                 {seq({}), seq({2, 3}, kDouble), seq({3, 4}, kDouble)},  // PyTorch raises: self's dtype
                 {seq({2, 1}, kDouble), seq({2, 3}, kDouble), seq({3, 4}, kDouble)},
                 {seq({3}), seq({2, 3}), seq({3, 4})}}});  // PyTorch raises: self does not broadcast
  db.push_back({"addmm:scaled", "linear",
                one([](const std::vector<Tensor>& in) { return addmm(in[0], in[1], in[2], 0.5, -2.0); }),
                "torch.addmm(a0, a1, a2, beta=0.5, alpha=-2.0)", {{seq({2, 4}), seq({2, 3}), seq({3, 4})}}});
  db.push_back({"addmm:beta0", "linear",
                one([](const std::vector<Tensor>& in) { return addmm(in[0], in[1], in[2], 0, 1); }),
                "torch.addmm(a0, a1, a2, beta=0, alpha=1)",
                {{test::make<double>({nan, 1, nan, 2}, {4}).to(kFloat), seq({2, 3}), seq({3, 4})}}});
  db.push_back({"addmm:int", "linear", one([](const std::vector<Tensor>& in) { return addmm(in[0], in[1], in[2], 2, 3); }),
                "torch.addmm(a0, a1, a2, beta=2, alpha=3)", {{ints({2, 4}), ints({2, 3}), ints({3, 4})}}});
  // addmm_activation: PyTorch's _addmm_activation, spelled as the composition it computes (which
  // PyTorch differentiates). A bias row, a full self, a transposed operand, f64; self that does
  // not broadcast raises.
  const std::vector<Sample> act_samples = {{seq({4}), seq({2, 3}), seq({3, 4}, kFloat, -1.0, 0.25)},
                                           {seq({2, 4}, kFloat, 0.5, -0.5), seq({3, 2}).t(), seq({3, 4}, kFloat, -1.0, 0.25)},
                                           {seq({4}, kDouble), seq({2, 3}, kDouble), seq({3, 4}, kDouble, -1.0, 0.25)},
                                           {seq({3}), seq({2, 3}), seq({3, 4})}};
  db.push_back({"addmm_activation", "linear",
                one([](const std::vector<Tensor>& in) { return addmm_activation(in[0], in[1], in[2], "relu"); }),
                "torch.relu(torch.addmm(a0, a1, a2))", act_samples});
  db.push_back({"addmm_activation:gelu_tanh", "linear",
                one([](const std::vector<Tensor>& in) { return addmm_activation(in[0], in[1], in[2], "gelu_tanh"); }),
                "torch.nn.functional.gelu(torch.addmm(a0, a1, a2), approximate='tanh')", act_samples});
  db.push_back({"addmm_activation:none", "linear",
                one([](const std::vector<Tensor>& in) { return addmm_activation(in[0], in[1], in[2], "none"); }),
                "torch.addmm(a0, a1, a2)", {act_samples[0], act_samples[3]}});
  db.push_back({"baddbmm", "linear",
                one([](const std::vector<Tensor>& in) { return baddbmm(in[0], in[1], in[2], 0.25, 1.5); }),
                "torch.baddbmm(a0, a1, a2, beta=0.25, alpha=1.5)",
                {{seq({2, 2, 4}), seq({2, 2, 3}), seq({2, 3, 4})},
                 {seq({4}), seq({2, 3, 2}).transpose(1, 2), seq({2, 3, 4})},
                 {seq({2, 2, 4}), seq({2, 2, 3}), seq({3, 3, 4})}}});  // PyTorch raises: batch sizes

  // The vector and tensor products that record other ops (frontend/ops_linear_products.cpp).
  auto two = [](auto f) { return one([f](const std::vector<Tensor>& in) { return f(in[0], in[1]); }); };
  auto three = [](auto f) { return one([f](const std::vector<Tensor>& in) { return f(in[0], in[1], in[2]); }); };
  db.push_back({"dot", "linear", two([](const Tensor& a, const Tensor& b) { return dot(a, b); }), "torch.dot(a0, a1)",
                {{seq({4}), seq({4}, kFloat, 1.25, 0.5)},
                 {seq({6}, kFloat).slice(0, 0, 6, 2), seq({3}, kFloat, 0.5)},
                 {ints({3}), ints({3}, 1)},
                 {seq({0}), seq({0})},
                 {seq({2, 2}), seq({2})},              // raises: 1-D only
                 {seq({3}), seq({3}, kDouble)},        // raises: dtypes
                 {seq({3}), seq({4})}}});              // raises: lengths
  db.push_back({"vdot", "linear", two([](const Tensor& a, const Tensor& b) { return vdot(a, b); }), "torch.vdot(a0, a1)",
                {{seq({5}, kDouble), seq({5}, kDouble, 0.5, 0.25)}, {seq({3}), seq({4})}}});
  db.push_back({"mv", "linear", two([](const Tensor& a, const Tensor& b) { return mv(a, b); }), "torch.mv(a0, a1)",
                {{seq({3, 4}), seq({4})},
                 {seq({4, 3}).t(), seq({4}, kFloat, 1.0, -0.5)},
                 {ints({2, 3}), ints({3})},
                 {seq({2, 3}), seq({2})},              // raises: sizes
                 {seq({2}), seq({2})}}});              // raises: a vector for the matrix
  db.push_back({"addmv", "linear",
                three([](const Tensor& a, const Tensor& b, const Tensor& c) { return addmv(a, b, c, 0.5, 2); }),
                "torch.addmv(a0, a1, a2, beta=0.5, alpha=2)",
                {{seq({3}), seq({3, 4}), seq({4})},
                 {seq({}), seq({3, 4}, kFloat, 1.0, -0.25), seq({4})},
                 {seq({4}), seq({3, 4}), seq({4})}}});  // raises: self's size
  db.push_back({"outer", "linear", two([](const Tensor& a, const Tensor& b) { return outer(a, b); }), "torch.outer(a0, a1)",
                {{seq({3}), seq({4})}, {ints({3}), seq({2})}, {seq({2}, kBool), seq({3}, kBool)}, {seq({2, 2}), seq({2})}}});
  db.push_back({"addr", "linear",
                three([](const Tensor& a, const Tensor& b, const Tensor& c) { return addr(a, b, c, 2, 3); }),
                "torch.addr(a0, a1, a2, beta=2, alpha=3)",
                {{seq({3, 4}), seq({3}), seq({4})},
                 {seq({4}), seq({3}, kFloat, 1.0, -0.5), seq({4})},
                 {ints({3, 4}), ints({3}), ints({4})},
                 {seq({2, 2}), seq({2}), seq({3})}}});  // raises: self does not expand
  db.push_back({"tensordot", "linear", two([](const Tensor& a, const Tensor& b) { return tensordot(a, b, 2); }),
                "torch.tensordot(a0, a1, dims=2)",
                {{seq({2, 3, 4}), seq({3, 4, 2})}, {seq({2, 3, 4}), seq({3, 5, 2})}}});  // the second raises
  db.push_back({"tensordot:lists", "linear",
                two([](const Tensor& a, const Tensor& b) { return tensordot(a, b, {0, 2}, {1, 0}); }),
                "torch.tensordot(a0, a1, dims=([0, 2], [1, 0]))",
                {{seq({2, 3, 4}), seq({4, 2, 5}, kFloat, 1.0, -0.25)},
                 {seq({2, 3, 1}), seq({4, 2, 5})},
                 {ints({2, 3, 1}).to(kInt), ints({4, 2, 5}).to(kInt)}}});  // int32, a size 1 against 4: summed in int32
  db.push_back({"kron", "linear", two([](const Tensor& a, const Tensor& b) { return kron(a, b); }), "torch.kron(a0, a1)",
                {{seq({2, 3}), seq({2, 2})}, {seq({2, 3}), seq({3})}, {ints({2}), seq({2, 1, 2})}}});

  // einsum: one entry per equation; the PyTorch call spells the same equation.
  auto ein = [&](std::string label, std::string equation, size_t operands, std::vector<Sample> samples) {
    std::string torch = "torch.einsum('" + equation + "'";
    for (size_t i = 0; i < operands; ++i) torch += ", a" + std::to_string(i);
    db.push_back({"einsum:" + label, "linear",
                  one([equation](const std::vector<Tensor>& in) { return einsum(equation, in); }), torch + ")",
                  std::move(samples)});
  };
  ein("mm", "ij,jk->ik", 2,
      {{seq({2, 3}), seq({3, 4})},
       {seq({3, 2}).t(), seq({4, 3}, kFloat, 1.0, -0.5).t()},
       {seq({2, 3}, kDouble), seq({3, 2}, kDouble)},
       {seq({2, 0}), seq({0, 3})},
       {seq({2, 3}), seq({4, 2})},        // j is 3 and 4: raises
       {seq({2, 3, 1}), seq({3, 4})}});   // 3 dims for 2 subscripts: raises
  ein("bmm", "bij,bjk->bik", 2, {{seq({2, 2, 3}), seq({2, 3, 4})}, {seq({1, 2, 3}), seq({3, 3, 2})}});  // b broadcasts
  ein("implicit", "ij,jk", 2, {{seq({2, 3}), seq({3, 4})}});
  ein("outer", "i,j->ij", 2, {{seq({3}), seq({4})}, {seq({3}, kHalf), seq({2}, kHalf)}});
  ein("transpose", "ij->ji", 1, {{seq({2, 3})}, {seq({2, 3}, kLong)}});
  ein("diagonal", "ii->i", 1, {{seq({3, 3})}, {seq({3, 4})}});  // the second raises
  ein("trace", "ii", 1, {{seq({4, 4})}});
  ein("sum_all", "ij->", 1, {{seq({3, 4})}});
  ein("dot", "ij,ij->", 2, {{seq({2, 3}), seq({2, 3}, kFloat, 1.0, 0.5)}, {seq({2, 1}), seq({2, 3})}});
  ein("batch_diag", "bii->bi", 1, {{seq({2, 3, 3})}});
  ein("ellipsis", "...ij,...jk->...ik", 2, {{seq({2, 1, 2, 3}), seq({3, 3, 2})}, {seq({2, 3}), seq({3, 2})}});
  ein("ellipsis_tail", "i...->...", 1, {{seq({3, 2, 2})}});
  ein("bilinear", "bn,anm,bm->ba", 3, {{seq({2, 3}), seq({4, 3, 2}), seq({2, 2})}});
  ein("attention", "bhqd,bhkd->bhqk", 2, {{seq({1, 2, 3, 4}), seq({1, 2, 5, 4}, kFloat, 1.0, -0.125)}});
  ein("upper", "Ab,bC->AC", 2, {{seq({2, 3}), seq({3, 2})}});
  ein("spaces", "i j , j k -> i k", 2, {{seq({2, 3}), seq({3, 2})}});
  ein("bad_output", "ij,jk->iz", 2, {{seq({2, 3}), seq({3, 4})}});  // raises
  ein("bad_count", "ij,jk,kl->il", 3, {{seq({2, 3}), seq({3, 4}), seq({4, 2})}});
  db.push_back({"einsum:too_few", "linear",
                one([](const std::vector<Tensor>& in) { return einsum("ij,jk->ik", in); }),
                "torch.einsum('ij,jk->ik', a0)", {{seq({2, 3})}}});  // raises

  // cdist: p-norms of row differences; p = 2 with more than 25 rows takes the matrix-product form.
  auto dist = [&](std::string label, std::string args, double p, std::optional<int64_t> mode, std::vector<Sample> samples,
                  std::optional<Tolerance> tol = std::nullopt) {
    db.push_back({"cdist" + label, "linear",
                  one([p, mode](const std::vector<Tensor>& in) { return cdist(in[0], in[1], p, mode); }),
                  "torch.cdist(a0, a1" + args + ")", std::move(samples), tol});
  };
  dist("", "", 2.0, std::nullopt,
       {{seq({3, 4}), seq({2, 4}, kFloat, 1.0, -0.3)},
        {seq({2, 3, 4}), seq({1, 5, 4}, kFloat, 0.5, 0.2)},
        {seq({4, 3}).t(), seq({2, 4})},
        {seq({3, 4}, kDouble), seq({2, 4}, kDouble)},
        {seq({3, 0}), seq({2, 0})},
        {seq({0, 3}), seq({2, 3})},
        {seq({3, 4}), seq({2, 5})},                 // raises: columns differ
        {seq({4}), seq({2, 4})},                    // raises: 1-D
        {ints({3, 4}), ints({2, 4})},               // raises: integers
        {seq({3, 4}), seq({2, 4}, kDouble)}});      // raises: dtypes differ
  // The matrix-product form rounds differently from a direct difference: PyTorch's own
  // tolerance for it is the f32 matmul's.
  dist(":mm", "", 2.0, std::nullopt,
       {{seq({30, 3}, kFloat, -2.0, 0.125), seq({4, 3}, kFloat, 1.0, -0.25)},
        {seq({30, 3}, kBFloat16, -2.0, 0.125), seq({4, 3}, kBFloat16, 1.0, -0.25)}},
       Tolerance{1e-4, 1e-4});
  dist(":mm_forced", ", compute_mode='use_mm_for_euclid_dist'", 2.0, 1,
       {{seq({3, 4}), seq({2, 4}, kFloat, 1.0, -0.3)}, {seq({3, 4}, kDouble), seq({2, 4}, kDouble)}}, Tolerance{1e-4, 1e-4});
  dist(":no_mm", ", compute_mode='donot_use_mm_for_euclid_dist'", 2.0, 2,
       {{seq({30, 3}, kFloat, -2.0, 0.125), seq({4, 3}, kFloat, 1.0, -0.25)}});
  dist(":p1", ", p=1.0", 1.0, std::nullopt, {{seq({3, 4}), seq({2, 4}, kFloat, 1.0, -0.3)}, {seq({3, 4}, kHalf), seq({2, 4}, kHalf)},  // f16 raises
        {seq({3, 4}, kBFloat16), seq({2, 4}, kBFloat16, 1.0, -0.3)}});
  dist(":p0", ", p=0.0", 0.0, std::nullopt, {{seq({3, 4}), seq({2, 4}, kFloat, -2.5, 0.75)}});
  dist(":pinf", ", p=float('inf')", std::numeric_limits<double>::infinity(), std::nullopt,
       {{seq({3, 4}), seq({2, 4}, kFloat, 1.0, -0.3)}});
  dist(":p3", ", p=3.0", 3.0, std::nullopt, {{seq({3, 4}), seq({2, 4}, kFloat, 1.0, -0.3)}});
  dist(":pneg", ", p=-1.0", -1.0, std::nullopt, {{seq({3, 4}), seq({2, 4})}});  // raises

  for (double p : {2.0, 1.0, 0.0, 3.0, std::numeric_limits<double>::infinity()}) {
    const std::string ps = std::isinf(p) ? "float('inf')" : std::to_string(p);
    db.push_back({"pdist:p" + std::to_string(static_cast<int>(std::isinf(p) ? -1 : p)), "linear",
                  one([p](const std::vector<Tensor>& in) { return pdist(in[0], p); }), "torch.pdist(a0, p=" + ps + ")",
                  {{seq({4, 3}, kFloat, -2.0, 0.4)}, {seq({3, 4}, kDouble).t()}, {seq({1, 3})}, {seq({3, 0})}}});
  }
  db.push_back({"pdist:errors", "linear", one([](const std::vector<Tensor>& in) { return pdist(in[0]); }), "torch.pdist(a0)",
                {{seq({2, 3, 4})}, {ints({3, 2})}}});  // both raise

  // Distances (frontend/ops_linear_distances.cpp); a zero row checks the norm's clamp.
  db.push_back({"cosine_similarity", "linear",
                one([](const std::vector<Tensor>& in) { return cosine_similarity(in[0], in[1]); }),
                "torch.nn.functional.cosine_similarity(a0, a1)",
                {{seq({2, 3}), seq({2, 3}, kFloat, 1.0, 0.5)},
                 {seq({2, 3}), seq({3}, kFloat, 0.25)},
                 {f32({0, 0, 0, 1, 2, 3}, {2, 3}), seq({2, 3})},
                 {seq({2, 3}, kDouble), ints({2, 3}, 1)},
                 {ints({2, 3}), ints({2, 3}, 1)}}});  // raises: integers
  // An f16 operand's norm and quotient stay f16 while the result is f32: f16's tolerance, since a
  // fused cuda kernel may keep the quotient in f32 where the interpreter rounds it to f16.
  db.push_back({"cosine_similarity:mixed", "linear",
                one([](const std::vector<Tensor>& in) { return cosine_similarity(in[0], in[1]); }),
                "torch.nn.functional.cosine_similarity(a0, a1)", {{seq({2, 3}, kHalf), seq({2, 3}, kFloat, 1.0, -0.5)}},
                tolerance_for(kHalf)});
  db.push_back({"cosine_similarity:dim", "linear",
                one([](const std::vector<Tensor>& in) { return cosine_similarity(in[0], in[1], 0, 0.5); }),
                "torch.nn.functional.cosine_similarity(a0, a1, dim=0, eps=0.5)",
                {{seq({3, 2}), seq({3, 2}, kFloat, 0.5)}, {seq({3}, kHalf), seq({3}, kHalf, 1.0)}}});
  db.push_back({"pairwise_distance", "linear",
                one([](const std::vector<Tensor>& in) { return pairwise_distance(in[0], in[1]); }),
                "torch.nn.functional.pairwise_distance(a0, a1)",
                {{seq({2, 3}), seq({2, 3}, kFloat, 1.0, 0.5)}, {seq({3}), seq({3}, kFloat, 0.5)}, {ints({2, 3}), ints({2, 3}, 1)}}});
  db.push_back({"pairwise_distance:p1", "linear",
                one([](const std::vector<Tensor>& in) { return pairwise_distance(in[0], in[1], 1.0, 0.0, true); }),
                "torch.nn.functional.pairwise_distance(a0, a1, p=1.0, eps=0.0, keepdim=True)",
                {{seq({2, 3}), seq({3}, kFloat, 1.0, 0.5)}}});

  // The cross product (frontend/ops_linear_products.cpp).
  db.push_back({"linalg_cross", "linear", two([](const Tensor& a, const Tensor& b) { return linalg_cross(a, b); }),
                "torch.linalg.cross(a0, a1)",
                {{seq({2, 3}), seq({2, 3}, kFloat, 1.0, -0.5)},
                 {seq({1, 3}), seq({4, 3}, kFloat, 0.5, 0.25)},  // broadcast
                 {ints({2, 3}), ints({2, 3}, 1)},
                 {seq({3, 2}).t(), seq({2, 3}, kDouble)},       // raises: dtypes
                 {seq({2, 4}), seq({2, 4})},                    // raises: not 3
                 {seq({3}), seq({2, 3})}}});                    // raises: ranks
  db.push_back({"linalg_cross:dim", "linear", two([](const Tensor& a, const Tensor& b) { return linalg_cross(a, b, 0); }),
                "torch.linalg.cross(a0, a1, dim=0)",
                {{seq({3, 2}), seq({3, 2}, kFloat, 2.0, -0.75)}, {seq({3, 2}, kHalf), seq({3, 1}, kHalf, 1.0)}}});
  db.push_back({"cross", "linear", two([](const Tensor& a, const Tensor& b) { return cross(a, b); }),
                "torch.cross(a0, a1)",
                {{seq({2, 3, 3}), seq({2, 3, 3}, kFloat, 1.0, -0.25)}, {seq({2, 2}), seq({2, 2})}}});  // the second raises

  // Products of several matrices (frontend/ops_linear_chains.cpp): a row and a column at the
  // ends, three matrices (ATen's closed-form order), four (the chain's dynamic program).
  db.push_back({"linalg_multi_dot", "linear", one([](const std::vector<Tensor>& in) { return linalg_multi_dot(in); }),
                "torch.linalg.multi_dot([a0, a1, a2])",
                {{seq({3}), seq({3, 4}, kFloat, -1.0, 0.25), seq({4})},
                 {seq({2, 3}), seq({3, 4}, kFloat, 1.0, -0.25), seq({4, 5}, kFloat, -0.5, 0.125)},
                 {seq({5, 2}), seq({2, 5}, kFloat, 1.0, -0.25), seq({5, 2}).t()},
                 {ints({2, 2}), ints({2, 2}, 1), ints({2})},
                 {seq({2, 3}), seq({4, 4}), seq({4})},           // raises: sizes
                 {seq({2, 3}), seq({3, 2}, kDouble), seq({2})},  // raises: dtypes
                 {seq({2, 3, 1}), seq({1, 2}), seq({2})}}});     // raises: the first is 3-D
  db.push_back({"linalg_multi_dot:four", "linear", one([](const std::vector<Tensor>& in) { return linalg_multi_dot(in); }),
                "torch.linalg.multi_dot([a0, a1, a2, a3])",
                {{seq({5, 2}), seq({2, 5}, kFloat, 1.0, -0.25), seq({5, 2}, kFloat, 0.5, -0.125), seq({2, 5})},
                 {seq({2}), seq({2, 3}), seq({3, 1}), seq({1})},
                 {seq({2, 2}), seq({2}), seq({2, 2}), seq({2, 2})}}});  // raises: a 1-D middle
  db.push_back({"chain_matmul", "linear", one([](const std::vector<Tensor>& in) { return chain_matmul(in); }),
                "torch.chain_matmul(a0, a1)",
                {{seq({2, 3}), seq({3, 4}, kFloat, 1.0, -0.25)}, {seq({2, 3}), seq({3})}}});  // the second raises
  db.push_back({"linalg_matrix_power", "linear", one([](const std::vector<Tensor>& in) { return linalg_matrix_power(in[0], 5); }),
                "torch.linalg.matrix_power(a0, 5)",
                {{seq({3, 3}, kFloat, -0.5, 0.125)},
                 {seq({2, 2, 2}, kDouble, -1.0, 0.25)},
                 {ints({2, 2})},
                 {seq({2, 3})},   // raises: not square
                 {seq({3})}}});   // raises: 1-D
  for (int64_t n : {0, 1, 3, 4}) {
    const std::string ns = std::to_string(n);
    db.push_back({"linalg_matrix_power:" + ns, "linear",
                  one([n](const std::vector<Tensor>& in) { return linalg_matrix_power(in[0], n); }),
                  "torch.linalg.matrix_power(a0, " + ns + ")", {{seq({3, 3}, kFloat, -0.5, 0.125)}, {seq({2, 2}, kBool)}}});
  }
  db.push_back({"addbmm", "linear",
                three([](const Tensor& a, const Tensor& b, const Tensor& c) { return addbmm(a, b, c, 0.5, 2); }),
                "torch.addbmm(a0, a1, a2, beta=0.5, alpha=2)",
                {{seq({2, 4}), seq({3, 2, 5}), seq({3, 5, 4}, kFloat, 1.0, -0.125)},
                 {seq({4}), seq({2, 2, 3}, kFloat, 0.5, 0.25), seq({2, 3, 4})},   // self broadcast
                 {seq({2, 4}), seq({0, 2, 5}), seq({0, 5, 4})},                   // no batches
                 {ints({2, 2}), ints({2, 2, 3}), ints({2, 3, 2}, 1)},
                 {seq({2, 4}), seq({3, 2, 5}), seq({2, 5, 4})},                   // raises: batches
                 {seq({2, 4}), seq({3, 2, 5}), seq({3, 6, 4})}}});                // raises: inner sizes
  db.push_back({"addbmm:beta0", "linear",
                three([](const Tensor& a, const Tensor& b, const Tensor& c) { return addbmm(a, b, c, 0, 1); }),
                "torch.addbmm(a0, a1, a2, beta=0, alpha=1)",
                {{f32({std::nan(""), 1, 2, 3}, {2, 2}), seq({2, 2, 3}), seq({2, 3, 2})}}});

  // Losses beside cross_entropy (frontend/ops_linear_losses.cpp).
  auto pair_loss = [&](std::string name, std::string torch, auto f) {
    db.push_back({name, "linear", two(f), torch,
                  {{seq({2, 3}), seq({2, 3}, kFloat, 1.0, -0.5)},
                   {seq({2, 3}), seq({3}, kFloat, 0.25, 0.5)},            // broadcast
                   {seq({2, 3}, kHalf), seq({2, 3}, kHalf, 1.0, -0.5)},
                   {seq({2, 3}), seq({2, 3}, kDouble, 1.0, -0.25)},       // mixed dtypes
                   {seq({0, 3}), seq({0, 3})},                            // empty: NaN mean
                   {seq({2, 3}), seq({4})}}});                            // raises: sizes
  };
  pair_loss("mse_loss", "torch.nn.functional.mse_loss(a0, a1)", [](const Tensor& a, const Tensor& b) { return mse_loss(a, b); });
  pair_loss("mse_loss:sum", "torch.nn.functional.mse_loss(a0, a1, reduction='sum')",
            [](const Tensor& a, const Tensor& b) { return mse_loss(a, b, "sum"); });
  pair_loss("l1_loss", "torch.nn.functional.l1_loss(a0, a1)", [](const Tensor& a, const Tensor& b) { return l1_loss(a, b); });
  pair_loss("l1_loss:none", "torch.nn.functional.l1_loss(a0, a1, reduction='none')",
            [](const Tensor& a, const Tensor& b) { return l1_loss(a, b, "none"); });
  pair_loss("smooth_l1_loss", "torch.nn.functional.smooth_l1_loss(a0, a1, beta=0.6)",
            [](const Tensor& a, const Tensor& b) { return smooth_l1_loss(a, b, "mean", 0.6); });
  pair_loss("smooth_l1_loss:beta0", "torch.nn.functional.smooth_l1_loss(a0, a1, reduction='sum', beta=0.0)",
            [](const Tensor& a, const Tensor& b) { return smooth_l1_loss(a, b, "sum", 0.0); });
  pair_loss("huber_loss", "torch.nn.functional.huber_loss(a0, a1, delta=0.8)",
            [](const Tensor& a, const Tensor& b) { return huber_loss(a, b, "mean", 0.8); });
  pair_loss("soft_margin_loss", "torch.nn.functional.soft_margin_loss(a0, a1, reduction='none')",
            [](const Tensor& a, const Tensor& b) { return soft_margin_loss(a, b, "none"); });
  db.push_back({"mse_loss:ints", "linear", two([](const Tensor& a, const Tensor& b) { return mse_loss(a, b); }),
                "torch.nn.functional.mse_loss(a0, a1)", {{seq({3}), ints({3})}, {seq({3}), seq({3}, kBool)}, {ints({3}), ints({3})}}});  // the last raises
  const Tensor classes = i64({2, 0, 3});
  db.push_back({"nll_loss", "linear", two([](const Tensor& a, const Tensor& b) { return nll_loss(a, b); }),
                "torch.nn.functional.nll_loss(a0, a1)",
                {{seq({3, 4}), classes},
                 {seq({4, 3}).t(), i64({2, -100, 1})},                   // an ignored target
                 {seq({2, 3, 2}), i64({0, 2, 1, 1}, {2, 2})},           // spatial
                 {seq({4}), seq({}, kLong, 2.0)},                        // one sample
                 {seq({3, 4}, kDouble), classes.to(kByte)},
                 {seq({3, 4}), classes.to(kInt)},                        // raises: int32 target
                 {seq({3, 4}), i64({2, 0})},                             // raises: batch sizes
                 {seq({3, 4}), i64({2, 0, 4})}}});                       // raises: class 4 of 4
  const Tensor nll_weight = f32({0.5, 2.0, 1.0, 0.25});
  db.push_back({"nll_loss:weight", "linear",
                two([nll_weight](const Tensor& a, const Tensor& b) { return nll_loss(a, b, nll_weight, "mean", 0); }),
                "torch.nn.functional.nll_loss(a0, a1, " + py_tensor(nll_weight) + ", ignore_index=0)",
                {{seq({3, 4}), classes}, {seq({3, 4}), i64({0, 0, 0})}, {seq({3, 4}), i64({1, 3, 2})}}});  // all ignored: NaN
  db.push_back({"nll_loss:sum", "linear",
                two([nll_weight](const Tensor& a, const Tensor& b) { return nll_loss(a, b, nll_weight, "sum"); }),
                "torch.nn.functional.nll_loss(a0, a1, " + py_tensor(nll_weight) + ", reduction='sum')",
                {{seq({3, 4}), classes}, {seq({3, 4}, kDouble), classes}}});  // the second raises: the weight's dtype
  const Tensor probs = f32({0.1, 0.5, 0.9, 0.3, 0.75, 0.2}, {2, 3}), labels = f32({0.05, 0.95, 0.9, 0.1, 0.5, 0.8}, {2, 3});
  db.push_back({"binary_cross_entropy", "linear",
                two([](const Tensor& a, const Tensor& b) { return binary_cross_entropy(a, b); }),
                "torch.nn.functional.binary_cross_entropy(a0, a1)",
                {{probs, labels}, {probs.to(kDouble), labels.to(kDouble)},
                 {probs, labels.to(kDouble)},                       // raises: dtypes
                 {probs, f32({0, 1, 1})}}});                        // raises: sizes
  db.push_back({"binary_cross_entropy:weight", "linear",
                three([](const Tensor& a, const Tensor& b, const Tensor& w) { return binary_cross_entropy(a, b, w, "none"); }),
                "torch.nn.functional.binary_cross_entropy(a0, a1, a2, reduction='none')",
                {{probs, labels, f32({0.5, 1.0, 2.0})}}});
  db.push_back({"binary_cross_entropy_with_logits", "linear",
                two([](const Tensor& a, const Tensor& b) { return binary_cross_entropy_with_logits(a, b); }),
                "torch.nn.functional.binary_cross_entropy_with_logits(a0, a1)",
                {{seq({2, 3}, kFloat, -30.0, 12.0), labels},            // far into both tails
                 {seq({2, 3}, kHalf), labels.to(kHalf)},
                 {seq({2, 3}), labels.reshape({6})}}});                 // raises: sizes
  const Tensor pos = f32({3.0, 0.5, 1.0});
  db.push_back({"binary_cross_entropy_with_logits:pos_weight", "linear",
                three([pos](const Tensor& a, const Tensor& b, const Tensor& w) {
                  return binary_cross_entropy_with_logits(a, b, w, pos, "sum");
                }),
                "torch.nn.functional.binary_cross_entropy_with_logits(a0, a1, a2, reduction='sum', pos_weight=" + py_tensor(pos) + ")",
                {{seq({2, 3}), labels, f32({2.0, 1.0}, {2, 1})}}});
  db.push_back({"log_sigmoid", "linear", one([](const std::vector<Tensor>& in) { return log_sigmoid(in[0]); }),
                "torch.nn.functional.logsigmoid(a0)",
                {{seq({2, 4}, kFloat, -30.0, 9.0)}, {seq({3}, kHalf)}, {specials()}, {ints({3})}}});  // integers raise
  const Tensor logp = seq({2, 3}, kFloat, -2.5, 0.4), q = f32({0.2, 0.3, 0.5, 0.1, 0.6, 0.3}, {2, 3});
  for (const char* r : {"mean", "sum", "batchmean", "none"})
    db.push_back({std::string("kl_div:") + r, "linear",
                  two([r](const Tensor& a, const Tensor& b) { return kl_div(a, b, r); }),
                  std::string("torch.nn.functional.kl_div(a0, a1, reduction='") + r + "')",
                  {{logp, q}, {logp, q.to(kDouble)}, {logp, ints({2, 3}, 1)}}});  // integers raise
  db.push_back({"kl_div:log_target", "linear",
                two([](const Tensor& a, const Tensor& b) { return kl_div(a, b, "sum", true); }),
                "torch.nn.functional.kl_div(a0, a1, reduction='sum', log_target=True)", {{logp, log(q)}}});
  const Tensor signs = f32({1, -1, 1}), sign_grid = f32({1, -1, -1, 1, 1, -1}, {2, 3});
  db.push_back({"margin_ranking_loss", "linear",
                three([](const Tensor& a, const Tensor& b, const Tensor& t) { return margin_ranking_loss(a, b, t, 0.3); }),
                "torch.nn.functional.margin_ranking_loss(a0, a1, a2, margin=0.3)",
                {{seq({3}), seq({3}, kFloat, 1.0, -1.1), signs}, {seq({3}), seq({3}), seq({1, 3})}}});  // the second raises: ranks
  db.push_back({"hinge_embedding_loss", "linear",
                two([](const Tensor& a, const Tensor& t) { return hinge_embedding_loss(a, t, 0.7, "none"); }),
                "torch.nn.functional.hinge_embedding_loss(a0, a1, margin=0.7, reduction='none')",
                {{seq({2, 3}, kFloat, -1.05, 0.45), sign_grid}, {seq({2, 3}, kFloat, -1.05, 0.45), sign_grid.to(kDouble)}}});
  db.push_back({"cosine_embedding_loss", "linear",
                three([](const Tensor& a, const Tensor& b, const Tensor& t) { return cosine_embedding_loss(a, b, t, 0.2); }),
                "torch.nn.functional.cosine_embedding_loss(a0, a1, a2, margin=0.2)",
                {{wave({3, 4}), wave({3, 4}, kFloat, 0.7), signs},
                 {wave({4}), wave({4}, kFloat, 0.4), seq({}, kFloat, -1.0)},
                 {wave({4}), wave({4}), signs}}});  // raises: a 1-D target wants 2-D inputs
  db.push_back({"poisson_nll_loss", "linear",
                two([](const Tensor& a, const Tensor& t) { return poisson_nll_loss(a, t); }),
                "torch.nn.functional.poisson_nll_loss(a0, a1)", {{seq({2, 3}, kFloat, -1.0, 0.4), f32({0, 1, 2, 3, 0.5, 4}, {2, 3})}}});
  db.push_back({"poisson_nll_loss:full", "linear",
                two([](const Tensor& a, const Tensor& t) { return poisson_nll_loss(a, t, false, true, 1e-8, "none"); }),
                "torch.nn.functional.poisson_nll_loss(a0, a1, log_input=False, full=True, reduction='none')",
                {{seq({2, 3}, kFloat, 0.5, 0.4), f32({0.25, 1, 2, 3, 0.5, 4}, {2, 3})}}});
  db.push_back({"gaussian_nll_loss", "linear",
                three([](const Tensor& a, const Tensor& t, const Tensor& v) { return gaussian_nll_loss(a, t, v); }),
                "torch.nn.functional.gaussian_nll_loss(a0, a1, a2)",
                {{seq({2, 3}), seq({2, 3}, kFloat, 1.0, -0.5), f32({0.5, 1.0, 2.0, 0.75, 0.25, 3.0}, {2, 3})},
                 {seq({2, 3}), seq({2, 3}, kFloat, 1.0, -0.5), f32({0.5, 2.0})},       // one variance per row
                 {seq({2, 3}), seq({2, 3}), f32({0.5, -1.0})},                         // raises: negative
                 {seq({2, 3}), seq({2, 3}), f32({0.5, 1.0, 2.0})}},                    // raises: var's size
                std::nullopt, false, /*data_dependent=*/true});  // var's values are checked
  db.push_back({"gaussian_nll_loss:full", "linear",
                three([](const Tensor& a, const Tensor& t, const Tensor& v) { return gaussian_nll_loss(a, t, v, true, 1e-6, "sum"); }),
                "torch.nn.functional.gaussian_nll_loss(a0, a1, a2, full=True, reduction='sum')",
                {{seq({2, 3}), seq({2, 3}, kFloat, 1.0, -0.5), f32({0.5, 2.0}, {2, 1})}}, std::nullopt, false,
                /*data_dependent=*/true});
  for (bool swap : {false, true})
    db.push_back({std::string("triplet_margin_loss") + (swap ? ":swap" : ""), "linear",
                  three([swap](const Tensor& a, const Tensor& p, const Tensor& n) { return triplet_margin_loss(a, p, n, 1.5, 2.0, 1e-6, swap); }),
                  std::string("torch.nn.functional.triplet_margin_loss(a0, a1, a2, margin=1.5, swap=") + (swap ? "True" : "False") + ")",
                  {{wave({3, 4}), wave({3, 4}, kFloat, 0.9), wave({3, 4}, kFloat, 2.1)},
                   {wave({3, 4}), wave({1, 4}, kFloat, 0.9), wave({3, 4}, kFloat, 2.1)},
                   {wave({3, 4}), wave({3, 4}), wave({4})}}});  // raises: ranks
  db.push_back({"multilabel_soft_margin_loss", "linear",
                three([](const Tensor& a, const Tensor& t, const Tensor& w) { return multilabel_soft_margin_loss(a, t, w); }),
                "torch.nn.functional.multilabel_soft_margin_loss(a0, a1, a2)",
                {{seq({2, 3}), f32({1, 0, 1, 0, 0, 1}, {2, 3}), f32({0.5, 1.0, 2.0})}, {seq({}), seq({}), seq({})}}});  // 0-dim raises
  // Class-margin losses: int64 class targets; the class weight is captured (PyTorch does not
  // differentiate it). Scores a multiple of 0.75 apart keep every hinge away from its kink.
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  db.push_back({"multi_margin_loss", "linear",
                two([](const Tensor& a, const Tensor& t) { return multi_margin_loss(a, t); }),
                "torch.nn.functional.multi_margin_loss(a0, a1)",
                {{seq({3, 4}), i64({2, 0, 3})},
                 {seq({4, 3}).t(), i64({1, 1, 0})},
                 {seq({4}), i64({1})},
                 {seq({}), i64({0}).reshape({})},            // one sample of one class: 0
                 {seq({4}), i64({2}).reshape({})},
                 {f32({0.5, kNaN, 0.25, kNaN, 1.0, -0.5}, {2, 3}), i64({0, 0})},  // a NaN hinge adds nothing
                 {seq({3, 4}, kDouble), i64({3, 3, 1})},
                 {seq({2, 4}), i64({4, 0})},                 // raises: a class out of range
                 {seq({2, 4}), i64({-1, 0})},                // raises: negative
                 {seq({2, 4}), i64({1, 0, 2})},              // raises: one target per sample
                 {seq({2, 0}), i64({0, 0})},                 // raises: no classes
                 {seq({2, 3, 4}), i64({0, 0})},              // raises: rank 3
                 {ints({2, 4}), i64({1, 0})},                // raises: integer scores
                 {seq({2, 4}), seq({2})}}});                 // raises: a floating target
  const Tensor class_scale = f32({0.5, 1.0, 2.0, 1.5});
  db.push_back({"multi_margin_loss:p2_weight", "linear", two([class_scale](const Tensor& a, const Tensor& t) {
                  return multi_margin_loss(a, t, 2, 0.5, class_scale.to(a.dtype()), "none");
                }),
                "torch.nn.functional.multi_margin_loss(a0, a1, p=2, margin=0.5, weight=" + py_tensor(class_scale) +
                    ".to(a0.dtype), reduction='none')",
                {{seq({3, 4}), i64({2, 0, 3})}, {seq({4}), i64({3}).reshape({})}, {seq({4}), i64({3})}, {seq({3, 4}, kDouble), i64({0, 1, 2})},
                 {seq({0, 4}), i64({}, {0})}}});
  db.push_back({"multi_margin_loss:refusals", "linear", two([class_scale](const Tensor& a, const Tensor& t) {
                  return multi_margin_loss(a, t, 1, 1, class_scale.to(a.dtype() == kHalf ? kFloat : a.dtype()), "sum");
                }),
                "torch.nn.functional.multi_margin_loss(a0, a1, weight=" + py_tensor(class_scale) +
                    ".to(torch.float32 if a0.dtype == torch.float16 else a0.dtype), reduction='sum')",
                {{seq({3, 4}), i64({2, 0, 3})},
                 {seq({3, 4}, kDouble), i64({2, 0, 3})},
                 {seq({3, 4}, kHalf), i64({2, 0, 3})},       // raises: the weight's dtype differs
                 {seq({3, 5}), i64({2, 0, 3})}}});           // raises: one weight per class
  db.push_back({"multi_margin_loss:p3", "linear", two([](const Tensor& a, const Tensor& t) { return multi_margin_loss(a, t, 3); }),
                "torch.nn.functional.multi_margin_loss(a0, a1, p=3)", {{seq({3, 4}), i64({2, 0, 3})}}});  // raises
  // PyTorch's cpu kernels take no f16 or bf16; its cuda kernels compute them in f32, as kiln does.
  db.push_back({"multi_margin_loss:half", "linear",
                two([](const Tensor& a, const Tensor& t) { return multi_margin_loss(a, t, 1, 1, std::nullopt, "sum"); }),
                "torch.nn.functional.multi_margin_loss(a0.float(), a1, reduction='sum').to(a0.dtype)",
                {{seq({3, 4}, kHalf), i64({2, 0, 3})}, {seq({3, 4}, kBFloat16), i64({1, 3, 0})}}});
  const Tensor listed = i64({3, 0, -1, 1, 1, -1, 0, 2}, {2, 4});  // each row's classes end at its first -1
  db.push_back({"multilabel_margin_loss", "linear",
                two([](const Tensor& a, const Tensor& t) { return multilabel_margin_loss(a, t); }),
                "torch.nn.functional.multilabel_margin_loss(a0, a1)",
                {{seq({2, 4}), listed},
                 {seq({4, 2}).t(), listed},
                 {seq({4}), i64({2, 2, -1, 0})},             // a class listed twice counts twice
                 {f32({0.5, kNaN, 0.25, 1.0}), i64({0, 1, -1, 0})},  // NaN hinges add nothing
                 {seq({}), i64({0}).reshape({})},
                 {seq({2, 4}, kDouble), i64({-1, 2, 3, 1, 0, 1, 2, 3}, {2, 4})},  // no classes; all classes
                 {seq({2, 4}), i64({3, 0, -1, 4, 1, -1, 0, 2}, {2, 4})},  // raises: 4 is out of range, past the -1 too
                 {seq({2, 4}), i64({3, -2, -1, 1, 1, -1, 0, 2}, {2, 4})},  // raises: below -1
                 {seq({2, 4}), i64({3, 0, -1, 1, 1, -1}, {2, 3})},        // raises: the target's shape
                 {seq({4}), listed},                                      // raises: a 1-D input takes a 1-D target
                 {ints({2, 4}), listed},                                  // raises: integer scores
                 {seq({2, 4}), listed.to(kInt)}}});                       // raises: an int32 target
  db.push_back({"multilabel_margin_loss:none", "linear",
                two([](const Tensor& a, const Tensor& t) { return multilabel_margin_loss(a, t, "none"); }),
                "torch.nn.functional.multilabel_margin_loss(a0, a1, reduction='none')",
                {{seq({2, 4}), listed}, {seq({4}), i64({1, 3, -1, 0})}, {seq({0, 4}), i64({}, {0, 4})}}});
  db.push_back({"multilabel_margin_loss:half", "linear",
                two([](const Tensor& a, const Tensor& t) { return multilabel_margin_loss(a, t, "sum"); }),
                "torch.nn.functional.multilabel_margin_loss(a0.float(), a1, reduction='sum').to(a0.dtype)",
                {{seq({2, 4}, kHalf), listed}, {seq({2, 4}, kBFloat16), listed}}});
  // ctc_loss on log_softmax of the scores, as it is used: PyTorch's own backward returns the
  // gradient with respect to log_probs plus exp(log_probs), a term log_softmax's backward removes
  // (frontend/ops_linear_ctc.cpp). Lengths are sample inputs (traced when compiled: a length past
  // its bound fails a gather there, and PyTorch's check eagerly).
  auto four = [](auto f) { return one([f](const std::vector<Tensor>& in) { return f(in[0], in[1], in[2], in[3]); }); };
  const Tensor padded = i64({1, 2, 2, 3, 1, 0}, {2, 3}), repeats = i64({1, 1, 1, 3, 3, 0}, {2, 3});
  db.push_back({"ctc_loss", "linear", four([](const Tensor& x, const Tensor& t, const Tensor& il, const Tensor& tl) {
                  return ctc_loss(log_softmax(x, 2), t, il, tl);
                }),
                "torch.nn.functional.ctc_loss(a0.log_softmax(2), a1, a2, a3)",
                {{wave({5, 2, 4}), padded, i64({5, 4}), i64({3, 2})},
                 {wave({5, 2, 4}, kDouble, 0.3), padded, i64({5, 3}), i64({3, 1})},
                 {wave({6, 2, 4}), repeats, i64({6, 4}), i64({3, 2})},                     // a blank between repeats
                 {wave({5, 2, 4}), padded, i64({0, 4}), i64({0, 2})},                      // no frames, no labels: 0
                 {wave({5, 2, 3}), i64({}, {2, 0}), i64({5, 2}), i64({0, 0})},              // empty targets
                 {wave({5, 2, 4}).transpose(0, 1).contiguous().transpose(0, 1), padded, i64({5, 4}), i64({3, 2})},
                 {wave({5, 2, 4}), padded, i64({6, 4}), i64({3, 2})},                      // raises: 6 frames of 5
                 {wave({5, 2, 4}), padded, i64({-1, 4}), i64({3, 2})},                     // raises: negative
                 {wave({5, 2, 4}), padded, i64({5, 4}), i64({4, 2})},                      // raises: 4 labels of 3
                 {wave({5, 2, 4}), padded, i64({5, 4}), i64({-1, 2})},                     // raises: negative
                 {wave({5, 2, 4}), padded, i64({5}), i64({3, 2})},                         // raises: one length
                 {wave({5, 2, 4}), padded, f32({5, 4}), i64({3, 2})},                      // raises: float lengths
                 {wave({5, 2, 4}), i64({1, 2, 2}, {1, 3}), i64({5, 4}), i64({3, 2})},      // raises: one target row
                 {wave({5, 2, 4}, kHalf), padded, i64({5, 4}), i64({3, 2})}}});            // raises: f16
  db.push_back({"ctc_loss:none", "linear", four([](const Tensor& x, const Tensor& t, const Tensor& il, const Tensor& tl) {
                  return ctc_loss(log_softmax(x, 2), t, il, tl, 3, "none");
                }),
                "torch.nn.functional.ctc_loss(a0.log_softmax(2), a1, a2, a3, blank=3, reduction='none')",
                {{wave({5, 2, 4}), i64({1, 2, 2, 0, 1, 0}, {2, 3}), i64({5, 4}), i64({3, 2})},
                 {wave({4, 1, 4}), repeats.narrow(0, 0, 1), i64({4}), i64({3})},          // too few frames: inf
                 {wave({5, 2, 4}), padded, i64({5, 4}), i64({3, 2})},                     // 3, the blank, as a label
                 {wave({5, 2, 4}), i64({1, 3, 2, 0, 3, 0}, {2, 3}), i64({5, 4}), i64({2, 2})}}});  // ... and as the last
  db.push_back({"ctc_loss:zero_infinity", "linear",
                four([](const Tensor& x, const Tensor& t, const Tensor& il, const Tensor& tl) {
                  return ctc_loss(log_softmax(x, 2), t, il, tl, 0, "sum", true);
                }),
                "torch.nn.functional.ctc_loss(a0.log_softmax(2), a1, a2, a3, reduction='sum', zero_infinity=True)",
                {{wave({4, 2, 4}), repeats, i64({4, 4}), i64({3, 2})}}});               // the first is impossible
  db.push_back({"ctc_loss:blank_range", "linear", four([](const Tensor& x, const Tensor& t, const Tensor& il, const Tensor& tl) {
                  return ctc_loss(log_softmax(x, 2), t, il, tl, 4);
                }),
                "torch.nn.functional.ctc_loss(a0.log_softmax(2), a1, a2, a3, blank=4)",
                {{wave({5, 2, 4}), padded, i64({5, 4}), i64({3, 2})}}});                 // raises
  // Concatenated targets take their lengths as lists: their longest sets a size.
  db.push_back({"ctc_loss:concatenated", "linear", two([](const Tensor& x, const Tensor& t) {
                  return ctc_loss(log_softmax(x, 2), t, std::vector<int64_t>{5, 4}, std::vector<int64_t>{3, 2}, 0, "sum");
                }),
                "torch.nn.functional.ctc_loss(a0.log_softmax(2), a1, [5, 4], [3, 2], reduction='sum')",
                {{wave({5, 2, 4}), i64({1, 2, 2, 3, 1})},
                 {wave({5, 2, 4}), i64({1, 2, 2, 3, 1, 1})}}});                           // raises: 6 labels, not 5
  db.push_back({"ctc_loss:unbatched", "linear", four([](const Tensor& x, const Tensor& t, const Tensor& il, const Tensor& tl) {
                  return ctc_loss(log_softmax(x, 1), t, il, tl, 0, "none");
                }),
                "torch.nn.functional.ctc_loss(a0.log_softmax(1), a1, a2, a3, reduction='none')",
                {{wave({5, 4}), i64({1, 2, 2}), i64({5}).reshape({}), i64({3}).reshape({})},
                 {wave({5, 4}), i64({1, 2, 2}), i64({5}), i64({2})}},  // raises: a 1-D target is exactly its length
                std::nullopt, false, /*data_dependent=*/true});  // a 1-D target's length is read, as concatenated ones'
  db.push_back({"ctc_loss:unbatched_row", "linear", four([](const Tensor& x, const Tensor& t, const Tensor& il, const Tensor& tl) {
                  return ctc_loss(log_softmax(x, 1), t, il, tl, 0, "none");
                }),
                "torch.nn.functional.ctc_loss(a0.log_softmax(1), a1, a2, a3, reduction='none')",
                {{wave({5, 4}), i64({1, 2, 2}, {1, 3}), i64({4}), i64({2})}}});
}

}  // namespace kiln::opdb
