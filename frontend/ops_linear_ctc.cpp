// kiln/frontend/ops_linear_ctc.cpp — ctc_loss (frontend/ops_linear.h): the connectionist temporal
// classification loss, -log of the probability that log_probs [T, N, C] emit each sample's target
// sequence through any alignment (Graves et al., 2006).
//
// ATen's forward recursion, written with kiln's ops over whole rows of states. Each sample's
// target is extended with blanks, l' = (blank, l1, blank, l2, ..., blank) of 2S+1 states, and for
// every frame t
//   alpha_t[s] = log(exp(alpha_{t-1}[s]) + exp(alpha_{t-1}[s-1]) + exp(alpha_{t-1}[s-2])) + lp[t, l'[s]]
// where the s-2 term counts only for a label unlike the one two states before (ATen's test). The
// loop starts from alpha_{-1} = (0, -inf, ...), the state before any frame, so a sample of no
// frames costs 0 for an empty target and inf otherwise, as ATen's special case. The rows of every
// frame are stacked and each sample reads its row at its input length, then the last two states of
// its target: a gather, whose bounds check refuses lengths past T or the target's width when they
// are only known at run time. Where the lengths' values are at hand (eager, integer lists) they are
// checked first with PyTorch's wording.
//
// The gradient is autograd's through the recursion: minus the forward-backward occupancies, the
// gradient of the loss with respect to log_probs. PyTorch's own ctc_loss_backward adds
// grad * exp(log_probs) on the frames before each input length, a cotangent proportional to the
// softmax, which log_softmax's backward maps to zero; so the two agree on the scores before a
// log_softmax, except where PyTorch's backward is itself off (docs/nn.md). The recursion runs
// for each of T frames, so a compiled function specializes T and the target width.
#include "frontend/ops_linear.h"

#include "base/error.h"
#include "frontend/arg_checks.h"
#include "frontend/ops.h"
#include "frontend/ops_factory.h"
#include "frontend/ops_view.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

namespace {

constexpr std::string_view kOp = "ctc_loss";
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// "(while checking arguments for ...)", as PyTorch 2.15 ends its argument checks.
constexpr std::string_view kChecking = " (while checking arguments for ctc_loss_allocate_outputs)";

// log(sum(exp(terms))) with ATen's guard: where every term is -inf the shift is 0 and the result
// -inf. The shift carries no gradient (the result's derivative with respect to it is 0), and the
// unreachable case passes 0, not NaN, back to its terms.
Tensor log_add(const std::vector<Tensor>& terms) {
  Tensor top = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) top = maximum(top, terms[i]);
  const Tensor reachable = ne(top, kNegInf);
  const Tensor shift = where(reachable, top, Scalar(0.0)).detach();
  Tensor sum = exp(sub(terms[0], shift));
  for (size_t i = 1; i < terms.size(); ++i) sum = add(sum, exp(sub(terms[i], shift)));
  return where(reachable, add(log(where(reachable, sum, Scalar(1.0))), shift), Scalar(kNegInf));
}

// A lengths tensor as int64 [N] (a 0-dim one is one sample's), with its values when they are at
// hand (not traced).
struct Lengths {
  Tensor tensor;
  std::optional<std::vector<int64_t>> values;
};

void check_integral(const Tensor& t, const char* name) {
  if (!is_integral(t.dtype(), /*include_bool=*/false)) fail(kOp, "{} must be integral", name);
}

// `listed`: the values of lengths given as a list (made into `t` by the caller).
Lengths lengths_of(const Tensor& t, const char* name, int64_t batch, Device device,
                   const std::optional<std::vector<int64_t>>& listed) {
  const Tensor flat = t.reshape({-1}).to(ScalarType::Int64).to(device);
  if (flat.numel() != batch) fail(kOp, "{} must be of size batch_size", name);
  Lengths out{flat, listed};
  if (!listed && !flat.is_traced()) out.values = flat.to_vector<int64_t>();
  return out;
}

void check_at_least_zero(const Lengths& l, const char* name) {
  if (!l.values) return;
  for (int64_t v : *l.values)
    if (v < 0) fail(kOp, "Expected {} to have value at least 0, but got value {}{}", name, v, kChecking);
}

