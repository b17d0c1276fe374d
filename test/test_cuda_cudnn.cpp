// kiln/test/test_cuda_cudnn.cpp — the cuDNN loader and the convolution's argument checks, without a GPU.
//
// Where the toolkit's libcudnn.so.9 is installed the loader must bind every entry point (no GPU
// is needed for that); elsewhere a convolution raises the loader's reason, naming the library.
// Bad arguments throw a kiln::Error naming [convolution] before the library is touched. A 1-D
// convolution gains a unit spatial dim, as cuDNN's descriptors need two. The cuda backend plans
// floating convolutions on cuDNN and integer ones on the host. Running convolutions on a GPU is
// tested in test_cuda_gpu.cpp and by the op database on cuda.
#include "codegen_cuda/cudnn.h"

#include "kiln/kiln.h"
#include "base/error.h"
#include "runtime/pipeline.h"

#include "test_support/check.h"
#include "test_support/plan.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace kiln::test {
namespace {

constexpr const char* kToolkitCudnn = "/usr/local/cuda/lib64/libcudnn.so.9";

// A well-formed 1-D problem: x [2, 4, 10], w [6, 2, 3] (groups 2), y [2, 6, 5] (stride 2,
// padding 1, dilation 1), on pointers that are never dereferenced.
cuda::DnnConv valid_convolution() {
  static float storage[256];
  cuda::DnnConv p;
  p.x_sizes = {2, 4, 10};
  p.x_strides = {40, 10, 1};
  p.w_sizes = {6, 2, 3};
  p.y_sizes = {2, 6, 5};
  p.y_strides = {30, 5, 1};
  p.padding = {1};
  p.stride = {2};
  p.dilation = {1};
  p.groups = 2;
  p.x = storage;
  p.w = storage;
  p.y_out = storage;
  p.workspace = [](size_t) -> void* { return storage; };
  return p;
}

TEST(CudaCudnn, LoaderBindsEveryEntryPointOrSaysWhy) {
  std::string why;
  const bool ok = cuda::cudnn_available(&why);
  if (std::filesystem::exists(kToolkitCudnn)) {
    EXPECT_TRUE(ok) << why;
    EXPECT_TRUE(why.empty()) << why;
    EXPECT_EQ(cuda::cudnn_version().rfind("9.", 0), 0u) << cuda::cudnn_version();
  }
  if (!ok) {
    EXPECT_NE(why.find("libcudnn.so.9"), std::string::npos) << why;
    const std::string e = error_of([] { cuda::cudnn_convolution(valid_convolution()); });
    EXPECT_NE(e.find("[convolution] cuDNN is not available"), std::string::npos) << e;
    EXPECT_NE(e.find("libcudnn.so.9"), std::string::npos) << e;
  }
}

TEST(CudaCudnn, OneSpatialDimGainsAUnitDim) {
  const cuda::DnnConv p = cuda::with_two_spatial_dims(valid_convolution());
  EXPECT_EQ(p.x_sizes, (std::vector<int64_t>{2, 4, 1, 10}));
  EXPECT_EQ(p.x_strides, (std::vector<int64_t>{40, 10, 10, 1}));
  EXPECT_EQ(p.w_sizes, (std::vector<int64_t>{6, 2, 1, 3}));
  EXPECT_EQ(p.y_sizes, (std::vector<int64_t>{2, 6, 1, 5}));
  EXPECT_EQ(p.y_strides, (std::vector<int64_t>{30, 5, 5, 1}));
  EXPECT_EQ(p.padding, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(p.stride, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(p.dilation, (std::vector<int64_t>{1, 1}));
  cuda::DnnConv two = valid_convolution();
  two.x_sizes = {2, 4, 5, 5};
  EXPECT_EQ(cuda::with_two_spatial_dims(two).x_sizes, two.x_sizes);  // 2-D: as given
}

TEST(CudaCudnn, BadArgumentsAreErrorsBeforeTheLibrary) {
  auto broken = [](auto change) {
    cuda::DnnConv p = valid_convolution();
    change(p);
    return error_of([&] { cuda::cudnn_convolution(p); });
  };
  for (const std::string& e : {broken([](cuda::DnnConv& p) { p.groups = 0; }),
                               broken([](cuda::DnnConv& p) { p.w = nullptr; }),
                               broken([](cuda::DnnConv& p) { p.padding = {1, 1}; }),
                               broken([](cuda::DnnConv& p) { p.x_sizes = {2, 4}; }),
                               broken([](cuda::DnnConv& p) { p.workspace = nullptr; })}) {
    EXPECT_EQ(e.rfind("[convolution] cuDNN:", 0), 0u) << e;
  }
}

// Floating convolutions are cuDNN steps on cuda; integer ones (no cuDNN kernel) stay on the host.
TEST(CudaCudnn, TheCudaBackendPlansFloatingConvolutionsOnCudnn) {
  for (ScalarType dt : {kFloat, kHalf, kBFloat16, kDouble, kInt32}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    const Tensor x = ones({2, 4, 9, 9}, dt), w = ones({6, 2, 3, 3}, dt), b = ones({6}, dt);
    const ir::ExecPlan plan = plan_of(
        [](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{conv2d(in[0], in[1], in[2], {2, 1}, {1, 0}, {1, 1}, 2)};
        },
        {x, w, b}, "cuda");
    std::string lowering;
    for (const ir::PlanStep& st : plan.steps)
      if (st.kind != ir::StepKind::Kernel && st.op == ir::OpKind::convolution) lowering = st.lowering;
    EXPECT_EQ(lowering, dt == kInt32 ? "host onednn" : "cudnn") << plan.str();
  }
}

}  // namespace
}  // namespace kiln::test
