// kiln/test/test_compile_inspect.cpp — explain() and KILN_DEBUG_DIR dumps of compile().
//
// explain() must show every stage (guards, traced, decomposed and optimized graphs, the plan's
// kernels, LLVM IR, assembly, timings) without counting as a call; KILN_DEBUG_DIR must receive
// one directory per compilation holding the numbered stage files, whose contents are the
// stages themselves (the traced graph parses back, the kernels are the plan's).
#include "kiln/kiln.h"
#include "ir/shape_env.h"
#include "ir/text.h"
#include "runtime/debug/opt.h"
#include "test_compile_util.h"
#include "test_support/check.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace kiln {
namespace {

namespace fs = std::filesystem;
using test::mk;

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(CompileExplain, ShowsEveryStage) {
  CompileOptions o;
  o.name = "smx";
  auto f = compile([](const Tensor& a, double t) { return softmax(a / t, -1); }, o);
  Tensor a = randn({4, 16});
  const std::string s = f.explain(a, 2.0);
  EXPECT_TRUE(has(s, "=== compiled function 'smx' (f32[4, 16], 2) ===")) << s;
  // Guards, with the scalar's value.
  EXPECT_TRUE(has(s, "--- guards ---\narg0 is a tensor\narg0.dtype == f32\n")) << s;
  EXPECT_TRUE(has(s, "arg0.size(1) == 16\n")) << s;
  EXPECT_TRUE(has(s, "arg1 == 2\n")) << s;
  // The traced graph has the composite; the decomposed one has its prims instead.
  const size_t traced = s.find("--- traced graph ---"), decomposed = s.find("--- decomposed graph ---"),
               optimized = s.find("--- optimized graph ---"), plan = s.find("--- plan: 1 kernels ---"),
               llvm = s.find("--- LLVM IR (optimized) ---"), assembly = s.find("--- assembly ---"),
               timings = s.find("--- timings ---");
  ASSERT_NE(traced, std::string::npos) << s;
  ASSERT_NE(decomposed, std::string::npos) << s;
  ASSERT_NE(optimized, std::string::npos) << s;
  ASSERT_NE(plan, std::string::npos) << s;
  ASSERT_NE(llvm, std::string::npos) << s;
  ASSERT_NE(assembly, std::string::npos) << s;
  ASSERT_NE(timings, std::string::npos) << s;
  EXPECT_TRUE(traced < decomposed && decomposed < optimized && optimized < plan && plan < llvm && llvm < assembly &&
              assembly < timings);
  const std::string traced_text = s.substr(traced, decomposed - traced);
  const std::string decomposed_text = s.substr(decomposed, optimized - decomposed);
  EXPECT_TRUE(has(traced_text, "softmax(")) << traced_text;
  EXPECT_FALSE(has(decomposed_text, "softmax(")) << decomposed_text;
  EXPECT_TRUE(has(decomposed_text, "amax(")) << decomposed_text;
  EXPECT_TRUE(has(decomposed_text, "exp(")) << decomposed_text;
  // Kernel text, LLVM IR, assembly.
  const std::string plan_text = s.substr(plan, llvm - plan);
  EXPECT_TRUE(has(plan_text, "kernel ")) << plan_text;
  EXPECT_TRUE(has(plan_text, "reduce amax")) << plan_text;
  const std::string ir = s.substr(llvm, assembly - llvm);
  EXPECT_TRUE(has(ir, "define ")) << ir;
  const std::string asm_text = s.substr(assembly, timings - assembly);
  EXPECT_TRUE(has(asm_text, "ret")) << asm_text;
  EXPECT_GT(asm_text.size(), 200u);
  // Timings of the trace, of each pass, of codegen and in total.
  const std::string t = s.substr(timings);
  EXPECT_TRUE(has(t, "trace ")) << t;
  for (const char* stage : {"lowerings", "decompose", "fold_constants", "fuse", "build_kernels", "plan_memory", "code_lookup",
                            "llvm_build", "llvm_optimize", "machine_code", "backend_compile"})
    EXPECT_TRUE(has(t, std::string("stage ") + stage + " ")) << t;
  EXPECT_TRUE(has(t, "total ")) << t;
  // explain is not a call: nothing counted, nothing cached.
  EXPECT_EQ(f.stats().traces, 0);
  EXPECT_EQ(f.stats().compiles, 0);
  f(a, 2.0);
  EXPECT_EQ(f.stats().cache_misses, 1);
  EXPECT_EQ(f.stats().compiles, 1);
}

TEST(CompileExplain, InterpreterAndEagerBackends) {
  CompileOptions o;
  o.backend = "interpreter";
  auto f = compile([](const Tensor& a) { return a.sum(); }, o);
  const std::string s = f.explain(mk<float>({1, 2}));
  // The interpreter walks the optimized graph: no plan, no generated code.
  EXPECT_TRUE(has(s, "backend \"interpreter\", decomposed to level prim")) << s;
  EXPECT_TRUE(has(s, "--- optimized graph ---\ngraph(")) << s;
  EXPECT_FALSE(has(s, "--- plan")) << s;
  EXPECT_FALSE(has(s, "--- LLVM IR")) << s;
  o.backend = "eager";
  auto g = compile([](const Tensor& a) { return a.sum(); }, o);
  EXPECT_TRUE(has(g.explain(mk<float>({1, 2})), "backend \"eager\"")) << g.explain(mk<float>({1, 2}));
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(CompileDebugDir, DumpsEveryStage) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("kiln_test_debug_{}", ::getpid());
  fs::remove_all(dir);
  {
    test::EnvScope env("KILN_DEBUG_DIR", dir.string());
    CompileOptions o;
    o.name = "dumped fn";
    auto f = compile([](const Tensor& a, const Tensor& b) { return (a * b).sum({1}, false); }, o);
    test::expect_exact(f(mk<float>({1, 2, 3, 4}, {2, 2}), mk<float>({1, 1, 2, 2}, {2, 2})), kFloat32, {3, 14});
    f(mk<float>({1, 2}, {1, 2}), mk<float>({1, 1}, {1, 2}));  // a second compilation
    f(mk<float>({1, 2}, {1, 2}), mk<float>({1, 1}, {1, 2}));  // a hit dumps nothing
  }
  std::vector<fs::path> subdirs;
  for (const auto& e : fs::directory_iterator(dir)) subdirs.push_back(e.path());
  std::sort(subdirs.begin(), subdirs.end());
  ASSERT_EQ(subdirs.size(), 2u);
  EXPECT_EQ(subdirs[0].filename().string().find("dumped_fn"), 0u) << subdirs[0];
  // One numbering names every stage's dump: NN_<stage>.<ext> in pipeline order.
  for (const char* file : {"00_traced.kir", "01_lowerings.kir", "02_decompose.kir", "05_fold_constants.kir",
                           "08_dce.kir", "09_fold_matmul_epilogues.kir", "10_fuse.kir", "11_build_kernels.kk",
                           "12_simplify_indices.kk", "13_schedule_tiles.kk", "14_schedule_loops.kk", "15_plan.kk",
                           "16_llvm_ir.ll", "17_assembly.s", "guards.txt",
                           "00_traced.dot", "02_decompose.dot", "10_fuse.dot"}) {
    for (const fs::path& d : subdirs) {
      EXPECT_TRUE(fs::exists(d / file)) << d / file;
      EXPECT_GT(fs::file_size(d / file), 0u) << d / file;
    }
  }
  const fs::path d0 = subdirs[0];
  // The traced graph is valid text IR.
  const std::string traced = slurp(d0 / "00_traced.kir");
  EXPECT_NO_THROW(ir::parse_graph(traced)) << traced;
  EXPECT_TRUE(has(traced, "f32[2, 2]")) << traced;
  EXPECT_TRUE(has(slurp(d0 / "15_plan.kk"), "reduce sum")) << slurp(d0 / "15_plan.kk");
  EXPECT_TRUE(has(slurp(d0 / "16_llvm_ir.ll"), "define ")) << slurp(d0 / "16_llvm_ir.ll");
  // The fusion groups: every node of the sum's kernel is marked; the .dot files are Graphviz.
  EXPECT_TRUE(has(slurp(d0 / "10_fuse.kir"), "  # k0")) << slurp(d0 / "10_fuse.kir");
  EXPECT_NO_THROW(ir::parse_graph(slurp(d0 / "10_fuse.kir")));
  EXPECT_EQ(slurp(d0 / "00_traced.dot").rfind("digraph", 0), 0u) << slurp(d0 / "00_traced.dot");
  EXPECT_TRUE(has(slurp(d0 / "guards.txt"), "arg0.size(0) == 2\n")) << slurp(d0 / "guards.txt");
  EXPECT_TRUE(has(slurp(subdirs[1] / "guards.txt"), "arg0.size(0) == 1\n")) << slurp(subdirs[1] / "guards.txt");
  fs::remove_all(dir);
}

TEST(CompileDebugDir, ADynamicTracesDumpsParseAgainUnderItsGuards) {
  // A squeeze of a.size(0) - 1 is valid because the trace guarded it equal to 1: every graph
  // dump starts with the symbols and guards, so `kiln check` and `kiln opt` read it back.
  const fs::path dir = fs::temp_directory_path() / fmt::format("kiln_test_debug_dyn_{}", ::getpid());
  fs::remove_all(dir);
  {
    test::EnvScope env("KILN_DEBUG_DIR", dir.string());
    CompileOptions o;
    o.name = "guarded";
    o.dynamic = Dynamic::True;
    auto f = compile([](const Tensor& a) { return a.slice(0, 1).squeeze(0) * 2; }, o);
    test::expect_exact(f(mk<float>({1, 2, 3, 4, 5, 6}, {2, 3})), kFloat32, {8, 10, 12});
  }
  std::vector<fs::path> kir;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().extension() == ".kir") kir.push_back(e.path());
  ASSERT_GE(kir.size(), 9u);
  for (const fs::path& p : kir) {
    const std::string text = slurp(p);
    EXPECT_EQ(text.rfind("symbols(s0 = 2, s1 = 3)\nguards(", 0), 0u) << p << "\n" << text;
    EXPECT_TRUE(has(text, "s0 - 1 == 1")) << p << "\n" << text;
    ir::ShapeEnv env;
    std::string printed;
    EXPECT_NO_THROW(printed = ir::print_graph(*ir::parse_graph(text, &env), &env)) << p << "\n" << text;
    if (p.filename() != "10_fuse.kir") {
      EXPECT_EQ(printed, text) << p;  // (the fusion marks are comments)
    }
  }
  // kiln opt runs the dump under its own symbols and guards.
  const std::string traced = slurp(kir.front().parent_path() / "00_traced.kir");
  const std::string report = rt::opt_report(traced, rt::OptOptions{});
  EXPECT_TRUE(has(report, "// ---- input ----\n" + traced)) << report;
  fs::remove_all(dir);
}

