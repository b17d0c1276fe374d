// kiln/passes/pipeline.h — the compiler pipeline, readable top to bottom.
//
//   traced graph
//     -> functionalize    (nothing to do: tracing records functional values; in-place ops
//                          are rebound or refused by the tracer, views are view prims)
//     -> decompose        composites -> prims                      (passes/decompose.h)
//     -> dce, cse, fold_constants, simplify_algebra, dce            (passes/simplify.h)
//     -> lower            fusion into ir::Kernels + memory planning (passes/lower.h)
//
// The pass manager verifies the graph after every pass, times each pass and keeps the text
// of every stage when asked (explain(), KILN_DEBUG_DIR, KILN_LOG=graph/decomp/fusion).
#pragma once

#include "ir/graph.h"
#include "passes/lower.h"
#include "passes/plan.h"

#include <string>
#include <vector>

namespace kiln::passes {

struct PassRecord {
  std::string name;
  double ms = 0;
  bool changed = false;
};

struct PipelineOptions {
  LowerOptions lower;
  bool keep_text = false;  // record the graph text after the main stages
};

struct PipelineResult {
  ExecPlan plan;
  std::vector<PassRecord> passes;
  std::string traced_text, decomposed_text, optimized_text;  // when keep_text
};

// Runs every pass on `g` (modified in place) and lowers it.
PipelineResult run_pipeline(ir::Graph& g, const PipelineOptions& opts);

}  // namespace kiln::passes
