// kiln/test/test_cuda_emulated.cpp — the emulated device itself (test/emulated_cuda/): that it computes
// what a GPU computes and catches what a GPU would punish.
//
// These run only on the emulated device (CTest's emulated_gpu tests put it first on the library
// path); on a GPU and without one they skip. Hand-written kernels, compiled by the emulated
// NVRTC through kiln's wrapper and launched through kiln's driver calls:
//  - a block reduction with warp shuffles and shared memory gives the sum;
//  - a read of a neighbour's shared-memory write without __syncthreads between them sees a stale
//    value on some launches, since threads run in a random order between barriers;
//  - a warp whose lanes wait at different barriers fails the launch, naming them;
//  - lanes of a warp at different warp operations fail the launch;
//  - fresh device memory reads as NaN (0xff bytes), not zero;
//  - a write one element past an allocation fails the launch, naming the allocation;
//  - a stream capture records launches and fills that each graph replay runs, and refuses a
//    synchronization;
//  - a module's kernels are the names NVRTC gives: `extern "C"` ones only, none from a comment
//    or a string, a macro's name replaced.
#include "codegen_cuda/driver.h"
#include "codegen_cuda/nvrtc.h"
#include "runtime/cuda/cuda_device.h"
#include "test_support/check.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace kiln {
namespace {

#define KILN_SKIP_UNLESS_EMULATED()                                                             \
  if (!cuda::is_available() || cuda::device_name(0).find("emulated") == std::string::npos) \
  GTEST_SKIP() << "not the emulated device (test/emulated_cuda/)"

const char* kKernels = R"(
extern "C" __global__ void block_sum(const int* in, int* out) {
  __shared__ int part[32];
  int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    int s = 0;
    for (unsigned w = 0; w < blockDim.x / 32; ++w) s += part[w];
    out[blockIdx.x] = s;
  }
}
extern "C" __global__ void racy_neighbour(int* out) {
  __shared__ int cell[256];
  cell[threadIdx.x] = (int)threadIdx.x + 1;
  // Missing: __syncthreads();
  out[threadIdx.x] = threadIdx.x == 0 ? 1 : cell[threadIdx.x - 1] + 1;
}
extern "C" __global__ void one_past(int* out, int n) {
  if (threadIdx.x == 0) out[n] = 1;
}
extern "C" __global__ void mixed_warp_ops(int* out) {
  int v = (int)threadIdx.x;
  if (threadIdx.x < 16) v = __shfl_down_sync(0xffffffffu, v, 1);
  else v = (int)__ballot_sync(0xffffffffu, v & 1);
  out[threadIdx.x] = v;
}
extern "C" __global__ void read_unwritten(const float* fresh, int* out) {
  out[threadIdx.x] = fresh[threadIdx.x] != fresh[threadIdx.x];  // NaN
}
extern "C" __global__ void divergent_barrier(int* out) {
  int v = (int)threadIdx.x;
  if (threadIdx.x < 16) __syncthreads();
  else v = __shfl_down_sync(0xffffffffu, v, 1);
  out[threadIdx.x] = v;
}
)";

struct Module {
  cuda::ModuleHandle m = nullptr;
  Module() {
    const cuda::NvrtcResult r = cuda::compile_for_device(kKernels, cuda::compute_capability(0));
    EXPECT_TRUE(r.ok) << r.log;
    if (r.ok) m = cuda::module_load(0, r.cubin);
  }
  void launch(const char* name, unsigned grid, unsigned block, std::vector<void*> args, cuda::StreamHandle s = nullptr) const {
    cuda::launch_kernel(0, cuda::module_function(0, m, name), grid, block, 0, s, args.data());
  }
};

struct DeviceInts {
  size_t n;
  int* p;
  explicit DeviceInts(size_t count) : n(count), p(static_cast<int*>(cuda::try_mem_alloc(0, count * sizeof(int)))) {}
  ~DeviceInts() { cuda::mem_free(0, p); }
  void put(const std::vector<int>& v) const { cuda::memcpy_htod(0, p, v.data(), v.size() * sizeof(int), nullptr); }
  std::vector<int> get() const {
    std::vector<int> v(n);
    cuda::memcpy_dtoh(0, v.data(), p, n * sizeof(int), nullptr);
    cuda::device_synchronize(0);
    return v;
  }
};

