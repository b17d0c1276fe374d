// kiln/runtime/repro_hooks.h — what compile() does under KILN_VERIFY and KILN_REPRO_DIR.
//
// compile() keeps a copy of each traced graph when either variable is set (repro_hooks_enabled)
// and calls these with the graph's inputs (the arguments' tensors, then the lifted ones):
//  - a cpu compilation or run that fails with a non-user error: write_failure_repro, then
//    the error is raised again with the repro's directory appended;
//  - KILN_VERIFY=1: verify_outputs after every cpu call — the reference interpreter runs the
//    traced graph on the same inputs; on a mismatch a repro is written (KILN_REPRO_DIR) and a
//    kiln::Error names the function, the output and the repro.
// Repros are minimized (runtime/debug/minimize.h) with cpu vs interpreter as the predicate, within
// a small budget, so a failing test costs seconds, not minutes; `kiln minimize DIR` goes on.
//
// compile() sits below the debugging tools: it calls these declarations, which
// runtime/debug/repro_hooks.cpp defines (with the repro writer, the minimizer and run_graph
// behind them).
#pragma once

#include "frontend/tensor.h"
#include "ir/graph.h"

#include <string>
#include <string_view>
#include <vector>

namespace kiln::rt {

// KILN_VERIFY or KILN_REPRO_DIR is set.
bool repro_hooks_enabled();

// Budget of the minimization done inside compile().
inline constexpr int kHookMinimizeAttempts = 300;
inline constexpr double kHookMinimizeSeconds = 3.0;

// Writes a repro of `graph` with `inputs` (what differed: `differs`) into a fresh
// <KILN_REPRO_DIR>/<fn>_<n>/, minimized when the failure reproduces through rt::run_graph.
// Returns the directory, or "" when KILN_REPRO_DIR is unset or writing failed (a warning).
// Never throws.
std::string write_failure_repro(std::string_view fn, const ir::Graph& graph, const std::vector<Tensor>& inputs,
                                const std::string& differs);

// KILN_VERIFY: compares `outputs` (the compiled function's, first graph.outputs().size() of
// them) with the interpreter's on `graph`; throws kiln::Error
// "[compile] function 'fn': output k differs from the interpreter: ... (repro: DIR)".
void verify_outputs(std::string_view fn, const ir::Graph& graph, const std::vector<Tensor>& inputs,
                    const std::vector<Tensor>& outputs);

}  // namespace kiln::rt
