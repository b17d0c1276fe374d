// kiln/passes/schedule_tiles.cpp — schedule_tiles: the column tile of every outer reduction.
//
// A lone reduction over outer dims (lowering marks it `outer_reduction`: a column sum, or the
// column partials of a split full reduction) reads the input row by row when the backend runs
// its reduce loop outside a tile of grid points, adding each row's tile into the tile's
// accumulators. The accumulators must stay in the fastest cache: the tile holds as many as fit
// in half the L1 data cache, at least 64.
#include "passes/schedule.h"

#include <algorithm>

namespace kiln::passes {

bool schedule_tiles(ir::Kernel& k, const ScheduleTarget& t) {
  if (!k.schedule.outer_reduction) return false;
  const int64_t acc_bytes = static_cast<int64_t>(element_size(k.stages.front().acc_dtype));
  const int64_t tile = std::max<int64_t>(64, t.l1d_bytes / 2 / acc_bytes);
  if (k.schedule.outer_reduction_tile == tile) return false;
  k.schedule.outer_reduction_tile = tile;
  return true;
}

bool schedule_tiles(ir::ExecPlan& plan, const ScheduleTarget& t) { return for_each_kernel(plan, t, schedule_tiles); }

}  // namespace kiln::passes
