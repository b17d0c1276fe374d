// kiln/test/test_cuda_corpus.cpp — every plan of the fusion corpus rendered as one CUDA C
// module and compiled to a cubin for the architectures CI checks (sm_80, sm_90).
//
// The corpus graphs (test/fusion_corpus/*.kir) go through the driver's passes as for the cpu
// backend; the plan's kernels, each after its launch schedule, are the ir::Kernels a CUDA
// backend prints into one module (cuda::emit_program_module). No GPU is needed; without NVRTC
// the test skips with the loader's reason.
#include "ir/text.h"
#include "runtime/pipeline.h"
#include "test_cuda_kernels.h"
#include "test_support/files.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace kiln::test {
namespace {

namespace fs = std::filesystem;
using cudak::compile_module_cubin;
using cudak::kCubinArchs;

// The corpus graphs whose plans have kernels (not those that are library calls only, as a
// product with its bias and relu is: `CHECK-KERNELS: 0`).
std::vector<std::string> corpus_files() {
  std::vector<std::string> names;
  for (const fs::path& p : files_with_extension(fs::path(KILN_TEST_DATA_DIR) / "fusion_corpus", ".kir"))
    if (read_file(p).find("# CHECK-KERNELS: 0\n") == std::string::npos) names.push_back(p.filename().string());
  return names;
}

class CudaCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaCorpus, EveryKernelCompilesToCubins) {
  KILN_SKIP_WITHOUT_NVRTC();
  std::shared_ptr<ir::Graph> g = ir::parse_graph(read_file(fs::path(KILN_TEST_DATA_DIR) / "fusion_corpus" / GetParam()));
  rt::DriverOptions opts;
  opts.name = "cuda_corpus";
  rt::Compilation c = rt::compile_graph(g, *rt::find_backend("cpu"), opts);
  ASSERT_TRUE(c.status.ok()) << c.status.error;
  std::vector<ir::Kernel> kernels;
  for (const ir::Kernel* k : c.plan.kernels()) {
    kernels.push_back(*k);
    passes::schedule_launch(kernels.back(), passes::ScheduleTarget{});
  }
  ASSERT_GT(kernels.size(), 0u) << "a corpus graph without generated kernels tests nothing here";
  std::vector<const ir::Kernel*> module;
  for (const ir::Kernel& k : kernels) module.push_back(&k);
  const std::string src = cuda::emit_program_module(module);
  for (int sm : kCubinArchs) EXPECT_TRUE(compile_module_cubin(kernels.size(), src, sm));
}

INSTANTIATE_TEST_SUITE_P(FusionCorpus, CudaCorpus, ::testing::ValuesIn(corpus_files()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param.substr(0, info.param.find('.'));
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

TEST(CudaCorpus, TheCorpusIsThere) { EXPECT_GE(corpus_files().size(), 18u); }

}  // namespace
}  // namespace kiln::test