// The targets as [N, S] int64 labels (any dtype converts, as in PyTorch), padded past each
// sample's length (the padding is never read). A 2-D target is already that; a 1-D one holds the
// samples' labels one after another, and is spread into rows of the longest length, which needs
// the lengths' values (traced: a DataDependentError, so compile() runs the function eagerly).
Tensor padded_targets(const Tensor& targets, const Lengths& target_lengths, int64_t batch) {
  const Tensor labels = targets.to(ScalarType::Int64);
  if (targets.dim() == 2) {
    if (targets.size(0) != batch)
      fail(kOp, "Expected tensor to have size {} at dimension 0, but got size {} for argument #2 'targets'{}", batch,
           targets.size(0), kChecking);
    if (target_lengths.values) {
      const auto& v = *target_lengths.values;
      const int64_t longest = v.empty() ? 0 : *std::max_element(v.begin(), v.end());
      if (longest > targets.size(1))
        fail(kOp, "Expected tensor to have size at least {} at dimension 1, but got size {} for argument #2 'targets'{}",
             longest, targets.size(1), kChecking);
    }
    return labels;
  }
  if (!target_lengths.values)
    fail_data_dependent(kOp,
                        "1-D targets (concatenated, or one unbatched sample's) are spread into rows as long as the "
                        "longest target and checked against target_lengths, whose values a traced function does not "
                        "have; pass 2-D padded targets, or the lengths as a list; compile() runs this function "
                        "eagerly");
  const auto& v = *target_lengths.values;
  const int64_t total = std::accumulate(v.begin(), v.end(), int64_t{0});
  if (total != targets.size(0))
    fail(kOp, "Expected tensor to have size {} at dimension 0, but got size {} for argument #2 'targets'{}", total,
         targets.size(0), kChecking);
  const int64_t width = v.empty() ? 0 : *std::max_element(v.begin(), v.end());
  if (width == 0) return zeros({batch, 0}, labels.options());
  const Tensor& lengths = target_lengths.tensor;
  const Tensor starts = sub(cumsum(lengths, 0), lengths).unsqueeze(1);  // [N, 1]
  const Tensor column = arange(width, labels.options());                 // [S]
  const Tensor inside = lt(column, lengths.unsqueeze(1));                // [N, S]
  return labels.index_select(0, where(inside, add(starts, column), Scalar(int64_t{0})).reshape({-1}))
      .reshape({batch, width});
}

