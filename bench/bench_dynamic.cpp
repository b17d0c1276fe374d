// kiln/bench/bench_dynamic.cpp — what symbolic shapes cost: guard evaluation and warm calls.
//
// guards/{static,dynamic}/<N>: GuardSet::check alone, for N tensor arguments of shape [8, 16]
// (distinct tensors, f32, contiguous). The static set is GuardSet::from_args without symbols
// (dtype, device, rank, sizes by value, strides, aliasing); the dynamic one is built as
// kiln::compile builds it under Dynamic::True: one ir::ShapeEnv, every dim a symbol from
// create_symbol with duck sizing, so a0 binds s0 = 8 and s1 = 16 ("2 <= a0.size(0)") and
// every later input compares with them (SymbolEq) and guards contiguity. Before timing, each
// set must accept its own arguments, and on [12, 16] inputs the static set must reject and the
// dynamic one accept.
//
// overhead/call_{static,dynamic}_<N>: a warm call of compile((a0 + ... + 1)) on N inputs of
// [8, 16] under Dynamic::False and Dynamic::True: argument packing, guard check, cache lookup,
// output allocation, one small kernel. The result is checked once against eager, the dynamic
// entry must show "2 <= " in explain, and the timed calls must compile nothing.
//
// print_dynamic_summary prints the dynamic-vs-static table of the large workloads (rows
// "<key>/dynamic" of bench_workloads.cpp, target dynamic <= 1.10x static) and these rows.
#include "bench/bench_common.h"

#include "kiln/kiln.h"
#include "guards/guard_set.h"
#include "ir/shape_env.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kiln::bench {

