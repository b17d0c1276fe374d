// kiln/runtime/driver.h — the compile driver: one function from a Graph and a Backend to an
// Executable, whatever asked for it (compile(), an eager op, kiln opt, run_graph).
//
//   compile_graph(graph, backend, options):
//     lowerings     rewrites registered for this backend (register_lowering) inlined
//     decompose     ops above the backend's level expanded (frontend/decompositions.h)
//     dce, cse, fold_constants, simplify_algebra, cse, dce        (passes/simplify.h)
//     backend.lower kernel backends: fusion groups ("fuse", passes/fuse.h) into
//                   Compilation::fusion, then kernels ("build_kernels") and memory
//                   planning ("plan_memory", passes/lower.h) into Compilation::plan
//     backend.compile  native code and an Executable, or a status with the compiler's log
//
// Every stage goes through Compilation::stage, which times it, verifies the graph after it
// and keeps its text when asked (explain(), KILN_LOG, KILN_DEBUG_DIR, kiln opt), so the
// walk from a traced graph to generated code reads top to bottom in driver.cpp.
#pragma once

#include "base/object_store.h"
#include "frontend/tensor.h"
#include "ir/exec_plan.h"
#include "ir/fusion.h"
#include "ir/graph.h"
#include "runtime/backend.h"
#include "passes/lower.h"
#include "runtime/program.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::rt {

struct DriverOptions {
  std::string name = "graph";  // logs, dumps, kernel names (made unique per compilation)
  Device device;  // where a device backend's code runs (cuda:N); compile() takes the inputs'
  // One per graph input: what a user backend receives as example inputs (may be empty for
  // backends that need none: cpu and interpreter read only types).
  std::vector<Tensor> example_inputs;
  // Strides (elements) of each graph input as it will be passed; empty: contiguous.
  std::vector<std::vector<ir::Expr>> input_strides;
  // Size symbols of the graph and where each call reads them (typed records, set by whoever
  // created the symbols: compile() from its ShapeEnv, eager for its shape-generic kernels).
  std::map<std::string, ParamSource> params;
  std::map<std::string, int64_t> hints;  // symbol values at trace time: performance choices only
  int64_t split_reduction_min = -1;      // kernel backends: work below which a full reduction
                                         // is not split (-1: the backend's default; tests)
  bool keep_text = false;  // keep each stage's text in Compilation::texts
  bool want_code = false;  // keep generated code (LLVM IR, assembly)
  std::string dump_dir;    // write every stage into this directory (KILN_DEBUG_DIR)
  std::optional<ir::OpLevel> level;  // decompose to this level instead of the backend's
  bool stop_before_compile = false;  // kiln opt without codegen, plan tests
  bool keep_stage_texts = false;     // kiln opt: the graph after every graph stage ("after dce")
  // Apply registered lowerings (register_lowering). Eager kernels do not, so that a user's
  // extern call may itself run the eager op it replaces.
  bool use_lowerings = true;
  std::vector<std::string> only_stages;  // kiln opt --passes: run only these graph stages (graph_stage_names)
};

// The graph stages compile_graph runs, by the names only_stages takes, in order of first run.
const std::vector<std::string>& graph_stage_names();

// Size symbols of g's inputs bound to the first input dim that is exactly that symbol (for
// graphs read from text, whose symbols no trace recorded).
std::map<std::string, ParamSource> params_from_inputs(const ir::Graph& g);

struct StageRecord {
  std::string name;
  double ms = 0;
  bool changed = true;
};

// The state of one compilation, handed from stage to stage.
struct Compilation {
  std::shared_ptr<ir::Graph> graph;
  const Backend* backend = nullptr;
  DriverOptions opts;
  std::string prefix;  // unique kernel-name prefix of this compilation
  ir::Fusion fusion;   // kernel backends: the fusion groups ("fuse" stage)
  bool has_fusion = false;
  ir::ExecPlan plan;   // kernel backends: kernels and calls ("build_kernels", "plan_memory")
  bool has_plan = false;
  std::vector<StageRecord> stages;
  // Kernel backends: where the generated code came from (base/object_store.h).
  std::optional<CodeSource> code_source;
  // Stage texts when keep_text or dumping: "traced", "decomposed", "optimized", "plan",
  // plus code the backend produced ("kernels.ll", "kernels.s"), in order.
  std::vector<std::pair<std::string, std::string>> texts;
  CompileStatus status;

  // Runs a graph stage: times it, verifies the graph, records whether it changed and, when
  // dumping, the graph after it as passes/NN_<name>.kir.
  bool stage(const std::string& name, const std::function<bool(ir::Graph&)>& fn);
  // Runs a stage that is not a graph rewrite (kernel building, codegen): times it only.
  void timed(const std::string& name, const std::function<void()>& fn);
  void keep(const std::string& label, std::string text);  // when keep_text or dumping
  const std::string& text(const std::string& label) const;  // "" when not kept
  double total_ms() const;
};

// The lowering stages every kernel backend runs ("fuse", "build_kernels", "plan_memory"),
// with the options the driver knows (input strides, names, hints, split threshold) filled in
// over the backend's own `lo`; sets Compilation::fusion and ::plan.
void lower_to_kernels(Compilation& c, passes::LowerOptions lo);
// The source of each of the plan's parameters, in the plan's order (InternalError naming
// `backend` for one without a source).
std::vector<ParamSource> plan_param_sources(const Compilation& c, std::string_view backend);

// Per plan step, the function an Extern step of `backend` calls: a registered lowering (when
// the compilation uses them) or a custom op's eager implementation; empty for kiln's own
// library steps. An empty vector when no step has one.
std::vector<ExternKernelFn> plan_extern_fns(const Compilation& c, std::string_view backend);

// Runs every stage on `graph` (modified in place) for `backend`. A backend that cannot
// compile the graph says so in Compilation::status; user errors and compiler bugs throw.
Compilation compile_graph(std::shared_ptr<ir::Graph> graph, const Backend& backend, DriverOptions opts);

}  // namespace kiln::rt
