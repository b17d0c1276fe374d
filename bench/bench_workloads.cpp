// kiln/bench/bench_workloads.cpp — the workloads as kiln eager, kiln compiled and fused.
//
// Each workload is one kiln function `fn` of tensors. Its Instance runs `fn` eagerly, runs
// `compile(fn)` (compiled and checked once before any timing, so the timed calls are warm
// cache hits), runs the same `fn` compiled with Dynamic::True (large workloads: every dim of
// size >= 2 symbolic; the instance checks once, with explain, that the entry really binds
// symbols) and runs the hand-written loop of bench_fused.h on the same input buffers. The
// compiled and fused outputs are compared once per instance; the summary prints the largest
// relative difference, so a fast but wrong path is visible. Only one instance lives at a time
// (the benchmarks of a workload run back to back), which keeps the resident memory of the
// 16M-element cases to a few hundred MB.
#include "bench/bench_common.h"
#include "bench/bench_fused.h"

#include "kiln/kiln.h"

#include <benchmark/benchmark.h>

#include <array>
#include <cmath>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <utility>

namespace kiln::bench {

namespace {

using Inputs = std::vector<Tensor>;
using FusedFn = std::function<void(const Inputs& in, float* out)>;

float* fp(const Tensor& t) { return t.data_ptr<float>(); }

double rel_diff(const Tensor& got, const Tensor& ref) {
  const Tensor g = got.contiguous();
  if (g.numel() != ref.numel()) return INFINITY;
  const float* a = fp(g);
  const float* b = fp(ref);
  double worst = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    const double d = std::fabs(static_cast<double>(a[i]) - b[i]) / (1.0 + std::fabs(static_cast<double>(b[i])));
    if (!(d <= worst)) worst = d;  // NaN propagates as the worst
  }
  return worst;
}

template <size_t N, typename Fn, size_t... I>
auto call_n(Fn& fn, const Inputs& in, std::index_sequence<I...>) {
  return fn(in[I]...);
}

// Builds the three closures for `fn` with N tensor inputs; the fused loop writes into a
// preallocated tensor of out_sizes.
template <size_t N, typename Fn>
std::unique_ptr<Instance> instance(Fn fn, Inputs in, std::vector<int64_t> out_sizes, FusedFn fused) {
  struct State {
    Fn fn;
    CompiledFunction<Fn> cf;      // static first (Dynamic::Auto, never recompiled here)
    CompiledFunction<Fn> cf_dyn;  // Dynamic::True: symbolic from the first compile
    Inputs in;
    Tensor out_eager, out_compiled, out_dynamic, out_fused;
    FusedFn fused;
  };
  CompileOptions dyn;
  dyn.dynamic = Dynamic::True;
  auto s = std::make_shared<State>(
      State{fn, compile(fn, CompileOptions{}), compile(fn, dyn), std::move(in), {}, {}, {}, {}, std::move(fused)});
  s->out_fused = kiln::empty(out_sizes);
  auto inst = std::make_unique<Instance>();
  inst->eager = [s] {
    s->out_eager = call_n<N>(s->fn, s->in, std::make_index_sequence<N>{});
    benchmark::DoNotOptimize(s->out_eager.impl());
  };
  inst->compiled = [s] {
    s->out_compiled = call_n<N>(s->cf, s->in, std::make_index_sequence<N>{});
    benchmark::DoNotOptimize(s->out_compiled.impl());
  };
  inst->dynamic = [s] {
    s->out_dynamic = call_n<N>(s->cf_dyn, s->in, std::make_index_sequence<N>{});
    benchmark::DoNotOptimize(s->out_dynamic.impl());
  };
  inst->fused = [s] {
    s->fused(s->in, fp(s->out_fused));
    benchmark::ClobberMemory();
  };
  inst->max_rel_diff = [s] { return rel_diff(s->out_compiled, s->out_fused); };
  inst->dynamic_rel_diff = [s] { return rel_diff(s->out_dynamic, s->out_fused); };
  inst->explain_dynamic = [s] {
    return [&]<size_t... I>(std::index_sequence<I...>) { return s->cf_dyn.explain(s->in[I]...); }(
        std::make_index_sequence<N>{});
  };
  return inst;
}

void add_pointwise(std::vector<Workload>& ws, const std::string& tag, int64_t n) {
  Workload w{"pointwise/" + tag, "a/(abs(a)+1)*b " + tag, 12.0 * static_cast<double>(n), 0,
             n >= (1 << 20) ? Target::Fused125 : Target::None, 1e-5, {}};
  w.make = [n] {
    return instance<2>([](const Tensor& a, const Tensor& b) { return a / (abs(a) + 1) * b; },
                       {randn({n}), randn({n})}, {n},
                       [n](const Inputs& in, float* out) { fused_pointwise(fp(in[0]), fp(in[1]), out, n); });
  };
  ws.push_back(std::move(w));
}

std::string dims(int64_t r, int64_t c) { return std::to_string(r) + "x" + std::to_string(c); }
bool large(int64_t r, int64_t c) { return r * c >= (1 << 20); }

void add_rows(std::vector<Workload>& ws, int64_t r, int64_t c) {
  const double rc = static_cast<double>(r * c);
  const std::string d = dims(r, c), lab = "[" + std::to_string(r) + "," + std::to_string(c) + "]";
  const Target t = large(r, c) ? Target::Fused125 : Target::None;
  ws.push_back({"gelu/" + d, "gelu_tanh(x+bias) " + lab, 8.0 * rc, 0, t, 1e-4, [r, c] {
                  return instance<2>([](const Tensor& x, const Tensor& b) { return gelu(x + b, "tanh"); },
                                     {randn({r, c}), randn({c})}, {r, c}, [r, c](const Inputs& in, float* out) {
                                       fused_gelu_bias(fp(in[0]), fp(in[1]), out, r, c);
                                     });
                }});
}

void add_norms(std::vector<Workload>& ws, int64_t r, int64_t c, bool with_softmax) {
  const double rc = static_cast<double>(r * c);
  const std::string d = dims(r, c), lab = "[" + std::to_string(r) + "," + std::to_string(c) + "]";
  const Target t = large(r, c) ? Target::Fused125 : Target::None;
  if (with_softmax)
    ws.push_back({"softmax/" + d, "softmax(x,-1) " + lab, 8.0 * rc, 0, t, 1e-4, [r, c] {
                    return instance<1>([](const Tensor& x) { return softmax(x, -1); }, {randn({r, c})}, {r, c},
                                       [r, c](const Inputs& in, float* out) { fused_softmax(fp(in[0]), out, r, c); });
                  }});
  else {
    ws.push_back({"layer_norm/" + d, "layer_norm " + lab, 8.0 * rc, 0, t, 1e-3, [r, c] {
                    return instance<3>(
                        [](const Tensor& x, const Tensor& w, const Tensor& b) {
                          return layer_norm(x, {x.size(-1)}, w, b);
                        },
                        {randn({r, c}), randn({c}), randn({c})}, {r, c}, [r, c](const Inputs& in, float* out) {
                          fused_layer_norm(fp(in[0]), fp(in[1]), fp(in[2]), out, r, c);
                        });
                  }});
    ws.push_back({"rms_norm/" + d, "rms_norm " + lab, 8.0 * rc, 0, t, 1e-3, [r, c] {
                    return instance<2>([](const Tensor& x, const Tensor& w) { return rms_norm(x, {x.size(-1)}, w); },
                                       {randn({r, c}), randn({c})}, {r, c}, [r, c](const Inputs& in, float* out) {
                                         fused_rms_norm(fp(in[0]), fp(in[1]), out, r, c);
                                       });
                  }});
  }
}

std::vector<Workload> build() {
  std::vector<Workload> ws;
  add_pointwise(ws, "4K", 4096);
  add_pointwise(ws, "16M", int64_t{1} << 24);
  add_rows(ws, 64, 64);
  add_rows(ws, 4096, 4096);
  add_norms(ws, 64, 128, true);
  add_norms(ws, 4096, 1024, true);
  add_norms(ws, 64, 64, false);
  add_norms(ws, 4096, 1024, false);

  const int64_t S = 4096;
  const double ss = static_cast<double>(S * S);
  ws.push_back({"sum_all/4096x4096", "sum(x) [4096,4096]", 4.0 * ss, 0, Target::Fused125, 1e-3, [S] {
                  return instance<1>([](const Tensor& x) { return sum(x); }, {randn({S, S})}, {},
                                     [S](const Inputs& in, float* out) { *out = fused_sum_all(fp(in[0]), S * S); });
                }});
  ws.push_back({"col_sum/4096x4096", "sum(x,{0}) [4096,4096]", 4.0 * ss + 4.0 * S, 0, Target::Fused125, 1e-4, [S] {
                  return instance<1>([](const Tensor& x) { return sum(x, {0}); }, {randn({S, S})}, {S},
                                     [S](const Inputs& in, float* out) { fused_col_sum(fp(in[0]), out, S, S); });
                }});

  const int64_t M = 1024;
  ws.push_back({"matmul/1024", "matmul 1024^3", 0, 2.0 * M * M * M, Target::Blas90, 1e-4, [M] {
                  return instance<2>([](const Tensor& a, const Tensor& b) { return matmul(a, b); },
                                     {randn({M, M}), randn({M, M})}, {M, M}, [M](const Inputs& in, float* out) {
                                       blas_matmul(fp(in[0]), fp(in[1]), out, M, M, M);
                                     });
                }});
  ws.push_back({"linear_relu/512x1024x1024", "relu(linear) [512,1024]x[1024,1024]", 0, 2.0 * 512 * 1024 * 1024,
                Target::None, 1e-4, [] {
                  return instance<3>(
                      [](const Tensor& x, const Tensor& w, const Tensor& b) { return relu(linear(x, w, b)); },
                      {randn({512, 1024}), randn({1024, 1024}), randn({1024})}, {512, 1024},
                      [](const Inputs& in, float* out) {
                        fused_linear_bias_relu(fp(in[0]), fp(in[1]), fp(in[2]), out, 512, 1024, 1024);
                      });
                }});
  // A short K: the bias and relu pass is a large share of the product's cost, so it shows
  // what folding them into the product's call saves (docs/compiler.md, "Products with their
  // bias and relu"); the fused loop makes that pass after the whole GEMM.
  ws.push_back({"linear_relu/8192x128x1024", "relu(linear) [8192,128]x[1024,128]", 0, 2.0 * 8192 * 1024 * 128,
                Target::None, 1e-4, [] {
                  return instance<3>(
                      [](const Tensor& x, const Tensor& w, const Tensor& b) { return relu(linear(x, w, b)); },
                      {randn({8192, 128}), randn({1024, 128}), randn({1024})}, {8192, 1024},
                      [](const Inputs& in, float* out) {
                        fused_linear_bias_relu(fp(in[0]), fp(in[1]), fp(in[2]), out, 8192, 1024, 128);
                      });
                }});
  // A linear layer on a 3-D input, as a transformer's projections are: the batch folds into
  // the rows of one GEMM (the limit: the same GEMM on the flattened input).
  ws.push_back({"linear3d/2x64x128x384", "linear [2,64,128]x[384,128]", 0, 2.0 * 128 * 384 * 128, Target::None, 1e-4,
                [] {
                  return instance<3>([](const Tensor& x, const Tensor& w, const Tensor& b) { return linear(x, w, b); },
                                     {randn({2, 64, 128}), randn({384, 128}), randn({384})}, {2, 64, 384},
                                     [](const Inputs& in, float* out) {
                                       fused_linear_bias(fp(in[0]), fp(in[1]), fp(in[2]), out, 128, 384, 128);
                                     });
                }});
  ws.push_back({"mlp/64x512x2048", "MLP fwd [64,512]->2048->512", 0, 2.0 * 2 * 64 * 512 * 2048, Target::None, 1e-4,
                [] {
                  auto scratch = std::make_shared<std::vector<float>>(64 * 2048);
                  return instance<5>(
                      [](const Tensor& x, const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2) {
                        return linear(relu(linear(x, w1, b1)), w2, b2);
                      },
                      {randn({64, 512}), randn({2048, 512}) * 0.05, randn({2048}), randn({512, 2048}) * 0.05,
                       randn({512})},
                      {64, 512}, [scratch](const Inputs& in, float* out) {
                        fused_linear_bias_relu(fp(in[0]), fp(in[1]), fp(in[2]), scratch->data(), 64, 2048, 512);
                        fused_linear_bias(scratch->data(), fp(in[3]), fp(in[4]), out, 64, 512, 2048);
                      });
                }});
  const int64_t N = 4096, C = 1000;
  ws.push_back({"cross_entropy/4096x1000", "cross_entropy [4096,1000]", 4.0 * N * C + 8.0 * N, 0, Target::Fused125,
                1e-4, [N, C] {
                  return instance<2>([](const Tensor& x, const Tensor& t) { return cross_entropy(x, t); },
                                     {randn({N, C}), randint(0, C, {N}, kLong)}, {},
                                     [N, C](const Inputs& in, float* out) {
                                       *out = fused_cross_entropy(fp(in[0]), in[1].data_ptr<int64_t>(), N, C);
                                     });
                }});
  // index_add into zeros, as an embedding's backward sums its output gradient by token id: a
  // Scatter kernel (eager: the scatter_add library call). The limit reads src and writes out.
  const int64_t V = 8192, D = 512, T = 16384;
  ws.push_back({"index_add/8192x512x16384", "index_add(zeros [8192,512], 0, ids, g [16384,512])",
                4.0 * T * D + 8.0 * T + 4.0 * V * D, 0, Target::None, 1e-4, [V, D, T] {
                  return instance<2>(
                      [V, D](const Tensor& g, const Tensor& ids) { return index_add(zeros({V, D}), 0, ids, g); },
                      {randn({T, D}), randint(0, V, {T}, kLong)}, {V, D}, [V, D, T](const Inputs& in, float* out) {
                        fused_index_add_rows(fp(in[0]), in[1].data_ptr<int64_t>(), out, T, V, D);
                      });
                }});
  return ws;
}

// Compiles the Dynamic::True function (trace + compile: its timed calls are cache hits),
// checks its output and that its guards bind symbols ("2 <= a.size(0)"). A failure is
// recorded in side().dynamic_status, and the dynamic benchmark reports it as an error.
void prepare_dynamic(const Workload& w, Instance& inst) {
  std::string& status = side().dynamic_status[w.key];
  try {
    inst.dynamic();
    side().dynamic_check[w.key] = inst.dynamic_rel_diff();
    status = inst.explain_dynamic().find("2 <= ") != std::string::npos ? "symbolic" : "no symbolic guard in explain";
  } catch (const std::exception& e) {
    status = std::string("compile failed: ") + e.what();
  }
}

// The one live instance: built on the first benchmark of a workload, dropped on the next.
Instance& current(const Workload& w) {
  static std::string key;
  static std::unique_ptr<Instance> inst;
  if (key != w.key || !inst) {
    inst.reset();
    manual_seed(42);
    inst = w.make();
    key = w.key;
    inst->compiled();  // trace + compile now: the timed calls are cache hits
    inst->fused();
    side().check[w.key] = inst->max_rel_diff();
    if (w.large()) prepare_dynamic(w, *inst);
  }
  return *inst;
}

enum class Mode { Eager, Compiled, Dynamic, Fused };

void run(benchmark::State& st, const Workload* w, Mode mode) {
  Instance& inst = current(*w);
  if (mode == Mode::Dynamic && side().dynamic_status[w->key] != "symbolic") {
    st.SkipWithError(("Dynamic::True entry: " + side().dynamic_status[w->key]).c_str());
    return;
  }
  const std::function<void()>& body = mode == Mode::Eager      ? inst.eager
                                      : mode == Mode::Compiled ? inst.compiled
                                      : mode == Mode::Dynamic  ? inst.dynamic
                                                               : inst.fused;
  if (mode == Mode::Eager && !inst.warmed_eager) {
    // Keep one-time work out of the timing: an eager composite op's first call runs its
    // decomposition, the second compiles it into one program (runtime/eager/eager_composite.cpp).
    inst.warmed_eager = true;
    body();
    body();
  }
  for (auto _ : st) body();
  if (w->bytes > 0) st.SetBytesProcessed(static_cast<int64_t>(w->bytes * static_cast<double>(st.iterations())));
  if (w->flops > 0)
    st.counters["FLOP/s"] = benchmark::Counter(w->flops, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

const std::vector<Workload>& workloads() {
  static const std::vector<Workload> ws = build();
  return ws;
}

void register_workload_benchmarks() {
  for (const Workload& w : workloads()) {
    for (auto [mode, name] : {std::pair{Mode::Eager, "eager"}, std::pair{Mode::Compiled, "compiled"},
                              std::pair{Mode::Dynamic, "dynamic"}, std::pair{Mode::Fused, "fused"}}) {
      if (mode == Mode::Dynamic && !w.large()) continue;
      benchmark::RegisterBenchmark((w.key + "/" + name).c_str(), run, &w, mode)
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
    }
  }
}

}  // namespace kiln::bench
