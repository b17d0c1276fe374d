// kiln/runtime/pipeline.h — the compile driver: one function from a Graph and a Backend to an
// Executable, whatever asked for it (compile(), an eager op, kiln opt, run_graph).
//
//   compile_graph(graph, backend, options):
//     lowerings     rewrites registered for this backend (register_lowering) inlined
//     decompose     ops above the backend's level expanded (frontend/decompositions.h)
//     dce, cse, fold_constants, simplify_algebra, cse, dce        (passes/simplify.h)
//     backend.lower kernel backends: fusion groups ("fuse", passes/fuse.h) into
//                   Compilation::fusion, then kernels ("build_kernels"), their schedule
//                   ("schedule_tiles" and the backend's: "schedule_loops" on the cpu,
//                   "schedule_launch" on cuda; passes/schedule.h) and memory planning
//                   ("plan_memory", passes/lower.h) into Compilation::plan
//     backend.compile  native code and an Executable, or a status with the compiler's log
//
// Every stage goes through Compilation::stage, which times it, verifies the graph after it
// and keeps its text when asked (explain(), KILN_LOG, KILN_DEBUG_DIR, kiln opt), so the
// walk from a traced graph to generated code reads top to bottom in pipeline.cpp
// (docs/pipeline.md shows one program after every stage).
#pragma once

#include "base/object_store.h"
#include "frontend/tensor.h"
#include "ir/exec_plan.h"
#include "ir/fusion.h"
#include "ir/graph.h"
#include "runtime/backend.h"
#include "passes/donate.h"
#include "passes/lower.h"
#include "passes/schedule.h"
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
  // Kernel backends: the machine the schedule passes target, instead of this one's (tests and
  // docs/pipeline.md, whose plans must not depend on the host).
  std::optional<passes::ScheduleTarget> schedule_target;
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
  // Kernel backends: outputs that replace an input (compile()'s writebacks), which the plan may
  // compute in the input's memory (passes/donate.h).
  std::vector<passes::Donation> donations;
  bool cuda_graphs = false;  // the cuda backend: replay warm calls as CUDA graphs (CompileOptions)
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
  // What each stage produced, in order, when keep_text, keep_stage_texts or dumping. One
  // numbering names every dump: NN_<stage>.<ext>, NN the snapshot's position ("00_traced.kir",
  // "02_decompose.kir", "09_fuse.kir", "12_plan.kk", "13_llvm_ir.ll", ...). Always kept with
  // keep_text: traced, decompose, fuse, plan and the backend's code (llvm_ir and assembly, or
  // cuda_source); every graph and kernel stage with keep_stage_texts or when dumping.
  struct Snapshot {
    std::string name;  // the stage
    std::string file;  // NN_<name>.<ext>
    std::string text;
  };
  std::vector<Snapshot> texts;
  CompileStatus status;

  // Runs a graph stage: times it, verifies the graph, records whether it changed and keeps
  // the graph after it (when kept: see texts).
  bool stage(const std::string& name, const std::function<bool(ir::Graph&)>& fn);
  // Runs a stage over the plan's kernels (the schedule passes): times it, verifies every
  // kernel and keeps the plan after it.
  bool plan_stage(const std::string& name, const std::function<bool(ir::ExecPlan&)>& fn);
  // Runs a stage that is not a rewrite (kernel building, codegen): times it only.
  void timed(const std::string& name, const std::function<void()>& fn);
  // Keeps what stage `name` produced as NN_<name>.<ext> (writing it when dumping); nothing
  // unless keep_text, keep_stage_texts or dumping.
  void snapshot(const std::string& name, const std::string& ext, std::string text);
  const std::string& text(const std::string& name) const;  // the latest of that stage; "" when not kept
  bool keeps_texts() const { return opts.keep_text || opts.keep_stage_texts || !opts.dump_dir.empty(); }
  double total_ms() const;
};

// A kernel-backend's own schedule pass, run by lower_to_kernels after schedule_tiles.
struct PlanPass {
  std::string name;
  std::function<bool(ir::ExecPlan&, const passes::ScheduleTarget&)> run;
};

// The lowering stages every kernel backend runs: "fuse", "build_kernels", "schedule_tiles",
// the backend's own schedule passes, "plan_memory", with the options the driver knows (input
// strides, names, hints, split threshold) filled in over the backend's own `lo`; sets
// Compilation::fusion and ::plan.
void lower_to_kernels(Compilation& c, passes::LowerOptions lo, const passes::ScheduleTarget& target,
                      const std::vector<PlanPass>& backend_passes = {});
// The source of each of the plan's parameters, in the plan's order (InternalError naming
// `backend` for one without a source).
std::vector<ParamSource> plan_param_sources(const Compilation& c, std::string_view backend);

// Per plan step, the function an Extern step of `backend` calls on its device: a registered
// lowering (when the compilation uses them), a custom op's eager implementation, or the
// backend's library kernel for the op (Backend::library_kernel); empty where it has none (a
// Fallback step, run on the reference interpreter). An empty vector when no step has one.
std::vector<ExternKernelFn> plan_step_fns(const Compilation& c, const Backend& backend);
// The same for a plan alone (an exported program's, runtime/export/export.h).
std::vector<ExternKernelFn> plan_step_fns(const ir::ExecPlan& plan, const Backend& backend, bool use_lowerings);

// Runs every stage on `graph` (modified in place) for `backend`. A backend that cannot
// compile the graph says so in Compilation::status; user errors and compiler bugs throw.
Compilation compile_graph(std::shared_ptr<ir::Graph> graph, const Backend& backend, DriverOptions opts);

}  // namespace kiln::rt
