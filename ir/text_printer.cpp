// kiln/ir/text_printer.cpp — prints graphs in the text format that ir::parse_graph reads.
//
// One line per node: outputs with their types, the op, tensor inputs (a Tensor[] argument as
// [%a, %b]) and then every attribute as name=value in schema order. Values print by their own
// name when it is a valid one and not already taken; the rest are numbered in definition
// order, skipping every number a value is named. The printer never throws on a malformed
// graph (it is what one reads when debugging one): foreign or null inputs print as
// %<foreign> / %<null>, attributes beyond the schema as attrN=value.
#include "ir/shape_env.h"
#include "ir/text.h"

#include <fmt/format.h>

#include <cctype>
#include <unordered_set>

namespace kiln::ir {

namespace {

bool valid_name(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  return true;
}

// Every value of the graph in definition order: inputs, then node outputs.
std::vector<const Value*> all_values(const Graph& g) {
  std::vector<const Value*> vs(g.inputs().begin(), g.inputs().end());
  for (const Node* n : g.nodes())
    for (const Value* v : n->outputs()) vs.push_back(v);
  return vs;
}

}  // namespace

ValueNames::ValueNames(const Graph& g) {
  std::vector<const Value*> vs = all_values(g);
  std::unordered_set<std::string> taken;
  std::vector<const Value*> unnamed;
  for (const Value* v : vs) {
    if (names_.count(v)) continue;
    if (valid_name(v->name()) && taken.insert(v->name()).second) names_[v] = v->name();
    else unnamed.push_back(v);
  }
  size_t next = 0;
  for (const Value* v : unnamed) {
    if (names_.count(v)) continue;
    std::string n;
    do n = std::to_string(next++);
    while (taken.count(n));
    taken.insert(n);
    names_[v] = n;
  }
}

std::string ValueNames::operator()(const Value* v) const {
  if (!v) return "%<null>";
  auto it = names_.find(v);
  return it == names_.end() ? "%<foreign>" : "%" + it->second;
}

namespace {

std::string tensor_args(const Node* n, const ValueNames& names) {
  std::vector<std::string> ins;
  for (const Value* v : n->inputs()) ins.push_back(names(v));
  std::string joined = fmt::format("{}", fmt::join(ins, ", "));
  return n->info().schema.variadic() ? "[" + joined + "]" : joined;
}

}  // namespace

std::string node_summary(const Node* n, const ValueNames& names) {
  std::vector<std::string> outs;
  for (const Value* v : n->outputs()) outs.push_back(names(v));
  return fmt::format("{} = {}({})", fmt::join(outs, ", "), n->info().name, tensor_args(n, names));
}

std::string print_shape_header(const ShapeEnv* env) {
  if (!env || env->symbols().empty()) return "";
  std::vector<std::string> symbols, guards;
  for (const SymbolInfo& s : env->symbols()) symbols.push_back(fmt::format("{} = {}", s.name, s.hint));
  for (const Expr& e : env->guards()) guards.push_back(e.str());
  std::string out = fmt::format("symbols({})\n", fmt::join(symbols, ", "));
  if (!guards.empty()) out += fmt::format("guards({})\n", fmt::join(guards, ", "));
  return out;
}

std::string print_graph(const Graph& g, const ShapeEnv* env) {
  ValueNames names(g);
  std::string out = print_shape_header(env) + "graph(";
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    if (i) out += ", ";
    out += names(g.inputs()[i]) + " : " + g.inputs()[i]->type().str();
  }
  out += ") {\n";
  for (const Node* n : g.nodes()) {
    out += "  ";
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      if (i) out += ", ";
      out += names(n->output(i)) + " : " + n->output(i)->type().str();
    }
    out += " = ";
    out += n->info().name;
    out += "(";
    std::vector<std::string> args;
    if (!n->inputs().empty() || n->info().schema.variadic()) args.push_back(tensor_args(n, names));
    const auto& schema_attrs = n->info().schema.attr_args;
    const auto& values = n->attrs().values();
    for (size_t i = 0; i < values.size(); ++i) {
      std::string name = i < schema_attrs.size() ? schema_attrs[i].name : fmt::format("attr{}", i);
      args.push_back(name + "=" + attr_str(values[i]));
    }
    out += fmt::format("{}", fmt::join(args, ", "));
    out += ")\n";
  }
  std::vector<std::string> outs;
  for (const Value* v : g.outputs()) outs.push_back(names(v));
  out += fmt::format("  return ({})\n}}\n", fmt::join(outs, ", "));
  return out;
}

}  // namespace kiln::ir
