// kiln/passes/schedule.h — the schedule passes: each sets one group of fields of an
// ir::Kernel's schedule (ir/kernel.h KSchedule, KVectorize), so that a backend only prints.
//
// Before: a plan's kernels as lowering built them (passes/lower.h). After: the same kernels,
// same instructions, with their schedule chosen for a target:
//
//   schedule_tiles    (every kernel backend)  the column tile of an outer reduction: as many
//                     accumulators as fill half the L1 data cache (at least 64);
//   schedule_loops    (the cpu backend)       per reduce stage, independent vector accumulators,
//                     vector lanes and a masked tail; a tiled reduction's row grouping; the
//                     vector register width (512 bits on AVX-512 hosts);
//   schedule_launch   (the cuda backend)      thread-per-point or block-per-point, threads per
//                     block and the multiprocessor count the grid is sized for.
//
// Each pass is a stage of the compile driver (runtime/pipeline.cpp), dumped as .kk, and has
// text tests (test/schedule_corpus). A kernel built without them (a test's hand-written one)
// runs with the compiler's own choices on the cpu; the cuda emitter requires schedule_launch.
#pragma once

#include "ir/exec_plan.h"
#include "ir/kernel.h"

#include <cstdint>

namespace kiln::passes {

// What the schedule passes know of the machine.
struct ScheduleTarget {
  // CPU: the L1 data cache, and the widest vector register generated code may use (128: SSE,
  // 256: AVX2, 512: AVX-512).
  int64_t l1d_bytes = 32 << 10;
  int vector_bits = 256;
  // GPU: multiprocessors (0: unknown, read by the launcher from its device).
  int64_t sms = 0;
  // GPU row kernels (block_per_point): the block width when the work is constant (0: about four
  // iterations per thread, up to 1024), and whether loads that several stages repeat may be kept
  // in registers (KILN_CUDA_ROW_THREADS, KILN_CUDA_ROW_CACHE: tuning and benchmarking).
  int64_t row_threads = 0;
  bool row_cache = true;
};

// Runs a one-kernel pass over every kernel step of the plan; whether it changed any.
bool for_each_kernel(ir::ExecPlan& plan, const ScheduleTarget& t, bool (*pass)(ir::Kernel&, const ScheduleTarget&));

// Every kernel of the plan, or one kernel. Each returns whether it changed anything.
bool schedule_tiles(ir::ExecPlan& plan, const ScheduleTarget& t);
bool schedule_tiles(ir::Kernel& k, const ScheduleTarget& t);
bool schedule_loops(ir::ExecPlan& plan, const ScheduleTarget& t);
bool schedule_loops(ir::Kernel& k, const ScheduleTarget& t);
bool schedule_launch(ir::ExecPlan& plan, const ScheduleTarget& t);
bool schedule_launch(ir::Kernel& k, const ScheduleTarget& t);

}  // namespace kiln::passes