TEST(CompilePerfMap, NamesEveryKernelOfTheFunction) {
  // KILN_PERF_MAP=1: the kernels a compiled function links are named in perf's map file as
  // "kiln <function>/<kernel>", the kernel as 15_plan.kk names it.
  test::EnvScope on("KILN_PERF_MAP", "1");
  test::EnvScope fresh("KILN_DISABLE_CACHE", "1");  // a module linked earlier keeps its first name
  CompileOptions o;
  o.name = "perf_map_probe_" + std::to_string(::getpid());
  auto f = compile([](const Tensor& a) { return (a * 3).sum({1}) + a.amax({1}); }, o);
  test::expect_exact(f(mk<float>({1, 2}).reshape({1, 2})), kFloat32, {11});
  const std::string plan = f.explain(mk<float>({1, 2}).reshape({1, 2}));
  std::ifstream in("/tmp/perf-" + std::to_string(::getpid()) + ".map");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string map = ss.str();
  const std::string prefix = "kiln " + o.name + "/";
  // The call's compilation and explain()'s each link their kernels (under their own kernel
  // name prefixes); explain's are those of the plan it prints.
  size_t named = 0, in_plan = 0;
  // "<function>_<compilation>_k<kernel>" (no std::regex: GCC 12 misreports it under ASan).
  auto is_kernel_name = [&](const std::string& k) {
    auto digits = [&](size_t from, size_t to) {
      return to > from && k.find_first_not_of("0123456789", from) >= to;
    };
    const size_t mid = k.rfind("_k");
    return k.rfind(o.name + "_", 0) == 0 && mid != std::string::npos && mid > o.name.size() + 1 &&
           digits(o.name.size() + 1, mid) && digits(mid + 2, k.size());
  };
  for (size_t at = map.find(prefix); at != std::string::npos; at = map.find(prefix, at + 1)) {
    ++named;
    const size_t end = map.find('\n', at);
    const std::string kernel = map.substr(at + prefix.size(), end - at - prefix.size());
    EXPECT_TRUE(is_kernel_name(kernel)) << kernel;
    in_plan += has(plan, "kernel " + kernel + "(") ? 1 : 0;
  }
  EXPECT_GE(named, 2u) << map;
  EXPECT_GE(in_plan, 1u) << map << plan;
  std::remove(("/tmp/perf-" + std::to_string(::getpid()) + ".map").c_str());  // a test leaves no map behind
}

TEST(CompileDebugDir, OffByDefault) {
  // With KILN_DEBUG_DIR unset in this process, compiling writes nothing and warns nothing.
  test::LogCapture logs;
  auto f = compile([](const Tensor& a) { return a * 3; });
  test::expect_exact(f(mk<float>({1, 2})), kFloat32, {3, 6});
  EXPECT_TRUE(logs.lines().empty());
}

}  // namespace
}  // namespace kiln
