// kiln/test/test_fusion_symbolic.cpp — fused graphs with symbolic sizes, compiled once, run for many sizes.
//
// Each case is a prim-level graph whose input types carry size symbols (f32[s0, s1]). It goes
// through passes::run_pipeline (contiguous input strides in the symbols), cpu::compile_kernels
// and rt::Program, whose parameters are bound to the first input dim that is exactly each
// symbol. The one compiled program then runs for every size of a sweep (one symbol at a time,
// the others at modest values) and its outputs are compared with rt::interpret of the same
// graph on the same inputs. The sweep covers empty, single, prime, below-vector-width and
// above-threshold sizes, so vector-loop tails and every lowering path (row and column
// reductions, split full reductions, views, cat/pad, extern matmul, library calls)
// are exercised with sizes the lowering did not see.
#include "kiln/kiln.h"
#include "ir/text.h"
#include "runtime/interpreter/interpreter.h"
#include "passes/lower.h"
#include "runtime/pipeline.h"
#include "test_fusion_bounds.h"
#include "test_support/check.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kiln {
namespace {

using Bindings = std::map<std::string, int64_t>;

const std::vector<int64_t> kSizes = {0, 1, 2, 3, 7, 8, 15, 16, 17, 63, 64, 65, 1000, 4097};

struct SymCase {
  std::string name;
  std::string text;                 // the graph (prims; symbolic input sizes)
  std::vector<std::string> sweep;   // symbols swept over kSizes, one at a time
  Bindings base;                    // every symbol's value while another one is swept
  int64_t min_size = 0;             // sweep values below this are skipped (the graph needs them)
  Bindings hints;                   // LowerOptions::hints (trace-time values)
  int64_t split_reduction_min = 1 << 16;
  double tol = 1e-5;                // rtol = atol (float sums accumulate in f32, the reference in f64)
  // i64 inputs: values in [0, bound) where bound is this symbol's value (index inputs).
  std::string index_bound;
  std::vector<std::string> expect_in_plan;  // substrings the plan text must contain

  SymCase(std::string n, std::string t, std::vector<std::string> sw, Bindings b)
      : name(std::move(n)), text(std::move(t)), sweep(std::move(sw)), base(std::move(b)) {}
  SymCase& min(int64_t m) { min_size = m; return *this; }
  SymCase& hint(Bindings h) { hints = std::move(h); return *this; }
  SymCase& split_min(int64_t m) { split_reduction_min = m; return *this; }
  SymCase& tolerance(double t) { tol = t; return *this; }
  SymCase& indices_below(std::string sym) { index_bound = std::move(sym); return *this; }
  SymCase& plan_has(std::vector<std::string> s) { expect_in_plan = std::move(s); return *this; }
};

void PrintTo(const SymCase& c, std::ostream* os) { *os << c.name; }

// The compiled form of a case: the compilation (its plan), its executable and the reference graph.
struct Compiled {
  std::unique_ptr<ir::Graph> ref;
  rt::Compilation comp;
  std::unique_ptr<rt::Executable> program;
  std::string plan_text;
};

// Binds every size symbol to the first input dim whose size is exactly that symbol.
std::map<std::string, rt::ParamSource> param_sources(const ir::Graph& g) {
  std::map<std::string, rt::ParamSource> out;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const std::vector<ir::Expr>& sz = g.inputs()[i]->type().sizes;
    for (size_t d = 0; d < sz.size(); ++d)
      if (sz[d].is_symbol()) out.emplace(sz[d].symbol_name(), rt::ParamSource{static_cast<int>(i), static_cast<int>(d), false});
  }
  return out;
}

Compiled compile_case(const SymCase& c) {
  Compiled out;
  out.ref = ir::parse_graph(c.text);
  std::shared_ptr<ir::Graph> g = ir::parse_graph(c.text);
  rt::DriverOptions opts;
  opts.name = "sym_" + c.name;
  opts.hints = c.hints;
  opts.split_reduction_min = c.split_reduction_min;
  opts.params = param_sources(*g);
  out.comp = rt::compile_graph(g, *rt::find_backend("cpu"), opts);
  if (!out.comp.status.ok()) ADD_FAILURE() << out.comp.status.error;
  out.plan_text = out.comp.plan.str();
  out.program = std::move(out.comp.status.exe);
  return out;
}

