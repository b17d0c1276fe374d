// kiln/test/test_support/grad_check.cpp — test_support/grad_check.h.
#include "test_support/grad_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace kiln::opdb {

namespace {

constexpr double kAtol = 1e-5, kRtol = 1e-3;
constexpr int64_t kProbes = 48;

// Entries whose samples finite differences cannot check, with the reason.
const std::map<std::string, const char*> kNotByDifferences = {
    {"mode", "the mode is a value repeated in its slice: moving one copy leaves the others, so the "
             "difference is 0 while the gradient goes to the copy whose index mode returns"},
    {"mode:dim0", "as mode"},
    {"detach", "detach stops the gradient by definition, so detach(x) * x has slope x, not 2x (the golden gradients "
               "check it against PyTorch)"},
    {"batch_norm:train", "it returns the running statistics, which the op updates without history (as PyTorch's "
                         "kernel does): their values move with the input, their gradients do not"},
    {"native_batch_norm", "as batch_norm:train"},
    {"instance_norm:running", "as batch_norm:train"},
    {"embedding:padding_freq", "padding_idx's row gets no gradient and scale_grad_by_freq divides each row's by its index's "
                               "count: PyTorch's definitions, not the function's slopes (the golden gradients check them)"},
    {"no_grad_copy", "a write under NoGradGuard passes the gradient on as if it were not there, so the derivative of "
                     "grad's 1.5 a through it is 2, not 1.5 (the golden gradients check PyTorch's)"},
};

// L with element k of input i moved by h. Eagerly without grad; a compiled run's function is
// called as the run called it, on inputs that require grad, so that its training entry's
// forward program runs warm (without grad it would compile the inference program).
double probe(const GradRun& r, size_t i, int64_t k, double h) {
  std::vector<Tensor> in;
  for (const Tensor& t : r.leaves) in.push_back(t.defined() && is_floating_point(t.dtype()) ? t.detach().clone() : t);
  in[i].data_ptr<double>()[k] += h;
  if (r.mode == Mode::Eager) {
    NoGradGuard no_grad;
    return contract(r.fn(in), r).item<double>();
  }
  for (size_t j : r.inputs) in[j] = in[j].requires_grad_().clone();  // the function may write into its inputs
  const std::vector<Tensor> out = r.fn(in);
  NoGradGuard no_grad;
  return contract(out, r).item<double>();
}

}  // namespace

const char* not_by_differences(const std::string& name) {
  auto it = kNotByDifferences.find(name);
  return it == kNotByDifferences.end() ? nullptr : it->second;
}

void check_finite_differences(const GradRun& r, const std::vector<Tensor>& grads, GradCheckTally& tally) {
  if (r.diff_outputs.empty()) return;
  for (size_t j : r.diff_outputs) {
    const Tensor o = r.outputs[j].detach();
    if (o.dtype() != kDouble || (o.numel() > 0 && !isfinite(o).all().item<bool>())) return;
  }
  for (size_t n = 0; n < r.inputs.size(); ++n) {
    const size_t i = r.inputs[n];
    const Tensor& x = r.leaves[i];
    if (grads[n].defined()) {
      EXPECT_EQ(grads[n].sizes().vec(), x.sizes().vec()) << "input " << i << ": gradient of the wrong shape";
      EXPECT_EQ(grads[n].dtype(), kDouble) << "input " << i << ": gradient of the wrong dtype";
      if (grads[n].sizes() != x.sizes() || grads[n].dtype() != kDouble) continue;
    }
    const Tensor analytic = grads[n].defined() ? grads[n].contiguous() : zeros_like(x.detach());
    const double* a = analytic.data_ptr<double>();
    const int64_t numel = x.numel();
    const int64_t stride = std::max<int64_t>(1, numel / kProbes);
    for (int64_t k = 0; k < numel; k += stride) {
      const double h = 1e-6;
      const double mid = probe(r, i, k, 0), up = probe(r, i, k, h), down = probe(r, i, k, -h);
      const double num = (up - down) / (2 * h);
      const double coarse = (probe(r, i, k, 1e-4) - probe(r, i, k, -1e-4)) / 2e-4;
      auto apart = [&](double p, double q) { return std::abs(p - q) > kAtol + kRtol * std::abs(num); };
      if (!std::isfinite(num) || apart(num, coarse) || apart((up - mid) / h, (mid - down) / h)) {
        ++tally.skipped_kinks;
        continue;
      }
      ++tally.elements;
      EXPECT_LE(std::abs(a[k] - num), kAtol + kRtol * std::abs(num))
          << "input " << i << " element " << k << ": " << mode_name(r.mode) << " gradient " << a[k]
          << ", finite differences " << num;
    }
  }
  ++tally.samples;
}

}  // namespace kiln::opdb
