// kiln/test/test_cuda_sort.cpp — the device sort without a GPU: its kernels compiled by NVRTC,
// run on the CPU by an emulation of blocks and threads, and planned by the cuda backend.
//
// codegen_cuda/sort_kernels.cuh is pasted here as host C++ (KILN_SORT_KERNELS defined to paste
// its argument): a block of the tile kernel runs as blockDim std::threads sharing one buffer of
// "shared memory", __syncthreads a std::barrier among them; the merge kernel, which has no
// barrier, runs as one thread walking its grid-stride loop. The host driver below launches them
// as runtime/cuda/cuda_sort.cpp does, from cuda::sort_plan, with small tiles, so that a line
// takes many tiles and merges. Its results must be the cpu's argsort index for index: NaNs,
// ties, -0.0 against 0.0 and padding included. On a GPU the same kernels are run by
// CudaGpu.SortsOnTheDevice and the op database on cuda.
#include "codegen_cuda/cuda_sort_source.h"
#include "codegen_cuda/nvrtc.h"

#include "kiln/kiln.h"
#include "base/tensor_impl.h"

#include "test_support/plan.h"

#include <gtest/gtest.h>

#include <barrier>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace kiln::test {
namespace {

// ---- an emulation of the CUDA kernel model, enough for the sort's kernels ----------------------
namespace emu {
struct Dim3 {
  unsigned x = 0;
};
thread_local Dim3 threadIdx;
Dim3 blockIdx, blockDim, gridDim;  // set before a block's threads start
std::barrier<>* g_barrier = nullptr;
unsigned char* g_shared = nullptr;
inline void syncthreads() { g_barrier->arrive_and_wait(); }
}  // namespace emu

#define KILN_KERNEL inline void
#define KILN_DEVICE inline
#define KILN_SMEM(name) unsigned char* name = emu::g_shared
#define __syncthreads emu::syncthreads
#define KILN_SORT_KERNELS(...) __VA_ARGS__

namespace f32 {
using emu::blockDim, emu::blockIdx, emu::gridDim, emu::threadIdx;
using KEY = float;
#include "codegen_cuda/sort_kernels.cuh"
}  // namespace f32
namespace f64 {
using emu::blockDim, emu::blockIdx, emu::gridDim, emu::threadIdx;
using KEY = double;
#include "codegen_cuda/sort_kernels.cuh"
}  // namespace f64
namespace i64 {
using emu::blockDim, emu::blockIdx, emu::gridDim, emu::threadIdx;
using KEY = long long;
#include "codegen_cuda/sort_kernels.cuh"
}  // namespace i64

#undef __syncthreads
#undef KILN_SORT_KERNELS
#undef KILN_SMEM
#undef KILN_DEVICE
#undef KILN_KERNEL

// Runs `lines` lines of n keys through the kernels as cuda_argsort launches them; the positions.
template <typename K, typename Tiles, typename Merge>
std::vector<long long> emulate_argsort(const std::vector<K>& in, int64_t n, int64_t lines, bool desc, int max_tile,
                                       cuda::SortKey key, Tiles tiles, Merge merge) {
  const cuda::SortPlan plan = cuda::sort_plan(n, lines, key, max_tile);
  EXPECT_TRUE(plan.ok);
  std::vector<K> keys(in.size()), keys2(in.size());
  std::vector<long long> index(in.size()), index2(in.size());
  std::vector<unsigned char> shared(static_cast<size_t>(plan.shared_bytes));
  emu::g_shared = shared.data();
  emu::blockDim.x = static_cast<unsigned>(plan.threads);
  emu::gridDim.x = static_cast<unsigned>(plan.tile_blocks);
  for (int64_t b = 0; b < plan.tile_blocks; ++b) {
    emu::blockIdx.x = static_cast<unsigned>(b);
    std::barrier<> barrier(plan.threads);
    emu::g_barrier = &barrier;
    std::vector<std::thread> threads;
    for (int t = 0; t < plan.threads; ++t)
      threads.emplace_back([&, t] {
        emu::threadIdx.x = static_cast<unsigned>(t);
        tiles(in.data(), n, lines, plan.tiles_per_line, plan.tile, plan.per_block, desc ? 1 : 0, keys.data(), index.data());
      });
    for (std::thread& th : threads) th.join();
  }
  emu::blockIdx.x = 0, emu::blockDim.x = 1, emu::gridDim.x = 1, emu::threadIdx.x = 0;
  for (int64_t w : plan.merge_widths) {
    merge(keys.data(), index.data(), n, lines, w, desc ? 1 : 0, keys2.data(), index2.data());
    std::swap(keys, keys2);
    std::swap(index, index2);
  }
  return index;
}

// The cpu's argsort of the same keys, [lines, n].
std::vector<long long> cpu_argsort(const Tensor& x, bool desc) {
  const Tensor r = argsort(x, -1, desc).contiguous();
  const int64_t* p = static_cast<const int64_t*>(r.impl()->data());
  return std::vector<long long>(p, p + r.numel());
}

// Keys with ties, NaNs, infinities, -0.0 and 0.0 among ordinary values.
Tensor hostile_floats(int64_t lines, int64_t n, ScalarType dt, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<double> v(static_cast<size_t>(lines * n));
  const double specials[] = {std::nan(""), 0.0, -0.0, std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(), 1.5, -1.5};
  for (double& x : v) {
    const uint32_t r = gen() % 16;
    x = r < 7 ? specials[r] : static_cast<double>(static_cast<int>(gen() % 40) - 20) / 4;
  }
  return tensor(v, {lines, n}).to(dt);
}

TEST(CudaSort, PlansCoverEveryLine) {
  const cuda::SortPlan one = cuda::sort_plan(1, 3, cuda::SortKey::Float);
  EXPECT_TRUE(one.ok);
  EXPECT_EQ(one.tile, 2);
  EXPECT_EQ(one.per_block, 3);
  EXPECT_EQ(one.tile_blocks, 1);
  EXPECT_TRUE(one.merge_widths.empty());
  const cuda::SortPlan small = cuda::sort_plan(100, 7, cuda::SortKey::Double);
  EXPECT_EQ(small.tile, 128);
  EXPECT_EQ(small.per_block, 7);
  EXPECT_EQ(small.threads, 7 * 64);
  EXPECT_EQ(small.shared_bytes, 7 * 128 * 16);
  EXPECT_TRUE(small.merge_widths.empty());
  // An MoE router's scores: 256 lines of 8 a block, 64 blocks.
  const cuda::SortPlan router = cuda::sort_plan(8, 16384, cuda::SortKey::Float);
  EXPECT_EQ(router.per_block, 256);
  EXPECT_EQ(router.threads, 1024);
  EXPECT_EQ(router.tile_blocks, 64);
  EXPECT_EQ(router.shared_bytes, 2048 * 12);
  const cuda::SortPlan vocab = cuda::sort_plan(50257, 4, cuda::SortKey::Float);
  EXPECT_EQ(vocab.tile, cuda::kMaxSortTile);
  EXPECT_EQ(vocab.per_block, 1);
  EXPECT_EQ(vocab.tiles_per_line, 25);
  EXPECT_EQ(vocab.tile_blocks, 100);
  EXPECT_EQ(vocab.merge_widths, (std::vector<int64_t>{2048, 4096, 8192, 16384, 32768}));
  EXPECT_FALSE(cuda::sort_plan(1 << 20, int64_t{1} << 22, cuda::SortKey::Float).ok) << "2^33 tiles do not fit a grid";
  EXPECT_TRUE(cuda::sort_plan(2, int64_t{1} << 32, cuda::SortKey::Float).ok) << "2^32 short lines pack into 2^22 blocks";
  EXPECT_FALSE(cuda::sort_plan(0, 1, cuda::SortKey::Float).ok);
}

// Floating keys of every kind, ascending and descending, lines of lengths around the tile and its
// multiples, tiles of 2 to 16 keys so that lines take many merges.
TEST(CudaSort, KernelsOrderFloatsAsTheCpuDoes) {
  uint32_t seed = 1;
  for (const int max_tile : {2, 4, 16})
    for (const int64_t n : {1, 2, 3, 5, 15, 16, 17, 33, 100})
      for (const bool desc : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "tile " << max_tile << ", n " << n << (desc ? ", descending" : ""));
        const int64_t lines = n < 16 ? 11 : 3;  // short lines pack several to a block
        const Tensor x = hostile_floats(lines, n, kFloat, seed++);
        const float* p = static_cast<const float*>(x.impl()->data());
        const std::vector<float> in(p, p + x.numel());
        EXPECT_EQ(emulate_argsort(in, n, lines, desc, max_tile, cuda::SortKey::Float, f32::kiln_sort_tiles,
                                  f32::kiln_sort_merge),
                  cpu_argsort(x, desc));
        const Tensor xd = x.to(kDouble);
        const double* pd = static_cast<const double*>(xd.impl()->data());
        EXPECT_EQ(emulate_argsort(std::vector<double>(pd, pd + xd.numel()), n, lines, desc, max_tile, cuda::SortKey::Double,
                                  f64::kiln_sort_tiles, f64::kiln_sort_merge),
                  cpu_argsort(xd, desc));
      }
}

