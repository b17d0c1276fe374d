// kiln/test/test_export_program.cpp — exported programs (runtime/export/export.h): a package
// written by one process runs in another that never loads LLVM, with the results of the
// compiled function, on every size a dynamic dim declares; inputs that fail the guards or the
// ranges, and damaged, truncated, foreign or edited packages, are refused with errors that
// name what failed.
#include "kiln/kiln.h"
#include "base/crc32c.h"
#include "base/dl_symbol.h"
#include "base/host_cpu.h"
#include "base/read_file.h"
#include "codegen_cpu/module_compiler.h"
#include "codegen_cpu/object_bundle.h"
#include "codegen_cuda/nvrtc.h"
#include "ir/exec_plan.h"
#include "runtime/cuda/cuda_attention.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/export/package.h"
#include "runtime/program.h"
#include "runtime/thread_pool.h"
#include "test_support/check.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>

namespace kiln {
namespace {

namespace fs = std::filesystem;

fs::path scratch_dir() { return fs::temp_directory_path() / fmt::format("kiln_export_{}", ::getpid()); }

fs::path scratch(const std::string& name) {
  fs::create_directories(scratch_dir());
  return scratch_dir() / name;
}

// The scratch directory goes when the test process ends (each test runs in a process of its own).
class RemoveScratch : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(scratch_dir(), ec);
  }
};
[[maybe_unused]] ::testing::Environment* const kRemoveScratch = ::testing::AddGlobalTestEnvironment(new RemoveScratch);

// Runs a command; its standard output and exit status.
std::pair<std::string, int> shell(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return {"popen failed", -1};
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = ::pclose(p);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

std::string load_error(const std::string& path) {
  return test::error_of([&] { (void)load_program(path); });
}

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

struct Mlp {
  Tensor w1 = randn({64, 32}), b1 = randn({64}), w2 = randn({10, 64}), b2 = randn({10});
  std::vector<Tensor> operator()(const std::vector<Tensor>& in) const {
    Tensor h = gelu(linear(in[0], w1, b1));
    return {softmax(linear(h, w2, b2), -1), h.sum({1})};
  }
};

// The check behind `kiln run --stats`'s "llvm not loaded" asks the loader's list of objects;
// here it sees what this process loaded: libkiln, and kiln's LLVM half once it is opened.
TEST(ExportProgram, TheLoadedLibraryCheckSeesLoadedLibraries) {
  EXPECT_TRUE(library_loaded("libkiln.so"));
  EXPECT_TRUE(library_loaded("libc.so"));
  EXPECT_FALSE(library_loaded("libkiln_no_such_library"));
  (void)cpu::module_compiler();
  EXPECT_TRUE(cpu::module_compiler_loaded());
  EXPECT_TRUE(library_loaded("libkiln_llvm"));
  EXPECT_TRUE(library_loaded("libLLVM"));
}

// The MLP, its weights captured, exported with a dynamic batch; loaded in this process and
// in a fresh `kiln run` process, which never loads LLVM.
TEST(ExportProgram, AnMlpRunsInAnotherProcessWithoutLlvm) {
  manual_seed(11);
  const Mlp mlp;
  const fs::path pkg = scratch("mlp.kiln");
  export_program(mlp, {randn({8, 32})}, {.path = pkg.string(), .name = "mlp", .input_names = {"x"}, .dynamic = {{0, 0, 2, 64}}});

  const LoadedProgram p = load_program(pkg.string());
  for (int64_t batch : {2, 8, 37, 64}) {
    const Tensor x = randn({batch, 32});
    const std::vector<Tensor> got = p({x}), want = mlp({x});
    ASSERT_EQ(got.size(), 2u);
    for (size_t i = 0; i < 2; ++i) EXPECT_TRUE(allclose(got[i], want[i], 1e-5, 1e-5)) << "batch " << batch << " output " << i;
  }
  EXPECT_NE(p.describe().find("dynamic 0 0 2 64"), std::string::npos) << p.describe();

  const Tensor x = randn({5, 32});
  save_npy(x, scratch("x.npy").string());
  const auto [out, rc] = shell(fmt::format("{} run {} {} -o {} --cpu-level x86-64-v3 --stats", KILN_CLI, pkg.string(),
                                           scratch("x.npy").string(), scratch("y").string()));
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("target x86-64-v3"), std::string::npos) << out;
  EXPECT_NE(out.find("output 0: f32[5, 10]"), std::string::npos) << out;
  EXPECT_NE(out.find("output 1: f32[5]"), std::string::npos) << out;
  EXPECT_NE(out.find("llvm not loaded"), std::string::npos) << out;
  const std::vector<Tensor> want = mlp({x});
  EXPECT_TRUE(allclose(load_npy(scratch("y0.npy").string()), want[0], 1e-5, 1e-5));
  EXPECT_TRUE(allclose(load_npy(scratch("y1.npy").string()), want[1], 1e-5, 1e-5));
}