namespace {

constexpr int64_t kRows = 8, kCols = 16;
constexpr int kInputCounts[] = {1, 4, 16};
constexpr double kDynamicTarget = 1.10;  // dynamic within 10% of static
constexpr double kCallTarget = 1e-6;     // warm call with 4 inputs

std::vector<Tensor> tensor_args(int n, int64_t rows) {
  std::vector<Tensor> args;
  for (int i = 0; i < n; ++i) args.push_back(randn({rows, kCols}));
  return args;
}

// What the guards read of the tensors (valid while they live).
std::vector<guards::GuardArg> guard_view(const std::vector<Tensor>& ts) {
  std::vector<guards::GuardArg> out;
  for (const Tensor& t : ts) out.emplace_back(t.impl());
  return out;
}

std::vector<std::string> arg_names(int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back(fmt::format("a{}", i));
  return names;
}

// The guards compile() would build for `args` under Dynamic::False (env null) or
// Dynamic::True (every dim >= 2 a duck-sized symbol of `env`).
guards::GuardSet build_guards(const std::vector<Tensor>& args, ir::ShapeEnv* env) {
  const std::vector<std::string> names = arg_names(static_cast<int>(args.size()));
  if (!env) return guards::GuardSet::from_args(guard_view(args), names);
  guards::SymbolicInputs sym;
  sym.env = env;
  for (size_t i = 0; i < args.size(); ++i) {
    const Tensor& t = args[i];
    std::vector<ir::Expr> sizes;
    for (int64_t d = 0; d < t.dim(); ++d) {
      const int64_t n = t.size(d);
      sizes.push_back(n >= 2 ? env->create_symbol(n, fmt::format("{}.size({})", names[i], d)) : ir::Expr(n));
    }
    sym.sizes.push_back(std::move(sizes));
  }
  return guards::GuardSet::from_args(guard_view(args), names, &sym);
}

void bm_guard_check(benchmark::State& st, int n, bool dynamic) {
  manual_seed(7);
  const std::vector<Tensor> tensors = tensor_args(n, kRows), resized_tensors = tensor_args(n, 12);
  const std::vector<guards::GuardArg> args = guard_view(tensors), resized = guard_view(resized_tensors);
  ir::ShapeEnv env;
  const guards::GuardSet gs = build_guards(tensors, dynamic ? &env : nullptr);
  if (!gs.check(args)) return st.SkipWithError("the guard set rejects the arguments it was built from");
  if (gs.check(resized) != dynamic)
    return st.SkipWithError(dynamic ? "dynamic guards reject [12,16] inputs" : "static guards accept [12,16] inputs");
  if (dynamic && gs.str().find("2 <= ") == std::string::npos)
    return st.SkipWithError("dynamic guard set binds no symbol");
  side().guard_counts[fmt::format("guards/{}/{}", dynamic ? "dynamic" : "static", n)] = gs.guards().size();
  for (auto _ : st) {
    bool ok = gs.check(args);
    benchmark::DoNotOptimize(ok);
  }
}

template <size_t N, size_t... I>
Tensor call_all(const auto& f, const std::vector<Tensor>& in, std::index_sequence<I...>) {
  return f(in[I]...);
}

template <size_t N>
void bm_warm_call(benchmark::State& st, Dynamic dyn) {
  manual_seed(11);
  std::vector<Tensor> in;
  for (size_t i = 0; i < N; ++i) in.push_back(randn({kRows, kCols}));
  CompileOptions opts;
  opts.dynamic = dyn;
  const auto sum_plus_one = [](const auto&... t) { return (t + ... + 1); };
  auto f = compile(sum_plus_one, opts);
  const auto seq = std::make_index_sequence<N>{};
  Tensor out = call_all<N>(f, in, seq);  // trace + compile outside the timing
  const Tensor want = call_all<N>(sum_plus_one, in, seq).contiguous();
  const Tensor got = out.contiguous();
  for (int64_t i = 0; i < want.numel(); ++i)
    if (std::fabs(got.data_ptr<float>()[i] - want.data_ptr<float>()[i]) > 1e-5f * (1 + std::fabs(want.data_ptr<float>()[i])))
      return st.SkipWithError("compiled result differs from eager");
  const bool symbolic = [&]<size_t... I>(std::index_sequence<I...>) {
    return f.explain(in[I]...).find("2 <= ") != std::string::npos;
  }(seq);
  if (symbolic != (dyn == Dynamic::True)) return st.SkipWithError("entry is not symbolic as asked");
  out = call_all<N>(f, in, seq);
  for (auto _ : st) {
    out = call_all<N>(f, in, seq);
    benchmark::DoNotOptimize(out.impl());
  }
  if (f.stats().compiles != 1) st.SkipWithError("the timed calls recompiled");
}

std::string fmt_s(double s) {
  if (s < 0) return "—";
  if (s < 1e-6) return fmt::format("{:.1f} ns", s * 1e9);
  if (s < 1e-3) return fmt::format("{:.2f} µs", s * 1e6);
  return fmt::format("{:.3f} ms", s * 1e3);
}

std::string fmt_ratio(double num, double den) { return num < 0 || den <= 0 ? "—" : fmt::format("{:.2f}x", num / den); }

// Prints `head` then `rows` (Markdown), nothing when every row was filtered out.
void print_table(const std::string& head, const std::vector<std::string>& rows) {
  if (rows.empty()) return;
  fmt::print("{}", head);
  for (const std::string& r : rows) fmt::print("{}", r);
}

void print_dynamic_rows(const TimeOf& time, std::vector<std::string>& misses) {
  std::vector<std::string> rows;
  for (const Workload& w : workloads()) {
    if (!w.large()) continue;
    const double k = time(w.key + "/compiled"), d = time(w.key + "/dynamic");
    auto st = side().dynamic_status.find(w.key);
    if (k < 0 && d < 0 && st == side().dynamic_status.end()) continue;  // filtered out
    const std::string entry = st == side().dynamic_status.end() ? "—" : st->second;
    std::string met = "—";
    if (k > 0 && d > 0) met = d / k <= kDynamicTarget ? "met" : "NOT met";
    if (met == "NOT met")
      misses.push_back(fmt::format("dynamic {}: {} vs static {} ({})", w.label, fmt_s(d), fmt_s(k), fmt_ratio(d, k)));
    if (st != side().dynamic_status.end() && st->second != "symbolic")
      misses.push_back(fmt::format("dynamic {}: {}", w.label, st->second.substr(0, 200)));
    std::string check = "—";
    auto c = side().dynamic_check.find(w.key);
    if (c != side().dynamic_check.end()) {
      check = c->second <= w.tolerance ? "ok" : fmt::format("DIFF {:.1e}", c->second);
      if (c->second > w.tolerance)
        misses.push_back(fmt::format("dynamic {}: differs from fused loop by {:.2e}", w.label, c->second));
    }
    rows.push_back(fmt::format("| {} | {} | {} | {} | ≤{:.2f}x | {} | {} | {} |\n", w.label, fmt_s(k), fmt_s(d),
                               fmt_ratio(d, k), kDynamicTarget, met, entry == "symbolic" ? entry : "error", check));
  }
  print_table("\n### Dynamic::True vs static compiled (large workloads, warm calls)\n\n"
              "| workload | static | dynamic | dynamic/static | target | met | entry | check |\n"
              "|---|---|---|---|---|---|---|---|\n",
              rows);
}

void print_guard_rows(const TimeOf& time, std::vector<std::string>& misses) {
  auto count = [](const std::string& key) {
    auto it = side().guard_counts.find(key);
    return it == side().guard_counts.end() ? std::string("—") : std::to_string(it->second);
  };
  std::vector<std::string> rows;
  for (int n : kInputCounts) {
    const std::string sk = fmt::format("guards/static/{}", n), dk = fmt::format("guards/dynamic/{}", n);
    const double s = time(sk), d = time(dk);
    if (s < 0 && d < 0) continue;
    rows.push_back(
        fmt::format("| {} | {} | {} | {} | {} | {} |\n", n, count(sk), fmt_s(s), count(dk), fmt_s(d), fmt_ratio(d, s)));
  }
  print_table("\n### Guard evaluation: GuardSet::check, N f32 inputs of shape [8,16]\n\n"
              "| inputs | static guards | static check | dynamic guards | dynamic check | dynamic/static |\n"
              "|---|---|---|---|---|---|\n",
              rows);
  rows.clear();
  for (int n : kInputCounts) {
    const double s = time(fmt::format("overhead/call_static_{}", n)), d = time(fmt::format("overhead/call_dynamic_{}", n));
    if (s < 0 && d < 0) continue;
    std::string target = "—", met = "—";
    if (n == 4) {
      target = "≤1 µs";
      if (s > 0 && d > 0) met = s <= kCallTarget && d <= kCallTarget ? "yes" : "NO";
      if (met == "NO") misses.push_back(fmt::format("warm call, 4 inputs: static {}, dynamic {} (target ≤1 µs)", fmt_s(s), fmt_s(d)));
    }
    rows.push_back(fmt::format("| {} inputs | {} | {} | {} | {} |\n", n, fmt_s(s), fmt_s(d), target, met));
  }
  print_table("\n| warm compiled call (a0+...+1), N inputs [8,16] | static | dynamic | target | met |\n"
              "|---|---|---|---|---|\n",
              rows);
}

}  // namespace

void register_dynamic_benchmarks() {
  for (int n : kInputCounts)
    for (bool dynamic : {false, true})
      benchmark::RegisterBenchmark(fmt::format("guards/{}/{}", dynamic ? "dynamic" : "static", n).c_str(),
                                   bm_guard_check, n, dynamic)
          ->UseRealTime();
  for (Dynamic dyn : {Dynamic::False, Dynamic::True}) {
    const char* mode = dyn == Dynamic::True ? "dynamic" : "static";
    benchmark::RegisterBenchmark(fmt::format("overhead/call_{}_1", mode).c_str(), bm_warm_call<1>, dyn)->UseRealTime();
    benchmark::RegisterBenchmark(fmt::format("overhead/call_{}_4", mode).c_str(), bm_warm_call<4>, dyn)->UseRealTime();
    benchmark::RegisterBenchmark(fmt::format("overhead/call_{}_16", mode).c_str(), bm_warm_call<16>, dyn)->UseRealTime();
  }
}

void print_dynamic_summary(const TimeOf& time, std::vector<std::string>& misses) {
  print_dynamic_rows(time, misses);
  print_guard_rows(time, misses);
}

}  // namespace kiln::bench
