// kiln/ir/kernel.h — the loop-level kernel IR shared by every backend.
//
// A Kernel is what fusion produces and what codegen_cpu (LLVM) and codegen_cuda (CUDA C)
// print: a parallel iteration grid, and per grid point a sequence of stages. A stage is an
// inner loop nest (possibly empty) whose body is a list of scalar SSA instructions; a
// reduce stage folds one value over its loop nest into a scalar that later stages read.
//
//   kernel k0(in0: f32, out0: f32) grid[p0 < 4096] {
//     %0 = reduce amax [r0 < 1024] {
//       %1 = load in0[1024*p0 + r0] : f32
//       yield %1
//     } : f32
//     loop [r0 < 1024] {
//       %2 = load in0[1024*p0 + r0] : f32
//       %3 = sub %2, %0 : f32
//       store out0[1024*p0 + r0], %3
//     }
//   }
//
// Index expressions are ir::Expr over the grid variables p0.., the stage variables r0.. and
// the kernel's runtime parameters (symbolic sizes and strides, read from a parameter array),
// counted in elements of the buffer. Views therefore cost nothing: they are index remapping.
// All decisions (what fuses, loop order, the split of a full reduction) are made by the
// passes that build a Kernel; backends only print it.
#pragma once

#include "base/dtype.h"
#include "base/scalar.h"
#include "ir/attr.h"
#include "ir/expr.h"
#include "ir/op.h"

#include <string>
#include <vector>

namespace kiln::ir {

// A buffer argument: a pointer to elements of `dtype`.
struct KernelArg {
  std::string name;  // in0.., out0.., tmp0..
  ScalarType dtype = ScalarType::Float;
  bool output = false;  // written by the kernel
  bool operator==(const KernelArg&) const = default;
};

enum class KOp : uint8_t {
  Load,     // %r = load arg[index]
  Store,    // store arg[index], %operand0   (no result)
  Const,    // %r = const value : dtype
  Index,    // %r = index expr : i64 (or b8 when expr is a comparison, 0/1)
  Compute,  // %r = <elementwise prim> operands [attrs] : dtype (Unary, Binary, Ternary, Cast families)
  Check,    // %r = check ... (CheckKind): %operand0 passed on, or a safe value and a fault
};

// What a Check instruction asserts about its operand x (an integer value). Where it holds,
// the result is x; where it fails, the kernel records a fault (ir/kernel_fault.h) that the
// backend raises as `op`'s error once the launch is over, and the result is a value that
// keeps the kernel's own arithmetic defined and its memory accesses in bounds:
//   %r = check nonzero %x for div : i64          x != 0, else 1      (ZeroDivisionError)
//   %r = check %x < s1 for gather dim 1 : i64    0 <= x < bound, else 0  (index out of bounds)
enum class CheckKind : uint8_t {
  NonZero,   // a divisor of an integer div, remainder or fmod
  InBounds,  // an index read from data: 0 <= x < `index` (an Expr of the kernel's parameters)
};

// One scalar instruction. `id` numbers results kernel-wide (stores have id -1).
struct KInst {
  KOp kind = KOp::Const;
  int id = -1;
  ScalarType dtype = ScalarType::Float;  // result dtype (a store: the stored value's dtype)
  int arg = -1;                          // Load/Store: index into Kernel::args
  Expr index;                            // Load/Store/Index; Check (InBounds): the bound
  OpKind op = OpKind::add;               // Compute; Check: the op whose error a fault raises
  AttrList attrs;                        // Compute: the prim's attributes (div's rounding_mode, ...)
  std::vector<int> operands;             // ids of earlier instructions or reduce results
  Scalar value;                          // Const; Check (InBounds): the dim named in the error
  CheckKind check = CheckKind::NonZero;  // Check
  bool operator==(const KInst&) const = default;
};

enum class StageKind : uint8_t {
  Loop,    // runs its body for every point of its loop nest (stores produce the results)
  Reduce,  // folds `yield` over its loop nest with `reduce_op`; result id = `result`
};

struct KStage {
  StageKind kind = StageKind::Loop;
  std::vector<Expr> extents;  // loop nest, outermost first; variables r0, r1, ...
  std::vector<KInst> body;
  // Reduce stages only.
  ReductionOp reduce_op = ReductionOp::sum;  // argmax/argmin produce the i64 flat position in the nest
  int yield = -1;                            // id of the value folded
  int result = -1;                           // id under which later stages read the result
  ScalarType acc_dtype = ScalarType::Float;  // accumulator / result dtype
  bool operator==(const KStage&) const = default;
};

// Loop-order decisions made by lowering, followed by every backend.
struct KSchedule {
  // Reductions over an outer dimension (a column sum): when > 0, the kernel has one Reduce
  // stage followed by one Loop stage with no extents, and the backend iterates the reduce
  // loop outside a tile of this many points of the last grid dimension, so that the loads of
  // neighbouring grid points are contiguous. 0: plain order (grid outside, stages inside).
  int64_t outer_reduction_tile = 0;
  bool operator==(const KSchedule&) const = default;
};

struct Kernel {
  std::string name;
  std::vector<KernelArg> args;
  // Runtime integer parameters, in the order the caller passes them (symbolic sizes, strides).
  std::vector<std::string> params;
  std::vector<Expr> grid;  // parallel extents; variables p0, p1, ...; backends split grid[0]
  std::vector<KStage> stages;
  KSchedule schedule;

  // Prints in the text format of ir/kernel_text.h.
  std::string str() const;
  bool operator==(const Kernel&) const = default;
};

// The loop variable names: grid_var(0) == "p0", stage_var(1) == "r1".
std::string grid_var(size_t i);
std::string stage_var(size_t i);
Expr grid_expr(size_t i);
Expr stage_expr(size_t i);

// "sum", "amax", ... (the op's name in ops.def).
std::string_view reduction_name(ReductionOp op);

// The Check instructions of `k` in order (stages in order, each body in order): a fault
// names its check by 1 + its position here (ir/kernel_fault.h).
std::vector<const KInst*> check_sites(const Kernel& k);
bool has_checks(const Kernel& k);

// The dtype a backend computes an instruction in: f16/bf16 are computed in f32.
ScalarType compute_dtype(ScalarType t);

// Checks the structural invariants (ids defined before use and in scope, args in range,
// stores only to outputs, index variables in scope, compute ops elementwise); throws
// InternalError naming the kernel and the instruction.
void verify_kernel(const Kernel& k);

}  // namespace kiln::ir
