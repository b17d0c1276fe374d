// kiln/test/test_cuda_emit.cpp — hand-built kernels rendered as CUDA C and compiled to PTX by NVRTC.
//
// Each test builds an ir::Kernel the way lowering would (pointwise with a broadcast, softmax,
// layer_norm-like statistics, a full sum, argmax, a column sum with outer_reduction_tile, f16
// and bf16, integer floor division, checks), checks that it verifies, that the CUDA source has the
// structure the launch kind promises (key substrings), and that NVRTC compiles it to PTX with
// the kernel's entry point. Nothing runs on a GPU here; without NVRTC the compile step skips.
#include "test_cuda_kernels.h"

#include "base/error.h"
#include "ir/kernel_text.h"
#include "test_support/files.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace kiln::test {
namespace {

using namespace cudak;
using ir::OpKind;
using ir::ReductionOp;

bool has(const std::string& src, const std::string& what) { return src.find(what) != std::string::npos; }
#define EXPECT_HAS(src, what) EXPECT_TRUE(has(src, what)) << "missing: " << (what) << "\n---- source ----\n" << (src)

// y = a / (abs(a) + 1) * b, a: [s0, s1], b: [s1] broadcast along rows.
ir::Kernel pointwise_kernel() {
  ir::Kernel k;
  k.name = "k_pointwise";
  k.args = {in_arg("in0", kFloat), in_arg("in1", kFloat), out_arg("out0", kFloat)};
  k.params = {"s0", "s1"};
  k.grid = {S("s0"), S("s1")};
  const Expr flat = S("s1") * P(0) + P(1);
  k.stages = {loop({}, {ld(0, 0, flat, kFloat), op(1, OpKind::abs, {0}, kFloat), cst(2, Scalar(1.0), kFloat),
                        op(3, OpKind::add, {1, 2}, kFloat), op(4, OpKind::div, {0, 3}, kFloat, div_mode(nullptr)),
                        ld(5, 1, P(1), kFloat), op(6, OpKind::mul, {4, 5}, kFloat), st(2, flat, 6, kFloat)})};
  return k;
}

TEST(CudaEmit, PointwiseChainWithBroadcast) {
  const ir::Kernel k = pointwise_kernel();
  ir::verify_kernel(k);
  EXPECT_EQ(launch_kind_of(k), ir::LaunchKind::ThreadPerPoint);
  const std::string src = emit_scheduled(k);
  EXPECT_HAS(src, "extern \"C\" __global__ void k_pointwise(const float* in0, const float* in1, float* out0, "
                  "const k_pointwise_params params, kiln_i64 grid0)");
  EXPECT_HAS(src, "const kiln_i64 s1 = params.v[1];");
  EXPECT_HAS(src, "kiln_q += (kiln_i64)gridDim.x * blockDim.x");  // grid-stride over points
  // Symbolic sizes: the point's coordinates in 32 bits when the grid fits them, else in 64.
  EXPECT_HAS(src, "kiln_i64 p0, p1;");
  EXPECT_HAS(src, "if (grid0 <= 4294967295LL) {");
  EXPECT_HAS(src, "unsigned kiln_q_rest = (unsigned)kiln_q;");
  EXPECT_HAS(src, "p1 = kiln_q_rest % (unsigned)kiln_grid1;");
  EXPECT_HAS(src, "kiln_q_rest /= (unsigned)kiln_grid1;");
  EXPECT_HAS(src, "kiln_i64 kiln_q_rest = kiln_q;");
  EXPECT_HAS(src, "p1 = kiln_q_rest % kiln_grid1;");
  EXPECT_HAS(src, "const float v1 = fabsf(v0);");
  EXPECT_HAS(src, "const float v2 = 1.0f;");
  EXPECT_HAS(src, "const float v4 = (v0 / v3);");
  EXPECT_HAS(src, "const float v5 = in1[p1];");  // the broadcast operand ignores p0
  EXPECT_HAS(src, "out0[(p1 + (p0 * s1))] = v6;");
  EXPECT_FALSE(has(src, "cuda_fp16.h"));
  KILN_SKIP_WITHOUT_NVRTC();
  EXPECT_TRUE(compile_ptx(k, src));
}

// The same chain at static sizes [64, 128] with an f16 operand: each thread takes four
// consecutive points of the last dimension (schedule_launch's vector=4), moving the contiguous
// loads and the store as KilnVecs and the broadcast operand too (its elements are consecutive
// along p1); misaligned buffers take the one-point loop after it.
TEST(CudaEmit, VectorizedPointwiseKernel) {
  ir::Kernel k;
  k.name = "k_vec";
  k.args = {in_arg("in0", kFloat), in_arg("in1", kHalf), out_arg("out0", kFloat)};
  k.grid = {Expr(64), Expr(128)};
  const Expr flat = Expr(128) * P(0) + P(1);
  k.stages = {loop({}, {ld(0, 0, flat, kFloat), ld(1, 1, P(1), kFloat), op(2, OpKind::mul, {0, 1}, kFloat),
                        st(2, flat, 2, kFloat)})};
  ir::Kernel scheduled = k;
  passes::schedule_launch(scheduled, passes::ScheduleTarget{});
  EXPECT_EQ(scheduled.schedule.launch.vector, 4);
  const std::string src = emit_scheduled(k);
  EXPECT_HAS(src, "template <class T, int N> struct alignas(sizeof(T) * N) KilnVec { T v[N]; };");
  // Static sizes that fit 32 bits: the coordinates in 32 bits only, no branch.
  EXPECT_HAS(src, "const kiln_i64 p1 = kiln_q_rest % (unsigned)kiln_grid1;");
  EXPECT_FALSE(has(src, "if (grid0 <= 4294967295LL)"));
  EXPECT_HAS(src, "if ((reinterpret_cast<unsigned long long>(in0) % 16 == 0) && "
                  "(reinterpret_cast<unsigned long long>(in1) % 8 == 0) && "
                  "(reinterpret_cast<unsigned long long>(out0) % 16 == 0))");
  EXPECT_HAS(src, "kiln_q = ((kiln_i64)blockIdx.x * blockDim.x + threadIdx.x) * 4; kiln_q < grid0; "
                  "kiln_q += (kiln_i64)gridDim.x * blockDim.x * 4");
  // Every index value fits 32 bits: the addresses are computed in int (KLaunch::index32).
  EXPECT_TRUE(scheduled.schedule.launch.index32);
  EXPECT_HAS(src, "const KilnVec<float, 4> kiln_l0 = *reinterpret_cast<const KilnVec<float, 4>*>(&in0[((128 * ((int)p0)) + ((int)p1))]);");
  EXPECT_HAS(src, "const KilnVec<__half, 4> kiln_l1 = *reinterpret_cast<const KilnVec<__half, 4>*>(&in1[((int)p1)]);");
  EXPECT_HAS(src, "const float v1_3 = ((float)(__half2float(kiln_l1.v[3])));");
  EXPECT_HAS(src, "const float v2_3 = (v0_3 * v1_3);");
  EXPECT_HAS(src, "*reinterpret_cast<KilnVec<float, 4>*>(&out0[((128 * ((int)p0)) + ((int)p1))]) = kiln_st;");
  EXPECT_HAS(src, "const float v2 = (v0 * v1);");  // the one-point fallback
  // A load strided along the last dimension is read lane by lane.
  k.stages[0].body[1] = ld(1, 1, Expr(64) * P(1), kFloat);
  const std::string strided = emit_scheduled(k);
  EXPECT_HAS(strided, "const float v1_3 = ((float)(__half2float(in1[(192 + (64 * ((int)p1)))])));");
  // A stride that takes the index past 2^31 - 1 keeps 64-bit addresses.
  k.stages[0].body[1] = ld(1, 1, Expr(int64_t{1} << 25) * P(1), kFloat);
  ir::Kernel wide = k;
  passes::schedule_launch(wide, passes::ScheduleTarget{});
  EXPECT_FALSE(wide.schedule.launch.index32);
  EXPECT_HAS(emit_scheduled(k), "in1[(33554432LL * p1)]");
  // A 1-D grid of symbolic size (an eager op's flat view) vectorizes when the size is a
  // multiple of the lanes at run time.
  ir::Kernel kf;
  kf.name = "k_flat";
  kf.args = {in_arg("in0", kFloat), out_arg("out0", kFloat)};
  kf.params = {"s0"};
  kf.grid = {S("s0")};
  kf.stages = {loop({}, {ld(0, 0, P(0), kFloat), op(1, OpKind::neg, {0}, kFloat), st(1, P(0), 1, kFloat)})};
  const std::string flat_src = emit_scheduled(kf);
  EXPECT_HAS(flat_src, "(reinterpret_cast<unsigned long long>(out0) % 16 == 0) && (grid0 % 4 == 0))");
  EXPECT_HAS(flat_src, "const float v1 = (-v0);");  // the one-point loop for other sizes
  // An eager broadcast: symbolic sizes, a symbolic row stride and offset. The vector path also
  // needs the row length, the stride and the offset to be multiples of the lanes at run time.
  ir::Kernel kb;
  kb.name = "k_bcast";
  kb.args = {in_arg("in0", kFloat), in_arg("in1", kFloat), out_arg("out0", kFloat)};
  kb.params = {"s0", "s1", "t0", "o0"};
  kb.grid = {S("s0"), S("s1")};
  kb.stages = {loop({}, {ld(0, 0, S("t0") * P(0) + P(1) + S("o0"), kFloat), ld(1, 1, P(1), kFloat),
                         op(2, OpKind::add, {0, 1}, kFloat), st(2, S("s1") * P(0) + P(1), 2, kFloat)})};
  const std::string bcast_src = emit_scheduled(kb);
  EXPECT_HAS(bcast_src, "(reinterpret_cast<unsigned long long>(out0) % 16 == 0) && (kiln_grid1 % 4 == 0) && "
                        "(o0 % 4 == 0) && (t0 % 4 == 0) && (s1 % 4 == 0))");
  EXPECT_HAS(bcast_src, "const KilnVec<float, 4> kiln_l0 = *reinterpret_cast<const KilnVec<float, 4>*>(&in0[");
  EXPECT_HAS(bcast_src, "const float v2 = (v0 + v1);");  // the one-point loop otherwise
  // A constant last extent with a store contiguous on constants (a dynamic compile's x[:, :64]):
  // the kernel vectorizes without testing its symbolic row stride, which it reads lane by lane.
  ir::Kernel ks;
  ks.name = "k_narrow";
  ks.args = {in_arg("in0", kFloat), out_arg("out0", kFloat)};
  ks.params = {"s0", "s1"};
  ks.grid = {S("s0"), Expr(64)};
  ks.stages = {loop({}, {ld(0, 0, S("s1") * P(0) + P(1), kFloat), st(1, Expr(64) * P(0) + P(1), 0, kFloat)})};
  const std::string narrow_src = emit_scheduled(ks);
  EXPECT_HAS(narrow_src, "if ((reinterpret_cast<unsigned long long>(out0) % 16 == 0))");
  EXPECT_FALSE(has(narrow_src, "s1 % 4")) << narrow_src;
  KILN_SKIP_WITHOUT_NVRTC();
  EXPECT_TRUE(compile_ptx(k, src));
  EXPECT_TRUE(compile_ptx(k, strided));
  EXPECT_TRUE(compile_ptx(kf, flat_src));
  EXPECT_TRUE(compile_ptx(kb, bcast_src));
  EXPECT_TRUE(compile_ptx(ks, narrow_src));
}

// A column sum of [8192, 8192] on a device of 132 multiprocessors: 8192 columns are too few to
// fill it with a thread each, so schedule_launch splits every column's rows among 8 threads of
// its block (row_split=8: 32 columns by 8 row groups), combined in shared memory in a fixed
// order; lanes past the last column compute column 0 and store nothing.
TEST(CudaEmit, ColumnSumSplitsItsRowsAmongABlock) {
  ir::Kernel k;
  k.name = "k_colsplit";
  k.args = {in_arg("in0", kFloat), out_arg("out0", kFloat)};
  k.grid = {Expr(8192)};
  k.schedule.outer_reduction = true;
  k.schedule.outer_reduction_tile = 32;
  k.stages = {reduce(ReductionOp::sum, {Expr(8192)}, {ld(0, 0, Expr(8192) * R(0) + P(0), kFloat)}, 0, 1, kDouble),
              loop({}, {st(1, P(0), 1, kFloat)})};
  passes::ScheduleTarget h100;
  h100.sms = 132;
  passes::schedule_launch(k, h100);
  EXPECT_EQ(k.schedule.launch.row_split, 8);
  EXPECT_EQ(ir::blocks_for(k.schedule.launch, 8192, 256, 132), 256);  // 32 columns a block
  ir::Kernel wide = k;  // 2^20 columns fill the device alone
  wide.grid = {Expr(1 << 20)};
  wide.stages[0].body[0].index = Expr(1 << 20) * R(0) + P(0);
  passes::schedule_launch(wide, h100);
  EXPECT_EQ(wide.schedule.launch.row_split, 1);
  const std::string src = cuda::emit_cuda(k);
  EXPECT_HAS(src, "const kiln_i64 kiln_lane = threadIdx.x % 32, kiln_g = threadIdx.x / 32;");
  EXPECT_HAS(src, "for (kiln_i64 kiln_tile = blockIdx.x; kiln_tile * 32 < grid0; kiln_tile += gridDim.x)");
  EXPECT_HAS(src, "for (kiln_i64 kiln_t = kiln_g; kiln_t < kiln_s0_n; kiln_t += 8)");
  EXPECT_HAS(src, "__shared__ double kiln_part1[8][32];");
  EXPECT_HAS(src, "for (int kiln_j = 1; kiln_j < 8; ++kiln_j) kiln_acc1 = KilnSum()(kiln_acc1, kiln_part1[kiln_j][kiln_lane]);");
  EXPECT_HAS(src, "if (kiln_g == 0 && kiln_valid)");
  KILN_SKIP_WITHOUT_NVRTC();
  EXPECT_TRUE(compile_ptx(k, src));
}

// The source a kernel is compiled from (and its cubin's cache key) depends on the kernel alone:
// its plan name, which carries a process-wide counter, does not reach it.
TEST(CudaEmit, ModuleSourceDependsOnTheKernelAlone) {
  ir::Kernel a = pointwise_kernel(), b = pointwise_kernel();
  a.name = "fn_12_k0";
  b.name = "fn_4081_k3";
  passes::schedule_launch(a, passes::ScheduleTarget{});
  passes::schedule_launch(b, passes::ScheduleTarget{});
  EXPECT_NE(cuda::emit_cuda(a), cuda::emit_cuda(b));
  EXPECT_EQ(cuda::emit_module(a), cuda::emit_module(b));
  EXPECT_HAS(cuda::emit_module(a), std::string("extern \"C\" __global__ void ") + cuda::kModuleEntry + "(");
  KILN_SKIP_WITHOUT_NVRTC();  // a package's per-kernel image (runtime/export/cuda_code.cpp)
  const cuda::NvrtcResult r = cuda::compile_for_device(cuda::emit_module(a), 90);
  ASSERT_TRUE(r.ok) << r.log;
  EXPECT_NE(r.cubin.find(std::string(1, '\0') + cuda::kModuleEntry + std::string(1, '\0')), std::string::npos);
}

// A compilation's kernels are one module: the prelude once (with f16 support when any kernel
// needs it), each kernel renamed by its position, the source independent of plan names, and
// one NVRTC run makes one cubin that defines every entry point.
TEST(CudaEmit, AProgramsKernelsAreOneModuleNamedByPosition) {
  ir::Kernel a = pointwise_kernel();
  ir::Kernel h;
  h.name = "fn_7_k2";
  h.args = {in_arg("in0", kHalf), out_arg("out0", kHalf)};
  h.params = {"s0"};
  h.grid = {S("s0")};
  h.stages = {loop({}, {ld(0, 0, P(0), kHalf), cst(1, Scalar(2.5), kHalf), op(2, OpKind::mul, {0, 1}, kHalf),
                        st(1, P(0), 2, kHalf)})};
  passes::schedule_launch(a, passes::ScheduleTarget{});
  passes::schedule_launch(h, passes::ScheduleTarget{});
  const std::string src = cuda::emit_program_module({&a, &h, &a});
  const auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = src.find(what); at != std::string::npos; at = src.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_HAS(src, "// kiln module of 3 kernels");
  EXPECT_EQ(count("typedef long long kiln_i64;"), 1u);
  EXPECT_EQ(count("#include <cuda_fp16.h>"), 1u);
  EXPECT_EQ(count("#include <cuda_bf16.h>"), 0u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(count("void " + cuda::module_entry(i) + "("), 1u) << i;
  ir::Kernel renamed = a;
  renamed.name = "fn_4081_k0";
  EXPECT_EQ(cuda::emit_program_module({&renamed, &h, &a}), src);
  EXPECT_NE(cuda::emit_program_module({&h, &a, &a}), src);  // the order is part of the module
  KILN_SKIP_WITHOUT_NVRTC();
  const cuda::NvrtcResult r = cuda::compile_for_device(src, 90, {"--split-compile=0"});
  ASSERT_TRUE(r.ok) << r.log;
  for (const char* entry : {"k0", "k1", "k2"})
    EXPECT_NE(r.cubin.find(std::string(1, '\0') + entry + std::string(1, '\0')), std::string::npos) << entry;
}

// softmax over the last dim of [s0, s1]: amax, sum of exp(x - max), then exp(x - max) / sum.
TEST(CudaEmit, SoftmaxRowKernel) {
  ir::Kernel k;
  k.name = "k_softmax";
  k.args = {in_arg("in0", kFloat), out_arg("out0", kFloat)};
  k.params = {"s0", "s1"};
  k.grid = {S("s0")};
  const Expr at = S("s1") * P(0) + R(0);
  k.stages = {
      reduce(ReductionOp::amax, {S("s1")}, {ld(0, 0, at, kFloat)}, 0, 1, kFloat),
      reduce(ReductionOp::sum, {S("s1")},
             {ld(2, 0, at, kFloat), op(3, OpKind::sub, {2, 1}, kFloat), op(4, OpKind::exp, {3}, kFloat)}, 4, 5, kFloat),
      loop({S("s1")}, {ld(6, 0, at, kFloat), op(7, OpKind::sub, {6, 1}, kFloat), op(8, OpKind::exp, {7}, kFloat),
                       op(9, OpKind::div, {8, 5}, kFloat, div_mode(nullptr)), st(1, at, 9, kFloat)})};
  ir::verify_kernel(k);
  EXPECT_EQ(launch_kind_of(k), ir::LaunchKind::BlockPerPoint);
  const std::string src = emit_scheduled(k);
  EXPECT_HAS(src, "for (kiln_i64 kiln_q = blockIdx.x; kiln_q < grid0; kiln_q += gridDim.x)");
  EXPECT_HAS(src, "float kiln_acc1 = (-kiln_inf(0.0f));");
  EXPECT_HAS(src, "for (kiln_i64 kiln_t = (kiln_i64)threadIdx.x; kiln_t < kiln_s0_n; kiln_t += (kiln_i64)blockDim.x)");
  EXPECT_HAS(src, "kiln_acc1 = KilnMax()(kiln_acc1, v0);");
  EXPECT_HAS(src, "const float v1 = kiln_block_reduce(kiln_acc1, KilnMax(), (-kiln_inf(0.0f)));");
  EXPECT_HAS(src, "const float v4 = expf(v3);");
  EXPECT_HAS(src, "const float v5 = kiln_block_reduce(kiln_acc5, KilnSum(), 0.0f);");
  EXPECT_HAS(src, "out0[(r0 + (p0 * s1))] = v9;");
  KILN_SKIP_WITHOUT_NVRTC();
  EXPECT_TRUE(compile_ptx(k, src));
}

// The softmax of rows of 8192 at static sizes: 1024 threads take 8 items each, unrolled
// (row_items=8), and the row is read once: the first stage keeps each thread's items of in0 in
// registers (kiln_row0), which the sum and the store stages read instead of memory.
TEST(CudaEmit, StaticRowKernelReadsItsRowOnce) {
  ir::Kernel k;
  k.name = "k_softmax_rows";
  k.args = {in_arg("in0", kFloat), out_arg("out0", kFloat)};
  k.grid = {Expr(4096)};
  const Expr at = Expr(8192) * P(0) + R(0);
  k.stages = {
      reduce(ReductionOp::amax, {Expr(8192)}, {ld(0, 0, at, kFloat)}, 0, 1, kFloat),
      reduce(ReductionOp::sum, {Expr(8192)},
             {ld(2, 0, at, kFloat), op(3, OpKind::sub, {2, 1}, kFloat), op(4, OpKind::exp, {3}, kFloat)}, 4, 5, kFloat),
      loop({Expr(8192)}, {ld(6, 0, at, kFloat), op(7, OpKind::sub, {6, 1}, kFloat), op(8, OpKind::exp, {7}, kFloat),
                          op(9, OpKind::div, {8, 5}, kFloat, div_mode(nullptr)), st(1, at, 9, kFloat)})};
  ir::Kernel scheduled = k;
  passes::schedule_launch(scheduled, passes::ScheduleTarget{});
  EXPECT_EQ(scheduled.schedule.launch.threads, 1024);
  EXPECT_EQ(scheduled.schedule.launch.row_items, 8);
  EXPECT_TRUE(scheduled.schedule.launch.row_cache);
  const std::vector<ir::RowCachedLoad> cached = ir::row_cached_loads(k);
  ASSERT_EQ(cached.size(), 1u);
  EXPECT_EQ(cached[0].first, 0u);
  EXPECT_EQ(ir::parse_kernel(scheduled.str()), scheduled);  // row_items prints and parses back
  const std::string src = emit_scheduled(k);
  EXPECT_HAS(src, "float kiln_row0[8];");
  EXPECT_HAS(src, "for (int kiln_i = 0; kiln_i < 8; ++kiln_i)");
  EXPECT_HAS(src, "const kiln_i64 kiln_t = (kiln_i64)threadIdx.x + (kiln_i64)kiln_i * 1024;");
  EXPECT_HAS(src, "kiln_row0[kiln_i] = v0;");
  EXPECT_HAS(src, "const float v2 = kiln_row0[kiln_i];");
  EXPECT_HAS(src, "const float v6 = kiln_row0[kiln_i];");
  EXPECT_EQ(src.find("const float v2 = in0["), std::string::npos) << src;
  // softmax as the cuda backend plans it: the sum's stage stores exp to out0 and the last stage
  // reads it back to normalize it. out0 is a stored row: exp stays in registers, and only the
  // normalized value reaches memory.
  ir::Kernel sm = k;
  sm.stages[1].body.push_back(st(1, at, 4, kFloat));
  sm.stages[2].body = {ld(6, 1, at, kFloat), op(9, OpKind::div, {6, 5}, kFloat, div_mode(nullptr)), st(1, at, 9, kFloat)};
  ir::verify_kernel(sm);
  const std::vector<ir::RowCachedLoad> rows = ir::row_cached_loads(sm);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(rows[0].stored);
  EXPECT_EQ(rows[0].arg, 1);
  EXPECT_EQ(rows[0].first, 1u);
  EXPECT_EQ(rows[0].last_store, 2u);
  const std::string sm_src = emit_scheduled(sm);
  EXPECT_HAS(sm_src, "kiln_row0[kiln_i] = v4;");
  EXPECT_EQ(sm_src.find("out0[((8192 * ((int)p0)) + ((int)r0))] = v4;"), std::string::npos) << "exp reached memory:\n" << sm_src;
  EXPECT_HAS(sm_src, "const float v6 = kiln_row0[kiln_i];");
  EXPECT_HAS(sm_src, "out0[((8192 * ((int)p0)) + ((int)r0))] = v9;");
  EXPECT_EQ(sm_src.find("this stage reads what an earlier stage stored"), std::string::npos) << sm_src;
  // The output written in place of the input (a donated buffer) is not cached: the loads stay.
  ir::Kernel in_place = k;
  in_place.args = {out_arg("io0", kFloat)};
  for (ir::KStage& st : in_place.stages)
    for (ir::KInst& in : st.body) in.arg = 0;
  EXPECT_TRUE(ir::row_cached_loads(in_place).empty());
  // An f16 output row stored and read back stays in registers too, rounded to f16 as memory
  // would hold it.
  ir::Kernel half = sm;
  half.args[1].dtype = kHalf;
  half.stages[1].body = {ld(2, 0, at, kFloat), op(3, OpKind::sub, {2, 1}, kFloat), op(4, OpKind::exp, {3}, kFloat),
                         op(10, OpKind::convert_element_type, {4}, kHalf, to_dtype(kHalf)), st(1, at, 10, kHalf)};
  half.stages[2].body = {ld(6, 1, at, kHalf), op(11, OpKind::convert_element_type, {6}, kFloat, to_dtype(kFloat)),
                         op(9, OpKind::div, {11, 5}, kFloat, div_mode(nullptr)),
                         op(12, OpKind::convert_element_type, {9}, kHalf, to_dtype(kHalf)), st(1, at, 12, kHalf)};
  ir::verify_kernel(half);
  const std::vector<ir::RowCachedLoad> half_rows = ir::row_cached_loads(half);
  ASSERT_FALSE(half_rows.empty());
  EXPECT_TRUE(half_rows[0].stored);
  EXPECT_EQ(half_rows[0].dtype, kHalf);
  const std::string half_src = emit_scheduled(half);
  EXPECT_HAS(half_src, "kiln_row0[kiln_i] = __half2float(__float2half_rn((float)(v10)));");
  EXPECT_EQ(half_src.find("out0[((8192LL * p0) + r0)] = __float2half_rn(v10);"), std::string::npos) << half_src;
  // Rows too long for 32 items a thread keep their stage loops.
  ir::Kernel longer = k;
  for (ir::KStage& st : longer.stages) st.extents = {Expr(65536)};
  passes::schedule_launch(longer, passes::ScheduleTarget{});
  EXPECT_EQ(longer.schedule.launch.row_items, 0);
  EXPECT_FALSE(longer.schedule.launch.row_cache);
  // The target's width (KILN_CUDA_ROW_THREADS) and caching (KILN_CUDA_ROW_CACHE): 256 threads
  // take 32 items each, too many to keep (32 registers past the 24 of the budget); without the
  // cache every stage loads, in blocks of 512 threads of 16 items.
  passes::ScheduleTarget narrow;
  narrow.row_threads = 256;
  ir::Kernel k256 = k;
  passes::schedule_launch(k256, narrow);
  EXPECT_EQ(k256.schedule.launch.threads, 256);
  EXPECT_EQ(k256.schedule.launch.row_items, 32);
  EXPECT_FALSE(k256.schedule.launch.row_cache);
  passes::ScheduleTarget uncached;
  uncached.row_cache = false;
  ir::Kernel reread = k;
  passes::schedule_launch(reread, uncached);
  EXPECT_EQ(reread.schedule.launch.threads, 512);
  EXPECT_EQ(reread.schedule.launch.row_items, 16);
  EXPECT_FALSE(reread.schedule.launch.row_cache);
  const std::string reread_src = cuda::emit_cuda(reread);
  EXPECT_HAS(reread_src, "const float v2 = in0[");
  EXPECT_EQ(reread_src.find("kiln_row0"), std::string::npos) << reread_src;
  KILN_SKIP_WITHOUT_NVRTC();
  EXPECT_TRUE(compile_ptx(k, src));
  EXPECT_TRUE(compile_ptx(k256, cuda::emit_cuda(k256)));
  EXPECT_TRUE(compile_ptx(sm, sm_src));
  EXPECT_TRUE(compile_ptx(reread, reread_src));
}

// layer_norm-like statistics of rows of [s0, s1]: mean, variance, (x - mean) * rsqrt(var + eps).
TEST(CudaEmit, LayerNormMeanVar) {
  ir::Kernel k;
  k.name = "k_layer_norm";
  k.args = {in_arg("in0", kFloat), out_arg("out0", kFloat)};
  k.params = {"s0", "s1"};
  k.grid = {S("s0")};
  const Expr at = S("s1") * P(0) + R(0);
  k.stages = {
      reduce(ReductionOp::sum, {S("s1")}, {ld(0, 0, at, kFloat)}, 0, 1, kFloat),
      reduce(ReductionOp::sum, {}, {idx(2, S("s1")), op(3, OpKind::convert_element_type, {2}, kFloat, to_dtype(kFloat)),
                                    op(4, OpKind::div, {1, 3}, kFloat, div_mode(nullptr))},
             4, 5, kFloat),  // the mean, as a one-point stage every thread evaluates
      reduce(ReductionOp::sum, {S("s1")},
             {ld(6, 0, at, kFloat), op(7, OpKind::sub, {6, 5}, kFloat), op(8, OpKind::mul, {7, 7}, kFloat)}, 8, 9,
             kFloat),
      loop({S("s1")}, {ld(10, 0, at, kFloat), idx(11, S("s1")),
                       op(12, OpKind::convert_element_type, {11}, kFloat, to_dtype(kFloat)),
                       op(13, OpKind::div, {9, 12}, kFloat, div_mode(nullptr)), cst(14, Scalar(1e-5), kFloat),
                       op(15, OpKind::add, {13, 14}, kFloat), op(16, OpKind::rsqrt, {15}, kFloat),
                       op(17, OpKind::sub, {10, 5}, kFloat), op(18, OpKind::mul, {17, 16}, kFloat),
                       st(1, at, 18, kFloat)})};
  ir::verify_kernel(k);
  const std::string src = emit_scheduled(k);
  EXPECT_HAS(src, "const float v3 = ((float)(v2));");
  EXPECT_HAS(src, "const float v5 = kiln_acc5;");  // one point: no block reduction
  EXPECT_HAS(src, "const float v9 = kiln_block_reduce(kiln_acc9, KilnSum(), 0.0f);");
  EXPECT_HAS(src, "const float v14 = 1e-05f;");
  EXPECT_HAS(src, "const float v16 = rsqrtf(v15);");
  KILN_SKIP_WITHOUT_NVRTC();
  EXPECT_TRUE(compile_ptx(k, src));
}

// The sum of every element of a [s0, s1] tensor: an empty grid, a 2-D reduce nest, one store.
TEST(CudaEmit, FullSum) {
  ir::Kernel k;
  k.name = "k_full_sum";
  k.args = {in_arg("in0", kDouble), out_arg("out0", kDouble)};
  k.params = {"s0", "s1"};
  k.stages = {reduce(ReductionOp::sum, {S("s0"), S("s1")}, {ld(0, 0, S("s1") * R(0) + R(1), kDouble)}, 0, 1, kDouble),
              loop({}, {st(1, Expr(0), 1, kDouble)})};
  ir::verify_kernel(k);
  EXPECT_EQ(launch_kind_of(k), ir::LaunchKind::BlockPerPoint);
  const std::string src = emit_scheduled(k);
  EXPECT_HAS(src, "const kiln_i64 kiln_s0_n = kiln_s0_e0 * kiln_s0_e1;");
  EXPECT_HAS(src, "if (kiln_s0_n <= 4294967295LL) {");
  EXPECT_HAS(src, "r1 = kiln_t_rest % (unsigned)kiln_s0_e1;");
  EXPECT_HAS(src, "r1 = kiln_t_rest % kiln_s0_e1;");
  EXPECT_HAS(src, "r0 = kiln_t_rest;");
  EXPECT_HAS(src, "double kiln_acc1 = 0.0;");
  EXPECT_HAS(src, "if (threadIdx.x == 0) {");  // the one-point store is done once per block
  EXPECT_HAS(src, "out0[0LL] = v1;");
  KILN_SKIP_WITHOUT_NVRTC();
  EXPECT_TRUE(compile_ptx(k, src));
}

// argmax over the last dim of [s0, s1] (the flat position in the nest, as int64).
TEST(CudaEmit, ArgmaxRows) {
  ir::Kernel k;
  k.name = "k_argmax";
  k.args = {in_arg("in0", kFloat), out_arg("out0", kLong)};
  k.params = {"s0", "s1"};
  k.grid = {S("s0")};
  k.stages = {reduce(ReductionOp::argmax, {S("s1")}, {ld(0, 0, S("s1") * P(0) + R(0), kFloat)}, 0, 1, kLong),
              loop({}, {st(1, P(0), 1, kLong)})};
  ir::verify_kernel(k);
  const std::string src = emit_scheduled(k);
  EXPECT_HAS(src, "KilnArg<float> kiln_acc1 = KilnArg<float>{0.0f, -1};");
  EXPECT_HAS(src, "kiln_acc1 = KilnArgMax()(kiln_acc1, KilnArg<float>{v0, kiln_t});");
  EXPECT_HAS(src, "const kiln_i64 v1 = ((kiln_block_reduce(kiln_acc1, KilnArgMax(), KilnArg<float>{0.0f, -1})).i);");
  EXPECT_HAS(src, "out0[p0] = v1;");
  KILN_SKIP_WITHOUT_NVRTC();
  EXPECT_TRUE(compile_ptx(k, src));
}

// Column sums of [s0, s1] with outer_reduction_tile: one thread per column loops the rows.
TEST(CudaEmit, ColumnSumOuterReductionTile) {
  ir::Kernel k;
  k.name = "k_colsum";
  k.args = {in_arg("in0", kFloat), out_arg("out0", kFloat)};
  k.params = {"s0", "s1"};
  k.grid = {S("s1")};
  k.schedule.outer_reduction = true;  // lowering marks it; schedule_tiles picks the tile
  k.schedule.outer_reduction_tile = 32;
  k.stages = {reduce(ReductionOp::sum, {S("s0")}, {ld(0, 0, S("s1") * R(0) + P(0), kFloat)}, 0, 1, kFloat),
              loop({}, {st(1, P(0), 1, kFloat)})};
  ir::verify_kernel(k);
  EXPECT_EQ(launch_kind_of(k), ir::LaunchKind::ThreadPerPoint);
  const std::string src = emit_scheduled(k);
  EXPECT_HAS(src, "kiln_q += (kiln_i64)gridDim.x * blockDim.x");  // thread per column
  EXPECT_HAS(src, "for (kiln_i64 kiln_t = 0; kiln_t < kiln_s0_n; kiln_t += 1)");
  EXPECT_HAS(src, "in0[(p0 + (r0 * s1))]");  // neighbouring threads read neighbouring elements
  EXPECT_HAS(src, "const float v1 = kiln_acc1;");
  EXPECT_FALSE(has(src, "kiln_block_reduce(kiln_acc"));
  KILN_SKIP_WITHOUT_NVRTC();
  EXPECT_TRUE(compile_ptx(k, src));
}

// f16 and bf16 in and out: computed in float, rounded on store and on casts to f16/bf16.
TEST(CudaEmit, HalfAndBFloat16) {
  ir::Kernel k;
  k.name = "k_half";
  k.args = {in_arg("in0", kHalf), in_arg("in1", kBFloat16), out_arg("out0", kHalf), out_arg("out1", kBFloat16),
            out_arg("out2", kHalf)};
  k.params = {"s0"};
  k.grid = {S("s0")};
  k.stages = {loop({}, {ld(0, 0, P(0), kHalf), cst(1, Scalar(2.5), kHalf), op(2, OpKind::mul, {0, 1}, kHalf),
                        st(2, P(0), 2, kHalf), ld(3, 1, P(0), kBFloat16), op(4, OpKind::sigmoid, {3}, kBFloat16),
                        st(3, P(0), 4, kBFloat16),
                        op(5, OpKind::convert_element_type, {4}, kHalf, to_dtype(kHalf)), st(4, P(0), 5, kHalf)})};
  ir::verify_kernel(k);
  const std::string src = emit_scheduled(k);
  EXPECT_HAS(src, "#include <cuda_fp16.h>");
  EXPECT_HAS(src, "#include <cuda_bf16.h>");
  EXPECT_HAS(src, "const __half* in0, const __nv_bfloat16* in1, __half* out0, __nv_bfloat16* out1, __half* out2,");
  EXPECT_HAS(src, "const float v0 = __half2float(in0[p0]);");
  EXPECT_HAS(src, "const float v3 = __bfloat162float(in1[p0]);");
  EXPECT_HAS(src, "const float v4 = (1.0f / (1.0f + expf(-v3)));");
  EXPECT_HAS(src, "out0[p0] = __float2half_rn(v2);");
  EXPECT_HAS(src, "out1[p0] = __float2bfloat16_rn(v4);");
  EXPECT_HAS(src, "const float v5 = __half2float(__float2half_rn((float)(v4)));");
  KILN_SKIP_WITHOUT_NVRTC();
  EXPECT_TRUE(compile_ptx(k, src));
}

// A position checked against a bound that may be 0 (a symbolic one) guards the accesses at it
// with the check's flag: the load gives 0 and the store is skipped where the check fails, since
// an empty dim has no position to fall back on. A constant bound of 1 or more needs no flag.
// Index arithmetic in 32 bits covers floor division, remainder, min, max and comparisons too.
TEST(CudaEmit, AccessesAtAPositionCheckedAgainstABoundOfZeroAreGuarded) {
  const ir::Kernel k = ir::parse_kernel(R"(kernel k_masked(in0: i64, in1: f32, out0: out f32) params(s0, s1) grid[p0 < s0] {
  loop [] {
    %0 = load in0[p0] : i64
    %1 = check %0 < s1 for scatter_add dim 0 : i64
    %2 = load in1[v1] : f32
    store out0[v1], %2
  }
}
)");
  const std::string src = emit_scheduled(k);
  EXPECT_HAS(src, "const bool kiln_ok1 = (kiln_i64)v0 >= 0 && (kiln_i64)v0 < s1;");
  EXPECT_HAS(src, "const float v2 = kiln_ok1 ? in1[v1] : (float)0;");
  EXPECT_HAS(src, "if (kiln_ok1) out0[v1] = v2;");
  const ir::Kernel constant = ir::parse_kernel(R"(kernel k_const(in0: i64, in1: f32, out0: out f32) grid[p0 < 64, p1 < 6] {
  loop [] {
    %0 = load in0[p0] : i64
    %1 = check %0 < 10 for gather dim 0 : i64
    %2 = load in1[v1 + 10*(p1 // 2) + min(p1 % 4, 2) + (p1 < 3)] : f32
    store out0[6*p0 + p1], %2
  }
}
)");
  ir::Kernel scheduled = constant;
  passes::schedule_launch(scheduled, passes::ScheduleTarget{});
  EXPECT_TRUE(scheduled.schedule.launch.index32);
  const std::string csrc = emit_scheduled(constant);
  EXPECT_FALSE(has(csrc, "kiln_ok")) << csrc;
  EXPECT_HAS(csrc, "kiln_floordiv32(");
  EXPECT_HAS(csrc, "kiln_imin32(kiln_mod32(");
  EXPECT_HAS(csrc, "((int)(((int)p1) < 3))");
  KILN_SKIP_WITHOUT_NVRTC();
  EXPECT_TRUE(compile_ptx(k, src));
  EXPECT_TRUE(compile_ptx(constant, csrc));
}

// Random draws (ir::KOp::Random) in every floating dtype: the prelude's Philox and element
// formulas, uniform with its step below high, normal rounded through float; and a vectorized
// dropout whose draw is printed once per lane.
TEST(CudaEmit, RandomDrawsInEveryDtype) {
  const ir::Kernel k = ir::parse_kernel(R"(kernel k_random(out0: out f32, out1: out f64, out2: out f16, out3: out bf16, out4: out f32, out5: out f64, out6: out f16) params(rng_base, rng_seed, s0) grid[p0 < s0] {
  loop [] {
    %0 = index p0 : i64
    %1 = index rng_seed : i64
    %2 = index rng_base + 1 : i64
    %3 = random uniform(0.0, 1.0) %0, %1, %2 : f32
    store out0[p0], %3
    %4 = random uniform(-2.0, 3.0) %0, %1, %2 : f64
    store out1[p0], %4
    %5 = random uniform(1.0, 1.0009) %0, %1, %2 : f16
    store out2[p0], %5
    %6 = random uniform(0.0, 1.0) %0, %1, %2 : bf16
    store out3[p0], %6
    %7 = random normal(0.0, 1.0) %0, %1, %2 : f32
    store out4[p0], %7
    %8 = random normal(1.5, 0.5) %0, %1, %2 : f64
    store out5[p0], %8
    %9 = random normal(0.0, 1.0) %0, %1, %2 : f16
    store out6[p0], %9
  }
}
)");
  const std::string src = emit_scheduled(k);
  EXPECT_HAS(src, "KILN_D KilnWords kiln_philox(");
  EXPECT_HAS(src, "const float v3 = kiln_uniform_f32(v0, v1, v2, 0.0, 1.0, 1.0);");
  EXPECT_HAS(src, "const double v4 = kiln_uniform_f64(v0, v1, v2, (-2.0), 5.0, 3.0);");
  EXPECT_HAS(src, "const float v5 = kiln_uniform_f16(v0, v1, v2, 1.0,");
  EXPECT_HAS(src, "const float v6 = kiln_uniform_bf16(");
  EXPECT_HAS(src, "const float v7 = __double2float_rn(kiln_normal_value(v0, v1, v2, 0.0, 1.0));");
  EXPECT_HAS(src, "const double v8 = kiln_normal_value(v0, v1, v2, 1.5, 0.5);");
  EXPECT_HAS(src, "const float v9 = __half2float(__float2half_rn((float)(__double2float_rn(kiln_normal_value(");
  KILN_SKIP_WITHOUT_NVRTC();
  EXPECT_TRUE(compile_ptx(k, src));

  const ir::Kernel d = ir::parse_kernel(R"(kernel k_dropout(in0: f32, out0: out f32) params(rng_base, rng_seed) grid[p0 < 64, p1 < 128] {
  loop [] {
    %0 = load in0[128*p0 + p1] : f32
    %1 = index 128*p0 + p1 : i64
    %2 = index rng_seed : i64
    %3 = index rng_base : i64
    %4 = random uniform(0.0, 1.0) %1, %2, %3 : f32
    %5 = const 0.7 : f32
    %6 = lt %4, %5 : bool
    %7 = const 0.0 : f32
    %8 = where %6, %0, %7 : f32
    store out0[128*p0 + p1], %8
  }
}
)");
  EXPECT_EQ(d.schedule.launch.vector, 1);
  const std::string dsrc = emit_scheduled(d);
  EXPECT_HAS(dsrc, "const float v4_3 = kiln_uniform_f32(v1_3, v2_3, v3_3, 0.0, 1.0, 1.0);");
  EXPECT_TRUE(compile_ptx(d, dsrc));
}

