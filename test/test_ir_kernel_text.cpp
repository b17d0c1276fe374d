// kiln/test/test_ir_kernel_text.cpp — the Kernel text format: corpus round trip and coverage,
// kernels built in C++ printed and parsed back field by field, and tolerant input.
//
// Parser errors with line:col and the verifier's errors are in test_ir_kernel_errors.cpp.
#include "base/error.h"
#include "ir/kernel.h"
#include "ir/kernel_text.h"

#include "test_support/files.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace kiln::ir {
namespace {

using test::read_file;

std::vector<std::filesystem::path> kernel_corpus_files() {
  return test::files_with_extension(KILN_TEST_DATA_DIR "/ir_corpus", ".kk");
}

std::vector<Kernel> corpus() {
  std::vector<Kernel> all;
  for (const auto& f : kernel_corpus_files())
    for (Kernel& k : parse_kernels(read_file(f))) all.push_back(std::move(k));
  return all;
}

// ---- corpus ------------------------------------------------------------------------------

TEST(KernelCorpus, EveryFileRoundTripsExactly) {
  auto files = kernel_corpus_files();
  ASSERT_GE(files.size(), 7u);
  for (const auto& f : files) {
    SCOPED_TRACE(f.filename().string());
    const std::string text = read_file(f);
    std::vector<Kernel> ks = parse_kernels(text);
    ASSERT_FALSE(ks.empty());
    EXPECT_EQ(print_kernels(ks), text);
    EXPECT_EQ(parse_kernels(print_kernels(ks)), ks);
    for (const Kernel& k : ks) {
      EXPECT_NO_THROW(verify_kernel(k));
      EXPECT_EQ(parse_kernel(k.str()), k);
      EXPECT_EQ(parse_kernel(k.str()).str(), k.str());
    }
  }
}

TEST(KernelCorpus, HoldsFilesWithSeveralKernels) {
  EXPECT_EQ(parse_kernels(read_file(KILN_TEST_DATA_DIR "/ir_corpus/04_reductions.kk")).size(), 9u);
  EXPECT_EQ(parse_kernels(read_file(KILN_TEST_DATA_DIR "/ir_corpus/06_params_schedule.kk")).size(), 3u);
}

TEST(KernelCorpus, CoversEveryInstructionElementwisePrimAndReduction) {
  std::set<KOp> kops;
  std::set<OpKind> computes;
  std::set<ReductionOp> reductions;
  std::set<ScalarType> const_dtypes;
  bool params = false, tile = false, empty_grid = false, nest_2d = false, index_bool = false;
  for (const Kernel& k : corpus()) {
    params |= !k.params.empty();
    tile |= k.schedule.outer_reduction_tile > 0;
    empty_grid |= k.grid.empty();
    for (const KStage& st : k.stages) {
      nest_2d |= st.extents.size() >= 2;
      if (st.kind == StageKind::Reduce) reductions.insert(st.reduce_op);
      for (const KInst& in : st.body) {
        kops.insert(in.kind);
        if (in.kind == KOp::Compute) computes.insert(in.op);
        if (in.kind == KOp::Const) const_dtypes.insert(in.dtype);
        if (in.kind == KOp::Index && in.dtype == kBool) index_bool = true;
      }
    }
  }
  for (KOp op : {KOp::Load, KOp::Store, KOp::Const, KOp::Index, KOp::Compute})
    EXPECT_TRUE(kops.count(op)) << static_cast<int>(op);
  for (int i = 0; i < kNumOps; ++i) {
    const OpInfo& info = op_info(static_cast<OpKind>(i));
    const OpFamily f = info.family;
    const bool prim = info.level == OpLevel::Prim;  // Core ops (no_grad_copy) are decomposed before kernels
    if (prim && (f == OpFamily::Unary || f == OpFamily::Binary || f == OpFamily::Ternary || f == OpFamily::Cast)) {
      EXPECT_TRUE(computes.count(info.kind)) << info.name;
    }
    if (f == OpFamily::Reduction) {
      EXPECT_TRUE(reductions.count(as_reduction(info.kind))) << info.name;
    }
  }
  EXPECT_EQ(const_dtypes.size(), static_cast<size_t>(kNumScalarTypes));
  EXPECT_TRUE(params);
  EXPECT_TRUE(tile);
  EXPECT_TRUE(empty_grid);
  EXPECT_TRUE(nest_2d);
  EXPECT_TRUE(index_bool);
}

TEST(KernelCorpus, ConstantsKeepTheirKindAndValue) {
  const Kernel k = parse_kernel(read_file(KILN_TEST_DATA_DIR "/ir_corpus/05_constants.kk"));
  std::vector<KInst> consts;
  for (const KInst& in : k.stages.at(0).body)
    if (in.kind == KOp::Const) consts.push_back(in);
  ASSERT_EQ(consts.size(), 27u);
  EXPECT_TRUE(consts[0].value.is_bool() && consts[0].value.to_bool());
  EXPECT_TRUE(consts[1].value.is_bool() && !consts[1].value.to_bool());
  EXPECT_EQ(consts[2].dtype, kByte);
  EXPECT_EQ(consts[3].value.to_int(), -128);
  EXPECT_EQ(consts[6].value.to_int(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(consts[7].value.to_int(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(consts[10].value.to_double(), -0.5);
  EXPECT_EQ(consts[12].value.to_double(), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(consts[15].value.is_floating_point());
  EXPECT_EQ(consts[15].value.to_double(), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(consts[17].value.to_double()));
  EXPECT_TRUE(consts[18].value.is_integral());  // "3" stays an integer constant of an f32
  EXPECT_EQ(consts[18].dtype, kFloat);
  EXPECT_EQ(consts[19].value.to_double(), 0.1);
  EXPECT_TRUE(std::signbit(consts[20].value.to_double()));
  EXPECT_EQ(consts[23].value.to_double(), std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(consts[24].value.to_double(), std::numeric_limits<double>::max());
  EXPECT_TRUE(consts[25].value.is_floating_point());
  EXPECT_EQ(consts[25].value.to_double(), 2.0);
}

// ---- kernels built in C++ ----------------------------------------------------------------

KInst load(int id, int arg, Expr index, ScalarType t) {
  KInst in;
  in.kind = KOp::Load;
  in.id = id;
  in.arg = arg;
  in.index = index;
  in.dtype = t;
  return in;
}
KInst store(int arg, Expr index, int value, ScalarType t) {
  KInst in;
  in.kind = KOp::Store;
  in.arg = arg;
  in.index = index;
  in.operands = {value};
  in.dtype = t;
  return in;
}
KInst compute(int id, OpKind op, std::vector<int> operands, ScalarType t, AttrList attrs = {}) {
  KInst in;
  in.kind = KOp::Compute;
  in.id = id;
  in.op = op;
  in.operands = std::move(operands);
  in.dtype = t;
  in.attrs = std::move(attrs);
  return in;
}

// The example of ir/kernel.h, with a symbolic row count and a floor division.
Kernel row_kernel() {
  const Expr p0 = grid_expr(0), r0 = stage_expr(0), s0 = Expr::symbol("s0");
  Kernel k;
  k.name = "k0";
  k.args = {{"in0", kFloat, false}, {"out0", kFloat, true}};
  k.params = {"s0"};
  k.grid = {s0};
  KStage red;
  red.kind = StageKind::Reduce;
  red.extents = {1024};
  red.reduce_op = ReductionOp::amax;
  red.body = {load(1, 0, 1024 * p0 + r0, kFloat)};
  red.yield = 1;
  red.result = 0;
  red.acc_dtype = kFloat;
  KStage loop;
  loop.extents = {1024};
  loop.body = {load(2, 0, 1024 * p0 + r0, kFloat), compute(3, OpKind::sub, {2, 0}, kFloat),
               compute(4, OpKind::div, {3, 0}, kFloat, AttrList({std::string("floor")})),
               store(1, 1024 * p0 + r0, 4, kFloat)};
  k.stages = {red, loop};
  return k;
}

TEST(KernelText, PrintsAndParsesAKernelBuiltInCpp) {
  const Kernel k = row_kernel();
  const std::string want =
      "kernel k0(in0: f32, out0: out f32) params(s0) grid[p0 < s0] {\n"
      "  %0 = reduce amax [r0 < 1024] {\n"
      "    %1 = load in0[1024*p0 + r0] : f32\n"
      "    yield %1\n"
      "  } : f32\n"
      "  loop [r0 < 1024] {\n"
      "    %2 = load in0[1024*p0 + r0] : f32\n"
      "    %3 = sub %2, %0 : f32\n"
      "    %4 = div %3, %0 {rounding_mode=\"floor\"} : f32\n"
      "    store out0[1024*p0 + r0], %4\n"
      "  }\n"
      "}\n";
  EXPECT_EQ(k.str(), want);
  const Kernel parsed = parse_kernel(want);
  EXPECT_EQ(parsed, k);
  ASSERT_EQ(parsed.stages.size(), 2u);
  const KInst& div = parsed.stages[1].body[2];
  EXPECT_EQ(div.op, OpKind::div);
  EXPECT_EQ(div.attrs.get_opt<std::string>(OpKind::div, "rounding_mode"), "floor");
  EXPECT_EQ(parsed.stages[1].body[3].dtype, kFloat);  // a store takes its operand's dtype
  EXPECT_EQ(parsed.stages[1].body[3].id, -1);
}

TEST(KernelText, StoreDtypeComesFromTheOperandOrTheReduceResult) {
  Kernel k;
  k.name = "argmax_rows";
  k.args = {{"in0", kHalf, false}, {"out0", kLong, true}};
  k.grid = {8};
  KStage red;
  red.kind = StageKind::Reduce;
  red.extents = {16};
  red.reduce_op = ReductionOp::argmax;
  red.body = {load(1, 0, 16 * grid_expr(0) + stage_expr(0), kHalf)};
  red.yield = 1;
  red.result = 0;
  red.acc_dtype = kLong;
  KStage loop;
  loop.body = {store(1, grid_expr(0), 0, kLong)};
  k.stages = {red, loop};
  EXPECT_EQ(parse_kernel(k.str()), k);
}

TEST(KernelText, ScheduleParamsAndEmptyNests) {
  Kernel k = row_kernel();
  k.stages[1].extents.clear();
  k.stages[1].body = {store(1, grid_expr(0), 0, kFloat)};
  k.schedule.outer_reduction = true;
  k.schedule.outer_reduction_tile = 16;
  k.params = {"s0", "s1"};
  k.grid = {Expr::symbol("s0"), Expr::symbol("s1") + 1};
  const std::string text = k.str();
  EXPECT_NE(text.find("params(s0, s1) grid[p0 < s0, p1 < s1 + 1] outer_reduction_tile(16) {\n"), std::string::npos);
  EXPECT_NE(text.find("  loop [] {\n"), std::string::npos);
  EXPECT_EQ(parse_kernel(text), k);
}

TEST(KernelText, PrintKernelsSeparatesWithABlankLine) {
  Kernel a = row_kernel(), b = row_kernel();
  b.name = "k1";
  EXPECT_EQ(print_kernels({}), "");
  EXPECT_EQ(print_kernels({a}), a.str());
  EXPECT_EQ(print_kernels({a, b}), a.str() + "\n" + b.str());
  EXPECT_EQ(parse_kernels(print_kernels({a, b})), (std::vector<Kernel>{a, b}));
  EXPECT_TRUE(parse_kernels("").empty());
  EXPECT_TRUE(parse_kernels("# nothing but a comment\n\n").empty());
}

TEST(KernelText, AcceptsCommentsWhitespaceAndAnyAttributeOrder) {
  const char* text =
      "# a kernel\n"
      "kernel   k0 ( in0:f32 ,out0 : out   f32 )params( s0 )grid[ p0<s0 ]{  # header\n"
      "\t%0=reduce amax[r0<1024]{\n"
      "  %1 = load in0[ r0 + p0*1024 ] :f32\n"
      "  yield   %1 }:f32\n"
      "  loop[r0<1024]{ %2=load in0[1024*p0+r0]:f32 %3 = sub %2,%0 : f32\n"
      "    %4 = div %3 , %0 { rounding_mode = \"floor\" } : f32   # floor division\n"
      "    store out0[1024*p0 + r0],%4 } }";
  EXPECT_EQ(parse_kernel(text), row_kernel());
  EXPECT_EQ(parse_kernel(text).str(), row_kernel().str());
  // convert's dtype and clamp's three operands, attributes given in any order.
  Kernel k = parse_kernel(
      "kernel c(in0: i32, out0: out f64) grid[p0 < 4] {\n"
      "  loop [] {\n"
      "    %0 = load in0[p0] : i32\n"
      "    %1 = clamp %0, %0, %0 : i32\n"
      "    %2 = convert_element_type %1 {dtype=f64} : f64\n"
      "    store out0[p0], %2\n"
      "  }\n"
      "}\n");
  const KInst& cvt = k.stages[0].body[2];
  EXPECT_EQ(cvt.attrs.get<ScalarType>(OpKind::convert_element_type, "dtype"), kDouble);
  EXPECT_EQ(k.stages[0].body[1].operands, (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(k.stages[0].body[3].dtype, kDouble);
}

}  // namespace
}  // namespace kiln::ir
