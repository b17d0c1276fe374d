// kiln/test/test_opdb_gradgrad.cpp — second derivatives (PyTorch's gradgradcheck) of the ops
// training differentiates twice: pointwise ops, matmul, the norms, softmax and log_softmax,
// convolutions and the losses.
//
// With L the contraction of test_support/grad_run.h and u a fixed direction per input, the
// backward run with create_graph gives M = sum_i <dL/dx_i, u_i> as a differentiable function of
// the inputs, and a second autograd::grad gives dM/dx = H u (H the Hessian of L). Each probed
// element of that is checked against (M(x + h) - M(x - h)) / 2h, M evaluated by first-order
// backward passes, within atol 1e-5 + rtol 1e-3; non-smooth points are skipped as in
// test_opdb_gradcheck.cpp. Up to two f64-able samples per entry, up to kProbes elements per input.
#include "test_support/grad_run.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace kiln {
namespace {

constexpr double kGradGradAtol = 1e-5, kGradGradRtol = 1e-3;
constexpr int64_t kProbes = 10;

const std::set<std::string> kOps = {
    "exp",         "log",        "tanh",      "sigmoid",     "sin",      "sqrt",       "reciprocal", "mul",
    "div",         "pow",        "add",       "sub",         "gelu",     "silu",       "softplus",   "elu",
    "mish",        "mm",         "bmm",       "matmul",      "linear",   "addmm",      "layer_norm", "rms_norm",
    "group_norm",  "batch_norm", "softmax",   "log_softmax", "logsumexp", "conv1d",    "conv2d",     "conv3d",
    "conv_transpose1d", "conv_transpose2d", "cross_entropy", "scaled_dot_product_attention"};

std::vector<Tensor> directions(const opdb::GradRun& r) {
  std::vector<Tensor> u;
  for (size_t n = 0; n < r.inputs.size(); ++n) u.push_back(opdb::cotangent(r.leaves[r.inputs[n]].sizes(), 100 + n));
  return u;
}

// M = sum_i <dL/dx_i, u_i> at the run's leaves, differentiable when create_graph.
Tensor directional(const opdb::OpEntry& e, const opdb::GradRun& r, const std::vector<Tensor>& u, bool create_graph) {
  std::vector<Tensor> wrt;
  for (size_t i : r.inputs) wrt.push_back(r.leaves[i]);
  std::vector<Tensor> g = autograd::grad({opdb::contract(r.outputs, r)}, wrt, {}, std::nullopt, create_graph, true);
  (void)e;
  Tensor m = zeros({}, TensorOptions(kDouble));
  for (size_t n = 0; n < g.size(); ++n)
    if (g[n].defined()) m = m + (g[n] * u[n]).sum();
  return m;
}

// M with element k of input i moved by h: a fresh first-order run.
double probe(const opdb::OpEntry& e, const opdb::Sample& s, const opdb::GradRun& base, const std::vector<Tensor>& u,
             size_t i, int64_t k, double h) {
  opdb::Sample moved = s;
  Tensor x = base.leaves[i].detach().clone();
  x.data_ptr<double>()[k] += h;
  moved[i] = x;
  std::optional<opdb::GradRun> r = opdb::grad_run(e, moved);
  if (!r || r->diff_outputs != base.diff_outputs) return std::nan("");
  for (size_t j : r->diff_outputs)
    if (r->outputs[j].sizes() != base.outputs[j].sizes()) return std::nan("");
  return directional(e, *r, u, false).item<double>();
}

TEST(GradGradCheck, SecondDerivativesMatchFiniteDifferences) {
  int entries = 0, elements = 0;
  std::set<std::string> seen;
  for (const opdb::OpEntry& e : opdb::database()) {
    if (!kOps.count(e.op()) || e.random) continue;
    int done = 0;
    for (size_t s = 0; s < e.samples.size() && done < 2; ++s) {
      SCOPED_TRACE(e.name + " sample " + std::to_string(s));
      // Every floating input as f64, so that the probes move f64 values.
      opdb::Sample sample = e.samples[s];
      for (Tensor& t : sample)
        if (t.defined() && is_floating_point(t.dtype())) t = t.to(kDouble);
      std::optional<opdb::GradRun> r = opdb::grad_run(e, sample);
      if (!r || r->diff_outputs.empty()) continue;
      bool ok = true;
      for (size_t j : r->diff_outputs) {
        const Tensor o = r->outputs[j].detach();
        ok = ok && o.dtype() == kDouble && (o.numel() == 0 || isfinite(o).all().item<bool>());
      }
      if (!ok) continue;
      const std::vector<Tensor> u = directions(*r);
      const Tensor m = directional(e, *r, u, /*create_graph=*/true);
      std::vector<Tensor> wrt;
      for (size_t i : r->inputs) wrt.push_back(r->leaves[i]);
      std::vector<Tensor> hu(wrt.size());
      if (m.requires_grad()) hu = autograd::grad({m}, wrt, {}, std::nullopt, false, /*allow_unused=*/true);
      for (size_t n = 0; n < wrt.size(); ++n) {
        const size_t i = r->inputs[n];
        const Tensor a = hu[n].defined() ? hu[n].contiguous() : zeros_like(wrt[n].detach());
        ASSERT_EQ(a.sizes(), wrt[n].sizes());
        const int64_t numel = wrt[n].numel();
        for (int64_t k = 0; k < numel; k += std::max<int64_t>(1, numel / kProbes)) {
          const double h = 1e-6;
          const double up = probe(e, sample, *r, u, i, k, h), down = probe(e, sample, *r, u, i, k, -h);
          const double mid = probe(e, sample, *r, u, i, k, 0);
          const double num = (up - down) / (2 * h);
          const double coarse = (probe(e, sample, *r, u, i, k, 1e-4) - probe(e, sample, *r, u, i, k, -1e-4)) / 2e-4;
          auto apart = [&](double p, double q) { return std::abs(p - q) > kGradGradAtol + kGradGradRtol * std::abs(num); };
          if (!std::isfinite(num) || apart(num, coarse) || apart((up - mid) / h, (mid - down) / h)) continue;
          const double got = a.data_ptr<double>()[k];
          EXPECT_LE(std::abs(got - num), kGradGradAtol + kGradGradRtol * std::abs(num))
              << "input " << i << " element " << k << ": H u " << got << ", finite differences " << num;
          ++elements;
        }
      }
      ++done;
    }
    if (done) {
      ++entries;
      seen.insert(e.op());
    }
  }
  std::printf("[gradgradcheck] %d entries (%zu ops), %d second-derivative elements checked\n", entries, seen.size(),
              elements);
  for (const char* op : {"mul", "mm", "layer_norm", "softmax", "log_softmax", "conv2d", "cross_entropy", "gelu"})
    EXPECT_TRUE(seen.count(op)) << op << " had no sample checked";
}

}  // namespace
}  // namespace kiln
