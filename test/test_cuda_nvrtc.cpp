// kiln/test/test_cuda_nvrtc.cpp — the NVRTC loader, compile errors, and every scalar op and reduction through NVRTC.
//
// The loader either works (a version, PTX out) or says why not; a broken source and an
// unsupported architecture give ok = false with NVRTC's log and the source, never a throw.
// Then one kernel per dtype holding every Unary/Binary/Ternary/Cast prim that dtype accepts
// (by the ops.def traits), literals of its extreme values, and one kernel per dtype holding
// every ReductionOp as a block reduction: all must compile, so no (op, dtype) pair renders
// C that NVRTC rejects. Without NVRTC these tests skip with the loader's reason.
#include "test_cuda_kernels.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::test {
namespace {

using namespace cudak;
using ir::OpKind;

constexpr ScalarType kAllDtypes[] = {kBool, kByte, kChar, kShort, kInt, kLong, kHalf, kBFloat16, kFloat, kDouble};

TEST(CudaNvrtc, LoadsOrSaysWhy) {
  std::string why;
  if (!cuda::nvrtc_available(&why)) {
    EXPECT_FALSE(why.empty());
    const cuda::NvrtcResult r = cuda::compile_to_ptx("__global__ void f() {}");
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.log, why);
    GTEST_SKIP() << why;
  }
  EXPECT_TRUE(why.empty());
  EXPECT_EQ(cuda::nvrtc_version().rfind("13.", 0), 0u) << cuda::nvrtc_version();
  const cuda::NvrtcResult r = cuda::compile_to_ptx("extern \"C\" __global__ void kiln_probe(float* x) { x[0] = 1.0f; }");
  ASSERT_TRUE(r.ok) << r.log;
  EXPECT_NE(r.ptx.find(".entry kiln_probe"), std::string::npos) << r.ptx;
  EXPECT_NE(r.ptx.find(".target sm_90"), std::string::npos) << r.ptx;
}

TEST(CudaNvrtc, CubinsForTheDeviceAndPtxForANewerOne) {
  KILN_SKIP_WITHOUT_NVRTC();
  const std::vector<int> archs = cuda::nvrtc_supported_archs();
  ASSERT_FALSE(archs.empty());
  for (int sm : {80, 90}) EXPECT_NE(std::find(archs.begin(), archs.end(), sm), archs.end()) << sm;
  const std::string src = "extern \"C\" __global__ void kiln_f(float* p) { p[threadIdx.x] = 1.0f; }";
  const cuda::NvrtcResult cubin = cuda::compile_for_device(src, 90);
  ASSERT_TRUE(cubin.ok) << cubin.log;
  EXPECT_EQ(cubin.arch, "sm_90");
  EXPECT_EQ(cubin.cubin.rfind("\x7f" "ELF", 0), 0u);
  EXPECT_TRUE(cubin.ptx.empty());
  // A compute capability beyond every architecture NVRTC knows: PTX of the newest one below,
  // for the driver to compile at load, and the log says so.
  const int newest = *std::max_element(archs.begin(), archs.end());
  const cuda::NvrtcResult ptx = cuda::compile_for_device(src, newest + 1);
  ASSERT_TRUE(ptx.ok) << ptx.log;
  EXPECT_EQ(ptx.arch, fmt::format("compute_{}", newest));
  EXPECT_NE(ptx.ptx.find(".entry kiln_f"), std::string::npos) << ptx.ptx;
  EXPECT_NE(ptx.log.find(fmt::format("has no sm_{}", newest + 1)), std::string::npos) << ptx.log;
  // Older than every architecture it knows: an error that lists what it supports.
  const cuda::NvrtcResult old = cuda::compile_for_device(src, 10);
  EXPECT_FALSE(old.ok);
  EXPECT_NE(old.log.find("cannot compile for sm_10: it supports sm_"), std::string::npos) << old.log;
}

TEST(CudaNvrtc, BrokenSourceGivesLogAndSource) {
  KILN_SKIP_WITHOUT_NVRTC();
  const std::string src = "extern \"C\" __global__ void broken(float* x) { x[0] = kiln_undefined_name; }\n";
  const cuda::NvrtcResult r = cuda::compile_to_ptx(src, "compute_90");
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.ptx.empty());
  EXPECT_NE(r.log.find("kiln_undefined_name"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("NVRTC_ERROR_COMPILATION"), std::string::npos) << r.log;
  EXPECT_EQ(r.source, src);
}

