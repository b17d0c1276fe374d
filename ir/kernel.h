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
// All decisions are made by passes, never by a backend, which only prints a Kernel: what fuses
// and the split of a full reduction (passes/fuse.cpp, passes/lower.cpp), and the schedule —
// the column tile (passes/schedule_tiles.cpp), the CPU's row grouping, vector width and masked
// tails (passes/schedule_loops.cpp), the GPU's block and grid shape (passes/schedule_launch.cpp).
#pragma once

#include "base/dtype.h"
#include "base/scalar.h"
#include "ir/attr.h"
#include "ir/expr.h"
#include "ir/op.h"

#include <optional>
#include <string>
#include <string_view>
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
  Random,   // %r = random uniform(low, high) %index, %seed, %offset : dtype (or normal(mean, std)):
            // element `index` of the Philox draw (seed, offset) of frontend/ops_random.h, exactly
            // as the uniform/normal prims define it for `dtype`; the operands are i64
  // A value carried from one iteration of an ordered stage to the next (a scan's running
  // total). Only in ordered loop stages, whose iterations run in order in one thread:
  Carry,    // %r = carry value : dtype   the value the stage's previous iteration gave it with
            //                             `update` (`value` at each grid point's first iteration)
  Update,   // update %carry, %x          what %carry reads in the next iteration (no result;
            //                             once per carry, after it, same dtype)
};

// What a Check instruction asserts about its operand x (an integer value). Where it holds,
// the result is x; where it fails, the kernel records a fault (ir/kernel_abi.h) that the
// backend raises as `op`'s error once the launch is over, and the result is a value that
// keeps the kernel's own arithmetic defined and its memory accesses in bounds (all but a
// bound of 0, where position 0 is the one element past an empty dim: docs/compiler.md):
//   %r = check nonzero %x for div : i64          x != 0, else 1      (ZeroDivisionError)
//   %r = check %x < s1 for gather dim 1 : i64    0 <= x < bound, else 0  (index out of bounds)
enum class CheckKind : uint8_t {
  NonZero,   // a divisor of an integer div, remainder or fmod
  InBounds,  // a position read from data, or a coordinate the sizes do not prove: 0 <= x < `index`
             // (an Expr of the kernel's parameters)
};

// One scalar instruction. `id` numbers results kernel-wide (stores have id -1).
struct KInst {
  KOp kind = KOp::Const;
  int id = -1;
  ScalarType dtype = ScalarType::Float;  // result dtype (a store: the stored value's dtype)
  int arg = -1;                          // Load/Store: index into Kernel::args
  Expr index;                            // Load/Store/Index; Check (InBounds): the bound
  OpKind op = OpKind::add;               // Compute; Check: the op whose error a fault raises; Random: uniform/normal
  AttrList attrs;                        // Compute: the prim's attributes (div's rounding_mode, ...);
                                         // Random: two doubles, (low, high) or (mean, std)
  std::vector<int> operands;             // ids of earlier instructions or reduce results
  Scalar value;                          // Const; Carry: the first value; Check (InBounds): the dim named in the error
  CheckKind check = CheckKind::NonZero;  // Check
  bool operator==(const KInst&) const = default;
};

enum class StageKind : uint8_t {
  Loop,    // runs its body for every point of its loop nest (stores produce the results)
  Reduce,  // folds `yield` over its loop nest with `reduce_op`; result id = `result`
};

// How a CPU backend vectorizes the innermost loop of a stage (passes/schedule_loops.cpp); the
// defaults leave every choice to the compiler's vectorizer. Printed as `vectorize(...)` after
// the stage's loop nest when any is set.
struct KVectorize {
  int interleave = 0;        // independent vector accumulators (0: the vectorizer's choice)
  int lanes = 0;             // vector lanes (0: the vectorizer's choice)
  // The loop runs as a main loop over a multiple of kMaskedTailChunk iterations and a tail of
  // fewer, one vector per iteration with the last one masked.
  bool masked_tail = false;
  // A float sum in a fixed layout of partial sums, independent of the vector width (0: none).
  // The innermost loop runs in blocks of partials x kPartialRows iterations; iteration t of a
  // block adds into partial t mod partials (in the yielded value's dtype, f32 for an f32 body),
  // the partials are widened to acc_dtype and combine pairwise at the block's end (p[i] +
  // p[i + partials/2], then halves again), and the block's total adds into the accumulator,
  // block after block.
  // Every addition's operands are fixed, so AVX2 and AVX-512 hosts compute the same bits.
  int partials = 0;
  bool operator==(const KVectorize&) const = default;
};
inline constexpr int64_t kMaskedTailChunk = 64;
inline constexpr int64_t kPartialRows = 8;

