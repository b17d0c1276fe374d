// kiln/bench/bench_library.cpp — kiln_bench_library: the prims the CPU once ran as library calls
// (runtime/cpu/extern_kernels.h), measured in one run against the reference interpreter that ran
// them inside compiled programs before, and against the memory limit.
//
// Rows (f32 [4096, 1024] unless said): cumsum and cummax along rows, cumsum of an inline input,
// cumsum along columns, a constant pad, argsort of rows, gather
// and scatter_add along rows with random positions, an embedding lookup (index_select of
// 65536 rows of a [50000, 256] table), uniform draws, dropout, and an f16 matmul [512, 512] x
// [512, 512] and an i32 one. Columns: eager (library calls for sort, gather, scatter and matmul), the
// compiled function — a library call for sort and matmul; a generated kernel for the scans,
// gather, scatter_add, embedding and the draws (issue 32) — the same
// function on the "interpreter" backend (the reference executor: what a fallback step ran),
// their ratio, and the memory limit — the bytes the op must move at the copy bandwidth of a
// compiled x + 1 measured here.
// Each figure is the median of --runs calls (default 7) after one warm-up call.
#include "bench/bench_median.h"
#include "kiln/kiln.h"

#include <cstdio>
#include <functional>
#include <string>

using namespace kiln;