// Integer ops: floor division and remainder with Python semantics, shifts, pow, min/max,
// floor division in the index math, and a bool output.
TEST(CudaEmit, IntegerOpsAndFloorDivision) {
  ir::Kernel k;
  k.name = "k_int";
  k.args = {in_arg("in0", kLong), in_arg("in1", kInt), out_arg("out0", kLong), out_arg("out1", kInt),
            out_arg("out2", kBool)};
  k.params = {"s0"};
  k.grid = {S("s0")};
  const Expr folded = ir::floordiv(P(0), Expr(3)) + ir::mod(P(0), Expr(3));
  k.stages = {loop({}, {ld(0, 0, folded, kLong), cst(1, Scalar(-7), kLong),
                        op(2, OpKind::div, {0, 1}, kLong, div_mode("floor")), op(3, OpKind::remainder, {0, 1}, kLong),
                        op(4, OpKind::add, {2, 3}, kLong), st(2, P(0), 4, kLong), ld(5, 1, P(0), kInt),
                        cst(6, Scalar(3), kInt), op(7, OpKind::bitwise_left_shift, {5, 6}, kInt),
                        op(8, OpKind::pow, {7, 6}, kInt), op(9, OpKind::maximum, {8, 5}, kInt), st(3, P(0), 9, kInt),
                        op(10, OpKind::lt, {5, 6}, kBool), st(4, P(0), 10, kBool)})};
  ir::verify_kernel(k);
  const std::string src = emit_scheduled(k);
  EXPECT_HAS(src, "in0[(kiln_floordiv(p0, 3LL) + kiln_mod(p0, 3LL))]");
  EXPECT_HAS(src, "const kiln_i64 v1 = (-7LL);");
  EXPECT_HAS(src, "const kiln_i64 v2 = kiln_div_floor(v0, v1);");
  EXPECT_HAS(src, "const kiln_i64 v3 = kiln_remainder(v0, v1);");
  EXPECT_HAS(src, "const kiln_i64 v4 = kiln_wadd(v2, v3);");
  EXPECT_HAS(src, "const kiln_i32 v7 = kiln_shl<kiln_i32, kiln_i32>(v5, v6);");
  EXPECT_HAS(src, "const kiln_i32 v8 = kiln_ipow(v7, v6);");
  EXPECT_HAS(src, "const bool v10 = (v5 < v6);");
  EXPECT_HAS(src, "kiln_u8* out2");
  EXPECT_HAS(src, "out2[p0] = (kiln_u8)(v10);");
  KILN_SKIP_WITHOUT_NVRTC();
  EXPECT_TRUE(compile_ptx(k, src));
}

