// kiln/bench/bench_sgemm.cpp — kiln_bench_sgemm: kiln's own SGEMM (runtime/cpu/sgemm.h) against
// oneDNN's and OpenBLAS's, one thread each, and against the host's peak, in one run.
//
// First, the first call of each library in this process on the MLP's first product (64 x 512 by
// 512 x 2048, a linear layer's transposed weight): what a process that multiplies once pays,
// library start included (oneDNN: dlopen and kernel generation; OpenBLAS: dlopen). Then, per
// shape, the median warm call of each and its rate in GFLOP/s, the ratio kiln / oneDNN, and
// the share of the peak: one core's rate of independent FMAs on the widest vectors the host has
// (bench_fused.h peak_fma), measured here. "tb" marks B transposed (linear's weight).
#include "bench/bench_fused.h"
#include "bench/bench_median.h"
#include "runtime/cpu/blas_library.h"
#include "runtime/cpu/onednn.h"
#include "runtime/cpu/sgemm.h"
#include "runtime/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>

using namespace kiln;

namespace {

// One core's peak in GFLOP/s: the pool's threads each run independent FMAs on the widest
// vectors (bench_fused.h peak_fma), the rate divided by their count.
double peak_gflops() {
  double best = 0;
  for (int r = 0; r < 3; ++r) {
    float sink = 0;
    const auto t0 = std::chrono::steady_clock::now();
    const double flops = bench::peak_fma(int64_t{1} << 21, &sink);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, flops / s / 1e9 / rt::num_threads());
  }
  return best;
}

struct Shape {
  int64_t M, N, K;
  bool tb;
};

struct Operands {
  std::vector<float> a, b, c;
  Operands(const Shape& s, std::mt19937& g) : a(static_cast<size_t>(s.M * s.K)), b(static_cast<size_t>(s.K * s.N)), c(static_cast<size_t>(s.M * s.N)) {
    std::uniform_real_distribution<float> u(-1, 1);
    for (float& x : a) x = u(g);
    for (float& x : b) x = u(g);
  }
};

std::function<void()> on_kiln(const Shape& s, Operands& o) {
  return [&s, &o] { rt::kiln_sgemm(false, s.tb, s.M, s.N, s.K, o.a.data(), s.K, o.b.data(), s.tb ? s.K : s.N, o.c.data(), s.N); };
}
std::function<void()> on_onednn(const Shape& s, Operands& o) {
  return [&s, &o] {
    (void)rt::onednn().sgemm('N', s.tb ? 'T' : 'N', s.M, s.N, s.K, 1.0f, o.a.data(), s.K, o.b.data(), s.tb ? s.K : s.N, 0.0f,
                             o.c.data(), s.N);
  };
}
std::function<void()> on_openblas(const Shape& s, Operands& o) {
  return [&s, &o] {
    rt::blas().sgemm(rt::BlasLibrary::kRowMajor, rt::BlasLibrary::kNoTrans, s.tb ? rt::BlasLibrary::kTrans : rt::BlasLibrary::kNoTrans,
                     static_cast<int>(s.M), static_cast<int>(s.N), static_cast<int>(s.K), 1.0f, o.a.data(), static_cast<int>(s.K),
                     o.b.data(), static_cast<int>(s.tb ? s.K : s.N), 0.0f, o.c.data(), static_cast<int>(s.N));
  };
}

double once_ms(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = bench::runs_arg(argc, argv, 21);
  const rt::LibraryTeam one(1);  // oneDNN called outside an OpenMP region: one thread, as gemm() holds it
  std::mt19937 gen(1);
  std::printf("kiln_bench_sgemm: one thread, kiln's micro-kernel %s, median of %d warm calls\n", rt::kiln_sgemm_kernel(), runs);
  const Shape first{64, 2048, 512, true};
  Operands fo(first, gen);
  const double k1 = once_ms(on_kiln(first, fo)), d1 = once_ms(on_onednn(first, fo)), o1 = once_ms(on_openblas(first, fo));
  const double kw = bench::median_ms(on_kiln(first, fo), runs), dw = bench::median_ms(on_onednn(first, fo), runs),
               ow = bench::median_ms(on_openblas(first, fo), runs);
  std::printf("\nfirst call in this process, 64x2048x512 tb (ms): kiln %.2f (warm %.2f) | onednn %.2f (warm %.2f) | openblas %.2f (warm %.2f)\n",
              k1, kw, d1, dw, o1, ow);
  const double peak = peak_gflops();
  std::printf("peak of one core (independent FMAs): %.1f GFLOP/s\n\n", peak);
  std::printf("%-18s | %9s %7s %6s | %9s %7s | %9s %7s | %11s\n", "M x N x K", "kiln us", "GF/s", "peak", "onednn us", "GF/s",
              "openblas us", "GF/s", "kiln/onednn");
  const Shape shapes[] = {{64, 2048, 512, true}, {64, 512, 2048, true}, {64, 1024, 512, true}, {16, 1024, 1024, true},
                          {128, 128, 128, false}, {256, 256, 256, false},  {512, 512, 512, false}, {512, 512, 512, true},
                          {1024, 1024, 1024, false}, {300, 70, 90, false}};
  for (const Shape& s : shapes) {
    Operands o(s, gen);
    const double flop = 2.0 * static_cast<double>(s.M * s.N * s.K);
    const double tk = bench::median_ms(on_kiln(s, o), runs), td = bench::median_ms(on_onednn(s, o), runs),
                 to = bench::median_ms(on_openblas(s, o), runs);
    auto gf = [&](double ms) { return flop / ms / 1e6; };
    std::printf("%4ldx%5ldx%5ld %-3s | %9.1f %7.1f %5.0f%% | %9.1f %7.1f | %11.1f %7.1f | %10.2fx\n", static_cast<long>(s.M),
                static_cast<long>(s.N), static_cast<long>(s.K), s.tb ? "tb" : "", tk * 1e3, gf(tk), 100 * gf(tk) / peak,
                td * 1e3, gf(td), to * 1e3, gf(to), tk / td);
  }
}
