// kiln/runtime/debug/opt.cpp — opt_report: run the driver keeping every stage's text, then print.
#include "runtime/debug/opt.h"

#include "base/error.h"
#include "ir/shape_env.h"
#include "ir/text.h"
#include "runtime/backend.h"
#include "runtime/pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace kiln::rt {

ir::OpLevel parse_level(std::string_view name) {
  if (name == "core") return ir::OpLevel::Core;
  if (name == "prim") return ir::OpLevel::Prim;
  if (name == "composite") return ir::OpLevel::Composite;
  fail("opt", "unknown level '{}'; expected core, prim or composite", name);
}

namespace {

// The size symbols of the graph's signature (its text up to the first '{', comments left
// out), in order of first appearance: s0, s1, ... name input sizes.
std::vector<std::string> signature_symbols(std::string_view text) {
  std::vector<std::string> order;
  std::string head;
  for (size_t at = 0; at < text.size() && head.find('{') == std::string::npos;) {
    const size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    const size_t first = line.find_first_not_of(" \t");
    if (first != std::string_view::npos && line[first] != '#') head += std::string(line.substr(0, line.find('#'))) + "\n";
    at = end + 1;
  }
  head = head.substr(0, head.find('{'));
  for (size_t i = 0; i < head.size(); ++i) {
    if (head[i] != 's' || (i > 0 && (std::isalnum(static_cast<unsigned char>(head[i - 1])) || head[i - 1] == '_'))) continue;
    size_t j = i + 1;
    while (j < head.size() && std::isdigit(static_cast<unsigned char>(head[j]))) ++j;
    if (j == i + 1 || (j < head.size() && (std::isalnum(static_cast<unsigned char>(head[j])) || head[j] == '_'))) continue;
    const std::string name(head.substr(i, j - i));
    if (std::find(order.begin(), order.end(), name) == order.end()) order.push_back(name);
  }
  return order;
}

}  // namespace

std::string opt_report(std::string_view graph_text, const OptOptions& o) {
  // Decompositions trace on symbolic sizes under a ShapeEnv, and so does parsing an op whose
  // result type is its decomposition's (attention): one symbol per input symbol, in order of
  // first appearance, with made-up hints (performance choices only), made before parsing.
  ir::ShapeEnv env;
  ir::ShapeEnvScope scope(&env);
  const std::vector<std::string> order = signature_symbols(graph_text);
  for (size_t k = 0; k < order.size(); ++k) {
    const ir::Expr s = env.create_symbol(static_cast<int64_t>(8 + k), order[k], /*duck=*/false);
    if (s.symbol_name() != order[k])
      fail("opt", "input size symbols must be named s0, s1, ... in order of first appearance; found {} where {} was expected",
           order[k], s.symbol_name());
  }
  std::shared_ptr<ir::Graph> g = ir::parse_graph(graph_text);
  const std::shared_ptr<const Backend> backend = find_backend(o.backend, "opt");
  if (!backend->traces()) fail("opt", "backend '{}' compiles nothing", o.backend);
  DriverOptions opts;
  opts.name = "opt";
  opts.keep_text = true;
  opts.keep_stage_texts = true;
  opts.want_code = o.emit_code;
  opts.level = o.level;
  opts.only_stages = o.passes;
  opts.params = params_from_inputs(*g);
  opts.stop_before_compile = !o.emit_code;
  opts.hints = env.hints();
  std::string out = fmt::format("// kiln opt --backend {} --level {}\n", backend->name(),
                                ir::level_name(o.level.value_or(backend->level())));
  out += "// ---- input ----\n" + ir::print_graph(*g);
  Compilation c = compile_graph(g, *backend, std::move(opts));
  // Every snapshot in order, as the debug dump names it. Kernel names carry a per-process
  // counter; they print as k0, k1, ... for stable output.
  for (const Compilation::Snapshot& s : c.texts) {
    if (s.name == "traced") continue;  // the input, printed above
    std::string text = s.text;
    if (s.file.size() > 3 && s.file.compare(s.file.size() - 3, 3, ".kk") == 0)
      for (size_t at; (at = text.find(c.prefix)) != std::string::npos;) text.replace(at, c.prefix.size(), "k");
    std::string title = "after " + s.name;
    if (s.name == "fuse" && c.has_fusion) title = "fusion groups (the steps computing each node)";
    if (s.name == "plan") title = "plan and kernels";
    out += fmt::format("// ---- {} ---- {}\n{}", title, s.file, text);
  }
  if (o.emit_code && !c.status.ok()) out += fmt::format("// ---- compile failed ----\n// {}\n{}", c.status.error, c.status.log);
  return out;
}

}  // namespace kiln::rt
