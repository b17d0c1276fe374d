// kiln/runtime/debug/run_graph.h — run one graph on one backend with given inputs; compare two runs.
//
// The narrowest way to execute an ir::Graph outside compile(): "interpreter" walks the graph
// with rt::interpret (the reference, on the graph as given); any other registered backend
// ("cpu", a user's) runs the compile driver (runtime/pipeline.h) and its executable once —
// the same steps compile() takes for a cache miss, without tracing, guards or caching. Symbolic graphs are first
// specialized to the inputs' sizes (ir::rebuild_graph). Failures are returned, not thrown,
// classified as a user error (kiln::Error: the graph or inputs are wrong) or a non-user one
// (InternalError or anything else: a backend bug), which is what a minimizer looks for.
// The repro tools (kiln run/check/minimize), the minimizer and compile()'s KILN_VERIFY and
// KILN_REPRO_DIR hooks use it.
#pragma once

#include "frontend/tensor.h"
#include "ir/graph.h"

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::rt {

struct RunResult {
  enum class Status { Ok, UserError, InternalError };
  Status status = Status::Ok;
  std::vector<Tensor> outputs;  // when Ok
  std::string message;          // the exception's text otherwise

  bool ok() const { return status == Status::Ok; }
};

// Runs `g` (not modified) on `backend` (a registered name). Never throws for failures of
// the run itself; an unknown backend name is a kiln::Error listing the registered ones.
RunResult run_graph(const ir::Graph& g, const std::vector<Tensor>& inputs, std::string_view backend);

// How a backend runs a graph: run_graph bound to a name, or a custom runner (tests inject
// a deliberately wrong one to exercise the minimizer).
using GraphRunner = std::function<RunResult(const ir::Graph&, const std::vector<Tensor>&)>;
GraphRunner backend_runner(std::string backend);

// A copy of `g` with its input types made concrete from `inputs` (symbols bound and
// substituted). Throws kiln::Error when the inputs do not fit the graph.
std::unique_ptr<ir::Graph> specialize_graph(const ir::Graph& g, const std::vector<Tensor>& inputs);

struct Tolerance {
  double rtol = -1, atol = -1;  // < 0: by dtype (f64 1e-7/1e-7, f32 1e-4/1e-5, f16 1e-2/1e-3, bf16 3e-2/1e-2)
};

// Compares two runs of the same graph: "" when they agree (both fail the same way — user
// error on both sides, or both internal — or every output has equal dtype, sizes and values
// within tolerance; NaN equals NaN, integers and bools exactly), else one line saying what
// differs ("output 1: 3 of 64 elements differ, max abs diff 0.5 at index 7 (1.5 vs 2)").
// `first_diff_output` (optional) receives the position of the first differing output, or -1
// when the difference is a failure.
std::string compare_runs(const RunResult& a, const RunResult& b, const Tolerance& tol = {},
                         int* first_diff_output = nullptr);

}  // namespace kiln::rt
