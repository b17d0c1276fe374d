// kiln/passes/schedule_loops.cpp — schedule_loops: how a CPU backend vectorizes each kernel.
//
//   vector_bits   the target's widest vector register. LLVM's tuning for Intel server CPUs
//                 prefers 256 bits even on AVX-512, which halves the throughput of
//                 compute-bound loops (inline math) and costs memory-bound ones nothing: an
//                 AVX-512 target asks for 512.
//   interleave    four independent vector accumulators for a reduce stage that is a max/min
//                 or an f64 sum of f64 values: they hide the latency of the combine (four cycles
//                 for a max or an f64 add). A max/min gives the same result in any order (but
//                 for the sign of a zero maximum); such an f64 sum is `reassoc`, its order the
//                 vectorizer's (f64 sums keep this: partials of f64 measured slower on the
//                 norms' statistics, and their last bits may differ between vector widths).
//   lanes         an f64 sum whose body computes in f32 (a norm's statistics of f32 data,
//                 widened per element) gets a full register of f32 lanes, so that the body runs
//                 at full width and each vector adds into two of f64.
//   partials      a float sum of f32 (f16, bf16) values into its f64 accumulator folds them
//                 into a fixed layout of partial sums (ir/kernel.h KVectorize::partials): 64
//                 of them (fewer for a shorter constant row) in f32, blocks of 64 x
//                 kPartialRows values, widened and combined pairwise in f64 into the
//                 accumulator. The order of every addition is fixed, so hosts of any vector
//                 width agree bit for bit, and an f32 body adds at full f32 width with no
//                 conversion per element (docs/decisions/numerics-and-semantics.md, "Float
//                 sums in 64 f32 partials").
//   masked_tail   the same reductions run a main loop over a multiple of 64 iterations and a
//                 masked tail, one vector per iteration. Without it the vectorizer leaves up to
//                 lanes x interleave - 1 iterations (63 for f32 on AVX-512) to a scalar loop: a
//                 1000-column cross_entropy spent a third of its time on its last 40 columns.
//                 (A sum's partial blocks end the same way: whole chunks of `partials`, then one
//                 masked chunk.)
//   tile_rows     a tiled outer reduction adds four rows per pass over its tile: each
//                 accumulator is loaded and stored once per four rows, and the rows' values
//                 combine pairwise first (a float sum's in the values' own dtype, f32 for an f32
//                 body, widened once per group). Its reduce stage runs on the tile loops, so it
//                 gets no vectorize fields.
#include "passes/schedule.h"

#include <algorithm>
#include <optional>

namespace kiln::passes {

namespace {

constexpr int kInterleave = 4;
constexpr int64_t kTileRows = 4;
constexpr int kPartials = 64;

bool float_sum(const ir::KStage& st) {
  return st.kind == ir::StageKind::Reduce && st.reduce_op == ir::ReductionOp::sum && is_floating_point(st.acc_dtype);
}

// Whether a float sum's stage yields values narrower than its accumulator (f32 into f64).
bool narrow_yield(const ir::KStage& st) {
  const ir::KInst* y = ir::body_inst(st, st.yield);
  return y && element_size(y->dtype) < element_size(st.acc_dtype);
}

// The partial sums of a float sum's row: 64, or the power of two at or above a shorter
// constant row's length (at least 2).
int partials_for(const ir::Expr& extent) {
  const std::optional<int64_t> n = extent.maybe_const();
  if (!n || *n >= kPartials) return kPartials;
  int p = 2;
  while (p < *n) p *= 2;
  return p;
}

ir::KVectorize vectorize_stage(const ir::KStage& st, const ScheduleTarget& t) {
  ir::KVectorize v;
  if (st.kind != ir::StageKind::Reduce) return v;
  if (float_sum(st) && narrow_yield(st) && !st.extents.empty()) {
    v.partials = partials_for(st.extents.back());
    v.masked_tail = true;
    return v;
  }
  const bool minmax = st.reduce_op == ir::ReductionOp::amax || st.reduce_op == ir::ReductionOp::amin;
  if (!minmax && !float_sum(st)) return v;
  v.interleave = kInterleave;
  v.masked_tail = true;
  // An f64 sum of values computed in f32 (a norm's shifted statistics): f32 lanes.
  const bool narrow_body = std::any_of(st.body.begin(), st.body.end(), [](const ir::KInst& in) {
    return in.dtype == ScalarType::Float || in.dtype == ScalarType::Half || in.dtype == ScalarType::BFloat16;
  });
  if (float_sum(st) && st.acc_dtype == ScalarType::Double && narrow_body && t.vector_bits >= 256)
    v.lanes = t.vector_bits / 32;
  return v;
}

}  // namespace

bool schedule_loops(ir::Kernel& k, const ScheduleTarget& t) {
  const ir::KSchedule before = k.schedule;
  bool changed = false;
  k.schedule.vector_bits = t.vector_bits == 512 ? 512 : 0;
  k.schedule.tile_rows = k.schedule.outer_reduction_tile > 0 ? kTileRows : 0;
  for (ir::KStage& st : k.stages) {
    // A tiled reduction runs its reduce stage on the tile loops (tile_rows), not as one loop.
    const ir::KVectorize v = k.schedule.outer_reduction_tile > 0 ? ir::KVectorize{} : vectorize_stage(st, t);
    changed |= !(v == st.vectorize);
    st.vectorize = v;
  }
  return changed || !(before == k.schedule);
}

bool schedule_loops(ir::ExecPlan& plan, const ScheduleTarget& t) { return for_each_kernel(plan, t, schedule_loops); }

}  // namespace kiln::passes