namespace {

int g_runs = 7;

double median_ms(const std::function<void()>& f) { return bench::median_ms(f, g_runs); }

CompileOptions on_interpreter() {
  CompileOptions o;
  o.backend = "interpreter";
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  g_runs = bench::runs_arg(argc, argv, g_runs);
  manual_seed(0);
  const int64_t R = 4096, C = 1024;
  const Tensor x = randn({R, C});
  const Tensor pos = randint(0, C, {R, C});
  const Tensor table = randn({50000, 256});
  const Tensor ids = randint(0, 50000, {65536});
  const Tensor h = randn({512, 512}).to(kHalf);
  const Tensor n32 = randint(-100, 100, {512, 512}, TensorOptions(kInt32));

  auto copy = compile([](const Tensor& a) { return a + 1.0; });
  const double copy_ms = median_ms([&] { (void)copy(x); });
  const double gbps = 2.0 * static_cast<double>(x.numel()) * 4 / (copy_ms * 1e-3) / 1e9;
  std::printf("kiln_bench_library: %d runs (median); copy bandwidth %.1f GB/s (compiled x + 1 on f32 [%lld, %lld])\n\n",
              g_runs, gbps, static_cast<long long>(R), static_cast<long long>(C));
  std::printf("| op | eager ms | compiled ms | eager / compiled | interpreter ms | interpreter / compiled | memory limit ms | compiled / limit |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");

  // bytes: what the op reads and writes at least.
  // The op run eagerly (library calls, or a decomposition op by op), compiled, and compiled
  // for the interpreter backend.
  auto row = [&](const std::string& name, double bytes, const std::function<Tensor()>& fn_eager,
                 const std::function<Tensor()>& fn_lib, const std::function<Tensor()>& fn_interp) {
    const double eager = median_ms([&] { (void)fn_eager(); });
    const double lib = median_ms([&] { (void)fn_lib(); });
    const double interp = median_ms([&] { (void)fn_interp(); });
    const double limit = bytes / (gbps * 1e9) * 1e3;
    std::printf("| %s | %.2f | %.2f | %.2fx | %.2f | %.1fx | %.2f | %.2fx |\n", name.c_str(), eager, lib, eager / lib,
                interp, interp / lib, limit, lib / limit);
  };
  const double f32 = static_cast<double>(R * C) * 4, i64 = static_cast<double>(R * C) * 8;

  auto cumsum_f = [](const Tensor& a) { return cumsum(a, 1); };
  auto c1 = compile(cumsum_f), c2 = compile(cumsum_f, on_interpreter());
  row("cumsum(x, 1)", 2 * f32, [&] { return cumsum_f(x); }, [&] { return c1(x); }, [&] { return c2(x); });

  auto cummax_f = [](const Tensor& a) { return std::get<0>(cummax(a, 1)); };
  auto m1 = compile(cummax_f), m2 = compile(cummax_f, on_interpreter());
  row("cummax(x, 1) values", 2 * f32, [&] { return cummax_f(x); }, [&] { return m1(x); }, [&] { return m2(x); });

  // The scan computes its input inline: one kernel (eager: three ops).
  auto cumsum_in_f = [](const Tensor& a) { return cumsum(a * 2 + 1, 1); };
  auto ci1 = compile(cumsum_in_f), ci2 = compile(cumsum_in_f, on_interpreter());
  row("cumsum(x * 2 + 1, 1)", 2 * f32, [&] { return cumsum_in_f(x); }, [&] { return ci1(x); }, [&] { return ci2(x); });

  // Along columns: each grid point walks a column with a stride of a row.
  auto cumsum0_f = [](const Tensor& a) { return cumsum(a, 0); };
  auto cc1 = compile(cumsum0_f), cc2 = compile(cumsum0_f, on_interpreter());
  row("cumsum(x, 0)", 2 * f32, [&] { return cumsum0_f(x); }, [&] { return cc1(x); }, [&] { return cc2(x); });

  // Eagerly a duck-sized kernel (the interpreter before); compiled, computed inline.
  auto pad_f = [](const Tensor& a) { return constant_pad_nd(a, {1, 1, 1, 1}, 0.0); };
  auto p1 = compile(pad_f), p2 = compile(pad_f, on_interpreter());
  row("constant_pad_nd(x, [1, 1, 1, 1])", 2 * f32, [&] { return pad_f(x); }, [&] { return p1(x); }, [&] { return p2(x); });

  auto argsort_f = [](const Tensor& a) { return argsort(a, 1); };
  auto s1 = compile(argsort_f), s2 = compile(argsort_f, on_interpreter());
  row("argsort(x, 1)", f32 + i64, [&] { return argsort_f(x); }, [&] { return s1(x); }, [&] { return s2(x); });

  auto gather_f = [](const Tensor& a, const Tensor& p) { return a.gather(1, p); };
  auto g1 = compile(gather_f), g2 = compile(gather_f, on_interpreter());
  row("gather(x, 1, pos)", 2 * f32 + i64, [&] { return gather_f(x, pos); }, [&] { return g1(x, pos); }, [&] { return g2(x, pos); });

  auto scatter_f = [](const Tensor& a, const Tensor& p) { return zeros_like(a).scatter_add(1, p, a); };
  auto sc1 = compile(scatter_f), sc2 = compile(scatter_f, on_interpreter());
  row("zeros.scatter_add(1, pos, x)", 3 * f32 + i64, [&] { return scatter_f(x, pos); }, [&] { return sc1(x, pos); }, [&] { return sc2(x, pos); });

  auto embed_f = [](const Tensor& t, const Tensor& i) { return embedding(t, i); };
  auto e1 = compile(embed_f), e2 = compile(embed_f, on_interpreter());
  row("embedding [50000, 256] x 65536 ids", 2.0 * 65536 * 256 * 4 + 65536 * 8, [&] { return embed_f(table, ids); }, [&] { return e1(table, ids); },
      [&] { return e2(table, ids); });

  auto rand_f = [](const Tensor& a) { return rand_like(a); };
  auto r1 = compile(rand_f), r2 = compile(rand_f, on_interpreter());
  row("rand_like(x)", f32, [&] { return rand_f(x); }, [&] { return r1(x); }, [&] { return r2(x); });

  // One kernel: the mask is drawn where it is used and never stored.
  auto drop_f = [](const Tensor& a) { return dropout(a, 0.1, true); };
  auto d1 = compile(drop_f), d2 = compile(drop_f, on_interpreter());
  row("dropout(x, 0.1)", 2 * f32, [&] { return drop_f(x); }, [&] { return d1(x); }, [&] { return d2(x); });

  auto mm_f = [](const Tensor& a) { return mm(a, a); };
  auto h1 = compile(mm_f), h2 = compile(mm_f, on_interpreter());
  row("mm f16 [512, 512]^2", 3.0 * 512 * 512 * 2, [&] { return mm_f(h); }, [&] { return h1(h); }, [&] { return h2(h); });

  // Integers, which BLAS has no type for: the library's int64 loop eagerly, a generated kernel
  // (a Matmul group) compiled.
  auto imm_f = [](const Tensor& a) { return mm(a, a); };
  auto i1 = compile(imm_f), i2 = compile(imm_f, on_interpreter());
  row("mm i32 [512, 512]^2", 3.0 * 512 * 512 * 4, [&] { return imm_f(n32); }, [&] { return i1(n32); }, [&] { return i2(n32); });
  return 0;
}
