// kiln/test/test_cpu_checks.cpp — Check instructions in generated cpu code (ir/kernel.h,
// ir/kernel_abi.h).
//
// Kernels written in the kernel text format are compiled by codegen_cpu and called directly
// with a fault record: a check that holds passes its value on; the first failing one claims
// the record with its site, value and bound, and the kernel's other results stay defined. The
// loops are long enough to vectorize, and the failing element sits in the vector body and in
// the tail, so the flag and range reductions are checked where the vectorizer puts them.
#include "codegen_cpu/kernel_codegen.h"
#include "ir/kernel_abi.h"
#include "ir/kernel_text.h"
#include "test_support/check.h"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

namespace kiln::cpu {
namespace {

// out[i] = in0[i] remainder in1[i]; the divisor checked.
const char* kRemainder = R"(kernel rem(in0: i64, in1: i64, out0: out i64) params(s0) grid[p0 < s0] {
  loop [] {
    %0 = load in0[p0] : i64
    %1 = load in1[p0] : i64
    %2 = check nonzero %1 for remainder : i64
    %3 = remainder %0, %2 : i64
    store out0[p0], %3
  }
}
)";

// out[i] = in0[i] checked against [0, s1) (as an index read from data would be).
const char* kBounds = R"(kernel bounds(in0: i32, out0: out i32) params(s0, s1) grid[p0 < s0] {
  loop [] {
    %0 = load in0[p0] : i32
    %1 = check %0 < s1 for gather dim 1 : i32
    store out0[p0], %1
  }
}
)";

struct Compiled {
  ir::Kernel kernel;
  CodegenResult code;
};

Compiled build(const char* text) {
  Compiled c{ir::parse_kernel(text), {}};
  CodegenOptions o;
  o.reuse_linked = false;
  c.code = compile_kernels({&c.kernel}, o);
  return c;
}

TEST(CpuChecks, ADivisorOfZeroFaultsAndTheRestIsDefined) {
  const Compiled c = build(kRemainder);
  for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{100}}) {
    for (int64_t zero_at = -1; zero_at < n; zero_at += (n > 10 ? 13 : 1)) {
      std::vector<int64_t> a(static_cast<size_t>(n)), b(static_cast<size_t>(n)), out(static_cast<size_t>(n), -99);
      for (int64_t i = 0; i < n; ++i) {
        a[static_cast<size_t>(i)] = 3 * i - 50;
        b[static_cast<size_t>(i)] = i == zero_at ? 0 : (i % 5) + 2;
      }
      ir::KernelFault fault;
      void* args[] = {a.data(), b.data(), out.data(), &fault};
      const int64_t params[] = {n};
      c.code.kernels[0].fn(args, params, 0, n);
      EXPECT_EQ(fault.site, zero_at >= 0 ? 1 : 0) << "n " << n << " zero at " << zero_at;
      if (zero_at >= 0) {
        EXPECT_EQ(ir::kernel_fault_message(c.kernel, fault), "[remainder] ZeroDivisionError");
      }
      for (int64_t i = 0; i < n; ++i) {
        if (i == zero_at) continue;
        const int64_t x = a[static_cast<size_t>(i)], y = b[static_cast<size_t>(i)];
        const int64_t r = ((x % y) + y) % y;  // Python's %: the divisor's sign (y > 0)
        EXPECT_EQ(out[static_cast<size_t>(i)], r) << i;
      }
    }
  }
}

TEST(CpuChecks, AnIndexOutOfBoundsReportsItsValueAndBound) {
  const Compiled c = build(kBounds);
  constexpr int64_t n = 70, bound = 5;
  for (int32_t bad : {-3, 5, 1000}) {
    for (int64_t at : {int64_t{0}, int64_t{33}, n - 1}) {
      std::vector<int32_t> in(n), out(n, -1);
      for (int64_t i = 0; i < n; ++i) in[static_cast<size_t>(i)] = static_cast<int32_t>(i % bound);
      in[static_cast<size_t>(at)] = bad;
      ir::KernelFault fault;
      void* args[] = {in.data(), out.data(), &fault};
      const int64_t params[] = {n, bound};
      c.code.kernels[0].fn(args, params, 0, n);
      ASSERT_EQ(fault.site, 1);
      EXPECT_EQ(fault.value, bad);
      EXPECT_EQ(fault.bound, bound);
      EXPECT_EQ(ir::kernel_fault_message(c.kernel, fault),
                "[gather] index " + std::to_string(bad) + " is out of bounds for dimension 1 with size 5");
      EXPECT_EQ(out[static_cast<size_t>(at)], 0);  // the safe value
      EXPECT_EQ(out[static_cast<size_t>((at + 1) % n)], static_cast<int32_t>(((at + 1) % n) % bound));
    }
  }
  // In bounds everywhere: no fault, values passed on.
  std::vector<int32_t> in(n), out(n);
  for (int64_t i = 0; i < n; ++i) in[static_cast<size_t>(i)] = static_cast<int32_t>(i % bound);
  ir::KernelFault fault;
  void* args[] = {in.data(), out.data(), &fault};
  const int64_t params[] = {n, bound};
  c.code.kernels[0].fn(args, params, 0, n);
  EXPECT_EQ(fault.site, 0);
  EXPECT_EQ(out, in);
}

