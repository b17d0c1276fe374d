// kiln/ir/graph_dot.cpp — Graphviz rendering of a Graph.
#include "ir/graph_dot.h"

#include "ir/text.h"

#include <fmt/format.h>

#include <unordered_map>

namespace kiln::ir {

namespace {

// Escapes a label for a double-quoted dot string.
std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string graph_dot(const Graph& g, const std::string& title) {
  const ValueNames names(g);
  std::string out = fmt::format("digraph \"{}\" {{\n  rankdir=TB;\n  node [fontname=\"monospace\", fontsize=10];\n", esc(title));
  std::unordered_map<const Value*, std::string> source;  // value -> dot node id producing it
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value* v = g.inputs()[i];
    const std::string id = fmt::format("in{}", i);
    out += fmt::format("  {} [shape=ellipse, label=\"{} : {}\"];\n", id, esc(names(v)), esc(v->type().str()));
    source[v] = id;
  }
  size_t k = 0;
  for (const Node* n : g.nodes()) {
    const std::string id = fmt::format("n{}", k++);
    std::string types;
    for (const Value* o : n->outputs()) types += (types.empty() ? "" : ", ") + names(o) + " : " + o->type().str();
    std::string attrs;
    const OpSchema& schema = n->info().schema;
    for (size_t a = 0; a < n->attrs().size() && a < schema.attr_args.size(); ++a)
      attrs += fmt::format("{}{}={}", attrs.empty() ? "" : ", ", schema.attr_args[a].name, attr_str(n->attrs()[a]));
    out += fmt::format("  {} [shape=box, label=\"{}{}\\n{}\"];\n", id, esc(std::string(n->info().name)),
                       attrs.empty() ? "" : esc("(" + attrs + ")"), esc(types));
    for (const Value* in : n->inputs()) {
      auto it = source.find(in);
      if (it != source.end()) out += fmt::format("  {} -> {} [label=\"{}\"];\n", it->second, id, esc(names(in)));
    }
    for (const Value* o : n->outputs()) source[o] = id;
  }
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const Value* v = g.outputs()[i];
    out += fmt::format("  out{} [shape=doubleoctagon, label=\"return {}\"];\n", i, i);
    auto it = source.find(v);
    if (it != source.end()) out += fmt::format("  {} -> out{} [label=\"{}\"];\n", it->second, i, esc(names(v)));
  }
  return out + "}\n";
}

}  // namespace kiln::ir
