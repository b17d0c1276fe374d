// kiln/test/test_models.cpp — whole models against PyTorch: a ResNet-18, a 2-block GPT-2, a U-Net
// and a 2-layer BERT from their PyTorch definitions with random weights (tools/model_fixtures.py,
// test scale, in test/model_fixtures), rebuilt with kiln::nn (test_support/model_zoo.cpp), run
// eager and compiled on PyTorch's inputs. Each output must match PyTorch's elementwise within
// 1e-5 of the output's largest magnitude (differences seen: 2-4e-7; f32 through up to 20 layers
// whose sums PyTorch and kiln order differently); the compiled forward is one trace, served warm
// afterwards.
#include "test/test_support/model_zoo.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace kiln::test {
namespace {

std::string fixtures() { return std::string(KILN_TEST_DATA_DIR) + "/model_fixtures"; }

void expect_matches(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.sizes().vec(), want.sizes().vec()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  const Tensor g = got.to(kDouble).contiguous(), w = want.to(kDouble).contiguous();
  const double scale = w.abs().max().item<double>();
  ASSERT_GT(scale, 0.0) << what << ": PyTorch's output is all zeros, the fixture tests nothing";
  const double err = (g - w).abs().max().item<double>();
  EXPECT_LE(err, 1e-5 * scale) << what << ": largest difference " << err << " against outputs up to " << scale;
  EXPECT_FALSE(g.isnan().any().item<bool>()) << what;
}

class ModelZooTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelZooTest, EagerAndCompiledMatchPyTorch) {
  ZooModel m = load_zoo_model(fixtures(), GetParam());
  NoGradGuard no_grad;
  expect_matches(m.eager(), m.expected, m.name + " eager");
  expect_matches(m.compiled(), m.expected, m.name + " compiled");
  expect_matches(m.compiled(), m.expected, m.name + " compiled, warm");
  const CompileStats stats = m.stats();
  EXPECT_EQ(stats.traces, 1);
  EXPECT_EQ(stats.compiles, 1);
  EXPECT_EQ(stats.cache_hits, 1);
  EXPECT_GT(stats.kernels, 0);
}

INSTANTIATE_TEST_SUITE_P(Models, ModelZooTest, ::testing::ValuesIn(kZooModels),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

TEST(ModelZoo, RefusesAnUnknownModelAndAMissingFixture) {
  try {
    (void)load_zoo_model(fixtures(), "vgg");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown model \"vgg\""), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)load_zoo_model(fixtures() + "/absent", "gpt2"), Error);
}

}  // namespace
}  // namespace kiln::test
