// kiln/passes/schedule.cpp — what the schedule passes share (passes/schedule.h).
#include "passes/schedule.h"

namespace kiln::passes {

bool for_each_kernel(ir::ExecPlan& plan, const ScheduleTarget& t, bool (*pass)(ir::Kernel&, const ScheduleTarget&)) {
  bool changed = false;
  for (ir::PlanStep& st : plan.steps)
    if (st.kind == ir::StepKind::Kernel) changed |= pass(st.kernel, t);
  return changed;
}

}  // namespace kiln::passes