TEST(CudaNvrtc, UnsupportedArchitectureIsAnErrorNotAThrow) {
  KILN_SKIP_WITHOUT_NVRTC();
  const cuda::NvrtcResult r = cuda::compile_to_ptx("extern \"C\" __global__ void f() {}", "compute_70");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("compute_70"), std::string::npos) << r.log;
  const cuda::NvrtcResult ok80 = cuda::compile_to_ptx("extern \"C\" __global__ void f() {}", "compute_80");
  EXPECT_TRUE(ok80.ok) << ok80.log;
}

bool accepts(OpKind k, ScalarType t) {
  const ir::OpInfo& info = ir::op_info(k);
  if (info.has(ir::traits::FloatOnly) && !is_floating_point(t)) return false;
  if (info.has(ir::traits::IntOnly) && is_floating_point(t)) return false;
  if (info.has(ir::traits::NoBool) && t == kBool) return false;
  return true;
}

// Every scalar prim `t` accepts, every conversion from `t`, and literals of t's extremes.
ir::Kernel all_ops_kernel(ScalarType t) {
  ir::Kernel k;
  k.name = fmt::format("k_ops_{}", dtype_short_name(t));
  k.args = {in_arg("in0", t), in_arg("in1", t), in_arg("in2", t), in_arg("in3", kBool), out_arg("out0", t),
            out_arg("out1", kBool)};
  k.params = {"s0"};
  k.grid = {S("s0")};
  std::vector<KInst> body = {ld(0, 0, P(0), t), ld(1, 1, P(0), t), ld(2, 2, P(0), t), ld(3, 3, P(0), kBool)};
  int id = 4;
  auto emit = [&](OpKind kind, std::vector<int> operands, ir::AttrList attrs = {}) {
    const bool bool_out = ir::op_info(kind).has(ir::traits::BoolOut);
    const ScalarType rt = bool_out ? kBool : t;
    body.push_back(op(id, kind, std::move(operands), rt, std::move(attrs)));
    body.push_back(st(bool_out ? 5 : 4, P(0), id, rt));
    ++id;
  };
  for (int i = 0; i < ir::kNumOps; ++i) {
    const OpKind kind = static_cast<OpKind>(i);
    const ir::OpInfo& info = ir::op_info(kind);
    if (!accepts(kind, t)) continue;
    if (info.family == ir::OpFamily::Unary) emit(kind, {0});
    if (info.family == ir::OpFamily::Binary && kind != OpKind::div) emit(kind, {0, 1});
    if (kind == OpKind::clamp) emit(kind, {0, 1, 2});
    if (kind == OpKind::where) emit(kind, {3, 0, 1});
    if (kind == OpKind::clone) emit(kind, {0});
  }
  if (t != kBool) {
    if (is_floating_point(t)) emit(OpKind::div, {0, 1}, div_mode(nullptr));
    emit(OpKind::div, {0, 1}, div_mode("trunc"));
    emit(OpKind::div, {0, 1}, div_mode("floor"));
  }
  for (ScalarType to : kAllDtypes) body.push_back(op(id++, OpKind::convert_element_type, {0}, to, to_dtype(to)));
  const double inf = std::numeric_limits<double>::infinity();
  for (const Scalar& v : {Scalar(inf), Scalar(-inf), Scalar(std::nan("")), Scalar(-0.0), Scalar(1e-45), Scalar(1e300),
                          Scalar(std::numeric_limits<int64_t>::min()), Scalar(std::numeric_limits<int64_t>::max()),
                          Scalar(-1), Scalar(true)})
    body.push_back(cst(id++, v, t));
  k.stages = {loop({}, std::move(body))};
  return k;
}

TEST(CudaNvrtc, EveryScalarOpCompilesForEveryDtype) {
  KILN_SKIP_WITHOUT_NVRTC();
  for (ScalarType t : kAllDtypes) {
    SCOPED_TRACE(dtype_name(t));
    const ir::Kernel k = all_ops_kernel(t);
    const std::string src = emit_scheduled(k);
    EXPECT_TRUE(compile_ptx(k, src));
    for (int sm : kCubinArchs) EXPECT_TRUE(compile_cubin(k, src, sm));
  }
}