struct KStage {
  StageKind kind = StageKind::Loop;
  std::vector<Expr> extents;  // loop nest, outermost first; variables r0, r1, ...
  // Loop stages: the iterations depend on each other, through memory (a store at a position
  // read from data, which a later iteration may read or store again: scatter) or through
  // carried values (KOp::Carry: a scan's running total), so a backend runs them in order in
  // one thread, never split among threads (the cpu vectorizes only what LLVM proves
  // independent, such as a scatter tile's columns). Printed as `loop ordered [...]`.
  bool ordered = false;
  std::vector<KInst> body;
  // Reduce stages only.
  ReductionOp reduce_op = ReductionOp::sum;  // argmax/argmin produce the i64 flat position in the nest
  int yield = -1;                            // id of the value folded
  int result = -1;                           // id under which later stages read the result
  ScalarType acc_dtype = ScalarType::Float;  // accumulator / result dtype
  // amax stages of a float only (set by passes/online_softmax.cpp for a GPU): the stage also
  // folds, in the same pass over its nest, sum(exp(x - max)) of its yielded values x against
  // the final max, as the result `sum_exp` of dtype `sum_exp_dtype` (a float at least as wide
  // as the yield), each exp computed in the yield's compute dtype. The online softmax
  // (Milakov and Gimelshein, 2018): (max, sum) pairs combine as
  //   M = max(m1, m2),  s = s1 * exp(m1 - M) + s2 * exp(m2 - M),
  // and the results are those of an amax stage followed by a sum stage over the same values,
  // up to rounding: a NaN makes both NaN, a +inf max makes the sum NaN (exp(inf - inf)), as
  // does a max of -inf over a nonempty nest; an empty nest gives -inf and 0. -1: none.
  // Printed after the accumulator dtype: `} : f32 sum_exp %14 : f64`.
  int sum_exp = -1;
  ScalarType sum_exp_dtype = ScalarType::Double;
  KVectorize vectorize;                      // set by passes/schedule_loops.cpp (CPU)
  bool operator==(const KStage&) const = default;
};

// How a GPU backend launches a kernel (passes/schedule_launch.cpp). ThreadPerPoint: one thread
// per grid point, grid-stride; BlockPerPoint (a stage with a loop nest): one block per grid
// point, its threads sharing the stage loops. None: not scheduled for a GPU.
enum class LaunchKind : uint8_t { None, ThreadPerPoint, BlockPerPoint };
struct KLaunch {
  LaunchKind kind = LaunchKind::None;
  // Threads per block; 0 for a BlockPerPoint kernel whose work per grid point is symbolic:
  // threads_for_work(work) at launch.
  int64_t threads = 0;
  Expr work = 0;    // BlockPerPoint: the largest stage's iterations per grid point
  int64_t sms = 0;  // the device's multiprocessor count the grid is sized for (0: read at launch)
  // ThreadPerPoint: each thread takes this many consecutive points of the last grid dimension
  // (a divisor of its extent; or, for an extent of symbolic size, whenever the size is a
  // multiple at run time), loading and storing the contiguous accesses (lane_access) as one
  // vector of up to 16 bytes where the buffers are aligned and the symbolic strides and
  // offsets of those accesses are multiples at run time. 1: one point.
  int64_t vector = 1;
  // ThreadPerPoint outer reductions (column sums): the threads that share one point's reduce
  // stage, each taking every row_split-th row, combined in shared memory in a fixed order. A
  // block holds threads / row_split points (consecutive, so loads stay coalesced). 1: one.
  int64_t row_split = 1;
  // BlockPerPoint with constant work and threads: every stage loop is row_items unrolled
  // iterations per thread (thread t takes t, t + threads, ...; threads * row_items >= work), so
  // that its loads issue together. 0: each stage loops over its extent.
  int64_t row_items = 0;
  // With row_items: the loads row_cached_loads names are read once and kept in registers for
  // the later stages (a softmax row read once instead of three times).
  bool row_cache = false;
  // Every load's and store's index, and every value its subexpressions take, fits in 32 bits
  // (indices_fit_32_bits): the code generator computes the indices in 32-bit arithmetic.
  bool index32 = false;
  bool operator==(const KLaunch&) const = default;
};

// BlockPerPoint's threads for `work` iterations per grid point: about four per thread, a whole
// number of warps, 32..1024.
int64_t threads_for_work(int64_t work);
// The blocks launched for `points` grid points with `threads` per block on `sms`
// multiprocessors: enough to cover the points, capped at what keeps every multiprocessor
// busy (grid-stride loops take the rest); at least 1.
int64_t blocks_for(const KLaunch& l, int64_t points, int64_t threads, int64_t sms);