// A function of tensors and scalars (ExportArgsFn): the package is specialized for the
// scalars' values, as compile() guards them, lists them in its manifest, and a call passes
// every argument in its place (LoadedProgram::call, or `kiln run` with the scalar written out).
TEST(ExportProgram, ScalarArgumentsAreSpecializedListedAndChecked) {
  manual_seed(31);
  const ExportArgsFn fn = [](const std::vector<ExportArg>& a) {
    const Tensor y = softmax(std::get<Tensor>(a[0]) / std::get<double>(a[2]), -1).narrow(1, 0, std::get<int64_t>(a[1]));
    return std::vector<Tensor>{std::get<bool>(a[3]) ? -y : y};
  };
  const fs::path pkg = scratch("scalars.kiln");
  export_program(fn, {randn({4, 16}), int64_t{5}, 0.5, true},
                 {.path = pkg.string(), .name = "scaled", .input_names = {"x", "k", "temperature", "flip"},
                  .dynamic = {{0, 0, 2, 64}}});
  const LoadedProgram p = load_program(pkg.string());
  ASSERT_EQ(p.num_arguments(), 4u);
  EXPECT_EQ(p.argument_kind(0), "tensor");
  EXPECT_EQ(p.argument_kind(1), "int64");
  EXPECT_EQ(p.argument_kind(2), "double");
  EXPECT_EQ(p.argument_kind(3), "bool");
  for (const char* line : {"scalar 1 int64 5\n", "scalar 2 double 0.5\n", "scalar 3 bool true\n"})
    EXPECT_NE(p.describe().find(line), std::string::npos) << p.describe();
  const Tensor x = randn({9, 16});
  const std::vector<Tensor> got = p.call({x, int64_t{5}, 0.5, true});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].sizes().vec(), (std::vector<int64_t>{9, 5}));
  EXPECT_TRUE(allclose(got[0], fn({x, int64_t{5}, 0.5, true})[0], 1e-6, 1e-6));
  // Other values, kinds or counts are refused, naming the guard or the signature.
  const auto err = [&](const std::vector<ExportArg>& a) { return test::error_of([&] { (void)p.call(a); }); };
  EXPECT_NE(err({x, int64_t{6}, 0.5, true}).find("k == 5, got 6"), std::string::npos) << err({x, int64_t{6}, 0.5, true});
  EXPECT_NE(err({x, int64_t{5}, 0.25, true}).find("temperature == 0.5, got 0.25"), std::string::npos);
  EXPECT_NE(err({x, int64_t{5}, 0.5, false}).find("flip == true, got false"), std::string::npos);
  EXPECT_NE(err({x, 5.0, 0.5, true}).find("k"), std::string::npos);
  EXPECT_NE(err({x, x, 0.5, true}).find("k"), std::string::npos);
  EXPECT_NE(err({x, int64_t{5}, 0.5}).find("[scaled] the program takes 4 arguments, got 3 (it takes tensor, int64, double, bool;"),
            std::string::npos);
  EXPECT_NE(test::error_of([&] { (void)p({x}); }).find("takes 4 arguments"), std::string::npos);
  EXPECT_NE(test::error_of([&] { (void)p.argument_kind(4); }).find("the program takes 4 arguments"), std::string::npos);
  // Only a tensor's dims can be dynamic.
  EXPECT_NE(test::error_of([&] {
              export_program(fn, {randn({4, 16}), int64_t{5}, 0.5, true},
                             {.path = scratch("bad.kiln").string(), .name = "bad", .input_names = {}, .dynamic = {{1, 0, 2, 8}}});
            }).find("a dynamic dim names input 1, which is a scalar (5): only a tensor's dims can be dynamic"),
            std::string::npos);
  // `kiln run` reads each scalar in its place; a value that is not of the kind is refused.
  save_npy(x, scratch("xs.npy").string());
  const auto [out, rc] = shell(fmt::format("{} run {} {} 5 0.5 true -o {}", KILN_CLI, pkg.string(),
                                           scratch("xs.npy").string(), scratch("ys").string()));
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("output 0: f32[9, 5]"), std::string::npos) << out;
  EXPECT_TRUE(allclose(load_npy(scratch("ys0.npy").string()), got[0], 0, 0));
  const auto [bad, bad_rc] =
      shell(fmt::format("{} run {} {} five 0.5 true", KILN_CLI, pkg.string(), scratch("xs.npy").string()));
  EXPECT_EQ(bad_rc, 2) << bad;
  EXPECT_NE(bad.find("argument 1 of " + pkg.string() + " is int64 scalar; 'five' is not one"), std::string::npos) << bad;
  const auto [other, other_rc] =
      shell(fmt::format("{} run {} {} 4 0.5 true", KILN_CLI, pkg.string(), scratch("xs.npy").string()));
  EXPECT_NE(other_rc, 0) << other;
  EXPECT_NE(other.find("k == 5, got 4"), std::string::npos) << other;
  // A negative scalar is an argument, not an option.
  const auto [neg, neg_rc] =
      shell(fmt::format("{} run {} {} -5 0.5 true", KILN_CLI, pkg.string(), scratch("xs.npy").string()));
  EXPECT_NE(neg_rc, 0) << neg;
  EXPECT_NE(neg.find("k == 5, got -5"), std::string::npos) << neg;
}

// ExportOptions::external_weights: the package names its weights (ExportOptions::weight_names,
// as a module's named_parameters() would give them) and the caller passes them at load, from a
// checkpoint: the same values give the function's results, new values (a fine-tuned checkpoint)
// the function's results with those, in this process and through `kiln run --weights`.
TEST(ExportProgram, WeightsOutsideThePackageComeFromTheCaller) {
  manual_seed(21);
  const Mlp mlp;
  const fs::path pkg = scratch("external.kiln"), ckpt = scratch("mlp.safetensors");
  export_program(mlp, {randn({8, 32})},
                 {.path = pkg.string(), .name = "mlp", .input_names = {"x"}, .dynamic = {{0, 0, 2, 64}},
                  .weight_names = {{"fc1.weight", mlp.w1}, {"fc1.bias", mlp.b1}, {"fc2.weight", mlp.w2}, {"fc2.bias", mlp.b2},
                                   {"unused", ones({3})}},
                  .external_weights = true});
  // The package holds no weights: only their names, dtypes and sizes.
  EXPECT_FALSE(rt::read_package(pkg.string(), "test").has("weights"));
  save_safetensors({{"fc1.weight", mlp.w1}, {"fc1.bias", mlp.b1}, {"fc2.weight", mlp.w2}, {"fc2.bias", mlp.b2}}, ckpt.string());
  const LoadedProgram p = load_program(pkg.string(), {.weights = load_safetensors(ckpt.string())});
  for (const char* line : {"weight-source caller", "weight fc1.weight f32 64 32", "weight fc2.bias f32 10"})
    EXPECT_NE(p.describe().find(line), std::string::npos) << line << "\n" << p.describe();
  const Tensor x = randn({5, 32});
  std::vector<Tensor> got = p({x}), want = mlp({x});
  for (size_t i = 0; i < 2; ++i) EXPECT_TRUE(allclose(got[i], want[i], 1e-5, 1e-5)) << "output " << i;

  // Other values: the program computes with them. fc1.weight is passed transposed in memory
  // (strides [1, 64]): it is copied into the layout the program reads.
  Mlp tuned = mlp;
  tuned.w1 = randn({32, 64}).t();
  tuned.b2 = randn({10});
  const LoadedProgram q = load_program(
      pkg.string(), {.weights = {{"fc1.weight", tuned.w1}, {"fc1.bias", tuned.b1}, {"fc2.weight", tuned.w2}, {"fc2.bias", tuned.b2}}});
  got = q({x}), want = tuned({x});
  for (size_t i = 0; i < 2; ++i) EXPECT_TRUE(allclose(got[i], want[i], 1e-5, 1e-5)) << "tuned output " << i;

  save_npy(x, scratch("xe.npy").string());
  const auto [out, rc] = shell(fmt::format("{} run {} {} -o {} --weights {}", KILN_CLI, pkg.string(),
                                           scratch("xe.npy").string(), scratch("ye").string(), ckpt.string()));
  ASSERT_EQ(rc, 0) << out;
  EXPECT_TRUE(allclose(load_npy(scratch("ye0.npy").string()), mlp({x})[0], 1e-5, 1e-5));

  // Missing, misshapen and mistyped weights, and weights for a package that holds its own.
  auto weights_without = [&](const std::string& name) {
    std::map<std::string, Tensor> w = load_safetensors(ckpt.string());
    w.erase(name);
    return w;
  };
  const std::string at = "[load_program] " + pkg.string() + ": ";
  EXPECT_EQ(test::error_of([&] { (void)load_program(pkg.string()); }),
            at + "the program's weights come from the caller (it was exported with external_weights), and "
                 "LoadOptions::weights has no 'fc1.weight' (f32[64, 32])");
  EXPECT_EQ(test::error_of([&] { (void)load_program(pkg.string(), {.weights = weights_without("fc2.weight")}); }),
            at + "the program's weights come from the caller (it was exported with external_weights), and "
                 "LoadOptions::weights has no 'fc2.weight' (f32[10, 64])");
  std::map<std::string, Tensor> wrong = load_safetensors(ckpt.string());
  wrong["fc1.weight"] = randn({64, 31});
  EXPECT_EQ(test::error_of([&] { (void)load_program(pkg.string(), {.weights = wrong}); }),
            at + "weight 'fc1.weight' is f32[64, 31]; the program was exported for f32[64, 32]");
  wrong = load_safetensors(ckpt.string());
  wrong["fc2.bias"] = randn({10}, kFloat64);
  EXPECT_EQ(test::error_of([&] { (void)load_program(pkg.string(), {.weights = wrong}); }),
            at + "weight 'fc2.bias' is f64[10]; the program was exported for f32[10]");
  const fs::path held = scratch("held.kiln");
  export_program(mlp, {randn({8, 32})}, {.path = held.string(), .name = "mlp", .input_names = {"x"}, .dynamic = {}});
  EXPECT_EQ(test::error_of([&] { (void)load_program(held.string(), {.weights = load_safetensors(ckpt.string())}); }),
            "[load_program] " + held.string() + ": the package holds its weights; LoadOptions::weights is for a package "
            "exported with ExportOptions::external_weights");
  EXPECT_EQ(test::error_of([&] {
              export_program(mlp, {randn({8, 32})},
                             {.path = held.string(), .name = "mlp", .input_names = {"x"}, .dynamic = {},
                              .weight_names = {{"fc 1", mlp.w1}}});
            }),
            "[export_program] ExportOptions::weight_names has 'fc 1': a weight's name is non-empty and has no spaces");
  // With names given, a captured tensor left unnamed would only fail where the program loads.
  EXPECT_EQ(test::error_of([&] {
              export_program(mlp, {randn({8, 32})},
                             {.path = held.string(), .name = "mlp", .input_names = {"x"}, .dynamic = {},
                              .weight_names = {{"fc1.weight", mlp.w1}, {"fc1.bias", mlp.b1}, {"fc2.weight", mlp.w2}},
                              .external_weights = true});
            }),
            "[export_program] fn captures a f32[10] tensor (weight 3) that ExportOptions::weight_names does not name; "
            "with external_weights the caller passes every weight by name: name it too");
}