TEST(EmulatedCuda, ShufflesAndBarriersComputeABlockSum) {
  KILN_SKIP_UNLESS_EMULATED();
  const Module mod;
  std::vector<int> in(3 * 256);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<int>(i % 97) - 40;
  DeviceInts din(in.size()), dout(3);
  din.put(in);
  mod.launch("block_sum", 3, 256, {&din.p, &dout.p});
  const std::vector<int> got = dout.get();
  for (int b = 0; b < 3; ++b) {
    int want = 0;
    for (int i = 0; i < 256; ++i) want += in[static_cast<size_t>(b * 256 + i)];
    EXPECT_EQ(got[static_cast<size_t>(b)], want) << "block " << b;
  }
}

// A capture records a launch (its arguments copied when it is recorded) and a fill without running
// them; each replay of the graph runs them on the memory as it is then. A synchronization during a
// capture is refused and spoils it.
TEST(EmulatedCuda, ACaptureRecordsWorkThatEachReplayRuns) {
  KILN_SKIP_UNLESS_EMULATED();
  const Module mod;
  const cuda::StreamHandle s = cuda::stream_create(0);
  DeviceInts din(256), dout(1);
  din.put(std::vector<int>(256, 1));
  dout.put({-7});
  int* in_p = din.p;
  cuda::stream_begin_capture(0, s);
  cuda::memset_d32(0, dout.p, 5, 1, s);
  mod.launch("block_sum", 1, 256, {&in_p, &dout.p}, s);
  in_p = nullptr;  // the graph holds the value the launch was given
  const cuda::GraphExecHandle g = cuda::stream_end_capture(0, s);
  EXPECT_EQ(dout.get(), std::vector<int>{-7}) << "a capture runs nothing";
  cuda::graph_launch(0, g, nullptr);
  EXPECT_EQ(dout.get(), std::vector<int>{256});
  din.put(std::vector<int>(256, 2));
  cuda::graph_launch(0, g, nullptr);
  EXPECT_EQ(dout.get(), std::vector<int>{512});
  cuda::graph_exec_destroy(0, g);

  cuda::stream_begin_capture(0, s);
  EXPECT_NE(test::error_of([&] { cuda::stream_synchronize(0, s); }).find("cuStreamSynchronize while a stream is capturing"),
            std::string::npos);
  EXPECT_NE(test::error_of([&] { (void)cuda::stream_end_capture(0, s); }).find("cuStreamEndCapture"), std::string::npos);
  EXPECT_NE(test::error_of([&] { cuda::stream_begin_capture(0, nullptr); }).find("legacy stream"), std::string::npos);
  cuda::stream_destroy(0, s);
}

TEST(EmulatedCuda, AMissingBarrierReadsAStaleValueOnSomeLaunches) {
  KILN_SKIP_UNLESS_EMULATED();
  const Module mod;
  DeviceInts out(256);
  int stale = 0;
  for (int launch = 0; launch < 8; ++launch) {
    out.put(std::vector<int>(256, -1));
    mod.launch("racy_neighbour", 1, 256, {&out.p});
    const std::vector<int> got = out.get();
    for (int i = 1; i < 256; ++i) stale += got[static_cast<size_t>(i)] != i + 1;
  }
  EXPECT_GT(stale, 0) << "threads ran in an order that hides the missing __syncthreads";
}

TEST(EmulatedCuda, LanesWaitingAtDifferentBarriersFailTheLaunch) {
  KILN_SKIP_UNLESS_EMULATED();
  const Module mod;
  DeviceInts out(32);
  const std::string e = test::error_of([&] { mod.launch("divergent_barrier", 1, 32, {&out.p}); });
  EXPECT_NE(e.find("wait at different barriers (threads 0-15: __syncthreads; threads 16-31: a warp shuffle or vote)"),
            std::string::npos)
      << e;
}