// The loop-order and launch decisions of a kernel, each set by one pass and followed by every
// backend; a field at its default prints nothing.
struct KSchedule {
  // A lone reduction over outer dims (a column sum; set by lowering, a fact of the kernel's
  // structure): one Reduce stage followed by one Loop stage with no extents, which a backend
  // may run in tiles of the last grid dimension. Printed as `outer_reduction`.
  bool outer_reduction = false;
  // passes/schedule_tiles.cpp: when > 0 (outer_reduction kernels only), the backend iterates
  // the reduce loop outside a tile of this many points of the last grid dimension, so that the
  // loads of neighbouring grid points are contiguous. 0: plain order (grid outside, stages inside).
  int64_t outer_reduction_tile = 0;
  // passes/schedule_loops.cpp (CPU): rows of a tiled reduction added per pass over the tile
  // (0 or 1: one at a time), and the vector register width code may use (0: the target's default).
  int64_t tile_rows = 0;
  int vector_bits = 0;
  // passes/schedule_launch.cpp (GPU).
  KLaunch launch;
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

// A position read from data, in an index expression: the symbol v<id> stands for the integer
// value of instruction %id, defined earlier and in scope (gather's index, after its bounds
// check). value_expr(7) is the symbol "v7"; value_symbol_id("v7") == 7, and nullopt for any
// other name.
Expr value_expr(int id);
std::optional<int> value_symbol_id(std::string_view name);
// Whether an index names such a value (a position read from data).
bool reads_values(const Expr& index);

// The loop variable names: grid_var(0) == "p0", stage_var(1) == "r1".
std::string grid_var(size_t i);
std::string stage_var(size_t i);
Expr grid_expr(size_t i);
Expr stage_expr(size_t i);

// "sum", "amax", ... (the op's name in ops.def).
std::string_view reduction_name(ReductionOp op);

// How the index of a load or store moves across the lanes of a vectorized thread (consecutive
// points of the last grid dimension, the first at a multiple of `lanes`), a fact of the index:
//   Uniform     it does not depend on the last grid variable: one element for every lane;
//   Contiguous  affine in the grid variables, with coefficient 1 for the last and every other
//               coefficient and the constant term a multiple of `lanes`: the lanes' elements
//               are consecutive and the first is `lanes`-aligned;
//   PerLane     anything else: each lane computes its own index.
// The other coefficients and the constant term may depend on the kernel's parameters (an eager
// kernel's symbolic strides and offset): where they do, the index is Contiguous when they are
// multiples at run time, and they are appended to `runtime` for the kernel to test; without
// `runtime`, such an index is PerLane.
enum class LaneAccess : uint8_t { Uniform, Contiguous, PerLane };
LaneAccess lane_access(const Kernel& k, const Expr& index, int64_t lanes, std::vector<Expr>* runtime = nullptr);
// Whether kernel `k` vectorized by `lanes` classifies its accesses on constants alone (callers
// then pass no `runtime` to lane_access): its last grid extent is a constant and some load or
// store is contiguous without run-time terms. Such a kernel vectorizes without any run-time
// test of its sizes and reads its other accesses lane by lane; any other kernel takes the
// run-time terms. Decided once per kernel and lane count, so that the schedule and the code
// generator agree.
bool lanes_on_constants(const Kernel& k, int64_t lanes);

// `index` at lane `lane` of a vectorized kernel (KLaunch::vector): its last grid variable moved
// on by `lane` (and simplified), as the code generator prints each lane's access.
Expr at_lane(const Kernel& k, const Expr& index, int64_t lane);
// Whether every value of every subexpression of every load's and store's index lies within
// [-2^31 + 1, 2^31 - 1] on every iteration, by the ranges of the kernel's variables: grid and
// stage variables below their constant extents, a checked position below its constant bound.
// With KLaunch::vector > 1, each lane's form of the index too (at_lane). A parameter, a symbolic
// extent or an unchecked value makes it false.
bool indices_fit_32_bits(const Kernel& k);

// An element of each thread's items that a row_cache kernel keeps in registers
// (KLaunch::row_cache), one of two kinds:
// - a load of an argument the kernel never stores, in two or more stages with the same
//   extents, at the same index (that uses a stage variable) in the same dtype: read in `first`,
//   the first of those stages, and from registers after;
// - a stored row (`stored`): every store and load of the argument are at one index over the
//   same extents, in the argument's dtype, and every load comes after the first store
//   (`first`): loads read the last stored value from registers (an f16 or bf16 value rounded
//   to its dtype first, as the memory would hold it), and only the stores of stage
//   `last_store` reach memory (softmax's exp, stored and read back before its normalized value
//   overwrites it, stays in registers).
struct RowCachedLoad {
  int arg = 0;
  ScalarType dtype = ScalarType::Float;
  Expr index;
  std::vector<Expr> extents;
  size_t first = 0;
  bool stored = false;
  size_t last_store = 0;
};
std::vector<RowCachedLoad> row_cached_loads(const Kernel& k);
// The entry of `loads` that `in` (a load or store of stage `st`) reads or writes, or -1.
int row_cached_slot(const std::vector<RowCachedLoad>& loads, const KStage& st, const KInst& in);

// The Check instructions of `k` in order (stages in order, each body in order): a fault
// names its check by 1 + its position here (ir/kernel_abi.h).
std::vector<const KInst*> check_sites(const Kernel& k);
bool has_checks(const Kernel& k);

// The instruction of `st`'s body that defines value `id` (a store defines none); null when the
// value comes from before the stage.
const KInst* body_inst(const KStage& st, int id);

// The dtype a backend computes an instruction in: f16/bf16 are computed in f32.
ScalarType compute_dtype(ScalarType t);

// Checks the structural invariants (ids defined before use and in scope, args in range,
// stores only to outputs, index variables in scope, compute ops elementwise); throws
// InternalError naming the kernel and the instruction.
void verify_kernel(const Kernel& k);

}  // namespace kiln::ir