std::vector<Tensor> make_inputs(const SymCase& c, const ir::Graph& g, const Bindings& b, uint64_t seed) {
  Generator gen(seed);
  std::vector<Tensor> ins;
  for (const ir::Value* v : g.inputs()) {
    std::vector<int64_t> sizes;
    for (const ir::Expr& e : v->type().sizes) sizes.push_back(e.evaluate(b));
    const ScalarType dt = v->type().dtype;
    if (is_floating_point(dt)) {
      ins.push_back(randn(sizes, gen, TensorOptions().dtype(dt)));
    } else if (dt == ScalarType::Bool) {
      ins.push_back(rand(sizes, gen).gt(0.5));
    } else if (!c.index_bound.empty()) {
      ins.push_back(randint(0, std::max<int64_t>(1, b.at(c.index_bound)), sizes, gen, TensorOptions().dtype(dt)));
    } else {
      ins.push_back(randint(-20, 20, sizes, gen, TensorOptions().dtype(dt)));
    }
  }
  return ins;
}

// Runs the compiled case for one binding of its symbols and compares with the interpreter.
void check_sizes(const SymCase& c, const Compiled& k, const Bindings& b) {
  std::string where;
  for (const auto& [s, v] : b) where += fmt::format(" {}={}", s, v);
  SCOPED_TRACE(c.name + " at" + where);
  // Small sizes: every kernel access is checked against its buffer (JIT code is invisible to ASan).
  bool small = true;
  for (const auto& [s, v] : b) small = small && v <= 17;
  if (small) {
    ASSERT_EQ(test::check_plan_bounds(k.comp.plan, b), "") << k.plan_text;
  }
  std::vector<Tensor> ins = make_inputs(c, *k.ref, b, 7919 * static_cast<uint64_t>(b.size()) + 17);
  std::vector<Tensor> want = rt::interpret(*k.ref, ins);
  std::vector<Tensor> got = k.program->run(ins);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].dtype(), want[i].dtype()) << "output " << i;
    ASSERT_EQ(got[i].sizes().vec(), want[i].sizes().vec()) << "output " << i;
    const bool exact = !is_floating_point(want[i].dtype());
    ASSERT_TRUE(exact ? equal(got[i], want[i]) : allclose(got[i], want[i], c.tol, c.tol))
        << "output " << i << " differs from the interpreter\nplan:\n"
        << k.plan_text << "\ngot:\n"
        << got[i] << "\nwant:\n"
        << want[i];
  }
}

