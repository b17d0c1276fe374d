// kiln/test/test_support/plan.h — the plan a backend makes for a traced function.
//
// plan_of(fn, inputs) traces fn on the inputs and runs the driver's passes for the "cpu" backend
// (or the one named) up to, not including, code generation: the steps, kernels and buffers a
// test can assert on, on any machine.
#pragma once

#include "frontend/tracer.h"
#include "runtime/pipeline.h"

#include <functional>
#include <vector>

namespace kiln::test {

inline ir::ExecPlan plan_of(const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn,
                            const std::vector<Tensor>& in, const char* backend = "cpu") {
  TracedProgram p = trace(fn, in);
  rt::DriverOptions o;
  o.name = "plan";
  o.stop_before_compile = true;
  return rt::compile_graph(p.graph, *rt::find_backend(backend), o).plan;
}

}  // namespace kiln::test