// The production tile (2048 keys, 1024 threads a block): a line of two tiles and a merge, and
// short lines packed 2048 keys to a block.
TEST(CudaSort, KernelsOrderWithTheLargestTile) {
  for (const auto& [lines, n] : {std::pair<int64_t, int64_t>{1, 3000}, std::pair<int64_t, int64_t>{300, 8}}) {
    SCOPED_TRACE(::testing::Message() << lines << " lines of " << n);
    const Tensor x = hostile_floats(lines, n, kFloat, 99);
    const float* p = static_cast<const float*>(x.impl()->data());
    for (const bool desc : {false, true})
      EXPECT_EQ(emulate_argsort(std::vector<float>(p, p + x.numel()), n, lines, desc, cuda::kMaxSortTile, cuda::SortKey::Float,
                                f32::kiln_sort_tiles, f32::kiln_sort_merge),
                cpu_argsort(x, desc));
  }
}

// Integer keys (every integer dtype and bool compare as int64), with many ties; and a longer line
// with the largest tile's threads.
TEST(CudaSort, KernelsOrderIntegersAsTheCpuDoes) {
  std::mt19937 gen(7);
  for (const int64_t n : {6, 64, 1000})
    for (const bool desc : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "n " << n << (desc ? ", descending" : ""));
      const int64_t lines = 2;
      std::vector<long long> in(static_cast<size_t>(lines * n));
      for (long long& v : in) v = static_cast<long long>(gen() % 9) - 4 + (gen() % 50 == 0 ? (1LL << 40) : 0);
      std::vector<int64_t> as64(in.begin(), in.end());
      const Tensor x = tensor(as64, {lines, n});
      EXPECT_EQ(emulate_argsort(in, n, lines, desc, n == 1000 ? 256 : 8, cuda::SortKey::Int64, i64::kiln_sort_tiles,
                                i64::kiln_sort_merge),
                cpu_argsort(x, desc));
    }
}