// index_add of 6 rows of 64 columns into 4 rows (a scatter's ordered stage over a tile of
// columns): the row's id and its check are emitted once per row, outside the column loop, so
// that loop vectorizes (an ordered stage without carried values or library calls may); a bad
// id faults with its value, the rows before and after it still add.
const char* kScatterRows = R"(kernel rows(out0: out f32, in0: i64, in1: f32) grid[p0 < 1] {
  loop [r0 < 4, r1 < 64] {
    %0 = const 0 : f32
    store out0[64*p0 + 64*r0 + r1], %0
  }
  loop ordered [r0 < 6, r1 < 64] {
    %1 = load in0[r0] : i64
    %2 = check %1 < 4 for scatter_add dim 0 : i64
    %3 = load in1[64*p0 + 64*r0 + r1] : f32
    %4 = load out0[64*p0 + r1 + 64*v2] : f32
    %5 = add %4, %3 : f32
    store out0[64*p0 + r1 + 64*v2], %5
  }
}
)";

TEST(CpuChecks, AScatterChecksEachRowOnceAndItsColumnsVectorize) {
  ir::Kernel k = ir::parse_kernel(kScatterRows);
  CodegenOptions o;
  o.want_ir = true;
  const CodegenResult code = compile_kernels({&k}, o);
  EXPECT_TRUE(code.llvm_ir.find("<16 x float>") != std::string::npos || code.llvm_ir.find("<8 x float>") != std::string::npos)
      << code.llvm_ir;
  EXPECT_EQ(code.llvm_ir.find("smin.v"), std::string::npos) << "the bound's range is reduced per column:\n" << code.llvm_ir;
  for (int64_t bad : {int64_t{-1}, int64_t{4}, int64_t{99}}) {
    const std::vector<int64_t> ids = {2, 0, 2, bad, 3, 2};
    std::vector<float> src(6 * 64), out(4 * 64, -7.0f), want(4 * 64, 0.0f);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i % 13) - 6.0f;
    for (size_t r = 0; r < ids.size(); ++r) {
      const int64_t at = ids[r] >= 0 && ids[r] < 4 ? ids[r] : 0;  // a bad id adds into row 0
      for (size_t c = 0; c < 64; ++c) want[static_cast<size_t>(at) * 64 + c] += src[r * 64 + c];
    }
    ir::KernelFault fault;
    void* args[] = {out.data(), const_cast<int64_t*>(ids.data()), src.data(), &fault};
    code.kernels[0].fn(args, nullptr, 0, 1);
    EXPECT_EQ(out, want) << "bad id " << bad;
    ASSERT_EQ(fault.site, 1);
    EXPECT_EQ(fault.value, bad);
    EXPECT_EQ(ir::kernel_fault_message(k, fault),
              "[scatter_add] index " + std::to_string(bad) + " is out of bounds for dimension 0 with size 4");
  }
}

// A position checked against a bound that may be 0 has no position to fall back on: where the
// check fails, the load at it reads the scratch cell and the store writes it, not the argument.
// Both arguments here start at a page that cannot be read or written (an empty view at the end
// of its storage), so an access at position 0 would fault. 64 points: the vector body and the
// tail both take the masked path.
TEST(CpuChecks, AFailedCheckAgainstABoundOfZeroTouchesNoMemory) {
  const Compiled c = build(R"(kernel masked(in0: i64, in1: f32, out0: out f32) params(s0, s1) grid[p0 < s0] {
  loop [] {
    %0 = load in0[p0] : i64
    %1 = check %0 < s1 for scatter_add dim 0 : i64
    %2 = load in1[v1] : f32
    %3 = const 1.5 : f32
    %4 = add %2, %3 : f32
    store out0[v1], %4
  }
}
)");
  const long page = sysconf(_SC_PAGESIZE);
  void* mem = mmap(nullptr, static_cast<size_t>(2 * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  char* guard = static_cast<char*>(mem) + page;
  ASSERT_EQ(mprotect(guard, static_cast<size_t>(page), PROT_NONE), 0);
  for (int64_t n : {int64_t{1}, int64_t{64}}) {
    std::vector<int64_t> idx(static_cast<size_t>(n), 0);
    ir::KernelFault fault;
    void* args[] = {idx.data(), guard, guard, &fault};
    const int64_t params[] = {n, 0};
    c.code.kernels[0].fn(args, params, 0, n);
    EXPECT_EQ(ir::kernel_fault_message(c.kernel, fault), "[scatter_add] index 0 is out of bounds for dimension 0 with size 0");
  }
  munmap(mem, static_cast<size_t>(2 * page));
}

TEST(CpuChecks, AKernelWithoutChecksTakesNoFaultRecord) {
  const ir::Kernel k = ir::parse_kernel(R"(kernel plain(in0: f32, out0: out f32) grid[p0 < 4] {
  loop [] {
    %0 = load in0[p0] : f32
    store out0[p0], %0
  }
}
)");
  EXPECT_FALSE(ir::has_checks(k));
  EXPECT_TRUE(ir::has_checks(ir::parse_kernel(kBounds)));
  EXPECT_EQ(ir::check_sites(ir::parse_kernel(kRemainder)).size(), 1u);
}

}  // namespace
}  // namespace kiln::cpu