// Every ReductionOp over the rows of [s0, s1] of dtype t, combined across the block.
ir::Kernel all_reductions_kernel(ScalarType t) {
  ir::Kernel k;
  k.name = fmt::format("k_reduce_{}", dtype_short_name(t));
  k.args = {in_arg("in0", t), out_arg("out0", t), out_arg("out1", kBool), out_arg("out2", kLong)};
  k.params = {"s0", "s1"};
  k.grid = {S("s0")};
  const Expr at = S("s1") * P(0) + R(0);
  std::vector<KInst> stores;
  int id = 0;
  using ir::ReductionOp;
  for (ReductionOp rop : {ReductionOp::sum, ReductionOp::prod, ReductionOp::amax, ReductionOp::amin, ReductionOp::any,
                          ReductionOp::all, ReductionOp::argmax, ReductionOp::argmin}) {
    const bool to_bool = rop == ReductionOp::any || rop == ReductionOp::all;
    const bool to_index = rop == ReductionOp::argmax || rop == ReductionOp::argmin;
    const ScalarType acc = to_bool ? kBool : to_index ? kLong : t;
    k.stages.push_back(reduce(rop, {S("s1")}, {ld(id, 0, at, t)}, id, id + 1, acc));
    stores.push_back(st(to_bool ? 2 : to_index ? 3 : 1, P(0), id + 1, acc));
    id += 2;
  }
  if (is_floating_point(t)) {  // an amax that also folds the sum of exponentials (passes/online_softmax.h)
    ir::KStage pair = reduce(ReductionOp::amax, {S("s1")}, {ld(id, 0, at, t)}, id, id + 1, t);
    pair.sum_exp = id + 2;
    pair.sum_exp_dtype = kDouble;
    k.stages.push_back(pair);
    stores.push_back(st(1, P(0), id + 1, t));
    stores.push_back(op(id + 3, OpKind::convert_element_type, {id + 2}, t, to_dtype(t)));
    stores.push_back(st(1, P(0), id + 3, t));
  }
  k.stages.push_back(loop({}, std::move(stores)));
  return k;
}

TEST(CudaNvrtc, EveryReductionCompilesForEveryDtype) {
  KILN_SKIP_WITHOUT_NVRTC();
  for (ScalarType t : kAllDtypes) {
    SCOPED_TRACE(dtype_name(t));
    const ir::Kernel k = all_reductions_kernel(t);
    const std::string src = emit_scheduled(k);
    EXPECT_NE(src.find("kiln_block_reduce(kiln_acc15, KilnArgMin()"), std::string::npos) << src;
    if (is_floating_point(t)) {
      EXPECT_NE(src.find("kiln_block_reduce(kiln_acc17, KilnMaxExpJoin()"), std::string::npos);
    }
    EXPECT_TRUE(compile_ptx(k, src));
    for (int sm : kCubinArchs) EXPECT_TRUE(compile_cubin(k, src, sm));
  }
}

TEST(CudaNvrtc, LiteralsAreExact) {
  // Rendering only (no NVRTC needed): the values a kernel sees are the dtype's values.
  ir::Kernel k;
  k.name = "k_literals";
  k.args = {out_arg("out0", kFloat)};
  k.stages = {loop({}, {cst(0, Scalar(0.1), kFloat), cst(1, Scalar(0.1), kDouble), cst(2, Scalar(0.1), kHalf),
                        cst(3, Scalar(-0.0), kFloat), cst(4, Scalar(300), kByte), cst(5, Scalar(2.5), kLong),
                        cst(6, Scalar(std::numeric_limits<int64_t>::min()), kLong), cst(7, Scalar(3), kFloat),
                        st(0, Expr(0), 0, kFloat)})};
  const std::string src = emit_scheduled(k);
  EXPECT_NE(src.find("const float v0 = 0.1f;"), std::string::npos) << src;
  EXPECT_NE(src.find("const double v1 = 0.1;"), std::string::npos) << src;
  EXPECT_NE(src.find("const float v2 = 0.099975586f;"), std::string::npos) << src;  // 0.1 rounded to f16
  EXPECT_NE(src.find("const float v3 = (-0.0f);"), std::string::npos) << src;
  EXPECT_NE(src.find("const kiln_u8 v4 = ((kiln_u8)44LL);"), std::string::npos) << src;  // 300 wraps to 44
  EXPECT_NE(src.find("const kiln_i64 v5 = 2LL;"), std::string::npos) << src;            // truncates
  EXPECT_NE(src.find("const kiln_i64 v6 = ((kiln_i64)0x8000000000000000ULL);"), std::string::npos) << src;
  EXPECT_NE(src.find("const float v7 = 3.0f;"), std::string::npos) << src;
}

}  // namespace
}  // namespace kiln::test
