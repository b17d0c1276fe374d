// kiln/runtime/debug/minimize.h — shrink a failing graph and its inputs to a minimal repro.
//
// Greedy delta debugging over graphs, deterministic, until a fixed point or a budget:
//   1. keep one output (the first whose graph alone still fails);
//   2. drop nodes: replace a node's output by one of the node's inputs of the same type, or
//      by a fresh graph input holding the value the reference interpreter computed for it
//      (so everything downstream sees the same numbers), or return a node's input in place
//      of the output it makes; dead nodes and inputs go away;
//   3. shrink input shapes: a size that occurs in several inputs shrinks everywhere at once
//      (broadcasting partners), then each dim on its own; to 1, else to half. Inputs are
//      sliced, keeping their leading values. Candidates whose graph no longer type-checks
//      (shape-dependent attributes) are skipped;
//   4. simplify input values: all zeros, all ones, small integers.
// A candidate is kept when `still_fails` says so; any exception from it counts as "no".
#pragma once

#include "frontend/tensor.h"
#include "ir/graph.h"
#include "runtime/debug/run_graph.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kiln::rt {

// True when the candidate graph, run with these inputs, still shows the failure.
using FailurePredicate = std::function<bool(const ir::Graph&, const std::vector<Tensor>&)>;

struct MinimizeOptions {
  int max_attempts = 5000;    // candidate evaluations (calls of the predicate)
  double max_seconds = 120;   // wall clock
};

struct MinimizeResult {
  std::shared_ptr<ir::Graph> graph;
  std::vector<Tensor> inputs;
  int attempts = 0;         // predicate calls
  int accepted = 0;         // candidates kept
  bool out_of_budget = false;
  size_t nodes_before = 0, nodes_after = 0;
};

// Minimizes (g, inputs). Throws kiln::Error "[minimize] ..." when the original does not fail.
MinimizeResult minimize(const ir::Graph& g, const std::vector<Tensor>& inputs, const FailurePredicate& still_fails,
                        const MinimizeOptions& opts = {});

// How two runs differ, coarsely: what a minimization must preserve so it does not wander off
// to another bug.
enum class DiffKind { None, Values, AFails, BFails };
DiffKind classify(const RunResult& a, const RunResult& b, const Tolerance& tol = {});

// The predicate "runner a and runner b still differ the way they do on (g, inputs)": values
// differ (both run), or a fails (with the same status: user or internal error) while b runs
// or fails only with a user error (or vice versa).
// Throws kiln::Error when they agree on (g, inputs).
FailurePredicate backends_differ(const ir::Graph& g, const std::vector<Tensor>& inputs, GraphRunner a, GraphRunner b,
                                 Tolerance tol = {});

}  // namespace kiln::rt
