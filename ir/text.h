// kiln/ir/text.h — the text format of graphs: printing and parsing, exact round trip.
//
//   graph(%x : f32[4, 8], %b : f32[8]) {
//     %0 : f32[4, 8] = expand(%b, size=[4, 8])
//     %1 : f32[4, 8] = add(%x, %0)
//     %2 : f32[4] = sum(%1, dims=[1], keepdim=false)
//     return (%2)
//   }
//
// Attributes are printed by name, every one, in schema order. Parse errors throw
// kiln::Error with "line:column" and what was expected; the parsed graph is verified.
// Values keep the names they have in the text, so print_graph(*parse_graph(t, &env), &env) == t
// for any text print_graph wrote. '#' starts a comment to the end of a line.
#pragma once

#include "ir/graph.h"

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

namespace kiln::ir {

class ShapeEnv;

// With the ShapeEnv of the graph's trace, the text starts with the trace's symbols and their
// hints, and the guards recorded so far, which the shape functions read again when the text is
// parsed (a squeeze of s0 - 1 is valid only under the guard s0 - 1 == 1):
//
//   symbols(s0 = 2)
//   guards(s0 - 1 == 1)
//   graph(%x : f32[s0, 3]) { ... }
//
// A static graph (no symbols) prints no header.
std::string print_graph(const Graph& g, const ShapeEnv* env = nullptr);
// The header alone ("" without an env or without symbols).
std::string print_shape_header(const ShapeEnv* env);
// A text with a header declares its symbols and guards in `env`, which must have no symbols yet
// (a private ShapeEnv when `env` is null), and the graph is verified under it; a text without one
// is verified under ShapeEnv::current(), if any.
std::unique_ptr<Graph> parse_graph(std::string_view text, ShapeEnv* env = nullptr);
// Whether the text starts with a symbols(...) header (after whitespace and comments).
bool declares_symbols(std::string_view text);

// Parses one expression in the grammar Expr::str prints ("2*s0 + 1", "min(s0, 8)").
Expr parse_expr(std::string_view text);

// The names print_graph gives values: a value's own name when it is a valid name
// ([A-Za-z0-9_.]+) not taken by an earlier value, otherwise the next number (0, 1, ...) in
// definition order that no value is named.
class ValueNames {
 public:
  explicit ValueNames(const Graph& g);
  // "%name"; a value not in the graph prints as "%<foreign>", a null one as "%<null>".
  std::string operator()(const Value* v) const;

 private:
  std::unordered_map<const Value*, std::string> names_;
};

// "%3 = add(%1, %2)": a node's outputs, op and tensor inputs as the printer names them.
std::string node_summary(const Node* n, const ValueNames& names);

}  // namespace kiln::ir
