// kiln/test/test_cuda_corpus.cpp — every kernel of the fusion corpus rendered as CUDA C and
// compiled to cubins for the architectures CI checks (sm_80, sm_90).
//
// The corpus graphs (test/fusion_corpus/*.kir) go through the driver's passes as for the cpu
// backend; each kernel of the plan is the ir::Kernel a CUDA backend would print. No GPU is
// needed; without NVRTC the test skips with the loader's reason.
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
using cudak::compile_cubin;
using cudak::kCubinArchs;
using cudak::emit_scheduled;

std::vector<std::string> corpus_files() {
  std::vector<std::string> names;
  for (const fs::path& p : files_with_extension(fs::path(KILN_TEST_DATA_DIR) / "fusion_corpus", ".kir"))
    names.push_back(p.filename().string());
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
  int kernels = 0;
  for (const ir::Kernel* k : c.plan.kernels()) {
    SCOPED_TRACE(k->str());
    const std::string src = emit_scheduled(*k);
    for (int sm : kCubinArchs) EXPECT_TRUE(compile_cubin(*k, src, sm));
    ++kernels;
  }
  EXPECT_GT(kernels, 0) << "a corpus graph without generated kernels tests nothing here";
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
