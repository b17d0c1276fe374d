// kiln/test/test_compile_layout.cpp — channels-last activations between convolutions on the cpu
// (passes/channels_last.cpp): which buffers a plan stores NHWC, and that every result equals the
// interpreter's, static and with symbolic sizes.
#include "kiln/kiln.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace kiln {
namespace {

// A small U-Net step: conv, a scaled and shifted relu, max pooling and a channel cat, a second
// conv and a third after a relu; another conv of the input is read by a softmax (a row kernel);
// the pooled value is a 4-D output. w holds the four weights.
std::vector<Tensor> unet_step(const Tensor& x, const std::vector<Tensor>& w) {
  const Tensor y = relu(conv2d(x, w[0], std::nullopt, 1, 1) * 0.5 + 1.0);
  const Tensor pooled = max_pool2d(y, 2);
  const Tensor z = conv2d(cat({y, y * 2}, 1), w[1], std::nullopt, 1, 1);
  const Tensor s = conv2d(x, w[3], std::nullopt, 1, 1);  // read by a softmax, so stays NCHW
  return {conv2d(relu(z), w[2], std::nullopt, 1, 1), pooled, softmax(s, -1)};
}

std::vector<Tensor> weights() {
  return {randn({16, 8, 3, 3}) * 0.2, randn({16, 32, 3, 3}) * 0.1, randn({8, 16, 3, 3}) * 0.1, randn({4, 8, 3, 3}) * 0.2};
}

// The plan's line for the temp buffer of `sizes`, or "" when there is none.
std::string temp_line(const std::string& plan, const std::string& sizes) {
  size_t at = 0;
  const std::string want = "temp f32" + sizes;
  while ((at = plan.find(want, at)) != std::string::npos) {
    const size_t begin = plan.rfind('\n', at) + 1, end = plan.find('\n', at);
    return plan.substr(begin, end - begin);
  }
  return "";
}

TEST(CompileLayout, ActivationsBetweenConvolutionsAreChannelsLast) {
  manual_seed(7);
  const Tensor x = randn({2, 8, 10, 12});
  const std::vector<Tensor> w = weights();
  auto run = [&](const char* backend) {
    CompileOptions o;
    o.backend = backend;
    auto f = compile([&](const Tensor& a) { return unet_step(a, w); }, o);
    return std::make_pair(f(x), f.explain(x));
  };
  const auto [cpu, plan] = run("cpu");
  const auto [ref, ref_plan] = run("interpreter");
  ASSERT_EQ(cpu.size(), ref.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    EXPECT_TRUE(cpu[i].is_contiguous()) << "output " << i;
    EXPECT_TRUE(allclose(cpu[i], ref[i], 1e-4, 1e-5)) << "output " << i << "\n" << cpu[i] << ref[i];
  }
  // The cat a conv reads, [2, 32, 10, 12], is stored [N, H, W, C]; so are the second conv's
  // output and its relu. The conv the softmax reads keeps row-major strides.
  EXPECT_NE(temp_line(plan, "[2, 32, 10, 12]").find("strides [3840, 1, 384, 32]"), std::string::npos) << plan;
  EXPECT_NE(plan.find("strides [1920, 1, 192, 16]"), std::string::npos) << plan;
  EXPECT_EQ(temp_line(plan, "[2, 4, 10, 12]").find("strides"), std::string::npos) << plan;
  // The kernel storing the cat walks it in memory order: its grid ends with the channels.
  EXPECT_NE(plan.find("p1 < 10, p2 < 12, p3 < 32]"), std::string::npos) << plan;
}

TEST(CompileLayout, ChannelsLastPlansServeSymbolicSizes) {
  manual_seed(8);
  const std::vector<Tensor> w = weights();
  CompileOptions o;
  o.dynamic = Dynamic::True;
  auto f = compile([&](const Tensor& a) { return unet_step(a, w); }, o);
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{2, 8, 10, 12}, {3, 8, 6, 14}, {4, 8, 9, 7}}) {
    const Tensor x = randn(shape);
    const std::vector<Tensor> got = f(x);
    NoGradGuard no_grad;
    const std::vector<Tensor> want = unet_step(x, w);  // eager: one-op graphs, NCHW
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_TRUE(allclose(got[i], want[i], 1e-4, 1e-5)) << "output " << i << " of input " << shape[0] << "x" << shape[2] << "x" << shape[3];
  }
  // A temp stored [N, H, W, C] with symbolic sizes: its channel stride is 1.
  const std::string plan = f.explain(randn({2, 8, 10, 12}));
  // (A line scan, not std::regex: GCC 12 warns falsely on <regex> under the sanitizers' -O1.)
  bool found = false;
  std::istringstream lines(plan);
  for (std::string line; std::getline(lines, line);) {
    const size_t temp = line.find("temp f32[");
    if (temp == std::string::npos) continue;
    const size_t close = line.find(']', temp);
    const bool symbolic = line.substr(temp, close - temp).find('s') != std::string::npos;
    const size_t strides = line.find(" strides [", close);
    if (!symbolic || strides == std::string::npos) continue;
    const size_t comma = line.find(", ", strides);
    found = found || (comma != std::string::npos && line.compare(comma, 5, ", 1, ") == 0);
  }
  EXPECT_TRUE(found) << plan;
}

}  // namespace
}  // namespace kiln
