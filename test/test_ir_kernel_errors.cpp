// kiln/test/test_ir_kernel_errors.cpp — what the Kernel text parser rejects, with the exact
// "[parse] line:col: ..." message, and the verifier's errors on parsed and built kernels.
//
// Syntax errors point at the offending token; ir::verify_kernel's errors (scoping, stores to
// inputs, schedule shape) come back through the parser located at the kernel's header and
// naming the kernel.
#include "base/error.h"
#include "ir/kernel.h"
#include "ir/kernel_text.h"
#include "test_support/check.h"

#include <gtest/gtest.h>
#include <fmt/format.h>

namespace kiln::ir {
namespace {

std::string parse_error(std::string_view text) {
  return test::error_of([&] { parse_kernels(text); });
}

const char* const kHead = "kernel k(in0: f32, out0: out f32) params(s0) grid[p0 < s0] {\n";

// A kernel whose one loop stage holds `body` (lines start on line 3).
std::string in_loop(const std::string& body) { return std::string(kHead) + "  loop [r0 < 4] {\n" + body + "\n  }\n}\n"; }

// ---- syntax ------------------------------------------------------------------------------

TEST(KernelParseError, Header) {
  EXPECT_EQ(parse_error("graph() {}"), "[parse] 1:1: expected 'kernel', got 'graph'");
  EXPECT_EQ(parse_error("kernel (in0: f32) grid[] {}"), "[parse] 1:8: expected a kernel name, got '('");
  EXPECT_EQ(parse_error("kernel k(in0 f32) grid[] {}"), "[parse] 1:14: expected ':' after argument in0, got 'f32'");
  EXPECT_EQ(parse_error("kernel k(in0: f31) grid[] {}"), "[parse] 1:15: unknown dtype 'f31'");
  EXPECT_EQ(parse_error("kernel k(in0: f32, in0: f32) grid[] {}"), "[parse] 1:20: redefinition of argument in0");
  EXPECT_EQ(parse_error("kernel k(in0: f32 out0: f32) grid[] {}"),
            "[parse] 1:19: expected ',' or ')' after a kernel argument, got 'out0'");
  EXPECT_EQ(parse_error("kernel k() params(s0, s0) grid[] {}"), "[parse] 1:23: duplicate parameter s0");
  EXPECT_EQ(parse_error("kernel k() {}"), "[parse] 1:12: expected 'grid', got '{'");
  EXPECT_EQ(parse_error("kernel k() grid[] outer_reduction_tile(0) {}"),
            "[parse] 1:40: outer_reduction_tile must be positive");
  EXPECT_EQ(parse_error("kernel k() grid[]\n"), "[parse] 2:1: expected '{' after the kernel header, got end of input");
}

// The schedule fields (ir/kernel.h KSchedule, KVectorize): each malformed one names itself.
TEST(KernelParseError, Schedule) {
  EXPECT_EQ(parse_error("kernel k() grid[] tile_rows(0) {}"), "[parse] 1:29: tile_rows must be positive");
  EXPECT_EQ(parse_error("kernel k() grid[] launch(warp) {}"),
            "[parse] 1:26: unknown launch kind 'warp'; expected thread_per_point or block_per_point");
  EXPECT_EQ(parse_error("kernel k() grid[] launch(thread_per_point, blocks=4) {}"),
            "[parse] 1:44: expected threads=, work=, sms=, vector=, row_split=, row_items=, row_cache or index32 in launch(...), got 'blocks'");
  EXPECT_EQ(parse_error("kernel k() grid[] {\n  loop [] vectorize(unroll=2) {\n  }\n}"),
            "[parse] 2:21: expected interleave=, lanes=, masked_tail or partials= in vectorize(...), got 'unroll'");
  // Fields that parse but do not hold together are verifier errors at the kernel.
  EXPECT_EQ(parse_error("kernel k() grid[] vector_bits(384) {}"), "[parse] 1:1: kernel k: vector_bits 384 is not 128, 256 or 512");
  EXPECT_EQ(parse_error("kernel k() grid[] launch(thread_per_point) {}"),
            "[parse] 1:1: kernel k: a thread_per_point launch needs its threads");
  EXPECT_EQ(parse_error("kernel k() grid[] launch(block_per_point, threads=48) {}"),
            "[parse] 1:1: kernel k: launch threads 48 is not a multiple of 32 in [32, 1024]");
  // row_items must cover every stage with the block's threads.
  EXPECT_EQ(parse_error("kernel k(in0: f32, out0: out f32) grid[p0 < 4] launch(block_per_point, threads=32, work=100, "
                        "row_items=2) {\n  loop [r0 < 100] {\n    %0 = load in0[100*p0 + r0] : f32\n"
                        "    store out0[100*p0 + r0], %0\n  }\n}"),
            "[parse] 1:1: kernel k: row_items=2 needs a block_per_point launch with constant threads whose threads * "
            "row_items covers every stage's constant extent");
  // index32 must hold: 2^20 rows of 4096 take the index past 2^31 - 1, and a parameter has no
  // range at all; a checked position counts below its constant bound.
  const std::string index32 = "[parse] 1:1: kernel k: index32 needs every load's and store's index to fit in 32 bits by "
                              "its variables' constant ranges";
  EXPECT_EQ(parse_error("kernel k(in0: f32, out0: out f32) grid[p0 < 1048576, p1 < 4096] launch(thread_per_point, "
                        "threads=256, index32) {\n  loop [] {\n    %0 = load in0[4096*p0 + p1] : f32\n"
                        "    store out0[4096*p0 + p1], %0\n  }\n}"),
            index32);
  EXPECT_EQ(parse_error("kernel k(in0: f32, out0: out f32) params(s0) grid[p0 < 4] launch(thread_per_point, threads=256, "
                        "index32) {\n  loop [] {\n    %0 = load in0[s0*p0] : f32\n    store out0[p0], %0\n  }\n}"),
            index32);
  EXPECT_EQ(parse_error("kernel k(in0: i64, in1: f32, out0: out f32) grid[p0 < 4] launch(thread_per_point, threads=256, "
                        "index32) {\n  loop [] {\n    %0 = load in0[p0] : i64\n    %1 = check %0 < 1000 for gather dim 0 : i64\n"
                        "    %2 = load in1[1000*p0 + v1] : f32\n    store out0[p0], %2\n  }\n}"),
            "<no error>");
}

TEST(KernelParseError, LoopNests) {
  EXPECT_EQ(parse_error("kernel k() grid[p1 < 4] {}"), "[parse] 1:17: expected loop variable p0, got 'p1'");
  EXPECT_EQ(parse_error("kernel k() grid[p0 < 4, r1 < 4] {}"), "[parse] 1:25: expected loop variable p1, got 'r1'");
  EXPECT_EQ(parse_error("kernel k() grid[p0 <= 4] {}"), "[parse] 1:20: expected '<' after p0, got '<='");
  EXPECT_EQ(parse_error("kernel k() grid[p0 < 4 4] {}"), "[parse] 1:24: expected ',' or ']' in a loop nest, got '4'");
  EXPECT_EQ(parse_error("kernel k() grid[p0 < ] {}"), "[parse] 1:22: expected an expression, got ']'");
  EXPECT_EQ(parse_error("kernel k() grid[] {\n  loop [r0 < 2, r2 < 3] {\n  }\n}\n"),
            "[parse] 2:17: expected loop variable r1, got 'r2'");
}

TEST(KernelParseError, Stages) {
  EXPECT_EQ(parse_error("kernel k() grid[] {\n  foo [] {\n  }\n}\n"),
            "[parse] 2:3: expected a stage ('loop' or '%N = reduce') or '}', got 'foo'");
  EXPECT_EQ(parse_error("kernel k() grid[] {\n  %0 = reduce mean [] {\n    yield %0\n  } : f32\n}\n"),
            "[parse] 2:15: unknown reduction 'mean'");
  EXPECT_EQ(parse_error("kernel k() grid[] {\n  %0 = reduce add [] {\n    yield %0\n  } : f32\n}\n"),
            "[parse] 2:15: unknown reduction 'add'");
  EXPECT_EQ(parse_error("kernel k() grid[] {\n  %0 = reduce sum [] {\n  } : f32\n}\n"),
            "[parse] 3:3: expected 'yield %N' before '}' of a reduce stage");
  EXPECT_EQ(parse_error("kernel k() grid[] {\n  %0 = reduce sum [] {\n    %1 = const 1 : f32\n    yield %1\n  }\n}\n"),
            "[parse] 6:1: expected ':' and the accumulator dtype after the reduce stage, got '}'");
  EXPECT_EQ(parse_error("kernel k() grid[] {\n  loop [] {\n    yield %1\n  }\n}\n"),
            "[parse] 3:5: expected an instruction ('%N = ...', 'store' or 'update') or '}', got 'yield'");
}

TEST(KernelParseError, Instructions) {
  EXPECT_EQ(parse_error(in_loop("    %0 = foo %1 : f32")), "[parse] 3:10: unknown op 'foo'");
  EXPECT_EQ(parse_error(in_loop("    %0 = sum %1 : f32")), "[parse] 3:10: sum is not an elementwise prim");
  EXPECT_EQ(parse_error(in_loop("    %0 = load in9[r0] : f32")), "[parse] 3:15: unknown kernel argument in9");
  EXPECT_EQ(parse_error(in_loop("    %0 = load in0[r0 : f32")), "[parse] 3:22: expected ']' after the index, got ':'");
  EXPECT_EQ(parse_error(in_loop("    %0 = load in0[r0]")), "[parse] 4:3: expected ':' and the result dtype, got '}'");
  EXPECT_EQ(parse_error(in_loop("    %x = const 1 : f32")), "[parse] 3:5: expected a numbered value like %3, got '%x'");
  EXPECT_EQ(parse_error(in_loop("    %0 = const one : f32")),
            "[parse] 3:16: expected a constant (true, false, a number, inf or nan), got 'one'");
  EXPECT_EQ(parse_error(in_loop("    %0 = const -true : f32")), "[parse] 3:17: expected a number after '-', got 'true'");
  EXPECT_EQ(parse_error(in_loop("    %0 = const 9223372036854775808 : i64")),
            "[parse] 3:16: integer literal '9223372036854775808' is out of range");
  EXPECT_EQ(parse_error(in_loop("    %0 = const 1e999 : f64")), "[parse] 3:16: number '1e999' is out of range");
  EXPECT_EQ(parse_error(in_loop("    %0 = const 1.0 : float")), "[parse] 3:22: unknown dtype 'float'");
  EXPECT_EQ(parse_error(in_loop("    store out0[r0] %0")),
            "[parse] 3:20: expected ',' and the stored value after the index, got '%0'");
  EXPECT_EQ(parse_error(in_loop("    %0 = index r0 < r0 < 2 : bool")),
            "[parse] 3:24: comparisons do not chain; add parentheses");
  EXPECT_EQ(parse_error(in_loop("    %0 = load in0[r0] : f32 $")), "[parse] 3:29: unexpected character '$'");
}

TEST(KernelParseError, Attributes) {
  const std::string ops = "    %0 = load in0[r0] : f32\n";
  EXPECT_EQ(parse_error(in_loop(ops + "    %1 = exp %0 {alpha=1} : f32")),
            "[parse] 4:18: unknown attribute 'alpha' for exp (schema: exp(Tensor self) -> Tensor)");
  EXPECT_EQ(parse_error(in_loop(ops + "    %1 = div %0, %0 {rounding_mode=\"floor\", rounding_mode=none} : f32")),
            "[parse] 4:45: duplicate attribute 'rounding_mode'");
  EXPECT_EQ(parse_error(in_loop(ops + "    %1 = div %0, %0 {rounding_mode=floor} : f32")),
            "[parse] 4:36: expected str? for attribute 'rounding_mode', got 'floor'");
  EXPECT_EQ(parse_error(in_loop(ops + "    %1 = convert_element_type %0 {dtype=float} : f64")),
            "[parse] 4:41: unknown dtype 'float'");
  EXPECT_EQ(parse_error(in_loop(ops + "    %1 = convert_element_type %0 {} : f64")),
            "[parse] 4:35: expected an attribute name, got '}'");
  EXPECT_EQ(parse_error(in_loop(ops + "    %1 = div %0, %0 {rounding_mode=none : f32")),
            "[parse] 4:41: expected ',' or '}' after an attribute, got ':'");
}

TEST(KernelParseError, Files) {
  const std::string one = "kernel a() grid[] {\n}\n";
  EXPECT_EQ(parse_error(one + "\n" + one), "[parse] 4:1: redefinition of kernel a");
  EXPECT_EQ(parse_error(one + "}\n"), "[parse] 3:1: expected 'kernel', got '}'");
  EXPECT_EQ(test::error_of([&] { parse_kernel(one + "kernel b() grid[] {\n}\n"); }),
            "[parse] 3:1: expected end of input after the kernel, got 'kernel'");
  EXPECT_EQ(test::error_of([&] { parse_kernel(""); }), "[parse] 1:1: expected 'kernel', got end of input");
  EXPECT_EQ(test::error_of([&] { parse_kernel(one); }), "<no error>");
}

// ---- the verifier, through the parser ----------------------------------------------------

TEST(KernelVerifyError, UseBeforeDefinition) {
  EXPECT_EQ(parse_error(in_loop("    %1 = exp %0 : f32\n    %0 = load in0[r0] : f32")),
            "[parse] 1:1: kernel k: %0 is used before it is defined");
  EXPECT_EQ(parse_error(in_loop("    store out0[r0], %7")), "[parse] 1:1: kernel k: %7 is used before it is defined");
}

TEST(KernelVerifyError, StoreToAnInput) {
  EXPECT_EQ(parse_error(in_loop("    %0 = load in0[r0] : f32\n    store in0[r0], %0")),
            "[parse] 1:1: kernel k: store to in0, which is not an output");
}

TEST(KernelVerifyError, VariablesOutOfScope) {
  // r1 is not a variable of a one-deep nest; s1 is no parameter; r0 does not outlive its stage.
  EXPECT_EQ(parse_error(in_loop("    %0 = load in0[r1] : f32")),
            "[parse] 1:1: kernel k: load index r1 uses r1, which is not in scope");
  EXPECT_EQ(parse_error(in_loop("    %0 = index s1 + r0 : i64")),
            "[parse] 1:1: kernel k: index index r0 + s1 uses s1, which is not in scope");
  EXPECT_EQ(parse_error(std::string(kHead) + "  loop [r0 < 4] {\n  }\n  loop [] {\n    %0 = load in0[r0] : f32\n  }\n}\n"),
            "[parse] 1:1: kernel k: load index r0 uses r0, which is not in scope");
  EXPECT_EQ(parse_error("kernel k() grid[p0 < s0] {\n}\n"), "[parse] 1:1: kernel k: grid index s0 uses s0, which is not in scope");
  EXPECT_EQ(parse_error(std::string(kHead) + "  loop [r0 < r0] {\n  }\n}\n"),
            "[parse] 1:1: kernel k: stage extent index r0 uses r0, which is not in scope");
}

TEST(KernelVerifyError, ValuesDoNotEscapeTheirStage) {
  EXPECT_EQ(parse_error(std::string(kHead) + "  loop [] {\n    %0 = const 1.0 : f32\n  }\n  loop [] {\n    store out0[p0], %0\n  }\n}\n"),
            "[parse] 1:1: kernel k: %0 is used before it is defined");
}

TEST(KernelVerifyError, ReduceResultUsedInsideItsOwnStage) {
  EXPECT_EQ(parse_error(std::string(kHead) +
                        "  %0 = reduce sum [r0 < 4] {\n    %1 = load in0[r0] : f32\n    %2 = add %1, %0 : f32\n"
                        "    yield %2\n  } : f32\n}\n"),
            "[parse] 1:1: kernel k: %0 is used before it is defined");
}

TEST(KernelVerifyError, YieldAndResultIds) {
  EXPECT_EQ(parse_error(std::string(kHead) + "  %0 = reduce sum [r0 < 4] {\n    %1 = load in0[r0] : f32\n    yield %5\n  } : f32\n}\n"),
            "[parse] 1:1: kernel k: reduce yields %5, which its body does not define");
  EXPECT_EQ(parse_error(std::string(kHead) + "  %1 = reduce sum [r0 < 4] {\n    %1 = load in0[r0] : f32\n    yield %1\n  } : f32\n}\n"),
            "[parse] 1:1: kernel k: reduce result %1 is defined twice");
  EXPECT_EQ(parse_error(in_loop("    %0 = load in0[r0] : f32\n    %0 = exp %0 : f32")),
            "[parse] 1:1: kernel k: result id %0 is missing or defined twice");
}

// An amax's sum of exponentials (passes/online_softmax.h): a second result, of a float reduction
// of floats to a sum at least as wide as their compute dtype.
TEST(KernelVerifyError, SumExpResults) {
  const auto stage = [](const char* op, const char* y, const char* acc, const char* sum) {
    return fmt::format("kernel k(in0: {1}, out0: out f32) grid[p0 < 4] {{\n  %0 = reduce {0} [r0 < 4] {{\n"
                       "    %1 = load in0[r0] : {1}\n    yield %1\n  }} : {2} sum_exp {3}\n}}\n",
                       op, y, acc, sum);
  };
  EXPECT_NO_THROW(parse_kernels(stage("amax", "f32", "f32", "%2 : f64")));
  EXPECT_NO_THROW(parse_kernels(stage("amax", "f16", "f16", "%2 : f32")));
  const std::string needs = "[parse] 1:1: kernel k: sum_exp %2 needs an amax of a float and a sum dtype at least as "
                            "wide as its compute dtype";
  EXPECT_EQ(parse_error(stage("sum", "f32", "f32", "%2 : f64")), needs);
  EXPECT_EQ(parse_error(stage("amax", "i32", "i32", "%2 : f64")), needs);
  EXPECT_EQ(parse_error(stage("amax", "f64", "f64", "%2 : f32")), needs);
  EXPECT_EQ(parse_error(stage("amax", "f32", "f32", "%0 : f64")), "[parse] 1:1: kernel k: reduce result %0 is defined twice");
  EXPECT_EQ(parse_error(stage("amax", "f32", "f32", "%1 : f64")), "[parse] 1:1: kernel k: reduce result %1 is defined twice");
  EXPECT_EQ(parse_error(stage("amax", "f32", "f32", "%2 f64")), "[parse] 5:22: expected ':' and the dtype after the sum_exp result, got 'f64'");
}

TEST(KernelVerifyError, OperandCountAndTileShape) {
  EXPECT_EQ(parse_error(in_loop("    %0 = load in0[r0] : f32\n    %1 = add %0 : f32")),
            "[parse] 1:1: kernel k: add takes 2 operands");
  EXPECT_EQ(parse_error("\n  kernel t(in0: f32, out0: out f32) grid[p0 < 4] outer_reduction_tile(8) {\n"
                        "  loop [] {\n  }\n}\n"),
            "[parse] 2:3: kernel t: an outer reduction needs a grid, one reduce stage and one loop stage with no extents");
}

// The verifier on kernels built in C++ throws InternalError (a bug in a pass, not the user's).
TEST(KernelVerifyError, RandomDraws) {
  EXPECT_EQ(parse_error(in_loop("    %0 = random gamma(0.0, 1.0) %0 : f32")),
            "[parse] 3:17: expected uniform or normal, got 'gamma'");
  EXPECT_EQ(parse_error(in_loop("    %0 = index r0 : i64\n    %1 = random uniform(0.0, 1.0) %0, %0 : f32")),
            "[parse] 1:1: kernel k: random takes three operands (index, seed, offset)");
  EXPECT_EQ(parse_error(in_loop("    %0 = index r0 : i64\n    %1 = random normal(0.0, 1.0) %0, %0, %0 : i32")),
            "[parse] 1:1: kernel k: random of dtype i32");
}

TEST(KernelVerifyError, OrderedStages) {
  // An ordered stage runs in order in one thread: no vectorize fields, no block sharing its loop.
  EXPECT_EQ(parse_error(std::string(kHead) + "  loop ordered [r0 < 4] vectorize(interleave=4) {\n  }\n}\n"),
            "[parse] 1:1: kernel k: an ordered stage is a loop stage without vectorize fields");
  EXPECT_EQ(parse_error("kernel k(in0: f32, out0: out f32) params(s0) grid[p0 < s0] launch(block_per_point, threads=64, work=4) {\n"
                        "  loop ordered [r0 < 4] {\n  }\n}\n"),
            "[parse] 1:1: kernel k: an ordered stage cannot share its loop among a block's threads (block_per_point)");
}

TEST(KernelVerifyError, CarriedValues) {
  // A carried value lives in an ordered stage, is updated once after it, with its own dtype.
  const std::string head = std::string(kHead) + "  loop ordered [r0 < 4] {\n    %0 = carry 0 : f32\n    %1 = load in0[r0] : f32\n";
  EXPECT_EQ(parse_error(std::string(kHead) + "  loop [r0 < 4] {\n    %0 = carry 0 : f32\n    update %0, %0\n  }\n}\n"),
            "[parse] 1:1: kernel k: carry outside an ordered loop stage");
  EXPECT_EQ(parse_error(head + "  }\n}\n"), "[parse] 1:1: kernel k: carry %0 is never updated");
  EXPECT_EQ(parse_error(head + "    update %0, %1\n    update %0, %1\n  }\n}\n"),
            "[parse] 1:1: kernel k: carry %0 is updated twice");
  EXPECT_EQ(parse_error(head + "    %2 = convert_element_type %1 {dtype=f64} : f64\n    update %0, %2\n  }\n}\n"),
            "[parse] 1:1: kernel k: update of %0 (f32) with a f64 value");
  EXPECT_EQ(parse_error(head + "    update %1, %1\n    update %0, %1\n  }\n}\n"),
            "[parse] 1:1: kernel k: update of %1, which is not a carry of this stage");
  EXPECT_EQ(parse_error(head + "    update %0, %1\n  }\n  loop ordered [r0 < 4] {\n    update %0, %1\n  }\n}\n"),
            "[parse] 1:1: kernel k: %0 is used before it is defined");
  EXPECT_EQ(parse_error(head + "    update %0\n  }\n}\n"),
            "[parse] 6:3: expected ',' and the carry's next value after the carry, got '}'");
}

TEST(KernelVerify, BuiltKernelsThrowInternalErrors) {
  Kernel k = parse_kernel(in_loop("    %0 = load in0[r0] : f32\n    store out0[r0], %0"));
  EXPECT_NO_THROW(verify_kernel(k));
  k.stages[0].body[1].arg = 5;
  EXPECT_THROW(verify_kernel(k), InternalError);
  try {
    verify_kernel(k);
  } catch (const InternalError& e) {
    EXPECT_STREQ(e.what(), "internal error: kernel k: buffer argument 5 is out of range");
  }
  // A sum of exponentials belongs to an amax stage; the text cannot say it of a loop, a built kernel can.
  Kernel l = parse_kernel(in_loop("    %0 = load in0[r0] : f32\n    store out0[r0], %0"));
  l.stages[0].sum_exp = 7;
  try {
    verify_kernel(l);
    ADD_FAILURE() << "a loop stage with sum_exp verified";
  } catch (const InternalError& e) {
    EXPECT_STREQ(e.what(), "internal error: kernel k: a loop stage has sum_exp %7");
  }
}

}  // namespace
}  // namespace kiln::ir
