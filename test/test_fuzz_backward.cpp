// kiln/test/test_fuzz_backward.cpp — the differential fuzzer's backward mode: the gradients of
// seeded random programs (test_support/fuzz_program.h), eager tape against compiled training
// entries on the interpreter backend and on the cpu backend (static, and Dynamic::True on the
// cpu), and against the vjp transform.
//
// The program's floating inputs become f64 leaves that require grad (so that the modes agree
// to f64 rounding, or to that of a narrower type the program computes in); its floating outputs that require grad are contracted with fixed cotangents
// and autograd::grad gives the gradient of every leaf. Programs that raise, draw random values
// or give non-finite results are skipped. KILN_FUZZ_SEED and KILN_FUZZ_BACKWARD_ITERS choose
// the programs (program i uses seed + i; a failure prints its seed and text). FuzzBackward.
// MatchesPyTorch checks the tape against PyTorch's gradients of other seeded programs
// (test/fuzz_golden_grad, written by tools/fuzz_golden_grad.py).
#include "kiln/kiln.h"

#include "runtime/compile/compile.h"
#include "test_support/fuzz_program.h"
#include "test_support/sanitizer.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

namespace kiln::fuzz {
namespace {

constexpr uint64_t kIters = test::kAddressSanitizer ? 30 : 300;

Tensor cotangent(const Tensor& like, size_t j) {
  const int64_t n = like.numel();
  Tensor k = arange(n, TensorOptions(kDouble));
  return ((k * 7 + static_cast<double>(5 * j)).fmod(13) - 6).div(4).reshape(like.sizes());
}

struct Grads {
  std::vector<Tensor> outputs, grads;
};

std::vector<Tensor> leaves_of(const std::vector<Tensor>& in) {
  std::vector<Tensor> out;
  for (const Tensor& t : in)
    out.push_back(t.defined() && is_floating_point(t.dtype()) ? t.to(kDouble).contiguous().clone().requires_grad_() : t);
  return out;
}

// Runs `forward` on fresh leaves and takes the gradients of the contraction.
Grads gradients(const std::vector<Tensor>& base, const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& forward) {
  std::vector<Tensor> leaves = leaves_of(base);
  Grads g;
  g.outputs = forward(leaves);
  Tensor l = zeros({}, TensorOptions(kDouble));
  size_t j = 0;
  for (const Tensor& o : g.outputs) {
    if (o.defined() && is_floating_point(o.dtype()) && o.requires_grad()) l = l + (o.to(kDouble) * cotangent(o, j)).sum();
    ++j;
  }
  std::vector<Tensor> wrt;
  for (const Tensor& t : leaves)
    if (t.defined() && t.requires_grad()) wrt.push_back(t);
  if (wrt.empty() || !l.requires_grad()) return g;
  g.grads = autograd::grad({l}, wrt, {}, std::nullopt, false, /*allow_unused=*/true);
  for (size_t k = 0; k < wrt.size(); ++k)
    if (!g.grads[k].defined()) g.grads[k] = zeros_like(wrt[k].detach());
  return g;
}

bool finite(const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts)
    if (t.defined() && is_floating_point(t.dtype()) && t.numel() > 0 && !isfinite(t.detach()).all().item<bool>())
      return false;
  return true;
}

// The relative tolerance of a program's gradients: f64 rounding, unless a value on the way is
// computed in a narrower float type (log_softmax(dtype=f32), a cast to f16...).
double tolerance_of(const Program& p, const std::vector<Tensor>& in) {
  std::vector<Tensor> all;
  {
    NoGradGuard no_grad;
    replay(p, leaves_of(in), &all);
  }
  double tol = 1e-7;
  for (const Tensor& t : all) {
    if (!t.defined() || !is_floating_point(t.dtype())) continue;
    if (t.dtype() == kFloat) tol = std::max(tol, 1e-4);
    if (t.dtype() == kHalf || t.dtype() == kBFloat16) tol = std::max(tol, 3e-2);
  }
  return tol;
}

std::string differ(const std::vector<Tensor>& want, const std::vector<Tensor>& got, double tol) {
  if (want.size() != got.size()) return std::to_string(got.size()) + " gradients, expected " + std::to_string(want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    const std::vector<double> w = want[k].detach().contiguous().to_vector<double>();
    const std::vector<double> g = got[k].detach().contiguous().to_vector<double>();
    if (w.size() != g.size()) return "gradient " + std::to_string(k) + " has another size";
    double scale = 1;
    for (double v : w) scale = std::max(scale, std::abs(v));
    for (size_t i = 0; i < w.size(); ++i)
      if (std::abs(w[i] - g[i]) > tol * (1e-2 * scale + std::abs(w[i])))
        return fmt::format("gradient {} element {}: {}, expected {} (tolerance {} relative)", k, i, g[i], w[i], tol);
  }
  return "";
}

bool draws_random(const Program& p) {
  for (const Node& n : p.nodes)
    if (const OpSpec* s = find_op(n.op); s && (s->flags & kRandom)) return true;
  return false;
}

TEST(FuzzBackward, CompiledAndTransformedGradientsMatchTheTape) {
  const uint64_t seed = env_u64("KILN_FUZZ_SEED", 20261128);
  const uint64_t iters = env_u64("KILN_FUZZ_BACKWARD_ITERS", kIters);
  int compared = 0, reported = 0;
  for (uint64_t i = 0; i < iters; ++i) {
    const uint64_t s = seed + i;
    const Program p = generate(s);
    if (draws_random(p)) continue;
    const std::vector<Tensor> in = make_inputs(p, 0);
    auto eager = [&p](const std::vector<Tensor>& x) { return replay(p, x); };
    Grads want;
    try {
      want = gradients(in, eager);
    } catch (const Error&) {
      continue;  // a program kiln and PyTorch reject (the forward fuzzer checks the message)
    }
    if (want.grads.empty() || !finite(want.outputs) || !finite(want.grads)) continue;
    const double tol = tolerance_of(p, in);
    auto report = [&](const char* mode, const std::string& what) {
      if (!what.empty() && reported++ < 10)
        ADD_FAILURE() << "[fuzz backward] seed " << s << " (KILN_FUZZ_SEED=" << s << " KILN_FUZZ_BACKWARD_ITERS=1), "
                      << mode << ": " << what << "\n" << p.text();
    };
    const detail::TraceFn fn = [&p](const std::vector<detail::ArgValue>& args) {
      std::vector<Tensor> ts;
      for (const auto& a : args) ts.push_back(std::get<Tensor>(a));
      return replay(p, ts);
    };
    // The interpreter and cpu backends with static sizes, and the cpu backend with every size
    // symbolic (Dynamic::True: one backward program for every size).
    for (const auto& [backend, dynamic] : {std::pair{"interpreter", Dynamic::False}, std::pair{"cpu", Dynamic::False},
                                           std::pair{"cpu", Dynamic::True}}) {
      CompileOptions o;
      o.backend = backend;
      o.dynamic = dynamic;
      auto state = detail::make_compiled_state(o);
      const std::string mode = std::string(backend) + (dynamic == Dynamic::True ? ", Dynamic::True" : "");
      try {
        Grads got = gradients(in, [&](const std::vector<Tensor>& x) {
          return detail::call_compiled(*state, std::vector<detail::ArgValue>(x.begin(), x.end()), fn);
        });
        report(mode.c_str(), differ(want.grads, got.grads, tol));
      } catch (const std::exception& err) {
        report(mode.c_str(), std::string("raised: ") + err.what());
      }
    }
    try {
      // The vjp transform of the program, run eagerly.
      std::vector<Tensor> leaves = leaves_of(in);
      std::vector<Tensor> primals;
      for (const Tensor& t : leaves)
        if (t.defined() && t.requires_grad()) primals.push_back(t.detach());
      auto on_primals = [&](const std::vector<Tensor>& pr) {
        std::vector<Tensor> x = leaves;
        size_t k = 0;
        for (Tensor& t : x)
          if (t.defined() && t.requires_grad()) t = pr.at(k++);
        return replay(p, x);
      };
      VjpResult r = vjp(on_primals, primals);
      std::vector<Tensor> cot;
      for (size_t j = 0; j < r.outputs.size(); ++j)
        cot.push_back(is_floating_point(r.outputs[j].dtype()) ? cotangent(r.outputs[j], j) : Tensor());
      report("vjp", differ(want.grads, r.pullback(cot), tol));
    } catch (const std::exception& err) {
      report("vjp", std::string("raised: ") + err.what());
    }
    ++compared;
  }
  std::printf("[fuzz backward] %d programs' gradients compared in 4 modes\n", compared);
  EXPECT_GT(compared, static_cast<int>(iters / 4));
}

constexpr uint64_t kGoldenSeed = 910000;

// The emitter: KILN_FUZZ_BACKWARD_EMIT=path [KILN_FUZZ_ITERS=n] [KILN_FUZZ_SEED=s] writes the
// programs of seeds s.. (kGoldenSeed.. by default) that draw no random values, for
// tools/fuzz_golden_grad.py.
TEST(FuzzBackward, Emit) {
  const char* path = std::getenv("KILN_FUZZ_BACKWARD_EMIT");
  if (!path) GTEST_SKIP() << "set KILN_FUZZ_BACKWARD_EMIT=<file> to write programs for tools/fuzz_golden_grad.py";
  write_golden_heads(path, env_u64("KILN_FUZZ_SEED", kGoldenSeed), env_u64("KILN_FUZZ_ITERS", 200), GenOptions{},
                     [](const Program& p) { return !draws_random(p); });
}

// test/fuzz_golden_grad/*.txt: PyTorch's gradients of those programs (f64 leaves, the
// cotangents above), written by tools/fuzz_golden_grad.py; the tape must match them (the test
// above ties the compiled modes and vjp to the tape). Records torch could not differentiate, or
// whose values are not finite, are "skip". KILN_FUZZ_GOLDEN_DIR=dir reads another directory.
TEST(FuzzBackward, MatchesPyTorch) {
  const char* other = std::getenv("KILN_FUZZ_GOLDEN_DIR");
  const std::filesystem::path dir =
      other ? std::filesystem::path(other) : std::filesystem::path(KILN_TEST_DATA_DIR) / "fuzz_golden_grad";
  ASSERT_TRUE(std::filesystem::exists(dir)) << dir;
  int compared = 0, skipped = 0, reported = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".txt") continue;
    for (const GoldenRecord& r : read_golden_records(entry.path().string())) {
      if (r.results.empty() || r.results[0].rfind("skip", 0) == 0) {
        ++skipped;
        continue;
      }
      const Program p = Program::parse(r.program);
      const std::vector<Tensor> in = golden_inputs(p, r);
      std::vector<Tensor> want;
      for (const std::string& line : r.results) {
        ScalarType dt;
        std::vector<int64_t> shape;
        std::vector<double> vals;
        parse_value_line(line, 2, &dt, &shape, &vals);
        want.push_back(tensor_of(dt, shape, vals));
      }
      std::string what;
      try {
        const Grads got = gradients(in, [&p](const std::vector<Tensor>& x) { return replay(p, x); });
        what = differ(want, got.grads, tolerance_of(p, in));
      } catch (const std::exception& err) {
        what = std::string("raised: ") + err.what();
      }
      if (!what.empty() && reported++ < 10)
        ADD_FAILURE() << "[fuzz backward golden] " << entry.path().filename().string() << ": " << what << "\n" << r.program;
      ++compared;
    }
  }
  std::printf("[fuzz backward golden] %d programs' gradients compared with PyTorch's, %d skipped\n", compared, skipped);
  EXPECT_GT(compared, 50);
}

}  // namespace
}  // namespace kiln::fuzz