// A caller's weight used in place is the program's own handle on that memory: the caller's
// set_data (what nn::Module::to does) moves the caller's tensor, not the program's.
TEST(ExportProgram, ACallersWeightMovedAfterLoadingLeavesTheProgramAsLoaded) {
  manual_seed(23);
  Tensor w = randn({8, 4});
  const Tensor x = randn({3, 8});
  const Tensor want = mm(x, w);
  const fs::path pkg = scratch("moved.kiln");
  export_program([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{mm(in[0], w)}; }, {x},
                 {.path = pkg.string(), .name = "mm", .input_names = {"x"}, .dynamic = {}, .weight_names = {{"w", w}},
                  .external_weights = true});
  const LoadedProgram p = load_program(pkg.string(), {.weights = {{"w", w}}});
  w.set_data(randn({2, 2}, kFloat64));
  EXPECT_TRUE(allclose(p({x})[0], want, 1e-6, 1e-6));
}

// Captured views are read in the layout they were traced with, although the package stores
// every weight contiguous: a transposed weight and a broadcast bias give the function's results
// (a package once read the transposed weight's bytes as if it were contiguous), and a caller's
// weight for a broadcast must be one.
TEST(ExportProgram, CapturedViewsKeepTheirLayout) {
  manual_seed(22);
  const Tensor w = randn({6, 4}), b = randn({6});
  const Tensor wt = w.t(), rows = b.expand({3, 6});  // [4, 6] with strides [1, 4]; [3, 6] with [0, 1]
  const auto fn = [&](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{in[0] * wt.sum(0) + wt.slice(0, 0, 1) + mm(in[0], wt.t()).sum(1, true) + rows};
  };
  const fs::path pkg = scratch("views.kiln");
  const Tensor x = randn({3, 6});
  export_program(fn, {randn({3, 6})}, {.path = pkg.string(), .name = "views", .input_names = {"x"}, .dynamic = {}});
  EXPECT_TRUE(allclose(load_program(pkg.string())({x})[0], fn({x})[0], 1e-6, 1e-6));
  export_program(fn, {randn({3, 6})},
                 {.path = pkg.string(), .name = "views", .input_names = {"x"}, .dynamic = {},
                  .weight_names = {{"wt", wt}, {"rows", rows}}, .external_weights = true});
  EXPECT_TRUE(allclose(load_program(pkg.string(), {.weights = {{"wt", wt}, {"rows", rows}}})({x})[0], fn({x})[0], 1e-6, 1e-6));
  EXPECT_TRUE(allclose(load_program(pkg.string(), {.weights = {{"wt", wt.contiguous()}, {"rows", rows}}})({x})[0], fn({x})[0],
                       1e-6, 1e-6));
  // The program reads one row of the broadcast: rows of other values would be ignored.
  EXPECT_EQ(test::error_of([&] { (void)load_program(pkg.string(), {.weights = {{"wt", wt}, {"rows", rows.contiguous()}}}); }),
            "[load_program] " + pkg.string() +
                ": weight 'rows' was exported as a broadcast along dim 0 (an expanded tensor); pass one that is, as the "
                "program reads only the first slice of that dim");
}

// A package runs where kiln's compiler is not installed at all: the kiln tool and libkiln copied
// into a directory of their own, without libkiln_llvm (nor libkiln_onednn) beside them, run it;
// compiling there fails, naming the missing code generator.
TEST(ExportProgram, APackageRunsWhereNoCompilerIsInstalled) {
  manual_seed(14);
  const fs::path dir = scratch("runtime_only");
  fs::create_directories(dir);
  const fs::path build = fs::path(KILN_CLI).parent_path();
  fs::copy_file(KILN_CLI, dir / "kiln", fs::copy_options::overwrite_existing);
  fs::copy_file(fs::canonical(build / "libkiln.so.0"), dir / "libkiln.so.0", fs::copy_options::overwrite_existing);
  const fs::path pkg = dir / "softmax.kiln";
  export_program([](const std::vector<Tensor>& in) { return std::vector<Tensor>{softmax(in[0] * 2, -1)}; }, {randn({4, 16})},
                 {.path = pkg.string(), .name = "softmax", .input_names = {"x"}, .dynamic = {}});
  const Tensor x = randn({4, 16});
  save_npy(x, (dir / "x.npy").string());
  ASSERT_FALSE(fs::exists(dir / "libkiln_llvm.so.0"));
  const std::string env = fmt::format("env LD_LIBRARY_PATH={} KILN_CACHE_DIR={}", dir.string(), (dir / "cache").string());
  const auto [out, rc] = shell(fmt::format("{} {} run {} {} -o {} --stats", env, (dir / "kiln").string(), pkg.string(),
                                           (dir / "x.npy").string(), (dir / "y").string()));
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("llvm not loaded"), std::string::npos) << out;
  EXPECT_TRUE(allclose(load_npy((dir / "y0.npy").string()), softmax(x * 2, -1), 1e-5, 1e-6));
  const auto [ldd, ldd_rc] = shell(fmt::format("{} ldd {}", env, (dir / "kiln").string()));
  EXPECT_NE(ldd.find(dir.string() + "/libkiln.so.0"), std::string::npos) << "the copy's libkiln is not the one loaded:\n" << ldd;
  // The same tool cannot compile there: the code generator is not installed.
  const auto [opt, opt_rc] = shell(fmt::format("{} {} demo", env, (dir / "kiln").string()));
  EXPECT_NE(opt_rc, 0) << opt;
  EXPECT_NE(opt.find("needs kiln's LLVM code generator, which could not be opened"), std::string::npos) << opt;
}

