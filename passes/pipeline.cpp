// kiln/passes/pipeline.cpp — the pass manager and the order of the passes.
#include "passes/pipeline.h"

#include "ir/text.h"
#include "ir/verifier.h"
#include "passes/decompose.h"
#include "passes/simplify.h"

#include <chrono>
#include <functional>

namespace kiln::passes {

namespace {

class PassManager {
 public:
  explicit PassManager(ir::Graph& g, std::vector<PassRecord>& records) : g_(g), records_(records) {}
  // Runs one pass, then verifies the graph; an invalid graph after a pass is a compiler bug.
  bool run(const char* name, const std::function<bool(ir::Graph&)>& pass) {
    const auto t0 = std::chrono::steady_clock::now();
    const bool changed = pass(g_);
    ir::verify(g_);
    records_.push_back({name, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(),
                        changed});
    return changed;
  }

 private:
  ir::Graph& g_;
  std::vector<PassRecord>& records_;
};

}  // namespace

PipelineResult run_pipeline(ir::Graph& g, const PipelineOptions& opts) {
  PipelineResult res;
  PassManager pm(g, res.passes);
  if (opts.keep_text) res.traced_text = ir::print_graph(g);

  pm.run("decompose", decompose);
  if (opts.keep_text) res.decomposed_text = ir::print_graph(g);

  pm.run("dce", dce);
  pm.run("cse", cse);
  pm.run("fold_constants", fold_constants);
  pm.run("simplify_algebra", simplify_algebra);
  pm.run("cse", cse);
  pm.run("dce", dce);
  if (opts.keep_text) res.optimized_text = ir::print_graph(g);

  const auto t0 = std::chrono::steady_clock::now();
  res.plan = lower(g, opts.lower);
  res.passes.push_back(
      {"lower", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(), true});
  return res;
}

}  // namespace kiln::passes
