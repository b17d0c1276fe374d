// kiln/test/test_opdb_gradcheck.cpp — every differentiable op-database sample's gradient against
// f64 central finite differences (PyTorch's gradcheck, with its tolerances).
//
// For each sample, the floating inputs become f64 leaves that require grad. The op runs with
// grad on; its floating outputs that require grad are contracted with fixed cotangents v into
// one scalar L = sum_j <out_j, v_j>, and autograd::grad gives dL/dx. Each input element's
// derivative is also measured as (L(x + h) - L(x - h)) / 2h at h = 1e-6, and must agree within
// atol 1e-5 + rtol 1e-3 of it. Elements where the function is not smooth (a kink, a jump, a tie
// of a max) are recognized and skipped: at such a point the one-sided differences disagree
// (a kink exactly at x), or a second estimate at h = 1e-4 disagrees with the first (one within
// reach of the step). What an op returns at its kinks is PyTorch's convention, which the golden
// gradients check. Also skipped: samples with non-finite inputs or outputs, outputs below f64
// (a finite difference of 1e-6 is under an f32 or f16 step), random entries (a dropout's draw
// differs per call; test_autograd_eager.cpp checks its mask), and kNotByDifferences.
// Large inputs are probed at up to kProbes evenly spaced elements.
//
// One test per op family, so that CTest runs them in parallel. test_opdb_golden_grad.cpp
// checks the same gradients against PyTorch's.
#include "test_support/opdb.h"

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
};

bool all_finite(const Tensor& t) {
  if (t.numel() == 0) return true;
  return isfinite(t).all().item<bool>();
}

// The sample with its floating inputs as f64 leaves; null when an input is not finite.
std::optional<std::vector<Tensor>> leaves_of(const opdb::Sample& s, std::vector<size_t>& diff) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < s.size(); ++i) {
    const Tensor& t = s[i];
    if (t.defined() && is_floating_point(t.dtype())) {
      if (!all_finite(t)) return std::nullopt;
      out.push_back(t.to(kDouble).contiguous().clone().requires_grad_());
      diff.push_back(i);
    } else {
      out.push_back(t);
    }
  }
  return out;
}

// What the entry's function sees: fresh copies (a function may write into its inputs, and a
// leaf that requires grad cannot be written).
std::vector<Tensor> fresh(const std::vector<Tensor>& in) {
  std::vector<Tensor> r;
  for (const Tensor& t : in) r.push_back(t.defined() && is_floating_point(t.dtype()) ? t.clone() : t);
  return r;
}

struct Contraction {
  std::vector<size_t> outputs;  // the differentiable outputs
  std::vector<Tensor> cotangents;
};

// NaN where an output changed its size (an op whose result size depends on the values, such as
// unique, when the step merges or splits two values): not a smooth point.
double contract(const std::vector<Tensor>& outs, const Contraction& c) {
  Tensor l = zeros({}, TensorOptions(kDouble));
  for (size_t j = 0; j < c.outputs.size(); ++j) {
    const Tensor& o = outs[c.outputs[j]];
    if (o.sizes() != c.cotangents[j].sizes()) return std::nan("");
    l = l + (o.to(kDouble) * c.cotangents[j]).sum();
  }
  return l.item<double>();
}

// L at `x` with element k of input i moved by h.
double probe(const opdb::OpEntry& e, const std::vector<Tensor>& x, size_t i, int64_t k, double h,
             const Contraction& c) {
  NoGradGuard no_grad;
  std::vector<Tensor> in;
  for (const Tensor& t : x) in.push_back(t.defined() && is_floating_point(t.dtype()) ? t.detach().clone() : t);
  in[i].data_ptr<double>()[k] += h;
  return contract(e.fn(in), c);
}

double central(const opdb::OpEntry& e, const std::vector<Tensor>& x, size_t i, int64_t k, double h,
               const Contraction& c) {
  return (probe(e, x, i, k, h, c) - probe(e, x, i, k, -h, c)) / (2 * h);
}

struct Tally {
  int samples = 0, elements = 0, skipped_kinks = 0;
};

// Checks one sample; failures go to gtest. Returns false when the sample has nothing to check.
bool check_sample(const opdb::OpEntry& e, const opdb::Sample& s, Tally& tally) {
  std::vector<size_t> diff;
  std::optional<std::vector<Tensor>> leaves = leaves_of(s, diff);
  if (!leaves || diff.empty()) return false;
  std::vector<Tensor> outs;
  try {
    outs = e.fn(fresh(*leaves));
  } catch (const Error&) {
    return false;  // a sample PyTorch rejects too (test_opdb_golden.cpp checks the message)
  }
  Contraction c;
  for (size_t j = 0; j < outs.size(); ++j) {
    const Tensor& o = outs[j];
    if (!o.defined() || !is_floating_point(o.dtype()) || !o.requires_grad()) continue;
    if (!all_finite(o.detach()) || o.dtype() != kDouble) return false;
    c.outputs.push_back(j);
    c.cotangents.push_back(opdb::wave(o.sizes().vec(), kDouble, 0.3 + 0.7 * static_cast<double>(j), 0.61));
  }
  if (c.outputs.empty()) return false;
  Tensor l = zeros({}, TensorOptions(kDouble));
  for (size_t j = 0; j < c.outputs.size(); ++j) l = l + (outs[c.outputs[j]].to(kDouble) * c.cotangents[j]).sum();
  std::vector<Tensor> wrt;
  for (size_t i : diff) wrt.push_back((*leaves)[i]);
  std::vector<Tensor> grads = autograd::grad({l}, wrt, {}, std::nullopt, false, /*allow_unused=*/true);
  for (size_t n = 0; n < diff.size(); ++n) {
    const size_t i = diff[n];
    const Tensor& x = (*leaves)[i];
    if (grads[n].defined()) {
      EXPECT_EQ(grads[n].sizes().vec(), x.sizes().vec()) << "input " << i << ": gradient of the wrong shape";
      EXPECT_EQ(grads[n].dtype(), kDouble) << "input " << i << ": gradient of the wrong dtype";
      if (grads[n].sizes() != x.sizes()) continue;
    }
    const Tensor analytic = grads[n].defined() ? grads[n].contiguous() : zeros_like(x.detach());
    const double* a = analytic.data_ptr<double>();
    const int64_t numel = x.numel();
    const int64_t stride = std::max<int64_t>(1, numel / kProbes);
    for (int64_t k = 0; k < numel; k += stride) {
      const double h = 1e-6;
      const double mid = probe(e, *leaves, i, k, 0, c), up = probe(e, *leaves, i, k, h, c),
                   down = probe(e, *leaves, i, k, -h, c);
      const double num = (up - down) / (2 * h);
      const double coarse = central(e, *leaves, i, k, 1e-4, c);
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
  return true;
}

// The database's families (test_support/opdb.h), listed here because the test instances are
// made at load time, before the database may be built; EveryFamilyIsChecked keeps them in step.
const std::vector<std::string> kFamilies = {
    "activation", "attention", "binary", "cast",     "conv",      "dropout",  "factory", "index",
    "linear",     "matmul",    "model",  "moments",  "norm",      "pointwise", "pool",   "random",
    "rearrange",  "reduction", "resample", "scan",   "shape",     "softmax",  "sort",    "ternary",
    "unary",      "view"};

TEST(GradCheckFamilies, EveryFamilyIsChecked) {
  std::set<std::string> listed(kFamilies.begin(), kFamilies.end());
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

INSTANTIATE_TEST_SUITE_P(Families, GradCheck, ::testing::ValuesIn(kFamilies),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace kiln
