// kiln/passes/schedule_loops.cpp — schedule_loops: how a CPU backend vectorizes each kernel.
//
//   vector_bits   the target's widest vector register. LLVM's tuning for Intel server CPUs
//                 prefers 256 bits even on AVX-512, which halves the throughput of
//                 compute-bound loops (inline math) and costs memory-bound ones nothing: an
//                 AVX-512 target asks for 512.
//   interleave    four independent vector accumulators for a reduce stage that is a float sum
//                 or a max/min: they hide the latency of the combine (four cycles for an add or
//                 a max). A max/min gives the same result in any order (but for the sign of a
//                 zero maximum); a float sum accumulates in f64 with `reassoc`, whose order the
//                 vectorizer chooses anyway.
//   lanes         a float sum of f32 (f16, bf16) values accumulates in f64, which would size the
//                 whole loop to f64 lanes: it is given a full register of f32 lanes, so that the
//                 body (an exp, say) runs at full width and each vector adds into two of f64.
//   masked_tail   the same reductions run a main loop over a multiple of 64 iterations and a
//                 masked tail, one vector per iteration. Without it the vectorizer leaves up to
//                 lanes x interleave - 1 iterations (63 for f32 on AVX-512) to a scalar loop: a
//                 1000-column cross_entropy spent a third of its time on its last 40 columns.
//   tile_rows     a tiled outer reduction adds four rows per pass over its tile: each
//                 accumulator is loaded and stored once per four rows, and the rows' values
//                 combine pairwise first. Its reduce stage runs on the tile loops, so it gets no
//                 vectorize fields.
#include "passes/schedule.h"

#include <algorithm>

namespace kiln::passes {

namespace {

constexpr int kInterleave = 4;
constexpr int64_t kTileRows = 4;

ir::KVectorize vectorize_stage(const ir::KStage& st, const ScheduleTarget& t) {
  ir::KVectorize v;
  if (st.kind != ir::StageKind::Reduce) return v;
  const bool minmax = st.reduce_op == ir::ReductionOp::amax || st.reduce_op == ir::ReductionOp::amin;
  const bool float_sum = st.reduce_op == ir::ReductionOp::sum && is_floating_point(st.acc_dtype);
  if (!minmax && !float_sum) return v;
  v.interleave = kInterleave;
  v.masked_tail = true;
  const bool narrow_body = std::any_of(st.body.begin(), st.body.end(), [](const ir::KInst& in) {
    return in.dtype == ScalarType::Float || in.dtype == ScalarType::Half || in.dtype == ScalarType::BFloat16;
  });
  if (float_sum && st.acc_dtype == ScalarType::Double && narrow_body && t.vector_bits >= 256)
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
