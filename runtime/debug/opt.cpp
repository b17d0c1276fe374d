// kiln/runtime/debug/opt.cpp — opt_report: run the driver keeping every stage's text, then print.
#include "runtime/debug/opt.h"

#include "base/error.h"
#include "ir/shape_env.h"
#include "ir/text.h"
#include "ir/text_lexer.h"
#include "runtime/backend.h"
#include "runtime/pipeline.h"

#include <fmt/format.h>

#include <algorithm>

namespace kiln::rt {

ir::OpLevel parse_level(std::string_view name) {
  if (name == "core") return ir::OpLevel::Core;
  if (name == "prim") return ir::OpLevel::Prim;
  if (name == "composite") return ir::OpLevel::Composite;
  fail("opt", "unknown level '{}'; expected core, prim or composite", name);
}

namespace {

// The size symbols of the graph's signature (its tokens up to the first '{'), in order of
// first appearance: s0, s1, ... name input sizes.
std::vector<std::string> signature_symbols(std::string_view text) {
  std::vector<std::string> order;
  ir::text::Lexer lex(text);
  for (ir::text::Token t = lex.next(); t.kind != ir::text::Tok::End && t.kind != ir::text::Tok::LBrace; t = lex.next()) {
    const bool symbol = t.kind == ir::text::Tok::Ident && t.text.size() > 1 && t.text[0] == 's' &&
                        t.text.find_first_not_of("0123456789", 1) == std::string::npos;
    if (symbol && std::find(order.begin(), order.end(), t.text) == order.end()) order.push_back(t.text);
  }
  return order;
}

}  // namespace

std::string opt_report(std::string_view graph_text, const OptOptions& o) {
  // Decompositions trace on symbolic sizes under a ShapeEnv, and so does parsing an op whose
  // result type is its decomposition's (attention). A dump declares its trace's symbols, hints
  // and guards (ir/text.h); otherwise one symbol per input symbol, in order of first appearance,
  // with made-up hints (performance choices only), made before parsing.
  ir::ShapeEnv env;
  ir::ShapeEnvScope scope(&env);
  const bool declared = ir::declares_symbols(graph_text);
  const std::vector<std::string> order = declared ? std::vector<std::string>{} : signature_symbols(graph_text);
  for (size_t k = 0; k < order.size(); ++k) {
    const ir::Expr s = env.create_symbol(static_cast<int64_t>(8 + k), order[k], /*duck=*/false);
    if (s.symbol_name() != order[k])
      fail("opt", "input size symbols must be named s0, s1, ... in order of first appearance; found {} where {} was expected",
           order[k], s.symbol_name());
  }
  std::shared_ptr<ir::Graph> g = ir::parse_graph(graph_text, declared ? &env : nullptr);
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
  out += "// ---- input ----\n" + ir::print_graph(*g, &env);
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