// Both overloads: the lengths as tensors, and their values where they were given as lists.
Tensor ctc(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths, const Tensor& target_lengths,
           const std::optional<std::vector<int64_t>>& listed_inputs,
           const std::optional<std::vector<int64_t>>& listed_targets, int64_t blank, std::string_view reduction,
           bool zero_infinity) {
  check_reduction(kOp, reduction);
  // PyTorch's order of checks.
  check_integral(input_lengths, "input_lengths");
  check_integral(target_lengths, "target_lengths");
  if (!is_floating_point(log_probs.dtype()) || log_probs.dtype() == ScalarType::Half ||
      log_probs.dtype() == ScalarType::BFloat16)
    fail(kOp, "\"{}\" not implemented for '{}'", log_probs.device().is_cuda() ? "ctc_loss_cuda" : "ctc_loss_cpu",
         c10_type_name(log_probs.dtype()));
  if (log_probs.numel() == 0) fail(kOp, "log_probs tensor must not be empty");
  // An unbatched call ([T, C] scores, one target) is a batch of one.
  const bool batched = log_probs.dim() == 3;
  const Tensor lp = batched ? log_probs : log_probs.unsqueeze(1);
  if (lp.dim() != 3)
    fail(kOp, "Expected 3-dimensional tensor, but got {}-dimensional tensor for argument #1 'log_probs'{}", lp.dim(),
         kChecking);
  if (targets.dim() < 1 || targets.dim() > 2)
    fail(kOp, "Expected 1 to 2 dimensions, but got {}-dimensional tensor for argument #2 'targets'{}", targets.dim(),
         kChecking);
  const int64_t frames = lp.size(0), batch = lp.size(1), classes = lp.size(2);
  if (blank < 0 || blank >= classes) fail(kOp, "blank must be in label range");
  const Lengths inputs = lengths_of(input_lengths, "input_lengths", batch, lp.device(), listed_inputs);
  const Lengths lengths = lengths_of(target_lengths, "target_lengths", batch, lp.device(), listed_targets);
  check_at_least_zero(lengths, "target_lengths");
  // The labels on log_probs' device, as [N, S] rows. An unbatched 1-D target is one sample's
  // labels one after another, as PyTorch reads it: exactly its length.
  const Tensor labels = padded_targets(targets.to(lp.device()), lengths, batch);  // [N, S]
  check_at_least_zero(inputs, "input_lengths");
  if (inputs.values)
    for (int64_t v : *inputs.values)
      if (v > frames)
        fail(kOp, "Expected input_lengths to have value at most {}, but got value {}{}", frames, v, kChecking);

  // The extended targets l' [N, 2S+1]: blanks between and around the labels, the padding past each
  // target's length a blank too (never reached from the states that count).
  const int64_t width = labels.size(1), states = 2 * width + 1;
  const Tensor& tl = lengths.tensor;
  const TensorOptions index_options = labels.options();
  const Tensor in_target = lt(arange(width, index_options), tl.unsqueeze(1));
  const Tensor used = where(in_target, labels, Scalar(blank));
  const Tensor blanks = full({batch, width}, Scalar(blank), index_options);
  const Tensor extended =
      cat({stack({blanks, used}, 2).reshape({batch, 2 * width}), full({batch, 1}, Scalar(blank), index_options)}, 1);
  // The s-2 transition: a label unlike the label two states before (blanks are all alike).
  std::optional<Tensor> skips;
  if (states >= 3)
    skips = cat({full({batch, 2}, Scalar(false), TensorOptions(ScalarType::Bool).device(lp.device())),
                 ne(extended.narrow(1, 2, states - 2), extended.narrow(1, 0, states - 2))},
                1);
  // Each frame's log-probability of each state's symbol [T, N, 2S+1]; a label outside [0, C)
  // fails this gather.
  const Tensor emit = lp.gather(2, extended.unsqueeze(0).expand({frames, batch, states}));

  const Tensor unreachable = full({batch, states}, Scalar(kNegInf), lp.options());
  std::vector<Tensor> alpha{cat({zeros({batch, 1}, lp.options()), unreachable.narrow(1, 1, states - 1)}, 1)};
  for (int64_t t = 0; t < frames; ++t) {
    const Tensor& prev = alpha.back();
    std::vector<Tensor> terms{prev, constant_pad_nd(prev.narrow(1, 0, states - 1), {1, 0}, kNegInf)};
    if (skips) terms.push_back(where(*skips, constant_pad_nd(prev.narrow(1, 0, states - 2), {2, 0}, kNegInf), Scalar(kNegInf)));
    alpha.push_back(add(log_add(terms), emit.select(0, t)));
  }
  // Row input_length of the stacked rows (row 0 is the state before any frame), then the target's
  // last label and the blank after it.
  const Tensor rows = stack(alpha, 0);  // [T+1, N, 2S+1]
  const Tensor last = rows.gather(0, inputs.tensor.reshape({1, batch, 1}).expand({1, batch, states})).squeeze(0);
  const Tensor end_blank = last.gather(1, mul(tl, 2).unsqueeze(1)).squeeze(1);
  const Tensor end_label = where(gt(tl, 0), last.gather(1, clamp_min(sub(mul(tl, 2), 1), 0).unsqueeze(1)).squeeze(1),
                                 Scalar(kNegInf));
  Tensor nll = neg(log_add({end_blank, end_label}));
  if (zero_infinity) nll = where(eq(nll, std::numeric_limits<double>::infinity()), Scalar(0.0), nll);
  if (reduction == "mean") return div(nll, clamp_min(tl, 1).to(nll.dtype())).mean();
  if (reduction == "sum") return nll.sum();
  return batched ? nll : nll.squeeze(0);
}

}  // namespace

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, int64_t blank, std::string_view reduction, bool zero_infinity) {
  return ctc(log_probs, targets, input_lengths, target_lengths, std::nullopt, std::nullopt, blank, reduction,
             zero_infinity);
}

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths, IntArrayRef target_lengths,
                int64_t blank, std::string_view reduction, bool zero_infinity) {
  const std::vector<int64_t> inputs(input_lengths.begin(), input_lengths.end()),
      lengths(target_lengths.begin(), target_lengths.end());
  const TensorOptions options = TensorOptions(ScalarType::Int64).device(log_probs.device());
  return ctc(log_probs, targets, tensor(inputs, options), tensor(lengths, options), inputs, lengths, blank, reduction,
             zero_infinity);
}

}  // namespace kiln