TEST(CudaEmit, RejectsBadKernelsAndDtypes) {
  ir::Kernel k = pointwise_kernel();
  k.name = "v12";  // would clash with the value names of the generated code
  EXPECT_THROW(emit_scheduled(k), InternalError);
  k = pointwise_kernel();
  k.stages[0].body[1] = op(1, OpKind::exp, {0}, kFloat);
  k.args[0].dtype = kLong;  // exp of an int64 load: the frontend would have promoted it
  k.stages[0].body[0].dtype = kLong;
  EXPECT_THROW(emit_scheduled(k), InternalError);
}

// A scan's running value (carry / update in an ordered stage): a local variable, set before
// the stage's loop, which one thread walks in order.
TEST(CudaEmit, ScansCarryTheirRunningValueInOneThread) {
  const std::vector<ir::Kernel> ks =
      ir::parse_kernels(read_file(std::filesystem::path(KILN_TEST_DATA_DIR) / "ir_corpus" / "11_scan.kk"));
  ASSERT_EQ(ks.size(), 3u);
  const std::string sum = emit_scheduled(ks[0]);
  EXPECT_HAS(sum, "double kiln_c0 = 0.0;\n");
  EXPECT_HAS(sum, "for (kiln_i64 kiln_t = 0; kiln_t < kiln_s0_n; kiln_t += 1)");
  EXPECT_HAS(sum, "const double v0 = kiln_c0;");
  EXPECT_HAS(sum, "kiln_c0 = v3;");
  EXPECT_HAS(emit_scheduled(ks[1]), "kiln_i32 kiln_c0 = ((kiln_i32)(-2147483648LL));");
  EXPECT_HAS(emit_scheduled(ks[2]), "double kiln_c0 = (-kiln_inf(0.0));");
  KILN_SKIP_WITHOUT_NVRTC();
  for (const ir::Kernel& k : ks) EXPECT_TRUE(compile_ptx(k, emit_scheduled(k))) << k.name;
}

}  // namespace
}  // namespace kiln::test

namespace kiln::test {
namespace {

// Check instructions (ir/kernel.h): the kernel takes the device's fault record and its id
// after its buffers, and each check calls the prelude's helper with its site number.
TEST(CudaEmit, ChecksReportToTheFaultRecord) {
  const ir::Kernel k =
      ir::parse_kernel(read_file(std::filesystem::path(KILN_TEST_DATA_DIR) / "ir_corpus" / "08_checks.kk"));
  const std::string src = emit_scheduled(k);
  EXPECT_HAS(src, "const float* in1, float* out0, kiln_i64* kiln_fault, const kiln_i64 kiln_fault_kernel, "
                  "const checks_params params");
  EXPECT_HAS(src, "kiln_check_bounds(v0, s1, kiln_fault, kiln_fault_kernel, 1);");
  EXPECT_HAS(src, "kiln_check_nonzero(v0, kiln_fault, kiln_fault_kernel, 2);");
  EXPECT_HAS(src, "atomicCAS(");
  KILN_SKIP_WITHOUT_NVRTC();
  EXPECT_TRUE(compile_ptx(k, src));
}

}  // namespace
}  // namespace kiln::test