void run_case(const SymCase& c) {
  Compiled k = compile_case(c);
  for (const std::string& s : c.expect_in_plan)
    EXPECT_NE(k.plan_text.find(s), std::string::npos) << "'" << s << "' not in the plan:\n" << k.plan_text;
  for (const std::string& sym : c.sweep) {
    for (int64_t n : kSizes) {
      if (n < c.min_size) continue;
      Bindings b = c.base;
      b[sym] = n;
      check_sizes(c, k, b);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

class FusionSymbolic : public ::testing::TestWithParam<SymCase> {};

TEST_P(FusionSymbolic, RunsLikeTheInterpreterForEverySize) { run_case(GetParam()); }

// ---------------------------------------------------------------------------------------------
// The cases.

std::vector<SymCase> pointwise_cases() {
  std::vector<SymCase> v;
  v.push_back(SymCase{"broadcast_where_clamp", R"(
graph(%x : f32[s0, s1], %b : f32[1, s1], %lo : f32[], %hi : f32[]) {
  %be : f32[s0, s1] = expand(%b, size=[s0, s1])
  %a : f32[s0, s1] = add(%x, %be)
  %z : f32[s0, s1] = full(size=[s0, s1], value=0.0, dtype=f32, device=cpu)
  %c : bool[s0, s1] = gt(%a, %z)
  %e : f32[s0, s1] = exp(%a)
  %n : f32[s0, s1] = mul(%a, %e)
  %w : f32[s0, s1] = where(%c, %a, %n)
  %loe : f32[s0, s1] = expand(%lo, size=[s0, s1])
  %hie : f32[s0, s1] = expand(%hi, size=[s0, s1])
  %y : f32[s0, s1] = clamp(%w, %loe, %hie)
  return (%y, %c)
})", {"s0", "s1"}, {{"s0", 5}, {"s1", 9}}});
  v.push_back(SymCase{"cast_chain_f64_i32", R"(
graph(%x : f64[s0], %i : i32[s0]) {
  %c : f64[s0] = convert_element_type(%i, dtype=f64)
  %y : f64[s0] = mul(%x, %c)
  %t : f32[s0] = convert_element_type(%y, dtype=f32)
  %s : f32[s0] = sigmoid(%t)
  return (%s, %y)
})", {"s0"}, {{"s0", 5}}});
  v.push_back(SymCase{"half_types_and_row_sum", R"(
graph(%x : f16[s0, s1], %y : bf16[s0, s1]) {
  %e : f16[s0, s1] = exp(%x)
  %c : bf16[s0, s1] = convert_element_type(%e, dtype=bf16)
  %m : bf16[s0, s1] = mul(%c, %y)
  %s : bf16[s0] = sum(%m, dims=[1], keepdim=false)
  return (%m, %s)
})", {"s0", "s1"}, {{"s0", 5}, {"s1", 9}}}.tolerance(2e-2));
  v.push_back(SymCase{"iota_full_symbolic", R"(
graph(%x : f32[s0, s1]) {
  %r : f32[s1] = iota(length=s1, start=0.5, step=0.25, dtype=f32, device=cpu)
  %re : f32[s0, s1] = expand(%r, size=[s0, s1])
  %f : f32[s0, s1] = full(size=[s0, s1], value=2.0, dtype=f32, device=cpu)
  %a : f32[s0, s1] = mul(%x, %re)
  %y : f32[s0, s1] = sub(%a, %f)
  return (%y)
})", {"s0", "s1"}, {{"s0", 3}, {"s1", 6}}});
  return v;
}

// Reductions over the last dim, dim 0 and every dim; the full ones once with hints that split
// them into partials (by rows, and in flat chunks) and once without.
std::vector<SymCase> reduction_cases() {
  std::vector<SymCase> v;
  v.push_back(SymCase{"row_sum_prod", R"(
graph(%x : f32[s0, s1]) {
  %e : f32[s0, s1] = tanh(%x)
  %s : f32[s0] = sum(%e, dims=[1], keepdim=false)
  %p : f32[s0, 1] = prod(%e, dims=[1], keepdim=true)
  return (%s, %p)
})", {"s0", "s1"}, {{"s0", 5}, {"s1", 9}}});
  v.push_back(SymCase{"row_amax_argmax", R"(
graph(%x : f32[s0, s1]) {
  %m : f32[s0, 1] = amax(%x, dims=[1], keepdim=true)
  %me : f32[s0, s1] = expand(%m, size=[s0, s1])
  %d : f32[s0, s1] = sub(%x, %me)
  %a : i64[s0] = argmax(%x, dim=1, keepdim=false)
  return (%d, %a)
})", {"s0", "s1"}, {{"s0", 5}, {"s1", 9}}}.min(1));
  v.push_back(SymCase{"column_sum_amin", R"(
graph(%x : f32[s0, s1]) {
  %a : f32[s0, s1] = abs(%x)
  %s : f32[s1] = sum(%a, dims=[0], keepdim=false)
  %m : f32[1, s1] = amin(%x, dims=[0], keepdim=true)
  return (%s, %m)
})", {"s0", "s1"}, {{"s0", 6}, {"s1", 11}}}.min(1).plan_has({"outer_reduction_tile"}));
  const char* full = R"(
graph(%x : f32[s0, s1]) {
  %e : f32[s0, s1] = mul(%x, %x)
  %s : f32[] = sum(%e, dims=[0, 1], keepdim=false)
  %a : bool[s0, s1] = gt(%x, %e)
  %any : bool[] = any(%a, dims=[0, 1], keepdim=false)
  return (%s, %any)
})";
  v.push_back(SymCase{"full_sum_no_split", full, {"s0", "s1"}, {{"s0", 5}, {"s1", 7}}}.hint({{"s0", 4}, {"s1", 4}}));
  v.push_back(SymCase{"full_sum_split_by_rows", full, {"s0", "s1"}, {{"s0", 5}, {"s1", 7}}}
                  .hint({{"s0", 1024}, {"s1", 256}})
                  .plan_has({"temp f64[s0]", "grid[p0 < s0]"}));
  v.push_back(SymCase{"full_sum_split_flat", R"(
graph(%x : f32[s0]) {
  %e : f32[s0] = exp(%x)
  %s : f32[] = sum(%e, dims=[0], keepdim=false)
  %m : f32[] = amax(%x, dims=[0], keepdim=false)
  return (%s, %m)
})", {"s0"}, {}}.min(1).hint({{"s0", 1 << 20}}).plan_has({"temp f64[64]", "grid[p0 < 64]"}));
  // The same split reached with a small split threshold, so that every swept size runs the
  // split kernels (the flat chunks have a symbolic length).
  v.push_back(SymCase{"full_sum_split_flat_small", R"(
graph(%x : f32[s0, 3]) {
  %s : f32[] = sum(%x, dims=[0, 1], keepdim=false)
  return (%s)
})", {"s0"}, {}}.hint({{"s0", 8}}).split_min(16).plan_has({"temp f64[1]"}));
  // mean with a symbolic count: the count is a reduction of ones (see the report on the
  // decomposition: the IR has no prim turning a size into a tensor value).
  v.push_back(SymCase{"mean_all_and_dim0", R"(
graph(%x : f32[s0, s1]) {
  %s : f32[] = sum(%x, dims=[0, 1], keepdim=false)
  %one : f32[s0, s1] = full(size=[s0, s1], value=1.0, dtype=f32, device=cpu)
  %n : f32[] = sum(%one, dims=[0, 1], keepdim=false)
  %m : f32[] = div(%s, %n, rounding_mode=none)
  %s0 : f32[1, s1] = sum(%x, dims=[0], keepdim=true)
  %n0 : f32[1, s1] = sum(%one, dims=[0], keepdim=true)
  %m0 : f32[1, s1] = div(%s0, %n0, rounding_mode=none)
  return (%m, %m0)
})", {"s0", "s1"}, {{"s0", 5}, {"s1", 7}}}.min(1).hint({{"s0", 1024}, {"s1", 256}}));
  // A full argmax cannot be split (its partials do not combine): one serial kernel, even when
  // the hints ask for a split; the sum beside it and the consumer of the argmax still work.
  v.push_back(SymCase{"full_argmax_large_hint", R"(
graph(%x : f32[s0, s1]) {
  %a : i64[] = argmax(%x, dim=none, keepdim=false)
  %o : i64[] = full(size=[], value=1, dtype=i64, device=cpu)
  %b : i64[] = add(%a, %o)
  %s : f32[] = sum(%x, dims=[0, 1], keepdim=false)
  return (%b, %s)
})", {"s0", "s1"}, {{"s0", 5}, {"s1", 7}}}.min(1).hint({{"s0", 1024}, {"s1", 256}}).plan_has({"reduce argmax"}));
  // mean as the decomposition writes it for a symbolic dim: the count s1 is read out of an
  // iota (iota(s1 + 1)[s1]), an index expression in the kernel.
  v.push_back(SymCase{"mean_count_from_iota", R"(
graph(%x : f32[s0, s1]) {
  %7 : f32[s1 + 1] = iota(length=s1 + 1, start=0, step=1, dtype=f32, device=cpu)
  %8 : f32[1] = slice(%7, dim=0, start=s1, end=s1 + 1, step=1)
  %9 : f32[] = reshape(%8, size=[])
  %10 : f32[s0, 1] = sum(%x, dims=[1], keepdim=true)
  %11 : f32[s0, 1] = expand(%9, size=[s0, 1])
  %12 : f32[s0, 1] = div(%10, %11, rounding_mode=none)
  %13 : f32[s0, s1] = expand(%12, size=[s0, s1])
  %14 : f32[s0, s1] = sub(%x, %13)
  return (%14)
})", {"s0", "s1"}, {{"s0", 5}, {"s1", 7}}}.min(1).plan_has({"index s1"}));
  return v;
}

// softmax and layer_norm as their decompositions produce them (the counts as reductions of ones).
std::vector<SymCase> normalization_cases() {
  std::vector<SymCase> v;
  v.push_back(SymCase{"softmax_last_dim", R"(
graph(%x : f32[s0, s1]) {
  %0 : f32[s0, 1] = amax(%x, dims=[1], keepdim=true)
  %1 : f32[s0, s1] = expand(%0, size=[s0, s1])
  %2 : f32[s0, s1] = sub(%x, %1)
  %3 : f32[s0, s1] = exp(%2)
  %4 : f32[s0, 1] = sum(%3, dims=[1], keepdim=true)
  %5 : f32[s0, s1] = expand(%4, size=[s0, s1])
  %6 : f32[s0, s1] = div(%3, %5, rounding_mode=none)
  return (%6)
})", {"s0", "s1"}, {{"s0", 5}, {"s1", 9}}}.min(1).plan_has({"reduce amax [r0 < s1]"}));
  v.push_back(SymCase{"softmax_dim0", R"(
graph(%x : f32[s0, s1]) {
  %0 : f32[1, s1] = amax(%x, dims=[0], keepdim=true)
  %1 : f32[s0, s1] = expand(%0, size=[s0, s1])
  %2 : f32[s0, s1] = sub(%x, %1)
  %3 : f32[s0, s1] = exp(%2)
  %4 : f32[1, s1] = sum(%3, dims=[0], keepdim=true)
  %5 : f32[s0, s1] = expand(%4, size=[s0, s1])
  %6 : f32[s0, s1] = div(%3, %5, rounding_mode=none)
  return (%6)
})", {"s0", "s1"}, {{"s0", 5}, {"s1", 9}}}.min(1));
  v.push_back(SymCase{"layer_norm", R"(
graph(%x : f32[s0, s1], %w : f32[s1], %b : f32[s1]) {
  %0 : f32[s0, 1] = sum(%x, dims=[1], keepdim=true)
  %one : f32[s0, s1] = full(size=[s0, s1], value=1.0, dtype=f32, device=cpu)
  %1 : f32[s0, 1] = sum(%one, dims=[1], keepdim=true)
  %2 : f32[s0, 1] = div(%0, %1, rounding_mode=none)
  %3 : f32[s0, s1] = expand(%2, size=[s0, s1])
  %4 : f32[s0, s1] = sub(%x, %3)
  %5 : f32[s0, s1] = mul(%4, %4)
  %6 : f32[s0, 1] = sum(%5, dims=[1], keepdim=true)
  %7 : f32[s0, 1] = div(%6, %1, rounding_mode=none)
  %8 : f32[s0, 1] = full(size=[s0, 1], value=1e-05, dtype=f32, device=cpu)
  %9 : f32[s0, 1] = add(%7, %8)
  %10 : f32[s0, 1] = rsqrt(%9)
  %11 : f32[s0, s1] = expand(%10, size=[s0, s1])
  %12 : f32[s0, s1] = mul(%4, %11)
  %13 : f32[s0, s1] = expand(%w, size=[s0, s1])
  %14 : f32[s0, s1] = mul(%12, %13)
  %15 : f32[s0, s1] = expand(%b, size=[s0, s1])
  %16 : f32[s0, s1] = add(%14, %15)
  return (%16)
})", {"s0", "s1"}, {{"s0", 5}, {"s1", 9}}}.min(1).tolerance(1e-4));
  return v;
}

// Views as index remapping with symbolic sizes, and cat / constant_pad with pieces that may be empty.
std::vector<SymCase> view_cases() {
  std::vector<SymCase> v;
  v.push_back(SymCase{"reshape_flat_and_regroup", R"(
graph(%x : f32[s0, 64]) {
  %f : f32[64*s0] = reshape(%x, size=[64*s0])
  %e : f32[64*s0] = exp(%f)
  %r : f32[4*s0, 16] = reshape(%x, size=[4*s0, 16])
  %n : f32[4*s0, 16] = neg(%r)
  return (%e, %n)
})", {"s0"}, {}});
  v.push_back(SymCase{"reshape_groups_then_row_sum", R"(
graph(%x : f32[s0, 4, s1]) {
  %r : f32[s0, 4*s1] = reshape(%x, size=[s0, 4*s1])
  %a : f32[s0, 4*s1] = abs(%r)
  %s : f32[s0] = sum(%a, dims=[1], keepdim=false)
  %b : f32[s0*4, s1] = reshape(%x, size=[4*s0, s1])
  %t : f32[s1, 4*s0] = permute(%b, dims=[1, 0])
  %c : f32[s1, 4*s0] = mul(%t, %t)
  return (%s, %c)
})", {"s0", "s1"}, {{"s0", 3}, {"s1", 5}}});
  v.push_back(SymCase{"slice_symbolic_end", R"(
graph(%x : f32[s0, 8], %y : f32[5, s1]) {
  %a : f32[s0 - 1, 8] = slice(%x, dim=0, start=0, end=s0 - 1, step=1)
  %b : f32[s0 - 1, 8] = slice(%x, dim=0, start=1, end=s0, step=1)
  %d : f32[s0 - 1, 8] = sub(%b, %a)
  %c : f32[5, s1//2] = slice(%y, dim=1, start=1, end=s1, step=2)
  %e : f32[5, s1//2] = exp(%c)
  return (%d, %e)
})", {"s0", "s1"}, {{"s0", 4}, {"s1", 6}}}.min(1));
  v.push_back(SymCase{"cat_symbolic_dims", R"(
graph(%x : f32[s0, 40], %y : f32[s1, 40], %u : f32[3, s0], %w : f32[3, s1]) {
  %c : f32[s0 + s1, 40] = cat([%x, %y], dim=0)
  %e : f32[s0 + s1, 40] = exp(%c)
  %d : f32[3, 2*s0 + s1] = cat([%u, %w, %u], dim=1)
  %f : f32[3, 2*s0 + s1] = abs(%d)
  %g : f32[2*s0, 40] = cat([%x, %x], dim=0)
  return (%e, %f, %g)
})", {"s0", "s1"}, {{"s0", 3}, {"s1", 5}}});
  v.push_back(SymCase{"constant_pad", R"(
graph(%x : f32[s0, s1]) {
  %e : f32[s0, s1] = exp(%x)
  %p : f32[s0 + 1, s1 + 3] = constant_pad(%e, pad=[1, 2, 0, 1], value=-1.5)
  %q : f32[s0 + 2, s1] = constant_pad(%x, pad=[0, 0, 2, 0], value=0.5)
  return (%p, %q)
})", {"s0", "s1"}, {{"s0", 3}, {"s1", 5}}});
  return v;
}

// mm/bmm with a symbolic M or K (extern calls on symbolic buffers, a transposed operand as a
// view with symbolic strides) and their fused epilogues.
std::vector<SymCase> matmul_cases() {
  std::vector<SymCase> v;
  v.push_back(SymCase{"mm_symbolic_m_bias_relu", R"(
graph(%x : f32[s0, 32], %w : f32[16, 32], %b : f32[16]) {
  %t : f32[32, 16] = permute(%w, dims=[1, 0])
  %m : f32[s0, 16] = mm(%x, %t)
  %be : f32[s0, 16] = expand(%b, size=[s0, 16])
  %a : f32[s0, 16] = add(%m, %be)
  %z : f32[s0, 16] = full(size=[s0, 16], value=0.0, dtype=f32, device=cpu)
  %r : f32[s0, 16] = maximum(%a, %z)
  return (%r)
})", {"s0"}, {}}.tolerance(1e-4));
  v.push_back(SymCase{"mm_symbolic_k", R"(
graph(%x : f32[8, s0], %y : f32[s0, 12]) {
  %e : f32[8, s0] = tanh(%x)
  %m : f32[8, 12] = mm(%e, %y)
  return (%m)
})", {"s0"}, {}}.tolerance(1e-4));
  v.push_back(SymCase{"mm_transposed_symbolic", R"(
graph(%x : f32[s0, s1], %w : f32[7, s1]) {
  %t : f32[s1, 7] = permute(%w, dims=[1, 0])
  %m : f32[s0, 7] = mm(%x, %t)
  return (%m)
})", {"s0", "s1"}, {{"s0", 5}, {"s1", 6}}}.tolerance(1e-4));
  v.push_back(SymCase{"bmm_symbolic", R"(
graph(%x : f64[2, s0, s1], %y : f64[2, s1, 5]) {
  %m : f64[2, s0, 5] = bmm(%x, %y)
  %s : f64[2, s0] = sum(%m, dims=[2], keepdim=false)
  return (%m, %s)
})", {"s0", "s1"}, {{"s0", 4}, {"s1", 3}}});
  return v;
}

// Prims without generated kernels run as library calls inside the program, on symbolic buffers.
std::vector<SymCase> library_cases() {
  std::vector<SymCase> v;
  v.push_back(SymCase{"cumsum_between_kernels", R"(
graph(%x : f64[s0, s1]) {
  %e : f64[s0, s1] = sin(%x)
  %c : f64[s0, s1] = cumsum(%e, dim=1)
  %f : f64[s0*s1] = reshape(%c, size=[s0*s1])
  %g : f64[s0*s1] = cumsum(%f, dim=0)
  %h : f64[s0*s1] = mul(%g, %g)
  return (%h)
})", {"s0", "s1"}, {{"s0", 3}, {"s1", 4}}}.tolerance(1e-9));
  v.push_back(SymCase{"gather_index_select", R"(
graph(%x : f32[s0, s1], %idx : i64[s0, 3], %sel : i64[s1]) {
  %e : f32[s0, s1] = exp(%x)
  %g : f32[s0, 3] = gather(%e, %idx, dim=1)
  %n : f32[s0, 3] = neg(%g)
  %t : f32[s1, s0] = permute(%x, dims=[1, 0])
  %s : f32[s1, s0] = index_select(%t, %sel, dim=0)
  return (%n, %s)
})", {"s0", "s1"}, {{"s0", 4}, {"s1", 4}}}.min(1).indices_below("s1"));
  return v;
}

std::string case_name(const ::testing::TestParamInfo<SymCase>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Pointwise, FusionSymbolic, ::testing::ValuesIn(pointwise_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Reduction, FusionSymbolic, ::testing::ValuesIn(reduction_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Normalization, FusionSymbolic, ::testing::ValuesIn(normalization_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(View, FusionSymbolic, ::testing::ValuesIn(view_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Matmul, FusionSymbolic, ::testing::ValuesIn(matmul_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Library, FusionSymbolic, ::testing::ValuesIn(library_cases()), case_name);

// ---------------------------------------------------------------------------------------------
// Pieces the sweep cannot show on its own.

// A random draw with a symbolic size, computed inline (ir::KOp::Random) at each element of the
// kernel that reads it, both outputs from the same draw: the program evaluates the size per call.
TEST(FusionSymbolicLibrary, RandomOpTakesItsSymbolicSizePerCall) {
  SymCase c{"uniform_symbolic", R"(
graph(%x : f32[s0, 4]) {
  %u : f32[s0, 4] = uniform(size=[s0, 4], low=0.0, high=1.0, seed=1, offset=0, dtype=f32, device=cpu)
  %y : f32[s0, 4] = add(%x, %u)
  return (%y, %u)
})", {"s0"}, {}};
  Compiled k = compile_case(c);
  EXPECT_NE(k.plan_text.find("random uniform(0.0, 1.0)"), std::string::npos) << k.plan_text;
  EXPECT_NE(k.plan_text.find("random draws: 1"), std::string::npos) << k.plan_text;
  EXPECT_EQ(k.plan_text.find("extern"), std::string::npos) << k.plan_text;
  for (int64_t n : {0, 1, 5, 1000}) {
    Tensor x = randn({n, 4});
    std::vector<Tensor> out = k.program->run({x});
    ASSERT_EQ(out.size(), 2u);
    ASSERT_EQ(out[0].sizes().vec(), (std::vector<int64_t>{n, 4}));
    ASSERT_EQ(out[1].sizes().vec(), (std::vector<int64_t>{n, 4}));
    const std::vector<double> u = test::doubles(out[1]), y = test::doubles(out[0]), xs = test::doubles(x);
    for (size_t i = 0; i < u.size(); ++i) {
      EXPECT_TRUE(u[i] >= 0 && u[i] < 1) << "element " << i << " = " << u[i];
      EXPECT_FLOAT_EQ(static_cast<float>(y[i]), static_cast<float>(xs[i]) + static_cast<float>(u[i])) << i;
    }
  }
}

// The interpreter binds symbols from the inputs and evaluates symbolic attributes (reshape
// sizes, slice ends, full sizes): hand-computed values.
TEST(FusionSymbolicInterpreter, EvaluatesSymbolicAttributes) {
  std::unique_ptr<ir::Graph> g = ir::parse_graph(R"(
graph(%x : i64[s0, 2]) {
  %r : i64[2*s0] = reshape(%x, size=[2*s0])
  %s : i64[2*s0 - 1] = slice(%r, dim=0, start=1, end=2*s0, step=1)
  %f : i64[2*s0 - 1] = full(size=[2*s0 - 1], value=10, dtype=i64, device=cpu)
  %y : i64[2*s0 - 1] = mul(%s, %f)
  return (%y)
})");
  std::vector<Tensor> out = rt::interpret(*g, {test::mk<int64_t>({1, 2, 3, 4, 5, 6}, {3, 2})});
  ASSERT_EQ(out.size(), 1u);
  test::expect_exact(out[0], ScalarType::Int64, {20, 30, 40, 50, 60});
  EXPECT_EQ(test::error_of([&] { rt::interpret(*g, {test::mk<int64_t>({1, 2, 3}, {1, 3})}); }).find("[interpret]"), 0u);
}

// Memory planning with symbolic sizes: buffers alive at the same time never share a slot, and
// a reused slot is sized max(...) of its buffers, whichever is larger at run time.
TEST(FusionSymbolicMemory, SlotsHoldEveryBufferForEveryValue) {
  using ir::BufferRole;
  const ir::Expr s0 = ir::Expr::symbol("s0"), s1 = ir::Expr::symbol("s1");
  ir::ExecPlan plan;
  auto buffer = [&](BufferRole role, std::vector<ir::Expr> sizes) {
    ir::PlanBuffer b;
    b.role = role;
    b.type = ir::TensorType(ScalarType::Float, sizes);
    b.strides = ir::contiguous_strides(sizes);
    if (role == BufferRole::Input) b.input_index = 0;
    plan.buffers.push_back(b);
    return static_cast<int>(plan.buffers.size() - 1);
  };
  const int in = buffer(BufferRole::Input, {s0});
  const int t1 = buffer(BufferRole::Temp, {s0});
  const int t2 = buffer(BufferRole::Temp, {s1});
  const int t3 = buffer(BufferRole::Temp, {s0 + s1});
  const int out = buffer(BufferRole::Output, {s0 + s1});
  auto step = [&](std::vector<int> bufs) {
    ir::PlanStep st;
    st.kind = ir::StepKind::Fallback;
    st.op = ir::OpKind::cumsum;
    st.buffers = std::move(bufs);
    plan.steps.push_back(st);
  };
  step({in, t1});   // t1 = f(in)
  step({t1, t2});   // t2 = f(t1): both alive
  step({t2, t3});   // t3 = f(t2): t1 is dead, t2 alive
  step({t3, out});
  passes::plan_memory(plan);
  const auto& b = plan.buffers;
  EXPECT_NE(b[t1].slot, b[t2].slot);
  EXPECT_NE(b[t2].slot, b[t3].slot);
  EXPECT_EQ(b[t1].slot, b[t3].slot);  // reused once t1 is dead
  for (int64_t v0 : {0, 1, 7, 4097})
    for (int64_t v1 : {0, 3, 9000}) {
      const std::map<std::string, int64_t> vals{{"s0", v0}, {"s1", v1}};
      for (int t : {t1, t2, t3}) {
        const int64_t need = b[t].type.numel().evaluate(vals) * 4;
        EXPECT_GE(plan.slots.at(static_cast<size_t>(b[t].slot)).bytes.evaluate(vals), need)
            << "buffer b" << t << " at s0=" << v0 << " s1=" << v1 << "\n" << plan.str();
      }
    }
}

// A long chain of temporaries of different symbolic sizes: slots are reused, each slot's size
// stays an expression the runtime can evaluate cheaply, and every buffer fits its slot.
TEST(FusionSymbolicMemory, LongChainsKeepSlotSizesSmall) {
  using ir::BufferRole;
  const ir::Expr s0 = ir::Expr::symbol("s0");
  ir::ExecPlan plan;
  ir::PlanBuffer in;
  in.role = BufferRole::Input;
  in.input_index = 0;
  in.type = ir::TensorType(ScalarType::Float, {s0});
  in.strides = {ir::Expr(1)};
  plan.buffers.push_back(in);
  for (int k = 1; k <= 40; ++k) {
    ir::PlanBuffer t;
    t.role = k == 40 ? BufferRole::Output : BufferRole::Temp;
    t.type = ir::TensorType(ScalarType::Float, {s0 * (k % 5 + 1) + k});
    t.strides = {ir::Expr(1)};
    plan.buffers.push_back(t);
    ir::PlanStep st;
    st.kind = ir::StepKind::Fallback;
    st.op = ir::OpKind::cumsum;
    st.buffers = {k - 1, k};
    plan.steps.push_back(st);
  }
  passes::plan_memory(plan);
  EXPECT_LT(plan.slots.size(), 12u) << plan.str();
  for (const ir::MemorySlot& m : plan.slots) EXPECT_NO_THROW(ir::FastExpr(m.bytes, {"s0"})) << m.bytes.str();
  for (int64_t v : {0, 1, 5, 100000}) {
    const std::map<std::string, int64_t> vals{{"s0", v}};
    for (size_t b = 1; b < 40; ++b)
      EXPECT_GE(plan.slots.at(static_cast<size_t>(plan.buffers[b].slot)).bytes.evaluate(vals),
                plan.buffers[b].type.numel().evaluate(vals) * 4)
          << "b" << b << " at s0=" << v;
  }
}

}  // namespace
}  // namespace kiln