// The command-line tool, like any program linked with libkiln alone, does not link LLVM.
TEST(ExportProgram, TheRuntimeLinksNoLlvm) {
  const auto [out, rc] = shell(fmt::format("ldd {}", KILN_CLI));
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("libkiln.so"), std::string::npos) << out;
  EXPECT_EQ(out.find("libLLVM"), std::string::npos) << out;
  EXPECT_EQ(out.find("libkiln_llvm"), std::string::npos) << out;
  EXPECT_EQ(out.find("libgomp"), std::string::npos) << "libgomp is opened on the first parallel call (runtime/openmp.h)\n" << out;
}

// `kiln run` binds its threads one to a CPU (runtime/openmp.h, OpenMpPolicy::bind_threads) and
// keeps kiln's spin, unless the user chose how libgomp places and waits.
TEST(ExportProgram, KilnRunBindsItsThreads) {
  manual_seed(15);
  const fs::path pkg = scratch("wide.kiln");
  export_program([](const std::vector<Tensor>& in) { return std::vector<Tensor>{relu(in[0]) * 3}; }, {randn({1024, 1024})},
                 {.path = pkg.string(), .name = "wide", .input_names = {"x"}, .dynamic = {}});
  save_npy(randn({1024, 1024}), scratch("wide.npy").string());
  const std::string run = fmt::format("{} run {} {}", KILN_CLI, pkg.string(), scratch("wide.npy").string());
  const std::string clean = "env -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY -u OMP_PROC_BIND -u OMP_PLACES -u GOMP_CPU_AFFINITY "
                            "OMP_DISPLAY_ENV=verbose KILN_NUM_THREADS=2 ";
  const auto [ours, rc] = shell(clean + run);
  ASSERT_EQ(rc, 0) << ours;
  EXPECT_NE(ours.find("OMP_PROC_BIND = 'TRUE'"), std::string::npos) << ours;
  // Places from the CPU `kiln run` started on: two of this host's CPUs at least.
  EXPECT_NE(ours.find("OMP_PLACES = '{"), std::string::npos) << ours;
  // One thread is not bound (a thread that stays on one CPU gains nothing).
  std::string single = clean;
  single.replace(single.find("KILN_NUM_THREADS=2"), 18, "KILN_NUM_THREADS=1");
  const auto [one, rc1] = shell(single + run);
  ASSERT_EQ(rc1, 0) << one;
  EXPECT_EQ(one.find("OMP_PROC_BIND = 'TRUE'"), std::string::npos) << one;
  EXPECT_NE(ours.find("GOMP_SPINCOUNT = '10000'"), std::string::npos) << ours;
  const auto [theirs, rc2] = shell(clean + "OMP_PROC_BIND=false GOMP_SPINCOUNT=555 " + run);
  ASSERT_EQ(rc2, 0) << theirs;
  EXPECT_NE(theirs.find("OMP_PROC_BIND = 'FALSE'"), std::string::npos) << theirs;
  EXPECT_NE(theirs.find("GOMP_SPINCOUNT = '555'"), std::string::npos) << theirs;
}

TEST(ExportProgram, InputsThatFailTheGuardsOrRangesAreRefused) {
  manual_seed(12);
  const fs::path pkg = scratch("softmax.kiln");
  const auto fn = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{softmax(in[0] * in[1], -1)}; };
  export_program(fn, {randn({4, 128}), randn({128})},
                 {.path = pkg.string(), .name = "scaled_softmax", .input_names = {"x", "scale"}, .dynamic = {{0, 0, 2, 16}}});
  const LoadedProgram p = load_program(pkg.string());
  EXPECT_TRUE(allclose(p({randn({16, 128}), ones({128})})[0].sum({1}), ones({16}), 1e-5, 1e-5));
  EXPECT_EQ(test::error_of([&] { p({randn({4, 64}), randn({64})}); }),
            "[scaled_softmax] the inputs do not match the exported program (" + pkg.string() + "): x.size(1) == 128, got 64");
  EXPECT_NE(test::error_of([&] { p({randn({4, 128}, kFloat64), randn({128})}); }).find("x.dtype == f32, got f64"), std::string::npos);
  EXPECT_EQ(test::error_of([&] { p({randn({17, 128}), randn({128})}); }),
            "[scaled_softmax] x.size(0) is 17, outside the range [2, 16] the program was exported for (" + pkg.string() + ")");
  EXPECT_NE(test::error_of([&] { p({randn({4, 128})}); }).find("2 arguments, got 1"), std::string::npos);
}

TEST(ExportProgram, FunctionsThatAreNotOneProgramAreRefused) {
  const fs::path pkg = scratch("refused.kiln");
  const ExportOptions o{.path = pkg.string(), .name = "f", .input_names = {}, .dynamic = {}};
  EXPECT_EQ(test::error_of([&] {
              export_program([](const std::vector<Tensor>& in) { return std::vector<Tensor>{nonzero(in[0])}; }, {randn({4})}, o);
            }).substr(0, 55),
            "[export_program] 'f' cannot be exported as one program:");
  EXPECT_NE(test::error_of([&] {
              export_program([](const std::vector<Tensor>& in) { return std::vector<Tensor>{Tensor(in[0]).add_(1)}; }, {randn({4})}, o);
            }).find("updates an argument or a captured tensor in place"),
            std::string::npos);
  EXPECT_EQ(test::error_of([&] {
              export_program([](const std::vector<Tensor>& in) { return in; }, {randn({4, 1})},
                             {.path = pkg.string(), .name = "f", .input_names = {}, .dynamic = {{0, 1, 2, 8}}});
            }),
            "[export_program] input 0 dim 1: the example's size 1 is outside its declared range [2, 8]");
  EXPECT_EQ(test::error_of([&] { export_program([](const std::vector<Tensor>& in) { return in; }, {randn({4})}, {}); }),
            "[export_program] ExportOptions::path is empty: name the package file to write");
  EXPECT_FALSE(fs::exists(pkg));
}