// The module compiles for each key type, for the architectures packages carry.
TEST(CudaSort, KernelsCompileToCubins) {
  std::string why;
  if (!cuda::nvrtc_available(&why)) GTEST_SKIP() << "NVRTC is not available: " << why;
  for (const cuda::SortKey key : {cuda::SortKey::Float, cuda::SortKey::Double, cuda::SortKey::Int64})
    for (const int sm : {80, 90}) {
      const cuda::NvrtcResult r = cuda::compile_for_device(cuda::sort_source(key), sm);
      EXPECT_TRUE(r.ok) << r.log << "\n" << r.source;
      EXPECT_FALSE(r.cubin.empty());
    }
}

// The cuda backend plans argsort (under sort, topk, ...) as its sort step, never on the host.
TEST(CudaSort, TheCudaBackendPlansSortsOnTheDevice) {
  for (ScalarType dt : {kFloat, kHalf, kDouble, kInt32, kUInt8}) {  // (topk of bool is an error, as in PyTorch)
    SCOPED_TRACE(std::string(dtype_name(dt)));
    const ir::ExecPlan plan = plan_of(
        [](const std::vector<Tensor>& in) {
          auto [v, i] = sort(in[0], 1, true);
          return std::vector<Tensor>{v, i, std::get<1>(topk(in[0], 3, -1))};
        },
        {ones({4, 9}, dt)}, "cuda");
    int sorts = 0;
    for (const ir::PlanStep& st : plan.steps)
      if (st.kind != ir::StepKind::Kernel && st.op == ir::OpKind::argsort) {
        EXPECT_EQ(st.lowering, "sort") << plan.str();
        ++sorts;
      }
    EXPECT_GE(sorts, 1) << plan.str();
  }
}

}  // namespace
}  // namespace kiln::test