TEST(EmulatedCuda, LanesAtDifferentWarpOperationsFailTheLaunch) {
  KILN_SKIP_UNLESS_EMULATED();
  const Module mod;
  DeviceInts out(32);
  const std::string e = test::error_of([&] { mod.launch("mixed_warp_ops", 1, 32, {&out.p}); });
  EXPECT_NE(e.find("mixed_warp_ops, block 0: warp 0's lanes 0 and 16 meet at different warp operations (a shuffle of 4 "
                   "bytes, a vote of 4 bytes)"),
            std::string::npos)
      << e;
}

// The emulated NVRTC reads a module's kernels from its text unless a directive could change
// them (fake_nvrtc.cpp); either way the names are NVRTC's.
TEST(EmulatedCuda, AModulesKernelsAreTheNamesNvrtcGives) {
  KILN_SKIP_UNLESS_EMULATED();
  const char* sources[] = {
      R"(// extern "C" __global__ void gone(int* out) { }
/* extern "C" __global__ void gone_too(int* out) { } */
static const char* note = "extern \"C\" __global__ void fake(int* out) {";
extern "C" __global__ void __launch_bounds__(256) bounded(int* out) { out[threadIdx.x] = note[0] == 'e'; }
)",
      R"(extern "C" __global__ void __launch_bounds__((256), 2) nested(int* out) { out[threadIdx.x] = 5; }
)",
      R"(#define RENAMED real_name
extern "C" __global__ void RENAMED(int* out) { out[threadIdx.x] = 3; }
)",
      R"(__global__ void mangled(int* out) { out[threadIdx.x] = 2; }
extern "C" __global__ void plain(int* out) { out[threadIdx.x] = 4; }
)"};
  const std::vector<std::pair<std::string, int>> present{{"bounded", 1}, {"nested", 5}, {"real_name", 3}, {"plain", 4}};
  const std::vector<std::string> absent{"gone", "gone_too", "fake", "mangled", "RENAMED"};
  std::vector<cuda::ModuleHandle> modules;
  for (const char* src : sources) {
    const cuda::NvrtcResult r = cuda::compile_for_device(src, cuda::compute_capability(0));
    ASSERT_TRUE(r.ok) << r.log;
    modules.push_back(cuda::module_load(0, r.cubin));
  }
  DeviceInts out(32);
  for (size_t i = 0; i < present.size(); ++i) {
    cuda::FunctionHandle f = cuda::module_function(0, modules[i], present[i].first);
    void* args[] = {&out.p};
    cuda::launch_kernel(0, f, 1, 32, 0, nullptr, args);
    EXPECT_EQ(out.get(), std::vector<int>(32, present[i].second)) << present[i].first;
  }
  for (const std::string& name : absent)
    for (cuda::ModuleHandle m : modules)
      EXPECT_NE(test::error_of([&] { cuda::module_function(0, m, name); }).find("cuModuleGetFunction(" + name + ")"),
                std::string::npos)
          << name;
}

TEST(EmulatedCuda, FreshDeviceMemoryIsNotZero) {
  KILN_SKIP_UNLESS_EMULATED();
  const Module mod;
  DeviceInts fresh(64), out(64);
  mod.launch("read_unwritten", 1, 64, {&fresh.p, &out.p});
  EXPECT_EQ(out.get(), std::vector<int>(64, 1));
}

TEST(EmulatedCuda, AnAccessPastAnAllocationFailsTheLaunch) {
  KILN_SKIP_UNLESS_EMULATED();
  const Module mod;
  DeviceInts out(16);
  int n = 16;
  const std::string e = test::error_of([&] { mod.launch("one_past", 1, 32, {&out.p, &n}); });
  EXPECT_NE(e.find("one_past, block 0, thread 0: an out-of-bounds access at "), std::string::npos) << e;
  EXPECT_NE(e.find(", 0 bytes past the end of a 64-byte allocation at "), std::string::npos) << e;
  // The device still works afterwards.
  n = 15;
  mod.launch("one_past", 1, 32, {&out.p, &n});
  EXPECT_EQ(out.get()[15], 1);
}

}  // namespace
}  // namespace kiln