// Damage anywhere is found by the checksums or the table; a foreign format, version, kiln or
// cpu is named.
TEST(ExportProgram, DamagedForeignAndEditedPackagesAreRefused) {
  manual_seed(13);
  const fs::path pkg = scratch("good.kiln");
  export_program([](const std::vector<Tensor>& in) { return std::vector<Tensor>{relu(in[0]) + 1}; }, {randn({8})},
                 {.path = pkg.string(), .name = "relu", .input_names = {}, .dynamic = {}});
  const std::string good = read_regular_file(pkg.string(), "test");
  const fs::path bad = scratch("bad.kiln");
  auto refused = [&](const std::string& bytes) {
    write_bytes(bad, bytes);
    return load_error(bad.string());
  };
  EXPECT_EQ(refused(good), "<no error>");
  EXPECT_EQ(refused("not a package"), "[load_program] " + bad.string() + ": not a kiln package (it does not start with \"KILNPKG\")");
  std::string version = good;
  version[8] = 2;  // the format before cuda kernels that draw took the kiln_rng argument
  EXPECT_EQ(refused(version), "[load_program] " + bad.string() +
                                  ": package format 2 is not one this kiln reads (format 3); export it again with this kiln");
  // Every truncation and a flipped byte in each stretch of the file.
  for (size_t n = 0; n < good.size(); n += 1 + n / 16) EXPECT_NE(refused(good.substr(0, n)), "<no error>") << n << " bytes";
  for (size_t at = 8; at < good.size(); at += 1 + at / 24) {
    std::string flipped = good;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x20);
    EXPECT_NE(refused(flipped), "<no error>") << "byte " << at;
  }
  const std::string damaged_plan = [&] {
    std::string t = good;
    t[t.size() - 40] ^= 1;  // inside the last section
    return refused(t);
  }();
  EXPECT_NE(damaged_plan.find("fails its checksum: the package is damaged or was changed after export"), std::string::npos) << damaged_plan;

  // Edited, with checksums made to match: another kiln's version, and a cpu this one is not.
  rt::Package p = rt::parse_package(good, "test", pkg.string());
  auto edit_manifest = [&](const std::string& from, const std::string& to) {
    rt::Package q = p;
    for (auto& [name, bytes] : q.sections)
      if (name == "manifest") bytes.replace(bytes.find(from), from.size(), to);
    return refused(rt::package_bytes(q));
  };
  const std::string other = edit_manifest("kiln ", "kiln 0.0.1-other\nold ");
  EXPECT_NE(other.find(": exported by kiln 0.0.1-other; this is kiln "), std::string::npos) << other;
  EXPECT_NE(other.find(", which loads the packages of its own version"), std::string::npos) << other;
  // Every level asking for a feature word no cpu has all of.
  rt::Package q = p;
  for (auto& [name, bytes] : q.sections)
    if (name == "manifest")
      for (size_t at = bytes.find(" e1c:21"); at != std::string::npos; at = bytes.find(" e1c:21", at + 20))
        bytes.insert(at, " 7d:ffffffff");  // 12 bytes before the match, which ends 7 after
  const std::string cpu = refused(rt::package_bytes(q));
  EXPECT_NE(cpu.find(": this cpu cannot run the package's code: x86-64-v4 needs "), std::string::npos) << cpu;
  EXPECT_NE(cpu.find("; x86-64-v3 needs "), std::string::npos) << cpu;
}

// A package carries code per x86-64 level; the loader runs the widest this cpu has, or the one
// asked for, and each level's code computes the function. Levels the cpu lacks, levels the
// package does not hold and unknown names are errors that say so.
TEST(ExportProgram, EachLevelsCodeRunsAndTheWidestTheCpuRunsIsChosen) {
  manual_seed(19);
  const Tensor w = randn({48, 40}), b = randn({48});
  auto fn = [&](const std::vector<Tensor>& in) {
    const Tensor h = gelu(linear(in[0], w, b));
    return std::vector<Tensor>{softmax(h, -1), exp(h).sum({0}), layer_norm(h, {48})};
  };
  const fs::path pkg = scratch("levels.kiln");
  export_program(fn, {randn({16, 40})},
                 {.path = pkg.string(), .name = "levels", .input_names = {"x"}, .dynamic = {{0, 0, 2, 64}},
                  .cpu_levels = {"x86-64-v3", "x86-64-v2", "native", "x86-64-v4"}});
  EXPECT_EQ(load_program(pkg.string()).target(), "native");
  const rt::Package p = rt::parse_package(read_regular_file(pkg.string(), "test"), "test", pkg.string());
  for (const char* level : {"x86-64-v2", "x86-64-v3", "x86-64-v4", "native"}) {
    ASSERT_TRUE(p.has(std::string("code.") + level)) << level;
    if (std::string(level) == "x86-64-v4" && !host_has_avx512()) {
      const std::string e = test::error_of([&] { (void)load_program(pkg.string(), {.cpu_level = level}); });
      EXPECT_NE(e.find("x86-64-v4 needs avx512f"), std::string::npos) << e;
      continue;
    }
    const LoadedProgram lp = load_program(pkg.string(), {.cpu_level = level});
    EXPECT_EQ(lp.target(), level);
    for (int64_t batch : {3, 16, 61}) {
      const Tensor x = randn({batch, 40});
      const std::vector<Tensor> got = lp({x}), want = fn({x});
      for (size_t i = 0; i < want.size(); ++i)
        EXPECT_TRUE(allclose(got[i], want[i], 1e-4, 1e-5)) << level << " batch " << batch << " output " << i;
    }
  }
  // Each level's kernels are scheduled for its vector registers and compiled for its cpu: the
  // disassembly of v2's code has no AVX at all, v3's no AVX-512 register, v4's uses zmm.
  EXPECT_NE(p.at("plan.x86-64-v3", "test", ""), p.at("plan.x86-64-v4", "test", ""));
  auto disassembly = [&](const char* level) {
    const std::optional<std::vector<std::string_view>> objects = cpu::unpack_objects(p.at(std::string("code.") + level, "test", ""));
    std::string text;
    for (size_t i = 0; objects && i < objects->size(); ++i) {
      const fs::path o = scratch(fmt::format("{}_{}.o", level, i));
      write_bytes(o, std::string((*objects)[i]));
      text += shell("objdump -d " + o.string()).first;
    }
    return text;
  };
  const std::string v2 = disassembly("x86-64-v2"), v3_code = disassembly("x86-64-v3"), v4 = disassembly("x86-64-v4");
  ASSERT_NE(v2.find("ret"), std::string::npos) << v2.substr(0, 2000);
  for (const char* avx : {"ymm", "zmm", "vfmadd", "vmov"}) EXPECT_EQ(v2.find(avx), std::string::npos) << avx;
  for (const char* avx512 : {"zmm", "%k1", "mm16", "mm31"}) EXPECT_EQ(v3_code.find(avx512), std::string::npos) << avx512;
  EXPECT_NE(v3_code.find("ymm"), std::string::npos);
  EXPECT_NE(v3_code.find("vfmadd"), std::string::npos);
  EXPECT_NE(v4.find("zmm"), std::string::npos);

  const fs::path v3 = scratch("v3.kiln");
  export_program(fn, {randn({16, 40})},
                 {.path = v3.string(), .name = "v3", .input_names = {}, .dynamic = {}, .cpu_levels = {"x86-64-v3"}});
  EXPECT_EQ(load_program(v3.string()).target(), "x86-64-v3");
  EXPECT_EQ(test::error_of([&] { (void)load_program(v3.string(), {.cpu_level = "x86-64-v2"}); }),
            "[load_program] " + v3.string() + ": LoadOptions::cpu_level is 'x86-64-v2'; the package holds code for x86-64-v3");
  EXPECT_EQ(test::error_of([&] {
              export_program(fn, {randn({16, 40})},
                             {.path = v3.string(), .name = "v3", .input_names = {}, .dynamic = {}, .cpu_levels = {"avx9"}});
            }),
            "[export_program] ExportOptions::cpu_levels names 'avx9'; the levels are native, x86-64-v2, x86-64-v3, x86-64-v4");
}

