// kiln/runtime/debug/repro_hooks.cpp — repro writing and output verification for compile().
#include "runtime/repro_hooks.h"

#include "base/error.h"
#include "runtime/config.h"
#include "runtime/interpreter/interpreter.h"
#include "runtime/log.h"
#include "runtime/debug/minimize.h"
#include "runtime/debug/repro.h"
#include "runtime/debug/run_graph.h"

#include <fmt/format.h>

namespace kiln::rt {

bool repro_hooks_enabled() { return config().verify || !config().repro_dir.empty(); }

std::string write_failure_repro(std::string_view fn, const ir::Graph& graph, const std::vector<Tensor>& inputs,
                                const std::string& differs) {
  if (config().repro_dir.empty()) return {};
  try {
    const std::string dir = fresh_numbered_dir(config().repro_dir, fn, "KILN_REPRO_DIR");
    if (dir.empty()) return {};
    Repro r;
    r.differs = differs;
    std::string how;
    try {
      FailurePredicate pred =
          backends_differ(graph, inputs, backend_runner("cpu"), backend_runner("interpreter"));
      MinimizeOptions mo;
      mo.max_attempts = kHookMinimizeAttempts;
      mo.max_seconds = kHookMinimizeSeconds;
      MinimizeResult m = minimize(graph, inputs, pred, mo);
      r.graph = m.graph;
      r.inputs = m.inputs;
      how = fmt::format("minimized from {} to {} nodes in {} attempts{}", m.nodes_before, m.nodes_after, m.attempts,
                        m.out_of_budget ? " (budget reached; `kiln minimize` goes on)" : "");
    } catch (const std::exception& e) {
      // Does not reproduce through run_graph (or the minimizer failed): keep it whole.
      try {
        r.graph = std::shared_ptr<ir::Graph>(specialize_graph(graph, inputs).release());
      } catch (const std::exception&) {
        r.graph = nullptr;
      }
      if (!r.graph) internal_fail("repro: the traced graph does not fit its own inputs");
      r.inputs = inputs;
      how = fmt::format("not minimized: {}", e.what());
    }
    write_repro(dir, r);
    KILN_LOG_IF(LogChannel::Repro, "{}: wrote repro {} ({}): {}", fn, dir, how, differs);
    return dir;
  } catch (const std::exception& e) {
    warn(fmt::format("compiled function '{}': could not write a repro: {}", fn, e.what()));
    return {};
  }
}

void verify_outputs(std::string_view fn, const ir::Graph& graph, const std::vector<Tensor>& inputs,
                    const std::vector<Tensor>& outputs) {
  RunResult compiled;
  compiled.outputs = outputs;
  const RunResult ref = run_graph(graph, inputs, "interpreter");
  int k = -1;
  const std::string diff = compare_runs(compiled, ref, {}, &k);
  if (diff.empty()) return;
  const std::string what = fmt::format("compiled (cpu) vs interpreter: {}", diff);
  const std::string dir = write_failure_repro(fn, graph, inputs, what);
  const std::string where = dir.empty() ? std::string(config().repro_dir.empty() ? " (set KILN_REPRO_DIR=dir for a repro)" : "")
                                        : fmt::format(" (repro: {})", dir);
  if (k >= 0)
    fail("compile", "function '{}': output {} differs from the interpreter: {}{}", fn, k,
         diff.substr(diff.find(':') + 2), where);
  fail("compile", "function '{}': the compiled result differs from the interpreter: {}{}", fn, diff, where);
}

}  // namespace kiln::rt
