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
#pragma once

#include "ir/graph.h"

#include <memory>
#include <string>
#include <string_view>

namespace kiln::ir {

std::string print_graph(const Graph& g);
std::unique_ptr<Graph> parse_graph(std::string_view text);

}  // namespace kiln::ir