// The sections' checksum: CRC-32C's check value, and a bit-at-a-time reference at lengths
// around the 256-byte folds (AVX-512 hosts) and the three-lane blocks, at several alignments.
TEST(PackageChecksum, Crc32cMatchesABitwiseReference) {
  EXPECT_EQ(crc32c("123456789"), 0xe3069283u);
  EXPECT_EQ(crc32c(""), 0u);
  if (!host_has_avx512_clmul()) std::printf("[ note ] this host has no VPCLMULQDQ: the 256-byte folds are not tested here\n");
  auto reference = [](std::string_view s) {
    uint32_t c = 0xffffffffu;
    for (unsigned char byte : s) {
      c ^= byte;
      for (int k = 0; k < 8; ++k) c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
    }
    return c ^ 0xffffffffu;
  };
  std::mt19937_64 rng(7);
  std::string bytes(3 * 3 * 8192 + 100, '\0');
  for (char& b : bytes) b = static_cast<char>(rng());
  for (size_t n : {1, 7, 8, 9, 63, 255, 256, 257, 511, 512, 520, 768, 1031, 24575, 24576, 24577, 24583, 49152, 49159, 73728, 73828})
    for (size_t at : {0, 1, 3, 5})
      if (at + n <= bytes.size()) {
        const std::string_view s = std::string_view(bytes).substr(at, n);
        EXPECT_EQ(crc32c(s), reference(s)) << n << " bytes at offset " << at;
        EXPECT_EQ(crc32c_for_testing(s, false), reference(s)) << n << " bytes at offset " << at << ", crc32 chains only";
        EXPECT_EQ(crc32c_for_testing(s, true), reference(s)) << n << " bytes at offset " << at << ", folds where the host has them";
      }
}

// Joining two pieces' checksums gives the whole's, at every split of a buffer (empty pieces and
// splits inside a three-lane block included): large sections hash in pieces on several threads.
TEST(PackageChecksum, Crc32cCombineJoinsPieces) {
  std::mt19937_64 rng(11);
  std::string bytes(2 * 3 * 8192 + 37, '\0');
  for (char& b : bytes) b = static_cast<char>(rng());
  const std::string_view all(bytes);
  for (size_t split : {size_t{0}, size_t{1}, size_t{8}, size_t{24575}, size_t{24576}, size_t{30001}, bytes.size() - 1, bytes.size()})
    EXPECT_EQ(crc32c_combine(crc32c(all.substr(0, split)), crc32c(all.substr(split)), bytes.size() - split), crc32c(all))
        << "split at " << split;
  EXPECT_EQ(crc32c_combine(crc32c("12345"), crc32c("6789"), 4), 0xe3069283u);
}

// Sections named in read_package's `verify_later`, when of 2 MB or more, are left unverified:
// `at` refuses them until verify_rest has checked them, on the pool's threads while `meanwhile`
// runs once. Other sections, however large, are checked at once and readable. A damaged one is
// refused by name, and an exception of `meanwhile` comes through, on one thread and on several.
TEST(PackageChecksum, LargeSectionsAreCheckedWhileTheCallerWorks) {
  std::mt19937_64 rng(5);
  std::string big(rt::kVerifyLaterBytes + 12345, '\0');
  for (char& b : big) b = static_cast<char>(rng());
  const std::string other = big.substr(7) + "x";  // large, not named: checked by read_package
  rt::Package p;
  p.add("small", "a few bytes");
  p.add("big", big);
  p.add("bigger", big + big);
  p.add("other", other);
  p.add("tiny", "also named, but small");
  const std::string good = rt::package_bytes(p);
  const std::string path = scratch("large.kiln").string();
  const std::vector<std::string> later = {"big", "bigger", "tiny"};
  const int threads = rt::num_threads();
  for (int n : {1, 2, 3}) {
    rt::set_num_threads(n);
    write_bytes(path, good);
    rt::PackageView v = rt::read_package(path, "test", later);
    EXPECT_EQ(v.unverified.size(), 2u);
    EXPECT_TRUE(v.has("big"));
    EXPECT_EQ(v.at("small", "test", path), "a few bytes");
    EXPECT_EQ(v.at("tiny", "test", path), "also named, but small");
    EXPECT_THROW((void)v.at("big", "test", path), InternalError);
    int ran = 0;
    v.verify_rest([&] {
      ++ran;
      EXPECT_EQ(v.at("other", "test", path), other);  // what `meanwhile` parses may be large
    }, "test", path);
    EXPECT_EQ(ran, 1) << n << " threads";
    EXPECT_EQ(v.at("big", "test", path), big);
    EXPECT_EQ(v.at("bigger", "test", path), big + big);
    EXPECT_TRUE(v.unverified.empty());

    for (size_t at : {size_t{0}, big.size() - 1, 2 * big.size() - 1}) {  // in "big", and in each half of "bigger"
      std::string bad = good;
      const size_t from = at < big.size() ? good.find(big) : good.find(big + big);
      bad[from + at] ^= 4;
      write_bytes(path, bad);
      rt::PackageView d = rt::read_package(path, "test", later);
      ran = 0;
      EXPECT_EQ(test::error_of([&] { d.verify_rest([&] { ++ran; }, "test", path); }),
                fmt::format("[test] {}: section '{}' fails its checksum: the package is damaged or was changed after export",
                            path, at < big.size() ? "big" : "bigger"))
          << n << " threads, byte " << at;
      EXPECT_EQ(ran, 1);
      // Read at once (the default), the same damage is refused before anything is handed out.
      EXPECT_NE(test::error_of([&] { (void)rt::read_package(path, "test"); }).find("fails its checksum"), std::string::npos);
    }
    // A large section not named is refused by read_package itself.
    std::string bad = good;
    bad[good.rfind(other) + 5] ^= 4;
    write_bytes(path, bad);
    EXPECT_NE(test::error_of([&] { (void)rt::read_package(path, "test", later); }).find("section 'other' fails its checksum"),
              std::string::npos);
    write_bytes(path, good);
    rt::PackageView e = rt::read_package(path, "test", later);
    EXPECT_EQ(test::error_of([&] { e.verify_rest([] { fail("parse", "no plan"); }, "test", path); }), "[parse] no plan");
  }
  rt::set_num_threads(threads);
}

