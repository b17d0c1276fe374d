// kiln/test/test_opdb_gradcheck.cpp — every differentiable op-database sample's gradient against
// f64 central finite differences (PyTorch's gradcheck, with its tolerances).
//
// Each sample runs as test_support/grad_run.h describes: f64 leaves, the differentiable outputs
// contracted with fixed cotangents into one scalar L, and autograd::grad giving dL/dx. Each input
// element's derivative is also measured as (L(x + h) - L(x - h)) / 2h at h = 1e-6, and must
// agree within atol 1e-5 + rtol 1e-3 of it. Elements where the function is not smooth (a kink, a
// jump, a tie of a max) are recognized and skipped: at such a point the one-sided differences
// disagree (a kink exactly at x), or a second estimate at h = 1e-4 disagrees with the first (one
// within reach of the step). What an op returns at its kinks is PyTorch's convention, which the
// golden gradients check (test_opdb_golden_grad.cpp). Also skipped: samples with non-finite
// inputs or outputs, outputs below f64 (a difference of 1e-6 is under an f32 or f16 step),
// random entries (a dropout's draw differs per call; test_autograd_eager.cpp checks its mask)
// and kNotByDifferences. Large inputs are probed at up to kProbes evenly spaced elements.
//
// One test per op family, so that CTest runs them in parallel.
#include "test_support/grad_run.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

namespace kiln {
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
};

// L with element k of input i moved by h.
double probe(const opdb::OpEntry& e, const opdb::GradRun& r, size_t i, int64_t k, double h) {
  NoGradGuard no_grad;
  std::vector<Tensor> in;
  for (const Tensor& t : r.leaves) in.push_back(t.defined() && is_floating_point(t.dtype()) ? t.detach().clone() : t);
  in[i].data_ptr<double>()[k] += h;
  return opdb::contract(e.fn(in), r).item<double>();
}

struct Tally {
  int samples = 0, elements = 0, skipped_kinks = 0;
};

void check_sample(const opdb::OpEntry& e, const opdb::Sample& s, Tally& tally) {
  std::optional<opdb::GradRun> r = opdb::grad_run(e, s);
  if (!r || r->diff_outputs.empty()) return;
  for (size_t j : r->diff_outputs) {
    const Tensor o = r->outputs[j].detach();
    if (o.dtype() != kDouble || (o.numel() > 0 && !isfinite(o).all().item<bool>())) return;
  }
  const std::vector<Tensor> grads = opdb::grads_of(*r);
  for (size_t n = 0; n < r->inputs.size(); ++n) {
    const size_t i = r->inputs[n];
    const Tensor& x = r->leaves[i];
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
      const double mid = probe(e, *r, i, k, 0), up = probe(e, *r, i, k, h), down = probe(e, *r, i, k, -h);
      const double num = (up - down) / (2 * h);
      const double coarse = (probe(e, *r, i, k, 1e-4) - probe(e, *r, i, k, -1e-4)) / 2e-4;
      auto apart = [&](double p, double q) { return std::abs(p - q) > kAtol + kRtol * std::abs(num); };
      if (!std::isfinite(num) || apart(num, coarse) || apart((up - mid) / h, (mid - down) / h)) {
        ++tally.skipped_kinks;
        continue;
      }
      ++tally.elements;
      EXPECT_LE(std::abs(a[k] - num), kAtol + kRtol * std::abs(num))
          << "input " << i << " element " << k << ": autograd " << a[k] << ", finite differences " << num;
    }
  }
  ++tally.samples;
}

TEST(GradCheckFamilies, EveryFamilyIsChecked) {
  std::set<std::string> listed(opdb::families().begin(), opdb::families().end());
  for (const opdb::OpEntry& e : opdb::database()) EXPECT_TRUE(listed.count(e.family)) << e.family;
}

class GradCheck : public ::testing::TestWithParam<std::string> {};

TEST_P(GradCheck, EagerMatchesFiniteDifferences) {
  Tally tally;
  for (const opdb::OpEntry& e : opdb::database()) {
    if (e.family != GetParam() || e.random || kNotByDifferences.count(e.name)) continue;
    for (size_t s = 0; s < e.samples.size(); ++s) {
      SCOPED_TRACE(e.name + " sample " + std::to_string(s));
      check_sample(e, e.samples[s], tally);
    }
  }
  std::printf("[gradcheck] %s: %d samples, %d elements checked, %d non-smooth elements skipped\n",
              GetParam().c_str(), tally.samples, tally.elements, tally.skipped_kinks);
}

INSTANTIATE_TEST_SUITE_P(Families, GradCheck, ::testing::ValuesIn(opdb::families()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace kiln
