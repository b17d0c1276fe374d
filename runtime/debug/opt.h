// kiln/runtime/debug/opt.h — `kiln opt`: the compile driver on a graph from text, every stage printed.
//
//   kiln opt FILE.kir [--backend cpu] [--level core|prim] [--passes decompose,cse,...] [--emit-code]
//
// mlir-opt style: the input graph, then "// ---- after <stage> ----" and the graph after each
// graph stage (lowerings, decompose, dce, cse, fold_constants, simplify_algebra, ...), then,
// for kernel backends, the plan with its kernels; --emit-code compiles it too and prints the
// generated code (LLVM IR for cpu). --passes runs only the graph stages named; --level
// decomposes to that level instead of the backend's. Size symbols of the inputs are bound to
// the first input dim that is that symbol.
#pragma once

#include "ir/op.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::rt {

struct OptOptions {
  std::string backend = "cpu";
  std::optional<ir::OpLevel> level;
  std::vector<std::string> passes;  // empty: every graph stage
  bool emit_code = false;
};

// Throws kiln::Error for bad text or options (an unknown level names the valid ones).
std::string opt_report(std::string_view graph_text, const OptOptions& o);
ir::OpLevel parse_level(std::string_view name);

}  // namespace kiln::rt