// A program whose weights are a large section loads while they are checked: it runs, and a
// damaged weight is refused by its checksum, whatever the thread count.
TEST(ExportProgram, APackagesLargeWeightsAreCheckedBeforeItRuns) {
  manual_seed(19);
  const fs::path pkg = scratch("large_weights.kiln");
  const Tensor w = randn({1024, 768}), b = randn({1024}), x = randn({4, 768});  // 3 MB of weights
  export_program([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{relu(linear(in[0], w, b))}; }, {x},
                 {.path = pkg.string(), .name = "big", .input_names = {"x"}, .dynamic = {}});
  const std::string good = read_regular_file(pkg.string(), "test");
  const int threads = rt::num_threads();
  for (int n : {1, 2}) {
    rt::set_num_threads(n);
    write_bytes(pkg, good);
    EXPECT_TRUE(allclose(load_program(pkg.string())({x})[0], relu(linear(x, w, b)), 1e-4, 1e-4)) << n << " threads";
    std::string bad = good;
    bad[bad.size() - 100] ^= 1;  // the last weight's bytes: the weights section is the last
    write_bytes(pkg, bad);
    EXPECT_EQ(load_error(pkg.string()),
              "[load_program] " + pkg.string() + ": section 'weights' fails its checksum: the package is damaged or was "
              "changed after export") << n << " threads";
  }
  rt::set_num_threads(threads);
}

// load_program maps the package: a package replaced by rename while a loaded program is alive
// leaves that program running on the old file's bytes.
TEST(ExportProgram, ALoadedProgramOutlivesItsFileBeingReplaced) {
  manual_seed(17);
  const fs::path pkg = scratch("replaced.kiln");
  const Tensor w = randn({16, 8}), x = randn({4, 8});
  auto fn = [&](const Tensor& ww) {
    return [ww](const std::vector<Tensor>& in) { return std::vector<Tensor>{linear(in[0], ww)}; };
  };
  export_program(fn(w), {x}, {.path = pkg.string(), .name = "a", .input_names = {}, .dynamic = {}});
  const LoadedProgram a = load_program(pkg.string());
  export_program(fn(w * 2), {x}, {.path = pkg.string(), .name = "b", .input_names = {}, .dynamic = {}});
  fs::remove(pkg);
  EXPECT_TRUE(allclose(a({x})[0], linear(x, w), 1e-5, 1e-5));
}

// A cuda package, exported where NVRTC is (no device needed): the cuda backend's plan, and per
// kernel a cubin for sm_80 and one for sm_90 (ELF files) and PTX for compute_90. Loading needs
// a device: without one it is refused, naming why; with one the program runs there, on every
// batch size of its dynamic dim, with the host's results, and inputs left on the host fail the
// device guard.
TEST(ExportProgram, ACudaPackageCarriesCubinsAndPtxAndRunsOnADevice) {
  std::string why;
  if (!cuda::nvrtc_available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  manual_seed(23);
  const Tensor w = randn({24, 16}), b = randn({24});
  auto fn = [&](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{softmax(gelu(linear(in[0], w, b)), -1), in[0].sum({1})};
  };
  const fs::path pkg = scratch("cuda.kiln");
  export_program(fn, {randn({8, 16})},
                 {.path = pkg.string(), .name = "cuda", .input_names = {"x"}, .dynamic = {{0, 0, 2, 64}}, .backend = "cuda"});
  const rt::Package p = rt::parse_package(read_regular_file(pkg.string(), "test"), "test", pkg.string());
  EXPECT_NE(p.at("manifest", "test", "").find("\nbackend cuda\n"), std::string::npos);
  const ir::ExecPlan plan = ir::parse_plan(p.at("plan.cuda", "test", ""));
  const size_t kernels = plan.kernels().size();
  ASSERT_GT(kernels, 1u);
  for (const ir::Kernel* k : plan.kernels()) EXPECT_NE(k->schedule.launch.kind, ir::LaunchKind::None) << k->str();
  for (const char* cubins : {"code.cuda.sm_80", "code.cuda.sm_90"}) {
    const auto images = cpu::unpack_objects(p.at(cubins, "test", ""));
    ASSERT_TRUE(images && images->size() == kernels) << cubins;
    for (std::string_view i : *images) EXPECT_EQ(i.substr(0, 4), "\x7f" "ELF") << cubins;
  }
  EXPECT_FALSE(p.has("sort.cuda.sm_90")) << "a plan without a sort carries no sort kernels";
  const auto ptx = cpu::unpack_objects(p.at("ptx.cuda.compute_90", "test", ""));
  ASSERT_TRUE(ptx && ptx->size() == kernels);
  for (std::string_view i : *ptx) {
    EXPECT_NE(i.find(".target sm_90"), std::string::npos) << i.substr(0, 400);
    EXPECT_EQ(i.back(), '\0');
  }
  EXPECT_EQ(test::error_of([&] {
              export_program(fn, {randn({8, 16})}, {.path = pkg.string(), .name = "cuda", .input_names = {}, .dynamic = {},
                                                    .cpu_levels = {"x86-64-v3"}, .backend = "cuda"});
            }),
            "[export_program] ExportOptions::cpu_levels names x86-64 levels, but the package is for the cuda backend");

  if (!cuda::is_available()) {
    const std::string e = load_error(pkg.string());
    EXPECT_NE(e.find(": a cuda program, and CUDA is not available here: "), std::string::npos) << e;
    GTEST_SKIP() << "no CUDA device (" << cuda::unavailable_reason() << "): the package was written and checked, not run";
  }
  const LoadedProgram lp = load_program(pkg.string());
  EXPECT_EQ(lp.device(), Device(kCUDA, 0));
  EXPECT_TRUE(lp.target() == "sm_80" || lp.target() == "sm_90" || lp.target() == "compute_90") << lp.target();
  for (int64_t batch : {3, 8, 64}) {
    const Tensor x = randn({batch, 16});
    const std::vector<Tensor> got = lp({x.to(lp.device())}), want = fn({x});
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].device(), lp.device());
      EXPECT_TRUE(allclose(got[i].cpu(), want[i], 1e-4, 1e-5)) << "batch " << batch << " output " << i;
    }
  }
  const std::string host = test::error_of([&] { (void)lp({randn({4, 16})}); });
  EXPECT_NE(host.find("x.device == cuda:0"), std::string::npos) << host;
}

// A cuda package whose plan sorts carries kiln's sort kernels for each target (float, double and
// long long modules), so that the sort runs on the device where the package is loaded without
// NVRTC; on a device it gives the cpu's result.
TEST(ExportProgram, ACudaPackageThatSortsCarriesTheSortKernels) {
  std::string why;
  if (!cuda::nvrtc_available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  manual_seed(24);
  auto fn = [](const std::vector<Tensor>& in) {
    auto [v, i] = topk(in[0], 4, -1);
    return std::vector<Tensor>{v, i, std::get<1>(sort(in[1], 0, true))};
  };
  const fs::path pkg = scratch("cuda_sort.kiln");
  export_program(fn, {randn({6, 300}), randint(0, 9, {40, 3})},
                 {.path = pkg.string(), .name = "sorts", .input_names = {"x", "k"}, .dynamic = {}, .backend = "cuda"});
  const rt::Package p = rt::parse_package(read_regular_file(pkg.string(), "test"), "test", pkg.string());
  for (const char* section : {"sort.cuda.sm_80", "sort.cuda.sm_90", "sort.cuda.compute_90"}) {
    const auto images = cpu::unpack_objects(p.at(section, "test", ""));
    ASSERT_TRUE(images && images->size() == 3u) << section;
    for (std::string_view i : *images)
      EXPECT_TRUE(i.substr(0, 4) == "\x7f" "ELF" || i.find(".entry kiln_sort_tiles") != std::string_view::npos) << section;
  }
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device (" << cuda::unavailable_reason() << "): the package was written and checked, not run";
  const LoadedProgram lp = load_program(pkg.string());
  const Tensor x = randn({6, 300}), k = randint(0, 9, {40, 3});
  const int64_t staged = rt::staged_steps();
  const std::vector<Tensor> got = lp({x.to(lp.device()), k.to(lp.device())}), want = fn({x, k});
  EXPECT_EQ(rt::staged_steps(), staged) << "a sort was staged through the host";
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(equal(got[i].cpu(), want[i])) << "output " << i;
}

// A cuda package with f16 attention carries the fused kernel's module for each target, named by
// element type and head dims, so that the attention runs fused where the package is loaded
// without NVRTC; on a device it gives the math's result.
TEST(ExportProgram, ACudaPackageWithAttentionCarriesTheFusedKernel) {
  std::string why;
  if (!cuda::nvrtc_available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  manual_seed(25);
  auto fn = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{scaled_dot_product_attention(in[0], in[1], in[2], std::nullopt, 0.0, true)};
  };
  const Tensor q = randn({2, 3, 40, 64}).to(kHalf), k = randn({2, 3, 50, 64}).to(kHalf), v = randn({2, 3, 50, 32}).to(kHalf);
  const fs::path pkg = scratch("cuda_attention.kiln");
  export_program(fn, {q, k, v}, {.path = pkg.string(), .name = "attention", .input_names = {"q", "k", "v"}, .dynamic = {},
                                 .backend = "cuda"});
  const rt::Package p = rt::parse_package(read_regular_file(pkg.string(), "test"), "test", pkg.string());
  for (const char* section : {"attention.cuda.sm_80", "attention.cuda.sm_90", "attention.cuda.compute_90"}) {
    const auto parts = cpu::unpack_objects(p.at(section, "test", ""));
    ASSERT_TRUE(parts && parts->size() == 2u) << section;
    EXPECT_EQ((*parts)[0], "f16 64 32") << section;
    EXPECT_TRUE((*parts)[1].substr(0, 4) == "\x7f" "ELF" || (*parts)[1].find(".entry kiln_attention") != std::string_view::npos)
        << section;
  }
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device (" << cuda::unavailable_reason() << "): the package was written and checked, not run";
  const LoadedProgram lp = load_program(pkg.string());
  const int64_t launches = rt::attention_kernel_launches(), staged = rt::staged_steps();
  const Tensor got = lp({q.to(lp.device()), k.to(lp.device()), v.to(lp.device())}).at(0).cpu();
  EXPECT_EQ(rt::attention_kernel_launches(), launches + 1) << "the package's attention did not run fused";
  EXPECT_EQ(rt::staged_steps(), staged);
  const Tensor want = fn({q.to(kFloat), k.to(kFloat), v.to(kFloat)}).at(0);
  EXPECT_TRUE(allclose(got.to(kFloat), want, 1e-2, 1e-2));
}

// A package of attention's backward node (a training step's) carries the backward's module
// beside it, named "... backward", and runs it fused where loaded.
TEST(ExportProgram, ACudaPackageWithAttentionsBackwardCarriesItsKernels) {
  std::string why;
  if (!cuda::nvrtc_available(&why)) GTEST_SKIP() << "no NVRTC: " << why;
  manual_seed(26);
  auto fn = [](const std::vector<Tensor>& in) {
    AttentionGrads r = scaled_dot_product_attention_backward(in[0], in[1], in[2], in[3], in[4], std::nullopt, true, 0.125);
    return std::vector<Tensor>{r.query, r.key, r.value};
  };
  const Tensor q = randn({2, 40, 64}).to(kHalf), k = randn({2, 50, 64}).to(kHalf), v = randn({2, 50, 32}).to(kHalf);
  const Tensor o = scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, true, 0.125), g = randn({2, 40, 32}).to(kHalf);
  const fs::path pkg = scratch("cuda_attention_backward.kiln");
  export_program(fn, {g, q, k, v, o}, {.path = pkg.string(), .name = "attention_backward",
                                       .input_names = {"g", "q", "k", "v", "o"}, .dynamic = {}, .backend = "cuda"});
  const rt::Package p = rt::parse_package(read_regular_file(pkg.string(), "test"), "test", pkg.string());
  for (const char* section : {"attention.cuda.sm_80", "attention.cuda.sm_90", "attention.cuda.compute_90"}) {
    const auto parts = cpu::unpack_objects(p.at(section, "test", ""));
    ASSERT_TRUE(parts && parts->size() == 2u) << section;
    EXPECT_EQ((*parts)[0], "f16 64 32 backward") << section;
    EXPECT_TRUE((*parts)[1].substr(0, 4) == "\x7f" "ELF" || (*parts)[1].find(".entry kiln_attention_backward") != std::string_view::npos)
        << section;
  }
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA device (" << cuda::unavailable_reason() << "): the package was written and checked, not run";
  const LoadedProgram lp = load_program(pkg.string());
  const int64_t launches = rt::attention_backward_kernel_launches(), staged = rt::staged_steps();
  std::vector<Tensor> ins;
  for (const Tensor& t : {g, q, k, v, o}) ins.push_back(t.to(lp.device()));
  const std::vector<Tensor> got = lp(ins);
  EXPECT_EQ(rt::attention_backward_kernel_launches(), launches + 1) << "the package's backward did not run fused";
  EXPECT_EQ(rt::staged_steps(), staged);
  const std::vector<Tensor> want = fn({g.to(kFloat), q.to(kFloat), k.to(kFloat), v.to(kFloat), o.to(kFloat)});
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_TRUE(allclose(got.at(i).cpu().to(kFloat), want[i], 3e-2, 3e-2)) << "gradient " << i;
}

}  // namespace
}  // namespace kiln
